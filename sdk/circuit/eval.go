package circuit

import (
	"fmt"

	"github.com/tcforge/tcforge/internal/bitslice"
)

// Eval evaluates the circuit on 64 input assignments at once: in[i] holds
// input bit i of all 64 samples (bit l of the word is sample l). It returns
// out[j], output bit j of the 64 samples.
func (c *Circuit) Eval(in []uint64) ([]uint64, error) {
	if len(in) != len(c.Inputs) {
		return nil, fmt.Errorf("circuit: %d input words for %d inputs", len(in), len(c.Inputs))
	}
	val := make([]uint64, len(c.Ops))
	for i, op := range c.Ops {
		a, b := c.ArgStart[i], c.ArgStart[i+1]
		args := c.Args[a:b]
		var v uint64
		switch op {
		case OpInput:
			v = in[c.Param[i]]
		case OpConst:
			if c.Param[i] == 1 {
				v = ^uint64(0)
			}
		case OpNot:
			v = ^val[args[0]]
		case OpAnd:
			v = ^uint64(0)
			for _, x := range args {
				v &= val[x]
			}
		case OpOr:
			for _, x := range args {
				v |= val[x]
			}
		case OpXor:
			for _, x := range args {
				v ^= val[x]
			}
		case OpAndNot:
			v = ^val[args[0]]
			for _, x := range args[1:] {
				v &= val[x]
			}
		case OpThreshold:
			v = bitslice.Threshold(val, args, c.Weights[a:b], c.Param[i])
		case OpSumBit:
			v = bitslice.SumBit(val, args, c.Weights[a:b], int(c.Param[i]))
		default:
			return nil, fmt.Errorf("circuit: node %d: unknown op %d", i, op)
		}
		val[i] = v
	}
	out := make([]uint64, len(c.Outputs))
	for j, o := range c.Outputs {
		out[j] = val[o]
	}
	return out, nil
}
