package layered_test

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// hintedForms is xorForms with position hints: inputs at 0 and 1, the
// level-0 form and the counters at 5, the level-1 forms at 6 and none,
// the outputs at 7 and none.
func hintedForms() *layered.Circuit {
	b := layered.NewBuilder(2, []circuit.Range{{Name: "x", Start: 0, Len: 2}})
	b.SetInputPos(0, 0)
	b.SetInputPos(1, 1)
	tag := b.Tag("xor")
	var s int32
	b.At(5, func() {
		s = b.Form(0, []int32{0, 1}, []int32{1, 1})
		b.Gate(layered.KindGate, 1, []int32{s}, []int32{1}, tag)
		b.Gate(layered.KindGate, 2, []int32{s}, []int32{1}, tag)
	})
	b.Level()
	var x, not int32
	b.At(6, func() {
		x = b.Form(0, []int32{0, 1}, []int32{1, -1})
		b.At(circuit.NoPos, func() { not = b.Form(1, []int32{0, 1}, []int32{-1, 1}) })
	})
	b.At(7, func() { b.Gate(layered.KindGate, 1, []int32{x}, []int32{1}, tag) })
	b.Gate(layered.KindGate, 1, []int32{not}, []int32{1}, tag)
	b.Level()
	return b.Circuit([]circuit.Range{{Name: "y", Start: 0, Len: 2}})
}

// hintedXor is xorCircuit (no forms) with every value hinted by its
// index within its level plus 10·level.
func hintedXor() *layered.Circuit {
	c := cloneCircuit(xorCircuit())
	c.InputPos = []int32{0, 1, 2}
	c.Pos = make([]int32, c.NumGates())
	for L := 1; L <= c.Depth(); L++ {
		for i := range c.LevelWidth(L) {
			c.Pos[int(c.LevelStart[L-1])+i] = int32(10*L + i)
		}
	}
	return c
}

// TestBuilderAt checks the hints the layered builder records and what
// PosAt and FormPosAt read back, with and without forms and hints.
func TestBuilderAt(t *testing.T) {
	c := hintedForms()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		got  []int32
		want []int32
	}{
		{"InputPos", c.InputPos, []int32{0, 1}},
		{"Pos", c.Pos, []int32{5, 5, 7, -1}},
		{"FormPos", c.FormPos, []int32{5, 6, -1}},
		{"PosAt", []int32{c.PosAt(0, 0), c.PosAt(0, 1), c.PosAt(1, 1), c.PosAt(2, 0), c.PosAt(2, 1)}, []int32{0, 1, 5, 7, -1}},
		{"FormPosAt", []int32{c.FormPosAt(0, 0), c.FormPosAt(1, 0), c.FormPosAt(1, 1)}, []int32{5, 6, -1}},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
	// Without forms a gate is its own form.
	x := hintedXor()
	if err := x.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := []int32{x.FormPosAt(0, 2), x.FormPosAt(1, 1), x.PosAt(2, 1)}; !reflect.DeepEqual(got, []int32{2, 11, 21}) {
		t.Errorf("hints of a circuit without forms: %v", got)
	}
	// No hints: nil arrays, NoPos everywhere.
	plain := xorForms()
	if plain.HasPos() || plain.InputPos != nil || plain.FormPos != nil {
		t.Errorf("circuit built without At has hints")
	}
	if plain.PosAt(1, 0) != circuit.NoPos || plain.FormPosAt(0, 0) != circuit.NoPos {
		t.Errorf("hints read from a circuit without them")
	}
	// A builder that gets hints but no forms leaves FormPos nil.
	b := layered.NewBuilder(1, nil)
	b.At(3, func() { b.Copy(0, b.Tag("")) })
	b.Level()
	if c := b.Circuit(nil); c.FormPos != nil || !reflect.DeepEqual(c.Pos, []int32{3}) || !reflect.DeepEqual(c.InputPos, []int32{-1}) {
		t.Errorf("hinted circuit without forms: InputPos %v Pos %v FormPos %v", c.InputPos, c.Pos, c.FormPos)
	}
}

// TestValidatePos checks that inconsistent hints are rejected, by
// Validate and by decoding.
func TestValidatePos(t *testing.T) {
	for _, tc := range []struct {
		name    string
		base    func() *layered.Circuit
		corrupt func(c *layered.Circuit)
		want    string
	}{
		{"input hints only", xorCircuit, func(c *layered.Circuit) { c.InputPos = []int32{0, 0, 0} }, "without gate hints"},
		{"gate hints without input hints", hintedXor, func(c *layered.Circuit) { c.InputPos = nil }, "without input hints"},
		{"input hints short", hintedXor, func(c *layered.Circuit) { c.InputPos = c.InputPos[1:] }, "input position hints: 2 entries for 3 values"},
		{"gate hints long", hintedXor, func(c *layered.Circuit) { c.Pos = append(c.Pos, 1) }, "gate position hints: 6 entries for 5 values"},
		{"gate hint below NoPos", hintedXor, func(c *layered.Circuit) { c.Pos[3] = -7 }, "value 3 has hint -7"},
		{"form hints without forms", hintedXor, func(c *layered.Circuit) { c.FormPos = []int32{} }, "form position hints in a circuit without forms"},
		{"forms without form hints", hintedForms, func(c *layered.Circuit) { c.FormPos = nil }, "without form hints"},
		{"form hints short", hintedForms, func(c *layered.Circuit) { c.FormPos = c.FormPos[:2] }, "form position hints: 2 entries for 3 values"},
		{"form hint below NoPos", hintedForms, func(c *layered.Circuit) { c.FormPos[0] = -2 }, "value 0 has hint -2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.base()
			tc.corrupt(c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "layered: ") {
				t.Fatalf("Validate: %v, want %q", err, tc.want)
			}
			data := marshalOrNil(c)
			if data == nil {
				return
			}
			var d layered.Circuit
			if err := d.UnmarshalBinary(data); err == nil && reflect.DeepEqual(&d, c) {
				t.Errorf("decoding accepted it")
			}
		})
	}
}

// TestPosRoundTrip checks that hints survive encoding, with and without
// forms, and that Flatten keeps the inputs' and gates' hints.
func TestPosRoundTrip(t *testing.T) {
	for _, c := range []*layered.Circuit{hintedForms(), hintedXor(), xorForms(), xorCircuit()} {
		data, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var d layered.Circuit
		if err := d.UnmarshalBinary(data); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(&d, c) {
			t.Errorf("round trip differs: hints %v %v %v, want %v %v %v", d.InputPos, d.Pos, d.FormPos, c.InputPos, c.Pos, c.FormPos)
		}
		f := c.Flatten()
		if err := f.Validate(); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(f.Pos, c.Pos) || !reflect.DeepEqual(f.InputPos, c.InputPos) || f.FormPos != nil {
			t.Errorf("Flatten: hints %v %v %v, want %v %v nil", f.InputPos, f.Pos, f.FormPos, c.InputPos, c.Pos)
		}
	}
}

// TestUnmarshalVersion4 checks that a blob of the previous encoding
// (version 4, no hints flag) still decodes, and that a bad flag is
// rejected.
func TestUnmarshalVersion4(t *testing.T) {
	c := xorForms()
	data, err := c.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint32(data[4:]); got != 5 {
		t.Fatalf("encoding version %d, want 5", got)
	}
	if !bytes.HasSuffix(data, []byte{0, 0, 0, 0}) {
		t.Fatalf("encoding without hints does not end with the zero flag")
	}
	old := append([]byte(nil), data[:len(data)-4]...)
	binary.LittleEndian.PutUint32(old[4:], 4)
	var d layered.Circuit
	if err := d.UnmarshalBinary(old); err != nil {
		t.Fatalf("version 4: %v", err)
	}
	if !reflect.DeepEqual(&d, c) {
		t.Errorf("version 4 decodes to a different circuit")
	}
	bad := append([]byte(nil), data...)
	bad[len(bad)-4] = 2
	if err := d.UnmarshalBinary(bad); err == nil || !strings.Contains(err.Error(), "position hints flag 2") {
		t.Errorf("hints flag 2: err = %v", err)
	}
}

// TestBuilderPosPanics checks that the builder refuses impossible hints
// and inputs that do not exist.
func TestBuilderPosPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		f    func(b *layered.Builder)
		want string
	}{
		{"At -2", func(b *layered.Builder) { b.At(-2, func() {}) }, "position hint -2"},
		{"SetInputPos -3", func(b *layered.Builder) { b.SetInputPos(0, -3) }, "position hint -3"},
		{"SetInputPos of input 2 of 2", func(b *layered.Builder) { b.SetInputPos(2, 0) }, "SetInputPos of input 2 of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), tc.want) {
					t.Errorf("panic %v, want one mentioning %q", r, tc.want)
				}
			}()
			tc.f(layered.NewBuilder(2, nil))
		})
	}
}
