package circuit_test

import (
	"bytes"
	"math/rand/v2"
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
	})
}
