package layered_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tcforge/tcforge/sdk/layered"
)

// maxFuzzInputs bounds the input count the fuzz target evaluates: the
// count is a scalar of the encoding, so a tiny blob may claim billions of
// inputs, and Eval would only spend memory on them.
const maxFuzzInputs = 1 << 16

// FuzzLayeredUnmarshal decodes arbitrary bytes as a layered circuit.
// Decoding must never panic; a blob that decodes is valid, evaluates
// without error, and its re-encoding is canonical: it decodes to an equal
// circuit and re-encodes to the same bytes. (The decoder also accepts
// non-canonical blobs, e.g. arrays packed wider than needed, so the first
// re-encoding may differ from the input.)
//
// Seeds: the corpus in testdata/fuzz/FuzzLayeredUnmarshal and the
// encodings added here, packed and flat (MarshalFlat).
func FuzzLayeredUnmarshal(f *testing.F) {
	for _, c := range []*layered.Circuit{
		copyThenSameRow(),
		layered.NewBuilder(0, nil).Circuit(nil),
		layered.NewBuilder(2, nil).Circuit(nil),
		xorCircuit(),
		parityCircuit(4),
		randomCircuit(rand.New(rand.NewPCG(9, 10)), 5, 3),
		xorForms(),
		formsCircuit(rand.New(rand.NewPCG(11, 12)), 4, 3),
		hintedForms(),
		hintedXor(),
	} {
		data, err := c.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)*2/3])
		// The flat encoding, which UnmarshalBinary reads too.
		flat := bytes.Join(c.MarshalFlat(), nil)
		f.Add(flat)
		f.Add(flat[:len(flat)*2/3])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c layered.Circuit
		if err := c.UnmarshalBinary(data); err != nil {
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("decoded circuit does not validate: %v", err)
		}
		enc, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var d layered.Circuit
		if err := d.UnmarshalBinary(enc); err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if !reflect.DeepEqual(&c, &d) {
			t.Fatalf("re-encoding decodes to a different circuit:\n%+v\n%+v", &c, &d)
		}
		again, _ := d.MarshalBinary()
		if !bytes.Equal(enc, again) {
			t.Fatalf("re-encoding is not stable")
		}
		s := c.Stats()
		if s.Depth != c.Depth() || s.Gates != c.NumGates() || len(s.Widths) != s.Depth {
			t.Fatalf("Stats %+v disagree with the circuit", s)
		}
		if c.NumInputs > maxFuzzInputs {
			return
		}
		in := make([]uint64, c.NumInputs)
		for i := range in {
			in[i] = uint64(i+1) * 0x9e3779b97f4a7c15
		}
		out, err := c.Eval(in)
		if err != nil {
			t.Fatalf("valid circuit does not evaluate: %v", err)
		}
		if len(out) != c.NumOutputs() {
			t.Fatalf("%d output words for %d outputs", len(out), c.NumOutputs())
		}
		// Small circuits: Eval agrees with the definition on a few lanes.
		if c.NumGates() > 5000 {
			return
		}
		for _, l := range []int{0, 1, 37, 63} {
			x := make([]uint, c.NumInputs)
			for i := range x {
				x[i] = uint(in[i]>>l) & 1
			}
			for j, want := range refEval(&c, x) {
				if got := uint(out[j]>>l) & 1; got != want {
					t.Fatalf("lane %d, output %d: Eval %d, definition %d", l, j, got, want)
				}
			}
		}
	})
}

// TestWriteFuzzCorpus rewrites the committed seed corpus of
// FuzzLayeredUnmarshal from the current encoding (run it after changing
// the format):
//
//	TCFORGE_WRITE_FUZZ_CORPUS=1 go test -run TestWriteFuzzCorpus ./sdk/layered
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("TCFORGE_WRITE_FUZZ_CORPUS") == "" {
		t.Skip("set TCFORGE_WRITE_FUZZ_CORPUS=1 to rewrite testdata/fuzz/FuzzLayeredUnmarshal")
	}
	enc := func(c *layered.Circuit) []byte {
		data, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	xor := enc(xorCircuit())
	// Regressions: Validate used to read rows of a level reaching past the
	// gates, and to let Start+Len overflow past a range check.
	pastGates := cloneCircuit(xorCircuit())
	pastGates.LevelStart = []int32{0, 9, 5}
	overflow := cloneCircuit(xorCircuit())
	overflow.OutputRanges[1].Start, overflow.OutputRanges[1].Len = math.MaxInt, math.MaxInt
	forms := enc(xorForms())
	massOverflow := cloneCircuit(xorForms())
	massOverflow.FormCoef[2], massOverflow.Weight[2] = math.MaxInt32, 2
	// The previous encoding (version 4, no hints flag), which still decodes.
	v4 := append([]byte(nil), forms[:len(forms)-4]...)
	v4[4] = 4
	seeds := map[string][]byte{
		"valid_version4_forms_xor":   v4,
		"valid_hints_forms":          enc(hintedForms()),
		"valid_hints_xor":            enc(hintedXor()),
		"valid_no_inputs":            enc(layered.NewBuilder(0, nil).Circuit(nil)),
		"valid_depth_zero":           enc(layered.NewBuilder(3, nil).Circuit(nil)),
		"valid_xor":                  xor,
		"valid_parity4":              enc(parityCircuit(4)),
		"valid_random":               enc(randomCircuit(rand.New(rand.NewPCG(13, 14)), 4, 3)),
		"truncated_header":           xor[:6],
		"truncated_half":             xor[:len(xor)/2],
		"truncated_last_byte":        xor[:len(xor)-1],
		"regress_level_past_gates":   enc(pastGates),
		"regress_range_overflow":     enc(overflow),
		"regress_copy_then_same_row": enc(copyThenSameRow()),
		"valid_forms_xor":            enc(xorForms()),
		"valid_forms_random":         enc(formsCircuit(rand.New(rand.NewPCG(15, 16)), 4, 3)),
		"forms_truncated":            forms[:len(forms)-3],
		"forms_mass_overflow":        enc(massOverflow),
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzLayeredUnmarshal")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
