package layered

import (
	"fmt"

	"github.com/tcforge/tcforge/sdk/bitslice"
)

// Eval evaluates the circuit on 64 samples at once: in[i] holds input bit i
// of the 64 samples. It returns the last level's words (the outputs).
// To evaluate many batches, use Evaluator, which prepares the circuit once.
func (c *Circuit) Eval(in []uint64) ([]uint64, error) {
	return c.Evaluator()(in)
}

// Evaluator returns Eval for this circuit with the per-circuit work done
// once: it finds the gates that read the same row as the gate before them
// (the counters of one XOR), whose weighted sum is computed once and
// compared with each threshold. The returned func is safe for concurrent
// use (bits.EvalSliced runs it on every core); the circuit must not change
// while it is in use.
func (c *Circuit) Evaluator() func(in []uint64) ([]uint64, error) {
	ops, pos, neg := c.evalPlan()
	width := c.NumInputs
	for L := 1; L <= c.Depth(); L++ {
		width = max(width, c.LevelWidth(L))
	}
	return func(in []uint64) ([]uint64, error) {
		if len(in) != c.NumInputs {
			return nil, fmt.Errorf("layered: %d input words for %d inputs", len(in), c.NumInputs)
		}
		prev := make([]uint64, width)
		cur := make([]uint64, width)
		copy(prev, in)
		var sum bitslice.Sum
		for L := 1; L <= c.Depth(); L++ {
			lo, hi := int(c.LevelStart[L-1]), int(c.LevelStart[L])
			for g := lo; g < hi; g++ {
				a, b := c.RowStart[g], c.RowStart[g+1]
				var v uint64
				switch ops[g] {
				case opCopy:
					v = prev[c.Src[a]]
				case opRepeat:
					v = sum.AtLeast(c.Threshold[g]) // the row summed for g−1
				case opSum, opSumUnit:
					// kept for the gates that share the row
					sum.SetRange(prev, c.Src[a:b], c.Weight[a:b], int64(pos[g]), int64(neg[g]), ops[g] == opSumUnit)
					v = sum.AtLeast(c.Threshold[g])
				case opOr:
					for _, s := range c.Src[a:b] {
						v |= prev[s]
					}
				case opAnd:
					v = ^uint64(0)
					for _, s := range c.Src[a:b] {
						v &= prev[s]
					}
				case opOne:
					v = ^uint64(0)
				case opZero:
				default:
					sum.SetRange(prev, c.Src[a:b], c.Weight[a:b], int64(pos[g]), int64(neg[g]), false)
					v = sum.AtLeast(c.Threshold[g])
				}
				cur[g-lo] = v
			}
			prev, cur = cur, prev
		}
		return append([]uint64(nil), prev[:c.LevelWidth(c.Depth())]...), nil
	}
}

// gateOp is how the evaluator computes a gate, decided once per circuit.
type gateOp uint8

const (
	opGeneral gateOp = iota // a weighted sum against the threshold
	opCopy                  // [x ≥ 1] with weight 1: x itself
	opRepeat                // same row as the gate before, which kept its sum
	opSum                   // a row the next gate shares: sum it and keep the sum
	opSumUnit               // opSum with all weights 1
	opOr                    // unit weights, θ = 1
	opAnd                   // unit weights, θ = fan-in
	opOne                   // θ ≤ the smallest possible sum: always 1
	opZero                  // θ > the largest possible sum: always 0
)

// evalPlan decides each gate's gateOp, and the largest and (minus) the
// smallest weighted sum of each row that is summed.
func (c *Circuit) evalPlan() (ops []gateOp, pos, neg []int64) {
	ops = make([]gateOp, len(c.Kind))
	pos, neg = make([]int64, len(c.Kind)), make([]int64, len(c.Kind))
	unitRow := make([]bool, len(c.Kind))
	for L := 1; L <= c.Depth(); L++ {
		lo, hi := int(c.LevelStart[L-1]), int(c.LevelStart[L])
		for g := lo; g < hi; g++ {
			if c.identity(g) {
				ops[g] = opCopy
				continue
			}
			if g > lo && ops[g-1] != opCopy && c.sameRow(g-1, g) {
				ops[g] = opRepeat
				if ops[g-1] != opRepeat {
					ops[g-1] = opSum
					if unitRow[g-1] {
						ops[g-1] = opSumUnit
					}
				}
				continue
			}
			a, b := c.RowStart[g], c.RowStart[g+1]
			var p, n int64
			unit := true
			for _, w := range c.Weight[a:b] {
				if w > 0 {
					p += int64(w)
				} else {
					n -= int64(w)
				}
				unit = unit && w == 1
			}
			pos[g], neg[g], unitRow[g] = p, n, unit
			t := int64(c.Threshold[g])
			switch {
			case t <= -n:
				ops[g] = opOne
			case t > p:
				ops[g] = opZero
			case unit && t == 1:
				ops[g] = opOr
			case unit && t == int64(b-a):
				ops[g] = opAnd
			}
		}
	}
	return ops, pos, neg
}

// identity reports whether gate g is [x ≥ 1] of one source with weight 1:
// the source's value itself (a copy gate, or any gate of that form).
func (c *Circuit) identity(g int) bool {
	a := c.RowStart[g]
	return c.RowStart[g+1]-a == 1 && c.Weight[a] == 1 && c.Threshold[g] == 1
}
