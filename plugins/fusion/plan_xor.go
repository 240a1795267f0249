package fusion

// planXorExact plans a parity node: flatten XOR operands and keep threshold
// operands pending where that lowers the level or saves gates (rules 4–6).
func (p *planner) planXorExact(v int32) error {
	ops, _ := p.n.ops(v)
	tstar, plainT := int32(0), int32(0)
	anyPend := false
	for _, u := range ops {
		b := p.lev[u]
		plainT = max(plainT, b)
		if l, ok := p.pendLevel(u, true); ok {
			anyPend = true
			b = min(b, l)
		}
		tstar = max(tstar, b)
	}
	if !anyPend {
		p.plainXor(v, ops, p.n.val[v])
		return nil
	}
	bestMode, bestT := 0, plainT
	bestG := int64(len(ops))
	bestE := bestG * p.faninOf(ops)
	cg, ce := p.carryCost(ops, plainT)
	bestG, bestE = bestG+cg, bestE+ce
	// The scratch state (items, comps, components) is that of the mode
	// gathered last; gather the best mode again only if it was not that one.
	var cd candidate
	gathered := 0
	last := p.lastMode(ops, tstar, true)
	for mode := modeRequired; mode <= last; mode++ {
		cd, gathered = p.gatherXor(v, tstar, mode), mode
		if cd.tooBig {
			break // more pending operands only make it bigger
		}
		if cd.ok && (cd.kind != pkGates || p.better(cd.t, cd.gates, cd.edges, bestT, bestG, bestE)) {
			bestMode, bestT, bestG, bestE = mode, cd.t, cd.gates, cd.edges
			if cd.kind != pkGates {
				break
			}
		}
	}
	if bestMode == 0 {
		p.plainXor(v, ops, p.n.val[v])
		return nil
	}
	if bestMode != gathered {
		cd = p.gatherXor(v, tstar, bestMode)
	}
	c := cd.c
	switch cd.kind {
	case pkConst:
		p.pk[v], p.base[v] = pkConst, int8(c)
		return nil
	case pkAlias:
		u := p.items[0]
		if p.hi[u] > 1 {
			// u is known only modulo 2 (modular.go): v is its sum or, if
			// read exactly, its parity counted.
			if !p.trySum(v, 1<<30) {
				p.plainXor(v, p.items, c)
			}
			return nil
		}
		p.pk[v], p.aliasOf[v], p.base[v], p.lev[v] = pkAlias, u, int8(c), p.lev[u]
		p.terms[v] = p.terms[u]
		return nil
	}
	if !p.assemble(v, cd.k, cd.sol, cd.consts) {
		p.plainXor(v, ops, p.n.val[v])
		return nil
	}
	p.xorRoot[v], p.pC[v] = true, int8(c)
	p.pStart[v] = int32(len(p.linNode))
	for _, u := range p.items {
		p.linNode = append(p.linNode, u)
		p.linW = append(p.linW, 1)
	}
	p.pEnd[v] = int32(len(p.linNode))
	p.cStart[v] = int32(len(p.comp))
	p.comp = append(p.comp, p.comps...)
	p.cEnd[v] = int32(len(p.comp))
	p.fused[v] = true
	p.finish(v)
	return nil
}

// gatherXor builds the fused candidate of parity node v for a mode: the
// merged items and pending threshold nodes (p.items, p.comps) and its
// solution.
func (p *planner) gatherXor(v int32, tstar int32, mode int) candidate {
	ops, _ := p.n.ops(v)
	cd := candidate{c: p.n.val[v]}
	p.newStamp()
	p.items, p.comps = p.items[:0], p.comps[:0]
	plainCost, pended := len(ops), 0
	var savedG, savedE int64
	for _, u := range ops {
		l, can := p.pendLevel(u, true)
		if p.lev[u] <= tstar && !(mode == modeOptional && can && l <= tstar && p.n.uses[u] == 1) {
			p.toggle(&p.items, u)
			continue
		}
		pended++
		plainCost += p.nsw(u)
		if p.n.uses[u] == 1 {
			savedG += p.gcost[u]
			savedE += p.ecost[u]
		}
		if p.n.kind[u] == nkXor {
			for k := p.pStart[u]; k < p.pEnd[u]; k++ {
				p.toggle(&p.items, p.linNode[k])
			}
			cd.c ^= int64(p.pC[u])
			for k := p.cStart[u]; k < p.cEnd[u]; k++ {
				p.toggle(&p.comps, p.comp[k])
			}
		} else {
			p.toggle(&p.comps, u)
		}
	}
	if pended == 0 {
		return cd
	}
	p.items, p.comps = p.oddOnly(p.items), p.oddOnly(p.comps)
	switch {
	case len(p.items) == 0 && len(p.comps) == 0:
		cd.ok, cd.kind = true, pkConst
		return cd
	case len(p.items) == 1 && len(p.comps) == 0:
		cd.ok, cd.kind = true, pkAlias
		return cd
	case len(p.comps) >= maxComps || len(p.items) > maxItems:
		cd.tooBig = true
		return cd
	}
	var sh shape
	sh.xorRoot, sh.rootP = true, cd.c
	k := 0
	if len(p.items) > 0 {
		sh.kind[0], sh.lo[0], sh.hi[0] = ckPar, 0, p.itemRange(p.items)
		p.tmpNode[0] = append(p.tmpNode[0][:0], p.items...)
		p.tmpW[0] = p.tmpW[0][:0]
		for range p.items {
			p.tmpW[0] = append(p.tmpW[0], 1)
		}
		k = 1
	}
	for _, u := range p.comps {
		c, s, neg := p.loadThr(k, u)
		cd.consts[k] = c
		sh.kind[k], sh.p[k], sh.neg[k] = ckThr, s, neg
		sh.lo[k], sh.hi[k] = p.scratchRange(k, c)
		k++
	}
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

// limit is the most switch points a fused plan may have when its plain
// alternative (the node and its pending operands as gates) has plainCost.
func (p *planner) limit(plainCost int) int {
	if p.opts.Objective == Round {
		return maxBoxRound
	}
	return 2 * plainCost
}

// plainXor realises v = c ⊕ ⊕ items as counters [Σ items ≥ k].
func (p *planner) plainXor(v int32, items []int32, c int64) {
	p.pStart[v] = int32(len(p.linNode))
	for _, u := range items {
		p.linNode = append(p.linNode, u)
		p.linW = append(p.linW, 1)
	}
	p.pEnd[v] = int32(len(p.linNode))
	p.sStart[v], p.sEnd[v] = p.pStart[v], p.pEnd[v] // S = Σ items
	p.sConst[v] = 0
	p.xorRoot[v], p.pC[v] = true, int8(c)
	p.cStart[v], p.cEnd[v] = int32(len(p.comp)), int32(len(p.comp))
	p.base[v] = int8(c)
	p.swStart[v] = int32(len(p.swAt))
	for s, hi := int64(1), p.itemRange(items); s <= hi; s++ {
		p.swAt = append(p.swAt, s)
		if (c+s)&1 == 1 {
			p.swSign = append(p.swSign, 1)
		} else {
			p.swSign = append(p.swSign, -1)
		}
	}
	p.swEnd[v] = int32(len(p.swAt))
	p.fused[v] = false
	p.finish(v)
}

// planThr plans a threshold node: keep single-switch and parity operands
