package fusion

import "context"

// Values known only modulo 2 (the "round" objective, rule 9).
//
// A value whose every reader is a parity (an XOR node, never a threshold
// op or an output) is only ever needed modulo 2: a parity of it adds it to
// an integer sum and reads that sum's parity. Such a value may therefore
// be any integer form congruent to its bit, not the bit itself. With the
// round objective the planner realises a parity node v = c ⊕ u₁ ⊕ … ⊕ uₖ
// whose readers are all parities as the *sum* of its operands' forms,
//
//	form(v) = c + Σ form(uᵢ)   (or 1 − form(u₁) + Σ_{i>1} form(uᵢ) for c = 1
//	                           with an exact operand u₁; −x ≡ x mod 2),
//
// which costs no gate and no level: v lives on the level of its highest
// operand. Its range is [0, hi(v)] with hi(v) = c + Σ hi(uᵢ) (an exact
// value has hi = 1), and a parity reading it counts to the sum of its
// items' ranges instead of their number. Keccak's χ output
// a ⊕ (¬b ∧ c) (with ι's constant) is such a node: its form is
// parity(S_a) + [S_b even ∧ S_c odd] over the θ sums of the previous
// state forms, every switching function of one level, so a round takes one
// threshold level where the exact value takes two. The price is width:
// the sums range over [0, 22] instead of [0, 11], and the fused χ term
// has hundreds of switch points instead of two (rule 5's bound on the
// switch points of a fused plan, twice the plain plan's gates, is lifted
// for the round objective, and its boxes may have up to maxBoxRound
// points).
//
// A modular form is never lifted into one gate [form ≥ 1] (that would
// lose its parity); a gate above its level reads its terms, carried by
// copies.

// maxHiRound bounds the range of a modular form: a wider one is realised
// exactly (rules 4–6) instead.
const maxHiRound = 64

// maxBoxRound is the round objective's bound of a fused node's box.
const maxBoxRound = 1 << 14

// initModular computes, for the round objective, which nodes only parities
// read (xorOnly) and sets every node's range to that of an exact value.
func (p *planner) initModular(outputs []int32) {
	nn := len(p.n.kind)
	p.hi = make([]int64, nn)
	for v := range p.hi {
		p.hi[v] = 1
	}
	if p.opts.Objective != Round {
		return
	}
	p.xorOnly = make([]bool, nn)
	for v := int32(0); v < int32(nn); v++ {
		p.xorOnly[v] = p.n.uses[v] > 0
	}
	for v := int32(0); v < int32(nn); v++ {
		if p.n.kind[v] == nkThr {
			ops, _ := p.n.ops(v)
			for _, u := range ops {
				p.xorOnly[u] = false
			}
		}
	}
	for _, o := range outputs {
		p.xorOnly[o] = false
	}
}

// itemRange is the range of the sum of items' forms: their number for
// exact values.
func (p *planner) itemRange(items []int32) int64 {
	var s int64
	for _, u := range items {
		s += p.hi[u]
	}
	return s
}

// planXor plans parity node v: exactly (rules 4–6), then, if only
// parities read it (round objective), as the sum of its operands' forms
// where that puts its form below the exact plan's: a reader of the sum
// reads level lev(sum) ≤ lev(exact) − 1, the level of the sum an exact
// plan would have kept pending, so no reader gets deeper.
func (p *planner) planXor(v int32) error {
	if err := p.planXorExact(v); err != nil {
		return err
	}
	if p.xorOnly != nil && p.pk[v] != pkConst && p.pk[v] != pkSum {
		p.trySum(v, p.lev[v])
	}
	return nil
}

// trySum plans parity node v as the sum of its operands' forms if only
// parities read it (round objective) and that form's level is below
// than; it reports whether it did.
func (p *planner) trySum(v int32, than int32) bool {
	if p.xorOnly == nil || !p.xorOnly[v] {
		return false
	}
	ops, _ := p.n.ops(v)
	c := p.n.val[v]
	hi, lev, neg := c, int32(-1), int32(-1)
	for _, u := range ops {
		if p.pk[u] == pkConst {
			return false // let the exact plan fold it
		}
		hi += p.hi[u]
		lev = max(lev, p.lev[u])
		if neg < 0 && p.hi[u] == 1 {
			neg = u
		}
	}
	if c == 1 && neg >= 0 {
		hi-- // 1 − form(neg) ranges over [0, 1] like form(neg)
	}
	if lev < 0 || lev >= than || hi > maxHiRound {
		return false
	}
	p.pk[v], p.lev[v], p.tlev[v], p.hi[v] = pkSum, lev, -1, hi
	p.sStart[v] = int32(len(p.linNode))
	p.sConst[v] = c
	var terms int32
	for _, u := range ops {
		w := int64(1)
		if c == 1 && u == neg {
			w = -1
		}
		p.linNode = append(p.linNode, u)
		p.linW = append(p.linW, w)
		terms += p.terms[u]
	}
	p.sEnd[v] = int32(len(p.linNode))
	p.terms[v] = terms
	p.swStart[v], p.swEnd[v] = int32(len(p.swAt)), int32(len(p.swAt))
	p.xorRoot[v], p.fused[v] = false, false
	p.gcost[v], p.ecost[v] = 0, 0
	return true
}

// sumLevel is the level of sum node v's form: that of its highest operand.
func (p *planner) sumLevel(v int32) int32 {
	lev := int32(-1)
	for k := p.sStart[v]; k < p.sEnd[v]; k++ {
		lev = max(lev, p.lev[p.linNode[k]])
	}
	return lev
}

// sumNode builds sum node v's form: sConst + Σ linW·form(operand), equal
// terms merged.
func (r *realiser) sumNode(v int32) {
	pl := r.pl
	r.fConst[v] = pl.sConst[v]
	r.stamp++
	start := len(r.fTerm)
	for k := pl.sStart[v]; k < pl.sEnd[v]; k++ {
		u, w := pl.linNode[k], pl.linW[k]
		r.fConst[v] += w * r.fConst[u]
		for i := r.fStart[u]; i < r.fEnd[u]; i++ {
			x := r.fTerm[i]
			if r.accMark[x] != r.stamp {
				r.accMark[x] = r.stamp
				r.acc[x] = 0
				r.fTerm = append(r.fTerm, x)
			}
			r.acc[x] += w * r.fCoef[i]
		}
	}
	k := start
	for _, x := range r.fTerm[start:] {
		if a := r.acc[x]; a != 0 {
			r.fTerm[k] = x
			r.fCoef = append(r.fCoef, a)
			k++
		}
	}
	r.fTerm = r.fTerm[:k]
}

// shallower returns, for the round objective, the depth-first plan if pl
// (the round objective's) is not shallower than it: sums known modulo 2
// are decided locally, and a sum can keep a reader from flattening the
// exact parity's pending operands into its own plan, which on some
// circuits costs a level further on. So the round objective is never
// deeper than depth first, and where it is not shallower it is depth first.
func shallower(ctx context.Context, n *normal, outputs []int32, opts Options, pl *plans) (*plans, error) {
	if opts.Objective != Round {
		return pl, nil
	}
	opts.Objective = Depth
	d, err := planAll(ctx, n, outputs, opts)
	if err != nil {
		return nil, err
	}
	if d.depth <= pl.depth {
		return d, nil
	}
	return pl, nil
}
