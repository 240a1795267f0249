package fusion

import "context"

// relax is the backward pass. The forward pass fused greedily, wherever a
// node's own level dropped; that can cost gates for nothing when no reader
// needed the lower level. Walking from the outputs down, relax computes for
// every needed node the latest level its form may live on without making
// the circuit deeper (its slack), and replaces a fused plan by the plain
// one when the plain one fits and costs fewer gates. It then recomputes the
// levels forward.
func (p *planner) relax(ctx context.Context, outputs []int32) error {
	nn := int32(len(p.pk))
	const inf = int32(1 << 30)
	alap := make([]int32, nn)
	for v := range alap {
		alap[v] = inf
	}
	for _, o := range outputs {
		p.outS[o] = p.pk[o] == pkGates && p.nsw(o) == 1
	}
	depth := p.outDepth(outputs)
	for _, o := range outputs {
		if !p.outS[o] {
			alap[o] = min(alap[o], depth-1)
			continue
		}
		for k := p.sStart[o]; k < p.sEnd[o]; k++ {
			x := p.linNode[k]
			alap[x] = min(alap[x], depth-1)
		}
	}
	for v := nn - 1; v >= 0; v-- {
		if v%65536 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if alap[v] == inf {
			continue
		}
		p.need[v] = true
		switch p.pk[v] {
		case pkAlias:
			u := p.aliasOf[v]
			alap[u] = min(alap[u], alap[v])
		case pkSum:
			for k := p.sStart[v]; k < p.sEnd[v]; k++ {
				x := p.linNode[k]
				alap[x] = min(alap[x], alap[v])
			}
		case pkGates:
			if p.fused[v] && !p.outS[v] {
				if err := p.unfuse(v, alap); err != nil {
					return err
				}
			}
			if xy, ok := p.pairOf(v); ok {
				for _, x := range xy {
					alap[x] = min(alap[x], alap[v])
				}
			}
			top := alap[v] - 1
			if p.mat[v] {
				top--
			}
			for k := p.sStart[v]; k < p.sEnd[v]; k++ {
				x := p.linNode[k]
				alap[x] = min(alap[x], top)
			}
		}
	}
	for v := int32(0); v < nn; v++ {
		if p.need[v] || p.outS[v] {
			switch p.pk[v] {
			case pkAlias:
				p.lev[v] = p.lev[p.aliasOf[v]]
			case pkSum:
				p.lev[v] = p.sumLevel(v)
			case pkGates:
				p.finish(v)
			}
		}
	}
	p.depth = p.outDepth(outputs)
	return nil
}

// outDepth is the level of the output gates: one above every output's
// form, or, for a one-gate output, the level of that gate.
func (p *planner) outDepth(outputs []int32) int32 {
	depth := int32(1)
	for _, o := range outputs {
		if p.outS[o] {
			depth = max(depth, p.tlev[o]+1)
		} else {
			depth = max(depth, p.lev[o]+1)
		}
	}
	return depth
}

// unfuse replaces v's fused plan by the plain one if that fits under
// alap[v] and costs less (counting the operands whose forms nobody reads
// yet).
func (p *planner) unfuse(v int32, alap []int32) error {
	ops, _ := p.n.ops(v)
	t := int32(0)
	for _, u := range ops {
		t = max(t, p.lev[u])
	}
	g := int64(1)
	if p.n.kind[v] == nkXor {
		g = int64(len(ops))
	}
	e := g * p.faninOf(ops)
	lev := t + 1
	if p.matWorth(v, int32(g)) && t+2 <= p.bound[v] {
		e += g
		g++
		lev++
	}
	for _, u := range ops {
		if alap[u] == 1<<30 && p.pk[u] == pkGates {
			g += p.gcost[u]
			e += p.ecost[u]
		}
	}
	if lev > alap[v] || !p.better(0, g, e, 0, p.gcost[v], p.ecost[v]) {
		return nil
	}
	if p.n.kind[v] == nkXor {
		p.plainXor(v, ops, p.n.val[v])
		return nil
	}
	return p.plainThr(v)
}

// finish sets node v's kind and levels from its recorded S and switches.
func (p *planner) finish(v int32) {
	if p.swEnd[v] == p.swStart[v] {
		p.pk[v], p.xorRoot[v] = pkConst, false
		p.lev[v], p.tlev[v] = -1, -1
		p.terms[v], p.gcost[v], p.ecost[v] = 0, 0, 0
		return
	}
	p.pk[v] = pkGates
	t := int32(0)
	for k := p.sStart[v]; k < p.sEnd[v]; k++ {
		t = max(t, p.lev[p.linNode[k]])
	}
	p.tlev[v], p.lev[v] = t, t+1
	sw := int64(p.nsw(v))
	p.mat[v] = p.matWorth(v, int32(sw)) && t+2 <= p.bound[v]
	p.terms[v], p.gcost[v] = int32(sw), sw
	p.ecost[v] = sw * p.faninOf(p.linNode[p.sStart[v]:p.sEnd[v]])
	if p.mat[v] {
		p.lev[v] = t + 2
		p.terms[v] = 1
		p.gcost[v]++
		p.ecost[v] += sw
	}
}
