package fusion

import "fmt"

// pending where that lowers the level or saves gates (rule 5).
func (p *planner) planThr(v int32) error {
	ops, _ := p.n.ops(v)
	tstar, plainT := int32(0), int32(0)
	anyPend := false
	for _, u := range ops {
		b := p.lev[u]
		plainT = max(plainT, b)
		if l, ok := p.pendLevel(u, false); ok {
			anyPend = true
			b = min(b, l)
		}
		tstar = max(tstar, b)
	}
	p.plainLev[v] = plainT
	if !anyPend {
		return p.plainThr(v)
	}
	cg, ce := p.carryCost(ops, plainT)
	bestMode, bestT, bestG, bestE := 0, plainT, 1+cg, p.faninOf(ops)+ce
	// As in planXor, the scratch components are those of the last mode.
	var cd candidate
	last := p.lastMode(ops, tstar, false)
	for mode := modeRequired; mode <= last; mode++ {
		if cd = p.gatherThr(v, tstar, mode); cd.ok && p.better(cd.t, cd.gates, cd.edges, bestT, bestG, bestE) {
			bestMode, bestT, bestG, bestE = mode, cd.t, cd.gates, cd.edges
		}
	}
	if bestMode != 0 {
		if bestMode != last {
			cd = p.gatherThr(v, tstar, bestMode)
		}
		if p.assemble(v, cd.k, cd.sol, cd.consts) {
			p.fused[v] = true
			p.finish(v)
			return nil
		}
	}
	return p.plainThr(v)
}

// gatherThr builds the fused candidate of threshold node v for a mode:
// component 0 holds the operands read as forms, one component per pending
// operand.
func (p *planner) gatherThr(v int32, tstar int32, mode int) candidate {
	ops, ws := p.n.ops(v)
	var cd candidate
	var sh shape
	sh.rootP = p.n.val[v]
	p.tmpNode[0], p.tmpW[0] = p.tmpNode[0][:0], p.tmpW[0][:0]
	k := 1
	plainCost := 1
	var savedG, savedE int64
	for i, u := range ops {
		l, can := p.pendLevel(u, false)
		if p.lev[u] <= tstar && !(mode == modeOptional && can && l <= tstar && p.n.uses[u] == 1) {
			p.tmpNode[0] = append(p.tmpNode[0], u)
			p.tmpW[0] = append(p.tmpW[0], ws[i])
			continue
		}
		if k == maxComps {
			return cd
		}
		plainCost += p.nsw(u)
		if p.n.uses[u] == 1 {
			savedG += p.gcost[u]
			savedE += p.ecost[u]
		}
		sh.w[k] = ws[i]
		if p.n.kind[u] == nkThr {
			c, s, neg := p.loadThr(k, u)
			cd.consts[k] = c
			sh.kind[k], sh.p[k], sh.neg[k] = ckThr, s, neg
			sh.lo[k], sh.hi[k] = p.scratchRange(k, c)
		} else {
			p.tmpNode[k] = append(p.tmpNode[k][:0], p.linNode[p.pStart[u]:p.pEnd[u]]...)
			p.tmpW[k] = p.tmpW[k][:0]
			for range p.tmpNode[k] {
				p.tmpW[k] = append(p.tmpW[k], 1)
			}
			sh.kind[k], sh.p[k] = ckPar, int64(p.pC[u])
			sh.lo[k], sh.hi[k] = 0, p.itemRange(p.tmpNode[k])
		}
		k++
	}
	if k == 1 {
		return cd
	}
	sh.kind[0], sh.w[0] = ckDirect, 1
	sh.lo[0], sh.hi[0] = p.scratchRange(0, 0)
	sh.n = int8(k)
	sol := p.sol.solve(sh)
	if sol == nil || len(sol.at) > p.limit(plainCost) {
		return cd
	}
	cd.ok, cd.kind, cd.sol, cd.k = true, pkGates, sol, k
	t, fanin, cg, ce := p.scratchLevel(k)
	cd.t = t
	cd.gates = int64(len(sol.at)) - savedG + cg
	cd.edges = int64(len(sol.at))*fanin - savedE + ce
	return cd
}

// plainThr realises v as one gate over its operands' forms (rule 3).
func (p *planner) plainThr(v int32) error {
	ops, ws := p.n.ops(v)
	if sumAbs(ws) > maxWeightSum {
		return fmt.Errorf("node %d: threshold weights too large (Σ|w| > %d)", v, maxWeightSum)
	}
	p.sStart[v] = int32(len(p.linNode))
	p.linNode = append(p.linNode, ops...)
	p.linW = append(p.linW, ws...)
	p.sEnd[v] = int32(len(p.linNode))
	p.sConst[v], p.base[v] = 0, 0
	p.swStart[v] = int32(len(p.swAt))
	p.swAt = append(p.swAt, p.n.val[v])
	p.swSign = append(p.swSign, 1)
	p.swEnd[v] = int32(len(p.swAt))
	p.xorRoot[v], p.fused[v] = false, false
	p.cStart[v], p.cEnd[v] = int32(len(p.comp)), int32(len(p.comp))
	p.finish(v)
	return nil
}

func sumAbs(ws []int64) int64 {
	var s int64
	for _, w := range ws {
		if w < 0 {
			s -= w
		} else {
			s += w
		}
	}
	return s
}

// assemble records node v's plan S = Σ mult[j]·(scratch component j +
// consts[j]) with sol's switch points. It reports false if the sum's
// weights are too large.
func (p *planner) assemble(v int32, k int, sol *solution, consts [maxComps]int64) bool {
	p.newStamp()
	p.accNode = p.accNode[:0]
	var sc int64
	for j := 0; j < k; j++ {
		m := sol.mult[j]
		sc += m * consts[j]
		for i, u := range p.tmpNode[j] {
			if p.mark[u] != p.stamp {
				p.mark[u] = p.stamp
				p.cnt[u] = 0
				p.accNode = append(p.accNode, u)
			}
			p.cnt[u] += m * p.tmpW[j][i]
		}
	}
	var abs int64
	start := int32(len(p.linNode))
	for _, u := range p.accNode {
		w := p.cnt[u]
		if w == 0 {
			continue
		}
		if w < 0 {
			abs -= w
		} else {
			abs += w
		}
		p.linNode = append(p.linNode, u)
		p.linW = append(p.linW, w)
	}
	if abs > maxWeightSum {
		p.linNode, p.linW = p.linNode[:start], p.linW[:start]
		return false
	}
	p.sStart[v], p.sEnd[v], p.sConst[v] = start, int32(len(p.linNode)), sc
	p.base[v] = sol.base
	p.swStart[v] = int32(len(p.swAt))
	p.swAt = append(p.swAt, sol.at...)
	p.swSign = append(p.swSign, sol.sign...)
	p.swEnd[v] = int32(len(p.swAt))
	p.cStart[v], p.cEnd[v] = int32(len(p.comp)), int32(len(p.comp))
	return true
}

// matWorth reports whether, with the size objective, a form of terms
// gates read by about r gates is worth materialising as one gate: it
// turns terms·r edges into terms + r.
func (p *planner) matWorth(v int32, terms int32) bool {
	if p.readers == nil {
		return false
	}
	r := p.readers[v]
	return terms >= 2 && r >= 2 && terms*r > terms+r
}
