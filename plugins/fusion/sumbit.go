package fusion

import (
	"fmt"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// SUMBIT nodes (modular addition). Bit k of an integer S is a switching
// function of S: it is 1 on [j·2^k, (j+1)·2^k) for odd j, so by rule 4
//
//	bit_k(S) = bit_k(S_min) + Σ_{j·2^k ∈ (S_min, S_max]} ±[S ≥ j·2^k],
//
// one gate per multiple of 2^k the sum can cross, + where bit k turns 1
// and − where it turns 0. S is the node's constant plus the weighted sum
// of its operands' forms: one level, like a parity (XOR is bit 0 of a
// sum of weights 1). For an m-word addition the sum of bits 0…k of every
// word stays below m·2^(k+1), so bit k costs about 2m gates. Compile
// first splits additions whose sums exceed Options.MaxSum into chunks
// with carries (circuit.SplitSums), which keeps weights and thresholds
// bounded at one more level per chunk.

// sumBit normalises SUMBIT node v: constants fold into the constant
// val[v], negated operands w·(1 − x) into val[v] += w and weight −w,
// repeated operands merge, and operands above bit k (weights that are
// multiples of 2^(k+1)) drop out. A node left with no operands is a
// constant.
func (n *normal) sumBit(c *circuit.Circuit, v int32, acc []int64, mark []int32, stamp int32, order *[]int32) error {
	args, exps := c.Operands(v)
	k := c.Param[v]
	if k > 30 {
		return fmt.Errorf("node %d: SUMBIT of bit %d: weights of 2^%d do not fit int32 (split the sum first)", v, k, k)
	}
	var cst int64
	for q, a := range args {
		e := exps[q]
		if e > k {
			continue
		}
		w := int64(1) << uint(e)
		isC, val, base, neg := n.lit(a)
		if isC {
			cst += w * val
			continue
		}
		if neg == 1 {
			cst += w
			w = -w
		}
		if mark[base] != stamp {
			mark[base] = stamp
			acc[base] = 0
			*order = append(*order, base)
		}
		acc[base] += w
	}
	kept := 0
	for _, b := range *order {
		if acc[b] != 0 {
			(*order)[kept] = b
			kept++
		}
	}
	*order = (*order)[:kept]
	if kept == 0 {
		n.kind[v], n.val[v] = nkConst, cst>>uint(k)&1
		return nil
	}
	n.kind[v], n.val[v], n.bit[v] = nkSum, cst, int8(k)
	for _, b := range *order {
		n.opNode = append(n.opNode, b)
		n.opW = append(n.opW, acc[b])
	}
	return nil
}

// planSum realises SUMBIT node v as one switching function of
// S = val + Σ w·form(operand) (rule 4): its switch points are the
// multiples of 2^k in (S_min, S_max].
func (p *planner) planSum(v int32) error {
	ops, ws := p.n.ops(v)
	if sumAbs(ws) > maxWeightSum {
		return fmt.Errorf("node %d: SUMBIT weights too large (Σ|w| > %d)", v, maxWeightSum)
	}
	for _, u := range ops {
		if p.hi[u] != 1 {
			// initModular keeps SUMBIT operands exact; a form known only
			// modulo 2 here would make the sum's switch points wrong.
			return fmt.Errorf("node %d: SUMBIT operand %d is a form known only modulo 2", v, u)
		}
	}
	k := uint(p.n.bit[v])
	cst := p.n.val[v]
	lo, hi := cst, cst
	for _, w := range ws {
		if w < 0 {
			lo += w
		} else {
			hi += w
		}
	}
	bit := func(s int64) int8 { return int8(s >> k & 1) } // floor: exact for negative s too
	p.sStart[v] = int32(len(p.linNode))
	p.linNode = append(p.linNode, ops...)
	p.linW = append(p.linW, ws...)
	p.sEnd[v] = int32(len(p.linNode))
	p.sConst[v], p.base[v] = cst, bit(lo)
	p.swStart[v] = int32(len(p.swAt))
	step := int64(1) << k
	// The first multiple of 2^k above lo.
	for s := (lo>>k + 1) << k; s <= hi; s += step {
		p.swAt = append(p.swAt, s)
		if bit(s) == 1 {
			p.swSign = append(p.swSign, 1)
		} else {
			p.swSign = append(p.swSign, -1)
		}
	}
	p.swEnd[v] = int32(len(p.swAt))
	p.xorRoot[v], p.fused[v] = false, false
	p.cStart[v], p.cEnd[v] = int32(len(p.comp)), int32(len(p.comp))
	p.finish(v)
	return nil
}
