package tokensasgates

import (
	"fmt"

	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// label names m's residual dimensions, heads and FFN units: token i is
// input i (i < inputs), then the gates in level order, then the null
// tokens; dimension VAL = T of a gate's token holds the gate's value from
// the boundary after its level's block on (an input's from the embedding).
func label(m *model.Model, c *layered.Circuit) (*model.Model, error) {
	l := c.LabelTable()
	T, nIn, D := int32(m.Tokens), c.NumInputs, c.Depth()
	VAL, ACC, THR, ONE := T, T+1, T+2, T+3
	for i := range nIn {
		l.Values = append(l.Values, model.ValueLabel{Token: int32(i), Dim: VAL, Until: int32(D), Kind: model.Gate, Index: int32(i), Name: c.ValueName(0, i)})
	}
	for L := 1; L <= D; L++ {
		for j := range c.LevelWidth(L) {
			tok := int32(nIn) + c.LevelStart[L-1] + int32(j)
			l.Values = append(l.Values, model.ValueLabel{Token: tok, Dim: VAL, From: int32(L), Until: int32(D),
				Kind: model.Gate, Level: int32(L), Index: int32(j), Name: c.ValueName(L, j)})
		}
	}
	for tok := int32(nIn + c.NumGates()); tok < T; tok++ {
		l.Values = append(l.Values, model.ValueLabel{Token: tok, Dim: VAL, Until: int32(D), Name: "null token's value (0)"})
	}
	aux := []struct {
		dim  int32
		name string
	}{{ACC, "attention's sum Σ w·x of the token's sources (cleared by every FFN)"}, {THR, "the gate's threshold θ − ½ (softmax: over the padded fan-in)"}, {ONE, "constant 1 (the FFN's bias)"}}
	for _, a := range aux {
		l.Values = append(l.Values, model.ValueLabel{Token: -1, Dim: a.dim, Until: int32(D), Name: a.name})
	}
	for i := range T {
		l.Values = append(l.Values, model.ValueLabel{Token: -1, Dim: i, Until: int32(D), Name: fmt.Sprintf("one-hot of token %d", i)})
	}
	for b, blk := range m.Blocks {
		for h, hd := range blk.Attn.Heads {
			w := 0.0
			if o := m.Tensor(hd.O); o != nil {
				w = float64(o.At(int(ACC), 0))
			}
			l.Units = append(l.Units, model.UnitLabel{Block: int32(b), Kind: model.HeadUnit, Index: int32(h),
				Name: fmt.Sprintf("adds %g × the sources whose weight has that sign and bit to ACC", w)})
		}
		for u, name := range []string{"step: SiLU(κ(ACC − THR) + A), to VAL", "step: SiLU(κ(ACC − THR) − A), to VAL", "clears VAL (its stale value)", "clears ACC"} {
			l.Units = append(l.Units, model.UnitLabel{Block: int32(b), Kind: model.FFNUnit, Index: int32(u), Name: name})
		}
	}
	m.Labels = l
	return m, nil
}
