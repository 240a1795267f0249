package layered

import (
	"fmt"
	"math"
	"math/bits"
	"sync"

	"github.com/tcforge/tcforge/internal/bitslice"
)

// Eval evaluates the circuit on 64 samples at once: in[i] holds input bit i
// of the 64 samples. It returns the last level's words (the outputs).
// To evaluate many batches, use Evaluator, which prepares the circuit once.
func (c *Circuit) Eval(in []uint64) ([]uint64, error) {
	return c.Evaluator()(in)
}

// Evaluator returns Eval for this circuit with the per-circuit work done
// once (see evalPlan): gates that read the same row as the gate before
// them share one bit-sliced count of it; gates whose value no output
// needs are skipped; the parity gate of an XOR lowered to counters is
// computed directly as the XOR of the counters' row. The returned func is
// safe for concurrent use (bitvec.EvalSliced runs it on every core); the
// circuit must not change while it is in use.
//
// A circuit with forms is evaluated as its Flatten (with the rows of
// consecutive gates that read the same forms flattened once: flatRows),
// or, if that has more than flattenLimit edges, on its forms
// (FormsEvaluator).
func (c *Circuit) Evaluator() func(in []uint64) ([]uint64, error) {
	f := c.flatRows(flattenLimit)
	if f == nil {
		return c.FormsEvaluator()
	}
	p := f.evalPlan()
	nIn, nOut, width := c.NumInputs, c.NumOutputs(), p.width
	bufs := &sync.Pool{New: func() any {
		b := make([]uint64, 2*width)
		return &b
	}}
	return func(in []uint64) ([]uint64, error) {
		if len(in) != nIn {
			return nil, fmt.Errorf("layered: %d input words for %d inputs", len(in), nIn)
		}
		bp := bufs.Get().(*[]uint64)
		prev, cur := (*bp)[:width], (*bp)[width:]
		copy(prev, in)
		var cnt bitslice.Count
		for L := 1; L < len(p.levels); L++ {
			p.level(f, L, prev, cur, &cnt)
			prev, cur = cur, prev
		}
		out := append([]uint64(nil), prev[:nOut]...)
		bufs.Put(bp)
		return out, nil
	}
}

// plan is a circuit's evaluation program, level by level (levels[L],
// L ≥ 1, says where level L's work lies in copies and ins). Gates of no
// copy or instr are not needed by any output; their words are left stale.
type plan struct {
	levels []levelPlan
	copies []copyOp
	ins    []instr
	cmps   []cmpOp
	width  int // the widest level, inputs included

	scratch []cmpOp // a group's comparisons before cmps is allocated (emitGroup)
}

// levelPlan is one level's work: copies[copyLo:copyHi], ins[insLo:insHi].
type levelPlan struct{ copyLo, copyHi, insLo, insHi int32 }

// copyOp sets cur[dst] = prev[src].
type copyOp struct{ dst, src int32 }

// cmpOp sets cur[dst] = [count ≥ θ + neg] for a count computed by an
// instr, whose row's negative weights sum to −neg.
type cmpOp struct{ dst, theta int32 }

// instr computes gate g (global index) from its row, or for the opCount
// ops, the comparisons cmps[c:d] of a group of gates sharing g's row.
type instr struct {
	g, c, d int32
	op      insOp
	k       uint8 // opCount*: planes of the count
	neg     int64 // opCount*: minus the sum of the row's negative weights
}

// insOp is what an instr computes.
type insOp uint8

const (
	opZero   insOp = iota // 0
	opOne                 // all ones
	opOr                  // OR of the row's literals (all weights ±1)
	opAnd                 // AND of the row's literals (all weights ±1)
	opXor                 // XOR of the row's inputs (all weights 1)
	opCount               // count of the row's literals (all weights ±1), compared
	opCountW              // weighted count of the row's literals, compared
)

// level computes level L's words into cur from the previous level's, prev.
func (p *plan) level(f *flat, L int, prev, cur []uint64, cnt *bitslice.Count) {
	lp := p.levels[L]
	for _, cp := range p.copies[lp.copyLo:lp.copyHi] {
		cur[cp.dst] = prev[cp.src]
	}
	lo := int(f.levelStart[L-1])
	rlo, rhi, src, wt := f.lo, f.hi, f.src, f.wt
	for _, in := range p.ins[lp.insLo:lp.insHi] {
		a, b := rlo[in.g], rhi[in.g]
		row := src[a:b]
		var v uint64
		switch in.op {
		case opZero:
		case opOne:
			v = ^uint64(0)
		case opOr:
			w := wt[a:b]
			w = w[:len(row)]
			for k, s := range row {
				v |= prev[s] ^ bitslice.Sign(w[k])
			}
		case opAnd:
			v = ^uint64(0)
			w := wt[a:b]
			w = w[:len(row)]
			for k, s := range row {
				v &= prev[s] ^ bitslice.Sign(w[k])
			}
		case opXor:
			for _, s := range row {
				v ^= prev[s]
			}
		default:
			if in.op == opCount {
				cnt.Literals(prev, row, wt[a:b])
			} else {
				cnt.Weighted(prev, row, wt[a:b])
			}
			k := int(in.k)
			cnt.Finish(k)
			for _, cm := range p.cmps[in.c:in.d] {
				cur[cm.dst] = cnt.AtLeast(uint64(int64(cm.theta)+in.neg), k)
			}
			continue
		}
		cur[int(in.g)-lo] = v
	}
}

// Per-gate planning flags.
const (
	fIdent  = 1 << iota // [x ≥ 1] of one source with weight 1: a copy of x
	fSame               // not an identity, same row as the gate before it in its level, not an identity either
	fLive               // some output needs the gate's value
	fXor                // only shortcut parity gates read the gate: its word holds its row's XOR
	fParity             // a parity gate computed as a copy of its first source's word (an fXor gate)
	fPlain              // not an identity, every weight of the row is 1
)

// evalPlan prepares the evaluation of c.
//
// Rows (markRows): each gate is marked as an identity ([x ≥ 1] of one
// source with weight 1, a copy) or as reading the same row as the gate
// before it (checked edge by edge); such runs of gates are groups sharing
// one row.
//
// Then level by level from the last one down, liveness and emission. A
// gate is live if an output needs it. A live gate P that is the parity of
// an XOR's counters — its row reads exactly the consecutive gates h₁ … hₙ
// of the level before with weights +1, −1, +1, … and θ = 1, where h₂ … hₙ
// each have the row of the gate before them, that row R has n edges of
// weight 1, and hₖ has θ = k — equals the XOR of R's inputs: hₖ = [S ≥ k]
// for S = Σ R ∈ [0, n], and Σₖ (−1)^(k+1)·[S ≥ k] is 1 for odd S and 0
// for even S. Such a P becomes a copy of h₁'s word, and h₁'s word holds
// the XOR of R instead of [S ≥ 1] — unless some other live gate reads h₁
// as a counter, in which case P is evaluated as is. The counters are then
// needed only if some other gate reads them.
//
// Once a level's gates are known live or not, it is emitted: copies; the
// XORs; for each group, its live members: a constant if the threshold is
// out of reach, OR or AND for a lone member whose row is ±1 literals and
// whose threshold asks for one or all of them, else one carry-save count
// of the row compared with each member's threshold. A group's row is
// summarised (rowStats) while its sources are marked live, when it is in
// cache.
func (c *flat) evalPlan() *plan {
	n, depth := len(c.threshold), c.depth()
	p := &plan{width: c.numInputs, levels: make([]levelPlan, depth+1)}
	for L := 1; L <= depth; L++ {
		p.width = max(p.width, int(c.levelStart[L]-c.levelStart[L-1]))
	}
	flags := make([]uint8, n)
	c.markRows(flags)
	if depth == 0 {
		return p
	}
	for g := int(c.levelStart[depth-1]); g < n; g++ {
		flags[g] |= fLive
	}
	// A guess at the number of copies, instrs and comparisons, which
	// saves most of the slices' regrowth.
	est := n/4 + 16
	p.copies = make([]copyOp, 0, est)
	p.ins = make([]instr, 0, est)

	stats := make([]rowStats, p.width) // by index in the level
	var cands []int32
	for L := depth; L >= 1; L-- {
		lo, hi := int(c.levelStart[L-1]), int(c.levelStart[L])
		var prev []uint8 // the previous level's flags; nil for the inputs
		base := 0
		if L >= 2 {
			base = int(c.levelStart[L-2])
			prev = flags[base:lo]
		}
		cands = cands[:0]
		marked := false // the current group's row is marked
		for g := lo; g < hi; g++ {
			f := flags[g]
			if f&fSame == 0 {
				marked = false
			}
			stats[g-lo].ok = false
			switch {
			case f&(fLive|fXor) == 0:
			case f&(fXor|fIdent) != 0:
				c.markSources(g, prev)
			case prev != nil && c.isParity(g, base, prev):
				cands = append(cands, int32(g))
			case !marked:
				stats[g-lo] = c.mark(g, prev)
				marked = true
			}
		}
		// A parity gate whose first counter is read as a counter too is
		// evaluated as is; that reads its counters, so repeat.
		for changed := true; changed; {
			changed = false
			for i, g := range cands {
				if g >= 0 && prev[c.src[c.lo[g]]]&fLive != 0 {
					c.markSources(int(g), prev)
					cands[i] = -1
					changed = true
				}
			}
		}
		for _, g := range cands {
			if g >= 0 {
				prev[c.src[c.lo[g]]] |= fXor
				flags[g] |= fParity
			}
		}

		lp := levelPlan{copyLo: int32(len(p.copies)), insLo: int32(len(p.ins))}
		done := false // the current group is emitted
		for g := lo; g < hi; g++ {
			f := flags[g]
			if f&fSame == 0 {
				done = false
			}
			switch {
			case f&(fLive|fXor) == 0:
			case f&(fIdent|fParity) != 0:
				p.copies = append(p.copies, copyOp{int32(g - lo), c.src[c.lo[g]]})
			case f&fLive == 0: // fXor only
				p.ins = append(p.ins, instr{op: opXor, g: int32(g)})
			case !done:
				done = true
				r := stats[g-lo]
				if !r.ok {
					r = c.mark(g, nil)
				}
				p.emitGroup(c, g, lo, hi, flags, r)
			}
		}
		lp.copyHi, lp.insHi = int32(len(p.copies)), int32(len(p.ins))
		p.levels[L] = lp
	}
	return p
}

// rowStats summarises a row: Σ w⁺ and Σ |w⁻| (the largest sum and minus
// the smallest), whether every weight is ±1 (unit); ok tells a computed
// summary from none.
type rowStats struct {
	pos, neg int64
	unit, ok bool
}

// markSources marks the sources of gate g live in prev, the flags of the
// level before (unless prev is nil: inputs).
func (c *flat) markSources(g int, prev []uint8) {
	if prev != nil {
		for _, s := range c.src[c.lo[g]:c.hi[g]] {
			prev[s] |= fLive
		}
	}
}

// mark marks the sources of gate g live in prev, the flags of the level
// before (unless prev is nil: inputs), and summarises g's row.
func (c *flat) mark(g int, prev []uint8) rowStats {
	c.markSources(g, prev)
	a, b := c.lo[g], c.hi[g]
	// Σ w and Σ |w| without branches (rows of alternating signs are
	// common): Σ w⁺ = (Σ|w| + Σw)/2, Σ|w⁻| = (Σ|w| − Σw)/2.
	var sum, abs int64
	var notUnit int32
	for _, w := range c.wt[a:b] {
		m := w >> 31
		sum += int64(w)
		abs += int64(w^m) - int64(m)
		notUnit |= (w ^ m) - m - 1
	}
	return rowStats{pos: (abs + sum) / 2, neg: (abs - sum) / 2, unit: notUnit == 0, ok: true}
}

// markRows sets fIdent, fSame and fPlain. It is most of the planning
// time (it reads every edge), so a large circuit is split between two
// goroutines at a level boundary.
func (c *flat) markRows(flags []uint8) {
	depth := c.depth()
	if len(c.src) < parallelEdges || depth < 2 {
		c.markLevels(flags, 1, depth)
		return
	}
	half := int32(len(c.src) / 2)
	mid := 1
	for mid < depth-1 && c.lo[c.levelStart[mid]] < half {
		mid++
	}
	var wg sync.WaitGroup
	wg.Go(func() { c.markLevels(flags, 1, mid) })
	c.markLevels(flags, mid+1, depth)
	wg.Wait()
}

// markLevels sets fIdent, fSame and fPlain for the gates of levels from
// first to last.
func (c *flat) markLevels(flags []uint8, first, last int) {
	for L := first; L <= last; L++ {
		lo, hi := int(c.levelStart[L-1]), int(c.levelStart[L])
		for g := lo; g < hi; g++ {
			a, b := c.lo[g], c.hi[g]
			switch {
			case b-a == 1 && c.wt[a] == 1 && c.threshold[g] == 1:
				flags[g] = fIdent
			case g > lo && flags[g-1]&fIdent == 0 && c.sameRow(g-1, g):
				flags[g] = fSame | flags[g-1]&fPlain
			default:
				var f uint8 = fPlain
				for _, w := range c.wt[a:b] {
					if w != 1 {
						f = 0
						break
					}
				}
				flags[g] = f
			}
		}
	}
}

// emitGroup emits the live members of g's group from g (its first live
// member) on, all reading g's row, summarised by r; hi ends the level.
func (p *plan) emitGroup(c *flat, g, lo, hi int, flags []uint8, r rowStats) {
	a, b := c.lo[g], c.hi[g]
	pos, neg, unit := r.pos, r.neg, r.unit
	// Until a group keeps a comparison, they are gathered in scratch:
	// circuits of ORs and ANDs (reifier's) need no comparisons at all.
	all := p.cmps
	if all == nil {
		all = p.scratch[:0]
	}
	first := len(all)
	for m := g; m < hi && (m == g || flags[m]&fSame != 0); m++ {
		if flags[m]&(fLive|fParity) != fLive {
			continue
		}
		t := int64(c.threshold[m])
		switch {
		case t <= -neg:
			p.ins = append(p.ins, instr{op: opOne, g: int32(m)})
		case t > pos:
			p.ins = append(p.ins, instr{op: opZero, g: int32(m)})
		default:
			all = append(all, cmpOp{int32(m - lo), int32(t)})
		}
	}
	cmps := all[first:]
	if p.cmps == nil {
		p.scratch = all[:0]
	}
	if len(cmps) == 0 {
		return
	}
	if len(cmps) == 1 && unit {
		// The count is over b−a literals of weight 1: ≥ 1 is any, ≥ b−a all.
		op := insOp(255)
		switch int64(cmps[0].theta) + neg {
		case 1:
			op = opOr
		case int64(b - a):
			op = opAnd
		}
		if op != 255 {
			p.ins = append(p.ins, instr{op: op, g: cmps[0].dst + int32(lo)})
			if p.cmps != nil {
				p.cmps = all[:first]
			}
			return
		}
	}
	if p.cmps == nil {
		p.cmps = append(make([]cmpOp, 0, max(c.cmpBound(flags), len(cmps))), cmps...)
		p.scratch = nil
	} else {
		p.cmps = all
	}
	op := opCountW
	if unit {
		op = opCount
	}
	k := bits.Len64(uint64(pos + neg))
	p.ins = append(p.ins, instr{op: op, k: uint8(k), g: int32(g), c: int32(first), d: int32(len(p.cmps)), neg: neg})
}

// cmpBound bounds the comparisons of the plan: every gate but identities
// and lone gates of plain rows, which are a constant, an OR or an AND
// (see emitGroup). flags must hold fIdent, fSame and fPlain (markRows).
func (c *flat) cmpBound(flags []uint8) int {
	n := 0
	for L := 1; L <= c.depth(); L++ {
		lo, hi := int(c.levelStart[L-1]), int(c.levelStart[L])
		for g := lo; g < hi; g++ {
			f := flags[g]
			if f&fIdent != 0 {
				continue
			}
			if f&(fSame|fPlain) == fPlain && (g+1 == hi || flags[g+1]&fSame == 0) {
				if t := c.threshold[g]; t < 2 || t >= c.hi[g]-c.lo[g] {
					continue
				}
			}
			n++
		}
	}
	return n
}

// isParity reports whether gate g is the parity of an XOR's counters in
// the level before, which starts at gate base and whose flags are prev:
// its row reads h₁ … hₙ, n ≥ 2, consecutive gates, with weights +1, −1,
// +1, … and θ = 1, where h₂ … hₙ have fSame (so all have h₁'s row), that
// row has n edges all of weight 1 (fPlain), and hₖ has θ = k.
func (c *flat) isParity(g, base int, prev []uint8) bool {
	a, b := c.lo[g], c.hi[g]
	n := int(b - a)
	if n < 2 || c.threshold[g] != 1 {
		return false
	}
	row, ws := c.src[a:b], c.wt[a:b]
	h1 := int(row[0])
	if h1+n > len(prev) {
		return false
	}
	for k := range n {
		if ws[k] != int32(1-2*(k&1)) || int(row[k]) != h1+k ||
			(k > 0 && prev[h1+k]&fSame == 0) || c.threshold[base+h1+k] != int32(k+1) {
			return false
		}
	}
	return prev[h1]&fPlain != 0 && int(c.hi[base+h1]-c.lo[base+h1]) == n
}

// flat is a circuit without forms as the evaluation plan reads it: gate
// g reads src[lo[g]:hi[g]] with weights wt[lo[g]:hi[g]] and fires iff
// their sum reaches threshold[g]. Consecutive gates may share one row.
type flat struct {
	numInputs  int
	levelStart []int32 // as Circuit.LevelStart
	threshold  []int32
	lo, hi     []int32
	src, wt    []int32
}

func (c *flat) depth() int { return len(c.levelStart) - 1 }

// sameRow reports whether gates a and b read the same sources with the
// same weights (false for empty rows, as Circuit.sameRow).
func (c *flat) sameRow(a, b int) bool {
	alo, ahi, blo, bhi := c.lo[a], c.hi[a], c.lo[b], c.hi[b]
	if ahi-alo != bhi-blo || ahi == alo {
		return false
	}
	return alo == blo || equal32(c.src[alo:ahi], c.src[blo:bhi]) && equal32(c.wt[alo:ahi], c.wt[blo:bhi])
}

// flatRows returns c without forms (see Flatten), or nil if that has
// more than limit edges: a circuit without forms as it is; otherwise
// every form a gate reads is substituted into the gate's row, once for a
// run of consecutive gates of a level that read the same forms with the
// same weights (the switch points of one sum: on fusion's SHA3-256, 74
// thousand distinct rows of 2 million entries for 11 million flattened
// edges), which share the flattened row. A large circuit is flattened by
// two goroutines, split at a level boundary.
func (c *Circuit) flatRows(limit int) *flat {
	n := len(c.Kind)
	f := &flat{numInputs: c.NumInputs, levelStart: c.LevelStart}
	if c.FormStart == nil {
		f.threshold, f.lo, f.hi, f.src, f.wt = c.Threshold, c.RowStart[:n], c.RowStart[1:], c.Src, c.Weight
		return f
	}
	lh := make([]int32, 2*n)
	f.lo, f.hi = lh[:n:n], lh[n:]
	depth := c.Depth()
	// Mark the gates that share the row before them (hi = −1), bound the
	// other rows' entries (levels [1, L] need at most bound[L]) and count
	// the flattened edges.
	bound := make([]int, depth+1)
	size, edges, fan := 0, 0, 0
	for L := 1; L <= depth; L++ {
		base, lo, hi := c.FormStart[L-1], int(c.LevelStart[L-1]), int(c.LevelStart[L])
		for g := lo; g < hi; g++ {
			if g > lo && c.sameRow(g-1, g) {
				f.hi[g] = -1
				edges += fan
				continue
			}
			fan = 0
			for _, s := range c.Src[c.RowStart[g]:c.RowStart[g+1]] {
				fan += int(c.FormRowStart[base+s+1] - c.FormRowStart[base+s])
			}
			size += fan
			edges += fan
		}
		bound[L] = size
	}
	if edges > limit {
		return nil
	}
	f.threshold = make([]int32, n)
	f.src, f.wt = make([]int32, size), make([]int32, size)
	if size < parallelEdges || depth < 2 {
		c.flattenLevels(f, 1, depth, 0)
		return f
	}
	mid := 1
	for mid < depth-1 && bound[mid] < size/2 {
		mid++
	}
	var wg sync.WaitGroup
	wg.Go(func() { c.flattenLevels(f, 1, mid, 0) })
	c.flattenLevels(f, mid+1, depth, bound[mid])
	wg.Wait()
	return f
}

// flattenLevels writes the flattened rows and thresholds of the gates of
// levels first to last into f (see flatRows), the rows from src[at] on.
func (c *Circuit) flattenLevels(f *flat, first, last, at int) {
	width := 0
	for L := max(first-1, 0); L < last; L++ {
		width = max(width, c.LevelWidth(L))
	}
	acc := make([]int64, width)
	mark := make([]int32, width)
	for i := range mark {
		mark[i] = -1
	}
	dst, dw := f.src, f.wt
	var shift, pos, neg int64 // of the last row flattened
	for L := first; L <= last; L++ {
		base := c.FormStart[L-1]
		for g := c.LevelStart[L-1]; g < c.LevelStart[L]; g++ {
			if f.hi[g] < 0 {
				f.lo[g], f.hi[g] = f.lo[g-1], f.hi[g-1]
			} else {
				start, end := at, at
				shift, pos, neg = 0, 0, 0
				for e := c.RowStart[g]; e < c.RowStart[g+1]; e++ {
					w := int64(c.Weight[e])
					k, src, coef := c.Form(int(base + c.Src[e]))
					shift += w * int64(k)
					for i, x := range src {
						if mark[x] != g {
							mark[x] = g
							acc[x] = 0
							dst[end] = x
							end++
						}
						acc[x] += w * int64(coef[i])
					}
				}
				for _, x := range dst[start:end] {
					if w := acc[x]; w != 0 {
						dst[at], dw[at] = x, int32(w)
						at++
						if w > 0 {
							pos += w
						} else {
							neg -= w
						}
					}
				}
				f.lo[g], f.hi[g] = int32(start), int32(at)
			}
			theta := int64(c.Threshold[g]) - shift
			switch {
			case theta > math.MaxInt32:
				theta = pos + 1
			case theta < math.MinInt32:
				theta = -neg
			}
			f.threshold[g] = int32(theta)
		}
	}
}
