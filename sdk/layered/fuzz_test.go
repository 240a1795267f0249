package layered_test

import (
	"bytes"
	"math/rand/v2"
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
// encodings added here.
func FuzzLayeredUnmarshal(f *testing.F) {
	for _, c := range []*layered.Circuit{
		layered.NewBuilder(0, nil).Circuit(nil),
		layered.NewBuilder(2, nil).Circuit(nil),
		xorCircuit(),
		parityCircuit(4),
		randomCircuit(rand.New(rand.NewPCG(9, 10)), 5, 3),
	} {
		data, err := c.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)*2/3])
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
	})
}
