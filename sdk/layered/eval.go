package layered

import (
	"fmt"

	"github.com/tcforge/tcforge/sdk/bitslice"
)

// Eval evaluates the circuit on 64 samples at once: in[i] holds input bit i
// of the 64 samples. It returns the last level's words (the outputs).
func (c *Circuit) Eval(in []uint64) ([]uint64, error) {
	if len(in) != c.NumInputs {
		return nil, fmt.Errorf("layered: %d input words for %d inputs", len(in), c.NumInputs)
	}
	prev := append([]uint64(nil), in...)
	var cur, scratch []uint64
	for L := 1; L <= c.Depth(); L++ {
		lo, hi := int(c.LevelStart[L-1]), int(c.LevelStart[L])
		cur = cur[:0]
		for g := lo; g < hi; g++ {
			a, b := c.RowStart[g], c.RowStart[g+1]
			src, w := c.Src[a:b], c.Weight[a:b]
			var v uint64
			if c.Kind[g] == KindCopy && len(src) == 1 && w[0] == 1 && c.Threshold[g] == 1 {
				v = prev[src[0]]
			} else {
				scratch = scratch[:0]
				for _, s := range src {
					scratch = append(scratch, prev[s])
				}
				v = bitslice.Threshold(scratch, w, c.Threshold[g])
			}
			cur = append(cur, v)
		}
		prev, cur = cur, prev
	}
	return prev, nil
}
