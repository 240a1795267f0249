package fusion

import (
	"context"
	"fmt"
)

// Plan kinds.
const (
	pkNone  uint8 = iota // not a real node
	pkInput              // a primary input: its own form at level 0
	pkConst              // a constant (base); no gates
	pkAlias              // form(v) = base ? 1 − form(aliasOf) : form(aliasOf)
	pkGates              // F(S) over forms of level tlev: gates at tlev+1
)

// maxItems bounds the parity items of one flattened node.
const maxItems = 64

// maxWeightSum bounds Σ|coefficient| of a fused node's sum S, so that
// expanded rows keep to int32 weights.
const maxWeightSum = 1 << 28

// plans is the first pass's result: for every real node, how it is
// realised and at which level its form lives. Struct of arrays; lists are
// ranges of the shared lin, sw and comp arrays.
type plans struct {
	pk   []uint8
	lev  []int32 // level of the node's form (-1: constant, no level)
	tlev []int32 // pkGates: level T of the forms S reads; gates at T+1
	// plainLev is, for threshold nodes, the level of their operands' forms.
	plainLev []int32
	// bound is a lower bound of the level of node v's value in the
	// Reifier-style layering (XOR: 2 levels, other ops: 1, NOT and
	// constants: 0); no plan puts a form above it.
	bound []int32
	// terms is the number of gates in a node's form; gcost and ecost are
	// the gates and edges its plan creates.
	terms        []int32
	gcost, ecost []int64
	mat          []bool  // the form is materialised as one gate at T+2
	aliasOf      []int32 // pkAlias
	base         []int8  // pkConst: value; pkAlias: negated; pkGates: F(S_min)

	// S = Σ linW·form(linNode) + sConst over [sStart, sEnd).
	sStart, sEnd []int32
	sConst       []int64
	// Switch points of F: [swStart, swEnd) in swAt, swSign.
	swStart, swEnd []int32

	// Parity structure of XOR-rooted plans, for flattening (rule 6):
	// value = pC ⊕ ⊕ items ⊕ ⊕ pending threshold nodes.
	xorRoot      []bool
	pStart, pEnd []int32 // items in linNode
	pC           []int8
	cStart, cEnd []int32 // pending threshold nodes in comp

	// fused marks plans that keep operands pending (rules 5, 6).
	fused []bool
	// need marks the nodes whose form some gate or output reads.
	need []bool
	// outS marks output nodes with a one-gate plan: their output gate is
	// that gate, computed on the last level from S, not a copy of it.
	outS []bool
	// depth is the number of levels, the output level included.
	depth int32

	linNode []int32
	linW    []int64
	swAt    []int64
	swSign  []int8
	comp    []int32
}

// nsw returns the number of switch points (gates) of node v's plan.
func (p *plans) nsw(v int32) int { return int(p.swEnd[v] - p.swStart[v]) }

// planner holds the first pass's scratch state.
type planner struct {
	*plans
	n       *normal
	opts    Options
	sol     *solver
	readers []int32 // estimated number of gates reading each node's form

	// scratch
	mark    []int32
	cnt     []int64
	stamp   int32
	items   []int32
	comps   []int32
	tmpNode [maxComps][]int32
	tmpW    [maxComps][]int64
	accNode []int32
}

// planAll runs the first pass over the normalised circuit in topological
// order.
func planAll(ctx context.Context, n *normal, outputs []int32, opts Options) (*plans, error) {
	nn := len(n.kind)
	p := &planner{
		plans: &plans{
			pk: make([]uint8, nn), lev: make([]int32, nn), tlev: make([]int32, nn),
			mat: make([]bool, nn), aliasOf: make([]int32, nn), base: make([]int8, nn),
			sStart: make([]int32, nn), sEnd: make([]int32, nn), sConst: make([]int64, nn),
			swStart: make([]int32, nn), swEnd: make([]int32, nn),
			xorRoot: make([]bool, nn), pStart: make([]int32, nn), pEnd: make([]int32, nn),
			pC: make([]int8, nn), cStart: make([]int32, nn), cEnd: make([]int32, nn),
			fused: make([]bool, nn), need: make([]bool, nn), plainLev: make([]int32, nn), outS: make([]bool, nn),
			terms: make([]int32, nn), gcost: make([]int64, nn), ecost: make([]int64, nn),
			bound:   make([]int32, nn),
			linNode: make([]int32, 0, len(n.opNode)+nn), linW: make([]int64, 0, len(n.opNode)+nn),
			// The all-plain plan has one switch point per parity operand
			// and per threshold node; fused plans rarely have more.
			swAt: make([]int64, 0, len(n.opNode)+nn), swSign: make([]int8, 0, len(n.opNode)+nn),
		},
		n: n, opts: opts, sol: newSolver(),
		mark: make([]int32, nn), cnt: make([]int64, nn),
	}
	if opts.Objective == Size {
		p.readers = make([]int32, nn)
		for v := int32(0); v < int32(nn); v++ {
			ops, _ := n.ops(v)
			r := int32(1)
			if n.kind[v] == nkXor {
				r = int32(len(ops))
			}
			for _, u := range ops {
				p.readers[u] += r
			}
		}
	}
	for v := int32(0); v < int32(nn); v++ {
		if v%65536 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		p.lev[v], p.tlev[v] = -1, -1
		if k := n.kind[v]; k == nkXor || k == nkThr || k == nkSum {
			ops, _ := n.ops(v)
			b := int32(0)
			for _, u := range ops {
				b = max(b, p.bound[u])
			}
			p.bound[v] = b + 1
			if k == nkXor || k == nkSum {
				p.bound[v]++
			}
		}
		var err error
		switch n.kind[v] {
		case nkInput:
			p.pk[v], p.lev[v], p.terms[v] = pkInput, 0, 1
		case nkXor:
			err = p.planXor(v)
		case nkThr:
			err = p.planThr(v)
		case nkSum:
			err = p.planSum(v)
		}
		if err != nil {
			return nil, err
		}
	}
	if err := p.relax(ctx, outputs); err != nil {
		return nil, err
	}
	return p.plans, nil
}

// canPend reports whether u may be consumed pending (fused into a reader).
func (p *planner) canPend(u int32) bool {
	return p.pk[u] == pkGates
}

// isXorPlan reports whether u's plan is a parity structure (items and
// pending threshold nodes) that a parity reader can flatten (rule 6).
func (p *planner) isXorPlan(u int32) bool {
	return p.xorRoot[u] && p.pEnd[u]-p.pStart[u] <= maxItems
}

// thrLevel is the level of the forms a pending use of threshold node u
// reads: its plan's sum if that is one switch point, else its plain sum.
func (p *planner) thrLevel(u int32) int32 {
	if p.nsw(u) == 1 {
		return p.tlev[u]
	}
	return p.plainLev[u]
}

// pendLevel returns the level of the forms a pending use of u reads, for a
// parity reader (xorReader) or a threshold reader; ok is false if u cannot
// be pending there.
func (p *planner) pendLevel(u int32, xorReader bool) (int32, bool) {
	if !p.canPend(u) {
		return 0, false
	}
	switch {
	case p.n.kind[u] == nkThr:
		return p.thrLevel(u), true
	case p.isXorPlan(u) && (xorReader || p.cEnd[u] == p.cStart[u]):
		return p.tlev[u], true
	}
	return 0, false
}

// loadThr loads threshold node u's sum into scratch component k and
// returns its constant, switch point and negation.
func (p *planner) loadThr(k int, u int32) (c, s int64, neg bool) {
	if p.nsw(u) == 1 {
		p.tmpNode[k] = append(p.tmpNode[k][:0], p.linNode[p.sStart[u]:p.sEnd[u]]...)
		p.tmpW[k] = append(p.tmpW[k][:0], p.linW[p.sStart[u]:p.sEnd[u]]...)
		return p.sConst[u], p.swAt[p.swStart[u]], p.swSign[p.swStart[u]] < 0
	}
	ops, ws := p.n.ops(u)
	p.tmpNode[k] = append(p.tmpNode[k][:0], ops...)
	p.tmpW[k] = append(p.tmpW[k][:0], ws...)
	return 0, p.n.val[u], false
}

// scratchRange returns the range of scratch component k plus c.
func (p *planner) scratchRange(k int, c int64) (lo, hi int64) {
	lo, hi = c, c
	for _, w := range p.tmpW[k] {
		if w < 0 {
			lo += w
		} else {
			hi += w
		}
	}
	return lo, hi
}

// scratchLevel returns the highest form level scratch components 0..k−1
// read, their fan-in in gates, and the gates and edges of the copies and
// lifts that bring lower forms up to that level (see carryCost).
func (p *planner) scratchLevel(k int) (t int32, fanin, cg, ce int64) {
	for j := 0; j < k; j++ {
		for _, u := range p.tmpNode[j] {
			t = max(t, p.lev[u])
			fanin += int64(p.terms[u])
		}
	}
	for j := 0; j < k; j++ {
		g, e := p.carryCost(p.tmpNode[j], t)
		cg += g
		ce += e
	}
	return t, fanin, cg, ce
}

// carryCost estimates the gates and edges needed to read the forms of
// nodes on level t: a form below t is lifted into one gate (if it has
// several) and copied up, one gate and edge a level. Copies are shared by
// all readers, so this overestimates; it only breaks ties between
// candidates of the same level, and only with the depth objective (with
// the size objective it would discourage fusing next to materialised
// forms, which materialises more and costs more copies in the end).
func (p *planner) carryCost(nodes []int32, t int32) (g, e int64) {
	if p.opts.Objective == Size {
		return 0, 0
	}
	for _, u := range nodes {
		l := p.lev[u]
		if l < 0 || l >= t {
			continue
		}
		n := int64(t - l - 1)
		if p.terms[u] > 1 {
			g++
			e += int64(p.terms[u])
			n--
		}
		g += n
		e += n
	}
	return g, e
}

// faninOf returns the fan-in in gates of a gate reading the forms of nodes.
func (p *planner) faninOf(nodes []int32) int64 {
	var f int64
	for _, u := range nodes {
		f += int64(p.terms[u])
	}
	return f
}

func (p *planner) newStamp() {
	p.stamp++
}

func (p *planner) toggle(list *[]int32, u int32) {
	if p.mark[u] != p.stamp {
		p.mark[u] = p.stamp
		p.cnt[u] = 0
		*list = append(*list, u)
	}
	p.cnt[u] ^= 1
}

// oddOnly keeps the nodes of list toggled an odd number of times.
func (p *planner) oddOnly(list []int32) []int32 {
	k := 0
	for _, u := range list {
		if p.cnt[u] == 1 {
			list[k] = u
			k++
		}
	}
	return list[:k]
}

// candidate is one way to realise a node: its kind, the level T of the
// forms it reads, its cost in gates and edges (its own, less those of the
// single-use operands it makes unnecessary) and its solution.
type candidate struct {
	ok     bool
	kind   uint8 // pkGates, pkConst or pkAlias
	t      int32
	gates  int64
	edges  int64
	sol    *solution
	k      int
	consts [maxComps]int64
	c      int64
	// tooBig: too many items or pending threshold nodes to fuse.
	tooBig bool
}

// better reports whether a realisation at level t costing g gates and e
// edges beats one at bt costing bg and be: depth first (level, gates,
// edges) or size first (gates + edges, level).
func (p *planner) better(t int32, g, e int64, bt int32, bg, be int64) bool {
	if p.opts.Objective == Size {
		return g+e < bg+be || (g+e == bg+be && t < bt)
	}
	if t != bt {
		return t < bt
	}
	return g < bg || (g == bg && e < be)
}

// Candidate modes: which operands a fused plan keeps pending.
const (
	modeRequired = 1 // those whose forms live above the lowest reachable level
	modeOptional = 2 // and single-use ones that fit under that level
)

// lastMode returns the last candidate mode worth gathering for a node with
// operands ops and lowest reachable level tstar: modeOptional if it keeps
// some operand pending that modeRequired reads as a form, else
// modeRequired (both modes would gather the same candidate). xorReader is
// as for pendLevel.
func (p *planner) lastMode(ops []int32, tstar int32, xorReader bool) int {
	for _, u := range ops {
		if p.lev[u] > tstar || p.n.uses[u] != 1 {
			continue
		}
		if l, ok := p.pendLevel(u, xorReader); ok && l <= tstar {
			return modeOptional
		}
	}
	return modeRequired
}

// planXor plans a parity node: flatten XOR operands and keep threshold
// operands pending where that lowers the level or saves gates (rules 4–6).
func (p *planner) planXor(v int32) error {
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
		sh.kind[0], sh.lo[0], sh.hi[0] = ckPar, 0, int64(len(p.items))
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
	for s := int64(1); s <= int64(len(items)); s++ {
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
			sh.lo[k], sh.hi[k] = 0, int64(len(p.tmpNode[k]))
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
		case pkGates:
			if p.fused[v] && !p.outS[v] {
				if err := p.unfuse(v, alap); err != nil {
					return err
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
