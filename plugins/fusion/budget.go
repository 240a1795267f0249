package fusion

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Width budgets (Options.MaxWidth, parameter max_width).
//
// The objectives trade width for depth: on Keccak the round objective
// takes one level a round at 286 gates a state bit (and about 3,190 a
// digest bit on the last round's level, rule 10), depth first two levels
// a round at 11 a state bit. With a budget, Compile plans every candidate
// of the objective's chain — round, round without rule 10 (NoPair), depth
// first, size first; from depth first on for "depth"; size first alone for
// "size" — and returns the shallowest whose realised circuit's widest
// level (gates and copies) fits. A candidate whose plan already shows it
// cannot fit is not realised: widthBound is a lower bound of the width of
// the circuit a plan becomes, computed on the plan's nodes without
// expanding any form into gates (on full SHA3-256 that rules out the
// round objective's 817,784-gate last level in a second, where realising
// it takes a minute and 7 GB). The final check is always on the realised
// circuit.

// budgetPlan is one candidate of a budget's chain.
type budgetPlan struct {
	name  string // as errors name it
	opts  Options
	pl    *plans
	bound int // widthBound of pl
	width int // the realised circuit's width, 0 if not realised
}

// budgetChain returns the candidates a width budget walks for opts, by
// intended depth, shallowest first.
func budgetChain(opts Options) []budgetPlan {
	var chain []budgetPlan
	add := func(name string, obj Objective, noPair bool) {
		o := opts
		o.MaxWidth, o.Objective, o.NoPair = 0, obj, noPair
		chain = append(chain, budgetPlan{name: name, opts: o})
	}
	if opts.Objective == Round {
		if !opts.NoPair {
			add(`objective "round"`, Round, false)
		}
		add(`objective "round" without rule 10`, Round, true)
	}
	if opts.Objective != Size {
		add(`objective "depth"`, Depth, false)
	}
	add(`objective "size"`, Size, false)
	return chain
}

// compileBudget compiles with a width budget: the shallowest candidate
// of budgetChain whose realised width is at most opts.MaxWidth.
func compileBudget(ctx context.Context, c *circuit.Circuit, n *normal, outputs []int32, opts Options) (*layered.Circuit, error) {
	chain := budgetChain(opts)
	var cands []*budgetPlan
	for i := range chain {
		b := &chain[i]
		pl, err := plan(ctx, n, outputs, b.opts)
		if err != nil {
			return nil, fmt.Errorf("fusion: %s: %w", b.name, err)
		}
		if pl.objective != b.opts.Objective {
			// A round plan no shallower than depth first is the
			// depth-first plan, the chain's next candidate.
			continue
		}
		b.pl = pl
		cands = append(cands, b)
	}
	slices.SortStableFunc(cands, func(a, b *budgetPlan) int { return cmp.Compare(a.pl.depth, b.pl.depth) })
	for _, b := range cands {
		b.bound = widthBound(c, n, b.pl)
		if b.bound > opts.MaxWidth {
			continue
		}
		l, err := buildPlan(ctx, c, n, b.pl, b.opts)
		if err != nil {
			return nil, err
		}
		if b.width = widest(l); b.width <= opts.MaxWidth {
			return l, nil
		}
	}
	// None fits: name the narrowest, realising candidates known only by
	// their bounds until the narrowest is one whose width is measured.
	known := func(b *budgetPlan) int { return max(b.width, b.bound) }
	for {
		var best *budgetPlan
		for _, b := range cands {
			if best == nil || known(b) < known(best) {
				best = b
			}
		}
		if best.width > 0 {
			return nil, fmt.Errorf("fusion: no plan fits max_width = %d: the narrowest, %s, is %d wide", opts.MaxWidth, best.name, best.width)
		}
		l, err := buildPlan(ctx, c, n, best.pl, best.opts)
		if err != nil {
			return nil, err
		}
		best.width = widest(l)
	}
}

// widest returns the number of gates (copies included) of l's widest level.
func widest(l *layered.Circuit) int {
	w := 0
	for L := 1; L <= l.Depth(); L++ {
		w = max(w, l.LevelWidth(L))
	}
	return w
}

// widthBound returns a lower bound of the width of the layered circuit
// build makes of plan pl, computed without realising it.
//
// It follows realise node by node, but a form is a combination of gate
// *groups* instead of gates: the switch gates of one node (every form
// that contains them contains them as one multiple of the node's own
// alternating form), a node's materialised gate, a lift gate, an input.
// A row (the sum a node's gates read) is the merged combination of its
// operands' forms; a group whose coefficient cancels is not a source.
// This gives each group's earliest level (one above its latest source,
// as in the realised gate DAG), the live groups (those an output gate
// reads, transitively) and their latest levels (one below their earliest
// reader, the outputs on the last level). Scheduling keeps every gate
// between those two levels and adds only copies, so for every interval
// of levels [a, b] the live gates that must sit in it fill it at least
// evenly: width ≥ ⌈gates(window ⊆ [a, b]) / (b − a + 1)⌉. A gate with no
// slack makes that its level's own count; on Keccak, where no gate has
// slack, the bound is the width.
func widthBound(c *circuit.Circuit, n *normal, pl *plans) int {
	b := newBounder(c, n, pl)
	for v := int32(0); v < int32(len(pl.pk)); v++ {
		if pl.need[v] {
			b.node(v)
		}
	}
	D := pl.depth
	for _, o := range c.Outputs {
		isC, _, base, _ := n.lit(o)
		b.beginRow()
		switch {
		case isC:
		case pl.outS[base]:
			for k := pl.sStart[base]; k < pl.sEnd[base]; k++ {
				b.prepare(pl.linNode[k], D-1)
			}
			b.beginRow()
			for k := pl.sStart[base]; k < pl.sEnd[base]; k++ {
				b.read(pl.linNode[k], D-1, pl.linW[k])
			}
		default:
			b.prepare(base, D-1)
			b.beginRow()
			b.read(base, D-1, 1)
		}
		b.out = append(b.out, b.group(1, D))
	}
	return b.bound(D)
}

// bounder is widthBound's state: groups (struct of arrays, rows in CSR
// over src) and the nodes' forms over groups.
type bounder struct {
	c  *circuit.Circuit
	n  *normal
	pl *plans

	size, lev, asap []int32 // per group
	rowStart, src   []int32 // per group: its row's source groups
	out             []int32 // the output gates' groups

	fStart, fEnd []int32 // per node: its form over [fStart, fEnd) of fG, fL
	fG           []int32
	fL           []int64
	terms        []int32 // per node: the number of gates of its realised form
	lift         []int32 // per node: its lift gate's group, or -1

	acc   []int64 // per group: its coefficient in the row being built
	mark  []int32
	stamp int32
	rowG  []int32
}

func newBounder(c *circuit.Circuit, n *normal, pl *plans) *bounder {
	nn := len(pl.pk)
	b := &bounder{
		c: c, n: n, pl: pl,
		rowStart: []int32{0},
		fStart:   make([]int32, nn), fEnd: make([]int32, nn),
		terms: make([]int32, nn), lift: make([]int32, nn),
	}
	for v := range b.lift {
		b.lift[v] = -1
	}
	for range c.Inputs {
		b.beginRow()
		b.group(1, 0)
	}
	return b
}

func (b *bounder) beginRow() {
	b.stamp++
	b.rowG = b.rowG[:0]
}

// addGroup adds w·(group g) to the row being built.
func (b *bounder) addGroup(g int32, w int64) {
	if b.mark[g] != b.stamp {
		b.mark[g] = b.stamp
		b.acc[g] = 0
		b.rowG = append(b.rowG, g)
	}
	b.acc[g] += w
}

// addForm adds w·form(x) to the row being built.
func (b *bounder) addForm(x int32, w int64) {
	for k := b.fStart[x]; k < b.fEnd[x]; k++ {
		b.addGroup(b.fG[k], w*b.fL[k])
	}
}

// group adds a group of size gates on level L reading the row being
// built (its groups of non-zero coefficient) and returns its id.
func (b *bounder) group(size, L int32) int32 {
	g := int32(len(b.size))
	a := int32(1)
	if L == 0 {
		a = 0
	}
	for _, s := range b.rowG {
		if b.acc[s] != 0 {
			b.src = append(b.src, s)
			a = max(a, b.asap[s]+1)
		}
	}
	b.rowStart = append(b.rowStart, int32(len(b.src)))
	b.size = append(b.size, size)
	b.lev = append(b.lev, L)
	b.asap = append(b.asap, a)
	b.acc = append(b.acc, 0)
	b.mark = append(b.mark, 0)
	return g
}

// setForm makes the row being built node v's form.
func (b *bounder) setForm(v int32) {
	b.fStart[v] = int32(len(b.fG))
	for _, g := range b.rowG {
		if b.acc[g] != 0 {
			b.fG = append(b.fG, g)
			b.fL = append(b.fL, b.acc[g])
		}
	}
	b.fEnd[v] = int32(len(b.fG))
}

// prepare is realiser.prepare: a multi-gate exact form read above its
// level gets its lift group.
func (b *bounder) prepare(x int32, t int32) {
	pl := b.pl
	if pl.lev[x] == t || b.terms[x] <= 1 || b.lift[x] >= 0 || pl.hi[x] > 1 {
		return
	}
	b.beginRow()
	b.addForm(x, 1)
	b.lift[x] = b.group(1, pl.lev[x]+1)
}

// read is realiser.ref then addForm: w·form(x), or w times its lift gate.
func (b *bounder) read(x int32, t int32, w int64) {
	pl := b.pl
	if pl.lev[x] == t || b.terms[x] <= 1 || pl.hi[x] > 1 {
		b.addForm(x, w)
		return
	}
	b.addGroup(b.lift[x], w)
}

// node is realiser.node over groups.
func (b *bounder) node(v int32) {
	pl := b.pl
	b.beginRow()
	switch pl.pk[v] {
	case pkInput:
		b.addGroup(b.c.Param[v], 1)
		b.terms[v] = 1
	case pkSum:
		for k := pl.sStart[v]; k < pl.sEnd[v]; k++ {
			b.addForm(pl.linNode[k], pl.linW[k])
		}
		for _, g := range b.rowG {
			if b.acc[g] != 0 {
				b.terms[v] += b.size[g]
			}
		}
	case pkAlias:
		u, sign := pl.aliasOf[v], int64(1)
		if pl.base[v] == 1 {
			sign = -1 // 1 − form(u)
		}
		b.addForm(u, sign)
		b.terms[v] = b.terms[u]
	case pkGates:
		t := pl.tlev[v]
		for k := pl.sStart[v]; k < pl.sEnd[v]; k++ {
			b.prepare(pl.linNode[k], t)
		}
		b.beginRow()
		for k := pl.sStart[v]; k < pl.sEnd[v]; k++ {
			b.read(pl.linNode[k], t, pl.linW[k])
		}
		sw := int32(pl.nsw(v))
		g := b.group(sw, t+1)
		b.beginRow()
		b.addGroup(g, 1)
		b.terms[v] = sw
		if xy, ok := pl.pairOf(v); ok {
			s := 1 - 2*b.n.val[v]
			b.acc[g] = -2 * s
			for _, u := range xy {
				b.addForm(u, s)
				b.terms[v] += b.terms[u]
			}
		}
		if pl.mat[v] {
			m := b.group(1, t+2)
			b.beginRow()
			b.addGroup(m, 1)
			b.terms[v] = 1
		}
	}
	b.setForm(v)
}

// bound returns the interval bound of the live groups, or 0 if a group's
// level is outside its window (the model does not match the plan).
func (b *bounder) bound(D int32) int {
	ng := int32(len(b.size))
	const inf = int32(1 << 30)
	alap := make([]int32, ng)
	live := make([]bool, ng)
	for g := range alap {
		alap[g] = inf
	}
	for _, g := range b.out {
		live[g], alap[g] = true, D
	}
	for g := ng - 1; g >= 0; g-- {
		if !live[g] {
			continue
		}
		for _, s := range b.src[b.rowStart[g]:b.rowStart[g+1]] {
			live[s] = true
			alap[s] = min(alap[s], alap[g]-1)
		}
	}
	// Live gates below the output level, bucketed by earliest level.
	count := make([]int32, D+1)
	for g := int32(len(b.c.Inputs)); g < ng; g++ {
		if live[g] && b.lev[g] < D {
			if b.asap[g] > b.lev[g] || b.lev[g] > alap[g] {
				return 0
			}
			count[b.asap[g]]++
		}
	}
	start := make([]int32, D+2)
	for a := int32(1); a <= D; a++ {
		start[a+1] = start[a] + count[a]
	}
	byAsap := make([]int32, start[D+1])
	fill := slices.Clone(start)
	for g := int32(len(b.c.Inputs)); g < ng; g++ {
		if live[g] && b.lev[g] < D {
			byAsap[fill[b.asap[g]]] = g
			fill[b.asap[g]]++
		}
	}
	best := int64(len(b.out))
	col := make([]int64, D+1) // gates of earliest level ≥ a by latest level
	for a := D - 1; a >= 1; a-- {
		for _, g := range byAsap[start[a]:start[a+1]] {
			col[alap[g]] += int64(b.size[g])
		}
		var sum int64
		for e := a; e < D; e++ {
			sum += col[e]
			n := int64(e - a + 1)
			best = max(best, (sum+n-1)/n)
		}
	}
	return int(best)
}
