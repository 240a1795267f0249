package point

import (
	"fmt"
	"math/rand/v2"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Samples draws n random input vectors of width bits, reproducibly from seed.
func Samples(seed uint64, n, width int) []bitvec.Vec {
	return bitvec.Random(rand.New(rand.NewPCG(seed, 0x7463666f726765)), n, width)
}

// FirstMismatch compares output vectors of n bits and describes the first
// difference, or returns nil.
func FirstMismatch(what string, got, want []bitvec.Vec, n int) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d results for %d samples", what, len(got), len(want))
	}
	for s := range want {
		if len(want[s]) < (n+63)/64 {
			return fmt.Errorf("%s: sample %d: reference output has fewer than %d bits", what, s, n)
		}
		for i := 0; i < n; i++ {
			if got[s].Get(i) != want[s].Get(i) {
				return fmt.Errorf("%s: sample %d, output bit %d is %d, want %d", what, s, i, got[s].Get(i), want[s].Get(i))
			}
		}
	}
	return nil
}

// verifyLogic checks the logic circuit against reference outputs and
// returns the circuit's outputs on in, which the layered circuits are then
// checked against.
func verifyLogic(c *circuit.Circuit, in, ref []bitvec.Vec) ([]bitvec.Vec, error) {
	got, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
	if err != nil {
		return nil, err
	}
	return got, FirstMismatch("logic circuit vs construction reference", got, ref, len(c.Outputs))
}

// verifyLayered checks the layered circuit against the logic circuit c,
// whose outputs on in are want (from verifyLogic).
func verifyLayered(l *layered.Circuit, c *circuit.Circuit, in, want []bitvec.Vec) error {
	if l.NumInputs != len(c.Inputs) {
		return fmt.Errorf("layered circuit has %d inputs, logic circuit %d", l.NumInputs, len(c.Inputs))
	}
	if l.NumOutputs() != len(c.Outputs) {
		return fmt.Errorf("layered circuit's last level has %d gates, want the %d outputs", l.NumOutputs(), len(c.Outputs))
	}
	got, err := bitvec.EvalSliced(in, l.NumInputs, l.Evaluator())
	if err != nil {
		return err
	}
	return FirstMismatch("layered circuit vs logic circuit", got, want, len(c.Outputs))
}
