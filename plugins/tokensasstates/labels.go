package tokensasstates

import (
	"fmt"
	"math"

	"github.com/tcforge/tcforge/sdk/model"
)

// label names m's residual dimensions (the partials of every level in
// their slots, the structure dimensions of the package doc) and, by what
// they write, its heads and FFN units.
func (mp *mapping) label(m *model.Model) (*model.Model, error) {
	c, top, D := mp.c, mp.top, mp.D
	l := c.LabelTable()
	nb := int32(len(m.Blocks))
	for L := 0; L <= top; L++ {
		owner := make([]int32, len(mp.parts[L])) // partial → the first value it is a partial of
		for i := range owner {
			owner[i] = -1
		}
		for i, qs := range mp.partsOf[L] {
			for _, q := range qs {
				if owner[q] < 0 {
					owner[q] = int32(i)
				}
			}
		}
		for q, pt := range mp.parts[L] {
			i := owner[q]
			var name string
			switch {
			case L == top && top < D:
				name = "output " + fmt.Sprint(i) + " pre-activation: " + c.ValueName(D, int(i))
			case L == 0:
				// Level 0's values are the inputs (gates composes level
				// 0's forms into level 1's gates), not level 0's forms:
				// FormName(0, i) would name form i, and past level 0's
				// forms another level's (SHA3-256 at one round: input
				// 322 named through a level-1 form, its gate 1184 past
				// the 1080 inputs).
				name = c.ValueName(0, int(i))
			case i >= 0:
				name = c.FormName(L, int(i))
			}
			v := model.ValueLabel{Token: pt.tok, Dim: int32(mp.dimR) + mp.slot[L][q], From: int32(L), Until: int32(L),
				Kind: model.Partial, Level: int32(L), Index: i, Name: name}
			if L == top {
				// The readout's per-token threshold correction (readoutItems).
				k := mp.corr[mp.part[pt.tok]]
				if k != nil {
					cv := k[mp.slot[L][q]]
					if cv != math.Round(cv) {
						return nil, fmt.Errorf("tokens-as-states: labels: token %d's readout correction %v is not an integer", pt.tok, cv)
					}
					v.Const = int32(cv)
				}
			}
			for k, s := range pt.src {
				v.Src = append(v.Src, s)
				v.Coef = append(v.Coef, int32(pt.coef[k]))
			}
			l.Values = append(l.Values, v)
		}
	}
	aux := func(dim int, name string) {
		l.Values = append(l.Values, model.ValueLabel{Token: -1, Dim: int32(dim), Until: nb, Name: name})
	}
	aux(dimSink, "sink (always 0)")
	aux(dimPlus, "+C (pins LayerNorm's scale)")
	aux(dimMinus, "−C")
	if mp.anyFetch {
		aux(dimCos, "cos 2πz/T (position)")
		aux(dimSin, "sin 2πz/T (position)")
	}
	for p, d := range mp.indDim {
		if d >= 0 {
			aux(d, fmt.Sprintf("part %d indicator", p))
		}
	}
	for j := range mp.nF {
		aux(mp.dimF+j, fmt.Sprintf("fetched combination %d (attention's scratch)", j))
	}
	if mp.dimBal >= 0 {
		aux(mp.dimBal, "balance: minus the sum of the token's other dimensions")
	}
	m.Labels = l
	m.LabelUnits()
	if err := l.Validate(m); err != nil {
		return nil, fmt.Errorf("tokens-as-states: %w", err)
	}
	return m, nil
}
