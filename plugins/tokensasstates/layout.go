package tokensasstates

import (
	"math"
	"slices"
)

// dimensions lays a token's dimensions out: the constants, cos and sin
// (when anything is fetched), one indicator a part but the base, the S
// slots (from dimR), the fetched combinations (from dimF).
func (mp *mapping) dimensions() {
	anyFetch, nPart, basePart, S, top, lv := mp.anyFetch, mp.nPart, mp.basePart, mp.S, mp.top, mp.lv
	dimInd := dimCos
	if anyFetch {
		dimInd = dimSin + 1
	}
	indDim := make([]int, nPart) // −1 for the base part
	next := dimInd
	for p := range indDim {
		indDim[p] = -1
		if int32(p) != basePart {
			indDim[p] = next
			next++
		}
	}
	dimR := next
	dimF := dimR + S
	nF := 0
	for L := 1; L <= top; L++ {
		nF = max(nF, len(lv[L].combos))
	}
	dNeed := dimF + nF
	mp.indDim, mp.dimR, mp.dimF, mp.nF, mp.dNeed = indDim, dimR, dimF, nF, dNeed
}

// meanBudget bounds LayerNorm's mean and adds the balance dimension where
// the mean would break a class's budget.
func (mp *mapping) meanBudget() {
	top, bound, lv, mass, dNeed, budget := mp.top, mp.bound, mp.lv, mp.mass, mp.dNeed, mp.budget
	// LayerNorm's mean. A row reading LN(x) sums wᵢ(xᵢ − μ) − (Σw)(0 − μ)
	// (the sink cancels μ), so its float32 terms reach |wᵢ|(|xᵢ| + |μ|),
	// |μ| ≤ Σ|x|/d: a step's budget is Σ|w|(|x| + 2|μ|) + |θ| over its
	// weights, per-token biases included. Where |μ| would break it, a
	// balance dimension (after the fetched ones) holds minus the sum of the token's other
	// dimensions — every write to the stream writes its negation there —
	// so μ = 0 and the budget is Σ|w·x| + |θ|.
	sumAbs := make([]float64, top+1) // Σ|x| over a token's dimensions in block L
	mu := 0.0
	for L := 1; L <= top; L++ {
		sumAbs[L] = 3 // cos, sin, an indicator
		for _, b := range bound[L-1] {
			sumAbs[L] += b
		}
		for _, cb := range lv[L].combos {
			sumAbs[L] += mass(L-1, cb.slot, cb.w)
		}
		mu = max(mu, sumAbs[L]/float64(dNeed))
	}
	dimBal := -1
	for L := 1; L <= top && dimBal < 0; L++ {
		for _, cl := range lv[L].classes {
			if budget(cl, mu) > mp.maxSum() {
				dimBal = dNeed
				dNeed++
				break
			}
		}
	}
	mp.sumAbs, mp.mu, mp.dimBal, mp.dNeed = sumAbs, mu, dimBal, dNeed
}

// budget returns a class's budget with |μ| ≤ mu, the largest over its
// tokens.
func (mp *mapping) budget(cl *class, mu float64) float64 {
	w := cl.wabs
	b0 := steepBias(cl, mp.rep[mp.basePart])
	for q, k := range mp.indDim {
		if k >= 0 && !mp.uniform(cl) {
			w += math.Abs(steepBias(cl, mp.rep[q])-b0) / Steep
		}
	}
	var thr float64
	for _, th := range cl.thr {
		thr = max(thr, math.Abs(float64(th)))
	}
	return cl.bound + thr + 2*mu*w
}

// heads picks the attention's shape (heads, head_dim, d_model).
func (mp *mapping) heads() {
	top, lv, dNeed := mp.top, mp.lv, mp.dNeed
	// Heads: a head carries head_dim fetched dimensions of one offset.
	// Of the shapes (heads, head_dim) that carry every level's fetches and
	// give d_model ≥ what the dimensions need, the fewest heads among
	// those within 25% of the least d_model (Keccak: 24 heads, one per ρ
	// offset, rather than 26 of 3 dimensions).
	perR := make([]map[int]int, top+1)
	nhead := 1
	for L := 1; L <= top; L++ {
		perR[L] = map[int]int{}
		for _, cb := range lv[L].combos {
			perR[L][cb.r]++
		}
		nhead = max(nhead, len(perR[L]))
	}
	need := func(hd int) int {
		n := 0
		for L := 1; L <= top; L++ {
			k := 0
			for _, c := range perR[L] {
				k += (c + hd - 1) / hd
			}
			n = max(n, k)
		}
		return n
	}
	type shape struct{ d, nhead, hd int }
	var shapes []shape
	for hd := 2; hd <= max(2, dNeed); hd++ {
		n := max(need(hd), nhead, (dNeed+hd-1)/hd)
		shapes = append(shapes, shape{hd * n, n, hd})
		if need(hd) <= nhead && hd*nhead >= dNeed {
			break
		}
	}
	least := slices.MinFunc(shapes, func(a, b shape) int { return a.d - b.d })
	pick := least
	for _, s := range shapes {
		if 4*s.d <= 5*least.d && (s.nhead < pick.nhead || s.nhead == pick.nhead && s.d < pick.d) {
			pick = s
		}
	}
	nhead, hd, d := pick.nhead, pick.hd, pick.d
	mp.nhead, mp.hd, mp.d = nhead, hd, d
}
