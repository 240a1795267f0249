package fusion

import (
	"context"
)

// Plan kinds.
const (
	pkNone  uint8 = iota // not a real node
	pkInput              // a primary input: its own form at level 0
	pkConst              // a constant (base); no gates
	pkAlias              // form(v) = base ? 1 − form(aliasOf) : form(aliasOf)
	pkGates              // F(S) over forms of level tlev: gates at tlev+1
	pkSum                // form(v) = sConst + Σ linW·form(linNode), known mod 2 (modular.go)
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

	// hi is the top of the range [0, hi] of a node's form: 1 for an exact
	// value, more for a sum known only modulo 2 (modular.go).
	hi []int64
	// xorOnly marks the nodes only parities read (round objective).
	xorOnly []bool
	// pair holds the operands of rule 10's plans (modular.go).
	pair map[int32][2]int32
	// objective is the objective the plan was made with (a round plan
	// that is not shallower than depth first is the depth-first plan:
	// shallower).
	objective Objective
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
			objective: opts.Objective,
		},
		n: n, opts: opts, sol: newSolver(opts),
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
	p.initModular(outputs)
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

// scratchRange returns the range of scratch component k plus c (a form
// ranges over [0, hi]: modular.go).
func (p *planner) scratchRange(k int, c int64) (lo, hi int64) {
	lo, hi = c, c
	for i, w := range p.tmpW[k] {
		if w < 0 {
			lo += w * p.hi[p.tmpNode[k][i]]
		} else {
			hi += w * p.hi[p.tmpNode[k][i]]
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
