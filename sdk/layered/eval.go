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
	// repeat[g]: gate g's row equals gate g−1's in the same level, and
	// g−1 sums it (a plain copy is evaluated without summing its row).
	repeat := make([]bool, len(c.Kind)+1)
	for L := 1; L <= c.Depth(); L++ {
		for g := int(c.LevelStart[L-1]) + 1; g < int(c.LevelStart[L]); g++ {
			repeat[g] = c.sameRow(g-1, g) && !c.plainCopy(g-1)
		}
	}
	return func(in []uint64) ([]uint64, error) {
		if len(in) != c.NumInputs {
			return nil, fmt.Errorf("layered: %d input words for %d inputs", len(in), c.NumInputs)
		}
		prev := append([]uint64(nil), in...)
		var cur, scratch []uint64
		var sum bitslice.Sum
		for L := 1; L <= c.Depth(); L++ {
			lo, hi := int(c.LevelStart[L-1]), int(c.LevelStart[L])
			cur = cur[:0]
			for g := lo; g < hi; g++ {
				a, b := c.RowStart[g], c.RowStart[g+1]
				src, w := c.Src[a:b], c.Weight[a:b]
				var v uint64
				switch {
				case c.plainCopy(g):
					v = prev[src[0]]
				case repeat[g]:
					v = sum.AtLeast(c.Threshold[g]) // the row summed for g−1
				default:
					scratch = scratch[:0]
					for _, s := range src {
						scratch = append(scratch, prev[s])
					}
					if repeat[g+1] {
						sum.Set(scratch, w) // kept for the gates that share the row
						v = sum.AtLeast(c.Threshold[g])
					} else {
						v = bitslice.Threshold(scratch, w, c.Threshold[g])
					}
				}
				cur = append(cur, v)
			}
			prev, cur = cur, prev
		}
		return prev, nil
	}
}

// plainCopy reports whether gate g is a copy [x ≥ 1] of one source, which
// Eval reads through without summing.
func (c *Circuit) plainCopy(g int) bool {
	a := c.RowStart[g]
	return c.Kind[g] == KindCopy && c.RowStart[g+1]-a == 1 && c.Weight[a] == 1 && c.Threshold[g] == 1
}
