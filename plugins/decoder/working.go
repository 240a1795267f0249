package decoder

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// A step is a run of at most k levels. Its working is what later steps read
// of the values it computes: a reader (a node of a later step, or an
// output) reads Σ coef·node over the step's nodes; the step writes a basis
// of those restricted sums as bits (each a 0/1 combination of its nodes),
// and every reader's sum is a linear combination of the bits plus a
// constant.

// schedule places the nodes in steps: node v (retimed to its latest level
// lv[v]) is in step s when its level is in (end[s−1], end[s]]; the inputs
// are step 0 (the prompt). Steps end at levels first, first+k, …, depth.
type schedule struct {
	k     int
	lv    []int32
	end   []int32 // end[0] = 0; end[s] is step s's last level
	step  []int32 // per node
	local []int32 // per node: its level within its step, 1 … k (inputs 0)
}

func newSchedule(g *dag, lv []int32, k, first int) *schedule {
	sc := &schedule{k: k, lv: lv, end: []int32{0}}
	for e := first; ; e += k {
		if e >= g.depth {
			sc.end = append(sc.end, int32(g.depth))
			break
		}
		sc.end = append(sc.end, int32(e))
	}
	sc.step = make([]int32, g.nodes())
	sc.local = make([]int32, g.nodes())
	s := 1
	// Nodes are in level order of the layered circuit, not of lv: search.
	for v := g.nIn; v < g.nodes(); v++ {
		L := lv[v]
		s, _ = slices.BinarySearch(sc.end, L)
		sc.step[v] = int32(s)
		sc.local[v] = L - sc.end[s-1]
	}
	return sc
}

// steps returns the number of steps (the prompt, step 0, not counted).
func (sc *schedule) steps() int { return len(sc.end) - 1 }

// vec is a sparse integer combination of nodes, sorted by node.
type vec struct {
	node []int32
	coef []int64
}

func (x vec) key() string {
	b := make([]byte, 0, 16*len(x.node))
	for i, v := range x.node {
		b = appendInt(b, int64(v))
		b = appendInt(b, x.coef[i])
	}
	return string(b)
}

// bitDef is one bit a step writes: value = Σ coef·node + cst, 0 or 1.
type bitDef struct {
	x   vec
	cst int64
}

// coord expresses a reader's restricted sum: Σ alpha·bit + cst.
type coord struct {
	bit   []int32 // index among the step's bits
	alpha []float64
	cst   float64
}

// working is every step's bits and every reader's coordinates.
type working struct {
	bits [][]bitDef // per step (index 0: the inputs, one bit each)
	// reads[v] maps a step s to node v's restricted sum over step s's
	// nodes, in coordinates (for every step v reads but its own).
	reads []map[int32]*coord
	// outs[o] is output o in coordinates of its step (outStep[o]).
	outs    []*coord
	outStep []int32
}

// restrict splits node v's terms by the step of their source. Constants
// are left out: the model reads them from the position embedding.
func restrict(g *dag, sc *schedule, v int) map[int32]vec {
	src, coef := g.terms(v)
	m := map[int32]vec{}
	for e, u := range src {
		if g.isConst(u) {
			continue
		}
		s := sc.step[u]
		x := m[s]
		x.node = append(x.node, u)
		x.coef = append(x.coef, coef[e])
		m[s] = x
	}
	return m
}

// buildWorking finds every step's bits.
func buildWorking(ctx context.Context, g *dag, sc *schedule) (*working, error) {
	S := sc.steps()
	w := &working{bits: make([][]bitDef, S+1), reads: make([]map[int32]*coord, g.nodes()),
		outs: make([]*coord, len(g.out)), outStep: make([]int32, len(g.out))}
	// Readers per step: the restricted sums later steps read.
	type reader struct {
		v int32 // reading node, or −1−o for output o
		x vec
	}
	readers := make([][]reader, S+1)
	for v := g.nIn; v < g.nodes(); v++ {
		for s, x := range restrict(g, sc, v) {
			if s != sc.step[v] {
				readers[s] = append(readers[s], reader{int32(v), x})
			}
		}
	}
	for o, v := range g.out {
		s := sc.step[v]
		w.outStep[o] = s
		if g.isConst(v) {
			w.outStep[o] = -1 // read from the position embedding
			continue
		}
		if int(s) != S {
			readers[s] = append(readers[s], reader{int32(-1 - o), vec{[]int32{v}, []int64{1}}})
		}
	}
	// Step 0: the inputs are the prompt's bits.
	for i := range g.nIn {
		w.bits[0] = append(w.bits[0], bitDef{x: vec{[]int32{int32(i)}, []int64{1}}})
	}
	for s := 0; s <= S; s++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var b *basis
		if s > 0 {
			b = newBasis(g)
			// Bits first: the parts of the readers' sums on one family
			// (a function of one sum: a sum's bit, a parity), then the
			// sums themselves, where 0/1.
			for _, r := range readers[s] {
				for _, x := range familyParts(g, r.x) {
					b.offer(x)
				}
			}
			for _, r := range readers[s] {
				b.offer(r.x)
			}
		}
		for _, r := range readers[s] {
			var c *coord
			if s == 0 {
				c = &coord{}
				for i, u := range r.x.node {
					c.bit = append(c.bit, u)
					c.alpha = append(c.alpha, float64(r.x.coef[i]))
				}
			} else {
				var err error
				if c, err = b.coords(r.x); err != nil {
					return nil, fmt.Errorf("decoder: step %d: %w", s, err)
				}
			}
			if r.v < 0 {
				w.outs[-1-r.v] = c
				continue
			}
			if w.reads[r.v] == nil {
				w.reads[r.v] = map[int32]*coord{}
			}
			w.reads[r.v][int32(s)] = c
		}
		if b != nil {
			w.bits[s] = b.bits // with the single nodes coords added
			w.canonicalOrder(int32(s))
		}
	}
	return w, nil
}

// canonicalOrder orders step s's bits by the nodes that make them (the
// order the construction built them in), not by the readers that chose
// them, so that alike steps pack alike tokens; the readers' coordinates
// follow.
func (w *working) canonicalOrder(s int32) {
	bits := w.bits[s]
	perm := make([]int, len(bits)) // new position → old index
	for i := range perm {
		perm[i] = i
	}
	slices.SortStableFunc(perm, func(a, b int) int {
		return slices.Compare(bits[a].x.node, bits[b].x.node)
	})
	newOf := make([]int32, len(bits))
	sorted := make([]bitDef, len(bits))
	for ni, oi := range perm {
		newOf[oi] = int32(ni)
		sorted[ni] = bits[oi]
	}
	w.bits[s] = sorted
	remap := func(c *coord) {
		for i, k := range c.bit {
			c.bit[i] = newOf[k]
		}
	}
	for _, rd := range w.reads {
		if c := rd[s]; c != nil {
			remap(c)
		}
	}
	for o, c := range w.outs {
		if c != nil && w.outStep[o] == s {
			remap(c)
		}
	}
}

// basis collects a step's bits: each offered sum that is 0/1 (or constant)
// and independent of the bits so far becomes a bit; coords expresses any
// sum in the bits, adding single nodes (gates are bits) where a sum is not
// in their span.
type basis struct {
	g    *dag
	bits []bitDef
	// Reduced rows: row i has pivot node piv[i] (its smallest), entries
	// in rows[i]; comb[i] says which bits it is, Σ comb·bit_value_sums.
	rows  []map[int32]float64
	comb  []map[int32]float64
	pivot map[int32]int // node → row
}

func newBasis(g *dag) *basis {
	return &basis{g: g, pivot: map[int32]int{}}
}

// valueRange returns the least and greatest value of Σ coef·node over all
// inputs, exactly for the steps of one sum (a family), summed over
// families (a bound).
func valueRange(g *dag, x vec) (lo, hi int64) {
	byFam := map[int32][]int{}
	for i, v := range x.node {
		byFam[g.family[v]] = append(byFam[g.family[v]], i)
	}
	for f, idx := range byFam {
		if f < 0 { // inputs: each 0 or 1
			for _, i := range idx {
				c := x.coef[i]
				lo += min(c, 0)
				hi += max(c, 0)
			}
			continue
		}
		// Steps [S ≥ θ] of one S: in threshold order, the value runs
		// through the prefix sums of the coefficients, for the S the
		// terms allow.
		v0 := x.node[idx[0]]
		src, coef := g.terms(int(v0))
		var smin, smax int64
		for e := range src {
			smin += min(coef[e], 0)
			smax += max(coef[e], 0)
		}
		slices.SortFunc(idx, func(a, b int) int {
			return int(g.theta[x.node[a]] - g.theta[x.node[b]])
		})
		var base int64
		var ths []int
		for _, i := range idx {
			th := g.theta[x.node[i]]
			switch {
			case th <= smin:
				base += x.coef[i]
			case th <= smax:
				ths = append(ths, i)
			}
		}
		flo, fhi, cur := base, base, base
		for _, i := range ths {
			cur += x.coef[i]
			flo, fhi = min(flo, cur), max(fhi, cur)
		}
		lo += flo
		hi += fhi
	}
	return lo, hi
}

// reduce reduces x by the rows: it returns the remainder and the
// combination of bits subtracted (x = remainder + Σ f·bits_sum).
func (b *basis) reduce(x vec) (map[int32]float64, map[int32]float64) {
	r := make(map[int32]float64, len(x.node))
	for i, v := range x.node {
		r[v] = float64(x.coef[i])
	}
	f := map[int32]float64{}
	for {
		best := int32(math.MaxInt32)
		for v, c := range r {
			if _, ok := b.pivot[v]; ok && c != 0 && v < best {
				best = v
			}
		}
		if best == math.MaxInt32 {
			break
		}
		ri := b.pivot[best]
		row := b.rows[ri]
		m := r[best] / row[best]
		for v, c := range row {
			nv := r[v] - m*c
			if math.Abs(nv) < 1e-9 {
				delete(r, v)
			} else {
				r[v] = nv
			}
		}
		for k, c := range b.comb[ri] {
			f[k] += m * c
		}
	}
	return r, f
}

// add makes the sum x (a bit's node sum) a new bit, with remainder r and
// reduction f from reduce.
func (b *basis) add(d bitDef, r, f map[int32]float64) {
	k := int32(len(b.bits))
	b.bits = append(b.bits, d)
	piv := int32(math.MaxInt32)
	for v := range r {
		piv = min(piv, v)
	}
	comb := map[int32]float64{k: 1}
	for j, c := range f {
		comb[j] -= c
	}
	b.pivot[piv] = len(b.rows)
	b.rows = append(b.rows, r)
	b.comb = append(b.comb, comb)
}

// offer adds x as a bit if it is 0/1 valued and independent.
func (b *basis) offer(x vec) {
	lo, hi := valueRange(b.g, x)
	if hi-lo != 1 {
		return
	}
	r, f := b.reduce(x)
	if len(r) == 0 {
		return
	}
	b.add(bitDef{x: x, cst: -lo}, r, f)
}

// coords expresses x in the bits (adding single nodes as bits where
// needed): x = Σ alpha·(Σ bit's nodes) = Σ alpha·(bit − cst).
func (b *basis) coords(x vec) (*coord, error) {
	for range len(x.node) + 1 {
		r, f := b.reduce(x)
		if len(r) == 0 {
			c := &coord{}
			keys := make([]int32, 0, len(f))
			for k, a := range f {
				if math.Abs(a) > 1e-12 {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				c.bit = append(c.bit, k)
				c.alpha = append(c.alpha, f[k])
				c.cst -= f[k] * float64(b.bits[k].cst)
			}
			return c, nil
		}
		// Not in the span: its smallest remaining node becomes a bit.
		piv := int32(math.MaxInt32)
		for v := range r {
			piv = min(piv, v)
		}
		one := vec{[]int32{piv}, []int64{1}}
		r1, f1 := b.reduce(one)
		b.add(bitDef{x: one}, r1, f1)
	}
	return nil, fmt.Errorf("a sum of %d nodes is not in the span of its bits", len(x.node))
}

// familyParts splits x by family (the steps of one sum), in the order the
// families first appear; a sum over one family is returned whole.
func familyParts(g *dag, x vec) []vec {
	var order []int32
	parts := map[int32]*vec{}
	for i, v := range x.node {
		f := g.family[v]
		if f < 0 {
			f = -1 - v // an input is its own part
		}
		p, ok := parts[f]
		if !ok {
			p = &vec{}
			parts[f] = p
			order = append(order, f)
		}
		p.node = append(p.node, v)
		p.coef = append(p.coef, x.coef[i])
	}
	out := make([]vec, len(order))
	for i, f := range order {
		out[i] = *parts[f]
	}
	return out
}
