package circuit_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// FuzzCircuitUnmarshal decodes arbitrary bytes as a logic circuit. Decoding
// must never panic; a blob that decodes is valid, evaluates without error,
// and its re-encoding is canonical: it decodes to an equal circuit and
// re-encodes to the same bytes. (The decoder also accepts non-canonical
// blobs, e.g. arrays packed wider than needed or attributes out of order,
// so the first re-encoding may differ from the input; the encoding of
// anything MarshalBinary wrote is reproduced exactly.)
//
// Seeds: the corpus in testdata/fuzz/FuzzCircuitUnmarshal and the
// encodings added here.
func FuzzCircuitUnmarshal(f *testing.F) {
	empty, _ := circuit.NewBuilder().Circuit().MarshalBinary()
	f.Add(empty)
	good, _ := validCircuit().MarshalBinary()
	f.Add(good)
	f.Add(good[:len(good)/2])
	rng := rand.New(rand.NewPCG(7, 8))
	for range 3 {
		data, _ := randomCircuit(rng, 30).MarshalBinary()
		f.Add(data)
	}
	// The flat encoding, which UnmarshalBinary reads too.
	for _, c := range []*circuit.Circuit{circuit.NewBuilder().Circuit(), validCircuit(), randomCircuit(rng, 30)} {
		flat := bytes.Join(c.MarshalFlat(), nil)
		f.Add(flat)
		f.Add(flat[:len(flat)*2/3])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var c circuit.Circuit
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
		var d circuit.Circuit
		if err := d.UnmarshalBinary(enc); err != nil {
			t.Fatalf("re-encoding does not decode: %v", err)
		}
		if !reflect.DeepEqual(&c, &d) {
			t.Fatalf("re-encoding decodes to a different circuit")
		}
		again, _ := d.MarshalBinary()
		if !bytes.Equal(enc, again) {
			t.Fatalf("re-encoding is not stable")
		}
		_ = c.Stats()
		in := make([]uint64, len(c.Inputs))
		for i := range in {
			in[i] = uint64(i) * 0x9e3779b97f4a7c15
		}
		out, err := c.Eval(in)
		if err != nil {
			t.Fatalf("valid circuit does not evaluate: %v", err)
		}
		if len(out) != len(c.Outputs) {
			t.Fatalf("%d output words for %d outputs", len(out), len(c.Outputs))
		}
		// Eval agrees with each op's definition on a few lanes.
		for _, l := range []int{0, 1, 63} {
			val := make([]uint, c.NumNodes())
			for i, op := range c.Ops {
				if op == circuit.OpInput {
					val[i] = uint(in[c.Param[i]]>>l) & 1
					continue
				}
				args, ws := c.Operands(circuit.Node(i))
				xs := make([]uint, len(args))
				for k, a := range args {
					xs[k] = val[a]
				}
				val[i] = refOp(op, c.Param[i], ws, xs)
			}
			for j, o := range c.Outputs {
				if got := uint(out[j]>>l) & 1; got != val[o] {
					t.Fatalf("lane %d, output %d: Eval %d, definition %d", l, j, got, val[o])
				}
			}
		}
	})
}

// TestWriteFuzzCorpus rewrites the committed seed corpus of
// FuzzCircuitUnmarshal from the current encoding (run it after changing
// the format):
//
//	TCFORGE_WRITE_FUZZ_CORPUS=1 go test -run TestWriteFuzzCorpus ./sdk/circuit
func TestWriteFuzzCorpus(t *testing.T) {
	if os.Getenv("TCFORGE_WRITE_FUZZ_CORPUS") == "" {
		t.Skip("set TCFORGE_WRITE_FUZZ_CORPUS=1 to rewrite testdata/fuzz/FuzzCircuitUnmarshal")
	}
	enc := func(c *circuit.Circuit) []byte {
		data, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	adder := func() *circuit.Circuit {
		b := circuit.NewBuilder()
		in := b.Input("abc", 3)
		b.Output("sum", []circuit.Node{b.Xor(in...)})
		b.Output("carry", []circuit.Node{b.Threshold(2, in, []int32{1, 1, 1})})
		return b.Circuit()
	}
	every := enc(validCircuit())
	// Regressions: Validate used to index Args with unchecked offsets, and
	// to let Start+Len overflow past a range check.
	pastArgs := cloneCircuit(validCircuit())
	pastArgs.ArgStart[firstNode(pastArgs, circuit.OpOr)+1] = int32(len(pastArgs.Args)) + 100
	overflow := cloneCircuit(validCircuit())
	overflow.OutputRanges[0].Start, overflow.OutputRanges[0].Len = 2, math.MaxInt
	// The previous encoding (version 2, no hints flag), which still decodes.
	v2 := enc(adder())
	v2 = v2[:len(v2)-4]
	v2[4] = 2
	hinted := adder()
	hinted.Pos = []int32{0, 1, 2, -1, 1 << 20}
	seeds := map[string][]byte{
		"valid_version2_adder":      v2,
		"valid_hints_adder":         enc(hinted),
		"valid_empty":               enc(circuit.NewBuilder().Circuit()),
		"valid_adder":               enc(adder()),
		"valid_every_op":            every,
		"valid_random":              enc(randomCircuit(rand.New(rand.NewPCG(11, 12)), 24)),
		"truncated_header":          every[:6],
		"truncated_half":            every[:len(every)/2],
		"truncated_last_byte":       every[:len(every)-1],
		"regress_argstart_past_end": enc(pastArgs),
		"regress_range_overflow":    enc(overflow),
	}
	writeCorpus(t, filepath.Join("testdata", "fuzz", "FuzzCircuitUnmarshal"), seeds)
}

// writeCorpus replaces dir's files with one corpus file per seed.
func writeCorpus(t *testing.T, dir string, seeds map[string][]byte) {
	t.Helper()
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
