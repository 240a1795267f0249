package layered_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// xorForms is x₀ ⊕ x₁ with forms, as fusion writes it: level 1 holds the
// counters [S ≥ 1], [S ≥ 2] of S = x₀ + x₁ (both reading the form S of
// the inputs), its one form is their alternating sum, and the output gate
// reads that form; a second output reads 1 − (x₀ ⊕ x₁) as the form's
// negation folded into its weight.
func xorForms() *layered.Circuit {
	b := layered.NewBuilder(2, []circuit.Range{{Name: "x", Start: 0, Len: 2}})
	tag := b.Tag("xor")
	s := b.Form(0, []int32{0, 1}, []int32{1, 1})
	b.Gate(layered.KindGate, 1, []int32{s}, []int32{1}, tag)
	b.Gate(layered.KindGate, 2, []int32{s}, []int32{1}, tag)
	b.Level()
	x := b.Form(0, []int32{0, 1}, []int32{1, -1})
	not := b.Form(1, []int32{0, 1}, []int32{-1, 1})
	b.Gate(layered.KindGate, 1, []int32{x}, []int32{1}, tag)
	b.Gate(layered.KindGate, 1, []int32{not}, []int32{1}, tag)
	b.Level()
	return b.Circuit([]circuit.Range{{Name: "y", Start: 0, Len: 2}})
}

func TestFormsXor(t *testing.T) {
	c := xorForms()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	out, err := c.Eval([]uint64{0b1010, 0b1100})
	if err != nil {
		t.Fatal(err)
	}
	if out[0]&15 != 0b0110 || out[1]&15 != 0b1001 {
		t.Fatalf("outputs %04b %04b, want 0110 1001", out[0]&15, out[1]&15)
	}
	want := layered.Stats{
		Depth: 2, Width: 2, Gates: 4,
		Edges:     2 + 2 + 2 + 2, // flattened: every gate reads a form of 2 gates
		MaxFanIn:  2,
		MaxWeight: 1,
		Forms:     2,               // level 1: x and 1 − x (level 0: one form; level 2: 2 outputs)
		Nonzeros:  4 + (2 + 2 + 2), // gate←form entries, then form←gate entries
		Widths:    []int{2, 2},
	}
	if s := c.Stats(); !reflect.DeepEqual(s, want) {
		t.Errorf("Stats = %+v\nwant    %+v", s, want)
	}
	f := c.Flatten()
	if f.HasForms() {
		t.Fatal("Flatten kept forms")
	}
	if err := f.Validate(); err != nil {
		t.Fatal(err)
	}
	// 1 − x₀ + x₁... the second output's row is −c₀ + c₁ with θ = 1 − 1 = 0.
	if src, w := f.Row(3); !reflect.DeepEqual(src, []int32{0, 1}) || !reflect.DeepEqual(w, []int32{-1, 1}) || f.Threshold[3] != 0 {
		t.Errorf("flattened gate 3: %v %v θ %d", src, w, f.Threshold[3])
	}
}

// formsCircuit returns a random valid circuit with forms: small
// coefficients and constants, forms that share gates and cancel.
func formsCircuit(rng *rand.Rand, inputs, depth int) *layered.Circuit {
	b := layered.NewBuilder(inputs, []circuit.Range{{Name: "in", Start: 0, Len: inputs}})
	tag := b.Tag("r")
	prev := inputs
	small := func() int32 { return int32(rng.IntN(7)) - 3 }
	for range depth {
		nf := 1 + rng.IntN(6)
		for range nf {
			k := rng.IntN(4)
			src, coef := make([]int32, k), make([]int32, k)
			for i := range src {
				src[i], coef[i] = int32(rng.IntN(prev)), small()
			}
			b.Form(small(), src, coef)
		}
		width := 1 + rng.IntN(8)
		for range width {
			k := rng.IntN(4)
			src, w := make([]int32, k), make([]int32, k)
			for i := range src {
				src[i], w[i] = int32(rng.IntN(nf)), small()
			}
			kind := layered.KindGate
			if k == 1 && rng.IntN(3) == 0 {
				kind = layered.KindCopy
			}
			b.Gate(kind, small(), src, w, tag)
		}
		b.Level()
		prev = width
	}
	return b.Circuit([]circuit.Range{{Name: "out", Start: 0, Len: prev}})
}

// TestFormsEvalMatchesDefinition checks Eval (through Flatten and the
// planned evaluator) against the definition on random circuits with
// forms, and the encoding's round trip.
func TestFormsEvalMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	for i := range 300 {
		c := formsCircuit(rng, 1+rng.IntN(6), 1+rng.IntN(5))
		if err := c.Validate(); err != nil {
			t.Fatalf("circuit %d: %v", i, err)
		}
		in := lanePatterns(c.NumInputs)
		out, err := c.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		for l := range 64 {
			x := make([]uint, c.NumInputs)
			for j := range x {
				x[j] = uint(in[j]>>l) & 1
			}
			for j, want := range refEval(c, x) {
				if got := uint(out[j]>>l) & 1; got != want {
					t.Fatalf("circuit %d lane %d output %d: Eval %d, definition %d", i, l, j, got, want)
				}
			}
		}
		data, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var d layered.Circuit
		if err := d.UnmarshalBinary(data); err != nil {
			t.Fatalf("circuit %d: %v", i, err)
		}
		for _, p := range [][2][]int32{{c.FormStart, d.FormStart}, {c.FormConst, d.FormConst}, {c.FormRowStart, d.FormRowStart},
			{c.FormSrc, d.FormSrc}, {c.FormCoef, d.FormCoef}, {c.Src, d.Src}, {c.Weight, d.Weight}, {c.Threshold, d.Threshold}} {
			if len(p[0]) != len(p[1]) || (len(p[0]) > 0 && !reflect.DeepEqual(p[0], p[1])) {
				t.Fatalf("circuit %d: round trip differs: %v %v", i, p[0], p[1])
			}
		}
		if !reflect.DeepEqual(c.Stats(), d.Stats()) {
			t.Fatalf("circuit %d: round trip changes the stats", i)
		}
	}
}

// TestFormsValidate checks that corrupted forms are rejected with the
// place named, by Validate and by decoding.
func TestFormsValidate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		corrupt func(c *layered.Circuit)
		want    string
	}{
		{"gate reads past the forms", func(c *layered.Circuit) { c.Src[2] = 2 }, "source 2 outside level 1 (2 forms)"},
		{"form reads past its level", func(c *layered.Circuit) { c.FormSrc[3] = 2 }, "level 1 form 0: source 2 outside level 1 (width 2)"},
		{"form reads a negative index", func(c *layered.Circuit) { c.FormSrc[0] = -1 }, "level 0 form 0: source -1"},
		{"FormStart too short", func(c *layered.Circuit) { c.FormStart = c.FormStart[:2] }, "FormStart has 2 entries for 2 levels"},
		{"FormStart misses forms", func(c *layered.Circuit) { c.FormStart[2] = 2 }, "FormStart does not span the 3 forms"},
		{"form rows out of order", func(c *layered.Circuit) { c.FormRowStart[1] = 5 }, "form 1: entry offsets out of order"},
		{"mass overflows", func(c *layered.Circuit) { c.FormCoef[2] = math.MaxInt32; c.Weight[2] = 2 }, "add up past"},
		{"form arrays without FormStart", func(c *layered.Circuit) { c.FormStart = nil }, "form arrays without FormStart"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cloneCircuit(xorForms())
			tc.corrupt(c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want %q", err, tc.want)
			}
			if data := marshalOrNil(c); data != nil && c.FormStart != nil { // (without FormStart no forms are written)
				var d layered.Circuit
				if err := d.UnmarshalBinary(data); err == nil {
					t.Fatalf("decoding accepted it")
				}
			}
		})
	}
}
