package layered

import (
	"fmt"
	"math/bits"
	"slices"
)

// flattenLimit is the most flattened edges Evaluator evaluates flattened;
// a circuit with forms whose flattened circuit is larger (fusion's round
// objective: billions of edges, a few hundred million entries) is
// evaluated on its forms (FormsEvaluator).
const flattenLimit = 1 << 26

// FormsEvaluator returns Eval for a circuit with forms that evaluates the
// forms themselves instead of the flattened circuit: level by level, each
// form's integer value per sample (its constant plus the coefficients of
// its firing gates), then each gate's sum of weighted forms against its
// threshold. A gate whose row (sources and weights) equals the previous
// gate's shares its sum, so the work is the form entries plus the distinct
// rows' entries, not the flattened edges. The returned func is safe for
// concurrent use. A circuit without forms gets Evaluator.
func (c *Circuit) FormsEvaluator() func(in []uint64) ([]uint64, error) {
	if c.FormStart == nil {
		return c.Evaluator()
	}
	D := c.Depth()
	same := make([]bool, len(c.Kind))
	for g := 1; g < len(c.Kind); g++ {
		a, b := c.RowStart[g-1], c.RowStart[g]
		e := c.RowStart[g+1]
		same[g] = b-a == e-b && slices.Equal(c.Src[a:b], c.Src[b:e]) && slices.Equal(c.Weight[a:b], c.Weight[b:e])
	}
	for L := 1; L <= D; L++ {
		same[c.LevelStart[L-1]] = false // rows read the forms of their own level
	}
	maxForms := 0
	for L := 0; L < D; L++ {
		maxForms = max(maxForms, c.NumForms(L))
	}
	nIn, nOut := c.NumInputs, c.NumOutputs()
	return func(in []uint64) ([]uint64, error) {
		if len(in) != nIn {
			return nil, fmt.Errorf("layered: %d input words for %d inputs", len(in), nIn)
		}
		prev := slices.Clone(in)
		fv := make([]int64, 64*maxForms)
		var sum [64]int64
		for L := 1; L <= D; L++ {
			f0, f1 := int(c.FormStart[L-1]), int(c.FormStart[L])
			for f := f0; f < f1; f++ {
				k, src, coef := c.Form(f)
				v := fv[64*(f-f0) : 64*(f-f0+1)]
				for i := range v {
					v[i] = int64(k)
				}
				for i, s := range src {
					a := int64(coef[i])
					for w := prev[s]; w != 0; w &= w - 1 {
						v[bits.TrailingZeros64(w)] += a
					}
				}
			}
			g0, g1 := int(c.LevelStart[L-1]), int(c.LevelStart[L])
			cur := make([]uint64, g1-g0)
			for g := g0; g < g1; g++ {
				if !same[g] {
					sum = [64]int64{}
					for e := c.RowStart[g]; e < c.RowStart[g+1]; e++ {
						w, v := int64(c.Weight[e]), fv[64*int(c.Src[e]):64*int(c.Src[e]+1)]
						for i := range sum {
							sum[i] += w * v[i]
						}
					}
				}
				theta := int64(c.Threshold[g])
				var word uint64
				for i, s := range sum {
					if s >= theta {
						word |= 1 << i
					}
				}
				cur[g-g0] = word
			}
			prev = cur
		}
		return prev[:nOut], nil
	}
}
