package fusion

import (
	"context"
	"fmt"
)

// Values known only modulo 2 (the "round" objective, rule 9).
//
// A value whose every reader is a parity (an XOR node, never a threshold
// op, a SUMBIT or an output) is only ever needed modulo 2: a parity of it adds it to
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
		// Every reader but a parity needs its operands exact: a threshold
		// op compares their weighted sum, and a SUMBIT reads bit k of it
		// (its switch points assume operands in [0, 1]; a parity a ⊕ b
		// kept as the sum a + b would add 2, not 0, when both are 1).
		if k := p.n.kind[v]; k == nkThr || k == nkSum {
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
	if p.xorOnly == nil {
		return int64(len(items)) // no modular forms: every value is exact
	}
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
		if !p.trySum(v, p.lev[v]) && !p.opts.NoPair {
			p.tryPair(v)
		}
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
	if lev < 0 || lev >= than || hi > maxHiRound || p.beyondRound(lev) {
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

// beyondRound reports whether a modular form on level lev is above the
// levels Options.RoundLevels allows them.
func (p *planner) beyondRound(lev int32) bool {
	return p.opts.RoundLevels > 0 && int(lev) > p.opts.RoundLevels
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

// funTable is a switching function F(y) of an integer y ∈ [lo, lo+len(val)),
// as a ckFun component of a fused node (rule 10).
type funTable struct {
	lo  int64
	val []int8
}

// table interns the function F(S) of node v's plan over [lo, hi], so that
// equal functions make equal shapes.
func (s *solver) table(p *plans, v int32, lo, hi int64) *funTable {
	t := &funTable{lo: lo, val: make([]int8, hi-lo+1)}
	f := p.base[v]
	k := p.swStart[v]
	for y := lo; y <= hi; y++ {
		for k < p.swEnd[v] && p.swAt[k] <= y {
			f = 0
			if p.swSign[k] > 0 {
				f = 1
			}
			k++
		}
		t.val[y-lo] = f
	}
	key := make([]byte, 0, 8+len(t.val))
	key = fmt.Appendf(key, "%d:", lo)
	for _, b := range t.val {
		key = append(key, '0'+byte(b))
	}
	if s.tables == nil {
		s.tables = map[string]*funTable{}
	}
	if u, ok := s.tables[string(key)]; ok {
		return u
	}
	s.tables[string(key)] = t
	return t
}

// tryPair (rule 10, round objective) realises a parity v = c ⊕ x ⊕ y of
// two switching functions x = F(S_x), y = G(S_y) of level-T sums, which
// its exact plan puts above level T+1 (Keccak's last χ, read by the
// outputs: a ⊕ (¬b ∧ c) with a a parity of S_a and ¬b ∧ c a fused
// function of S_b and S_c), on level T+1: as x ⊕ y = x + y − 2·[x ∧ y],
// the forms of x and y (on T+1) plus −2 times the switching function
// [F(S_x) + G(S_y) ≥ 2] of the projection of (S_x, S_y) (for c = 1, the
// negation 1 − x − y + 2·[x ∧ y]). The AND has about half the switch
// points of the 2-D parity F ⊕ G (it changes only where one factor is 1).
func (p *planner) tryPair(v int32) {
	if p.opts.Objective != Round || p.pk[v] != pkGates {
		return
	}
	ops, _ := p.n.ops(v)
	if len(ops) != 2 {
		return
	}
	var sh shape
	var consts [maxComps]int64
	T := int32(0)
	for k, u := range ops {
		if p.pk[u] != pkGates || p.mat[u] || p.tlev[u] < 0 {
			return
		}
		T = max(T, p.tlev[u])
		p.tmpNode[k] = append(p.tmpNode[k][:0], p.linNode[p.sStart[u]:p.sEnd[u]]...)
		p.tmpW[k] = append(p.tmpW[k][:0], p.linW[p.sStart[u]:p.sEnd[u]]...)
		lo, hi := p.scratchRange(k, p.sConst[u])
		if hi-lo >= maxBoxRound {
			return
		}
		consts[k] = p.sConst[u]
		sh.kind[k], sh.lo[k], sh.hi[k] = ckFun, lo, hi
		sh.fun[k] = p.sol.table(p.plans, u, lo, hi)
	}
	if p.lev[v] <= T+1 || p.beyondRound(T+1) {
		return
	}
	sh.rootP, sh.n, sh.w[0], sh.w[1] = 2, 2, 1, 1
	sol := p.sol.solve(sh)
	if sol == nil || !p.assemble(v, 2, sol, consts) {
		return
	}
	p.xorRoot[v], p.fused[v] = false, true
	if p.pair == nil {
		p.pair = make(map[int32][2]int32)
	}
	p.pair[v] = [2]int32{ops[0], ops[1]}
	p.finish(v)
	p.terms[v] += p.terms[ops[0]] + p.terms[ops[1]]
}

// pairOf returns the operands of node v if its plan is rule 10's
// x + y − 2·[x ∧ y] (still fused: the slack pass may have replaced it).
func (p *plans) pairOf(v int32) ([2]int32, bool) {
	xy, ok := p.pair[v]
	return xy, ok && p.fused[v] && p.pk[v] == pkGates
}

// pairForm turns node v's form, the switch gates of [x ∧ y], into
// c + s·(x + y) − 2s·[x ∧ y] with s = 1 − 2c (rule 10).
func (r *realiser) pairForm(v int32, xy [2]int32) {
	c := r.n.val[v]
	s := 1 - 2*c
	r.fConst[v] = c - 2*s*r.fConst[v]
	for k := r.fStart[v]; k < int32(len(r.fTerm)); k++ {
		r.fCoef[k] *= -2 * s
	}
	for _, u := range xy {
		r.fConst[v] += s * r.fConst[u]
		for k := r.fStart[u]; k < r.fEnd[u]; k++ {
			r.fTerm = append(r.fTerm, r.fTerm[k])
			r.fCoef = append(r.fCoef, s*r.fCoef[k])
		}
	}
}
