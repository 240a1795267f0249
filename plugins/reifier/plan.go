package reifier

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// unset is the level of a constant nobody reads: it is not placed.
const unset = int32(1 << 30)

// schedule is the layout of the layered circuit, computed by plan before
// any gate is written.
//
// Level L (1 ≤ L < outLevel) holds, in this order: the gates of the ops of
// entries[startAt[L]:startAt[L+1]], in op order, where entry 2i+1 stands for
// the n counters of XOR op i (counter k is [Σ args ≥ k]) and entry 2i for
// op i's own gate (for an XOR, the parity gate over its counters; a
// constant's entry is its instance below its first reader); then a gate
// for each constant of constOf[constAt[L-1]:constAt[L]], in op order: the
// constants read at level L+1 that were placed already below an earlier
// reader; then one copy gate for each value of copyOf[copyAt[L-1]:copyAt[L]],
// which carries it from level L−1. The last level, outLevel, holds a copy
// of each output.
type schedule struct {
	c          *circuit.Circuit
	outLevel   int32
	startAt    []int32 // len outLevel+1
	entries    []int32
	constAt    []int32  // len outLevel+1; constAt[0] = 0
	constOf    []int32  // the constants placed again, level by level
	copyAt     []int32  // len outLevel+1; copyAt[0] = 0
	copyOf     []int32  // the ops carried, level by level
	copyTag    []int32  // the tag of each copy gate: copyOf's, then the output copies
	tag        []int32  // per circuit tag: the layered tag of an op's gate
	counterTag []int32  // per circuit tag: the layered tag of an XOR's counters (-1: none)
	levelStart []int32  // the layered circuit's LevelStart
	gates      int      // gates of the layered circuit, copies included
	edges      int      // edges of the layered circuit
	tags       []string // the layered circuit's Tags
}

// planner is plan's state between its phases.
type planner struct {
	s  *schedule
	tt *tagTable
	// level is the level of each op's value (inputs 0, unread constants
	// unset); lastUse the highest level that reads it.
	level, lastUse []int32
	// carry holds the values that need copy gates, bucketed by the level
	// of their first copy (bucket L is carry[carryAt[L]:carryAt[L+1]]).
	carry, carryAt []int32
	// width is each level's gates; edges the edges of the op gates,
	// copies the copy gates (outputs' aside).
	width         []int32
	edges, copies int
}

// plan assigns levels as soon as possible, constants lazily (one level
// below each level that reads them, so a gate reading a constant sits at
// level 2 or above), and lays out the levels with copy gates for the other
// values read more than one level above their own. Its phases: tags (the
// layered circuit's tag table), levels (as soon as possible; constants,
// outputs; with constants, the constants placed again), buckets (each
// level's entries and the values to carry, with widths and edges),
// copyGates (the values alive across each level) and totals.
func plan(ctx context.Context, c *circuit.Circuit) (*schedule, error) {
	if n := len(c.Ops); n >= 1<<30 {
		return nil, fmt.Errorf("reifier: %d nodes: too many to layer", n) // entries are 2i+1 in an int32
	}
	p := &planner{s: &schedule{c: c}, tt: &tagTable{index: map[string]int32{}}}
	p.tags()
	if err := p.levels(ctx); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	p.buckets()
	p.copyGates()
	p.totals()
	return p.s, nil
}

// tags interns the circuit's tags as the layered circuit's (an XOR's
// counters get theirs in levels).
func (p *planner) tags() {
	c, s := p.s.c, p.s
	s.tag = make([]int32, len(c.Tags))
	s.counterTag = make([]int32, len(c.Tags))
	for i, t := range c.Tags {
		s.tag[i] = p.tt.intern(t)
		s.counterTag[i] = -1
	}
}

// levels places every op as soon as possible (an XOR's parity one level
// above its counters), then the output level, then each read constant one
// level below its first reader and again below each later level that
// reads it (constants); it records each value's last reader (a constant's
// first: constants are not carried).
func (p *planner) levels(ctx context.Context) error {
	s, c := p.s, p.s.c
	nOps := len(c.Ops)
	p.level = make([]int32, nOps)
	p.lastUse = make([]int32, nOps)
	firstUse := make([]int32, nOps) // constants: the lowest level that reads them (0: none)
	level, lastUse := p.level, p.lastUse
	// reads: (level, constant) for each level that reads a constant, with
	// repeats; lastRead drops those of consecutive readers at one level.
	var reads []constRead
	lastRead := make([]int32, nOps)
	readConst := func(a, L int32) {
		if firstUse[a] == 0 || L < firstUse[a] {
			firstUse[a] = L
		}
		if lastRead[a] != L {
			lastRead[a] = L
			reads = append(reads, constRead{L, a})
		}
	}
	maxLevel := int32(0)
	for i, op := range c.Ops {
		if i%65536 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		switch op {
		case circuit.OpInput:
			continue
		case circuit.OpConst:
			// Read as if at level 1, so that readers sit at level 2 or above;
			// the real level is set below.
			level[i] = 1
			continue
		case circuit.OpNot, circuit.OpAnd, circuit.OpOr, circuit.OpAndNot, circuit.OpThreshold:
		case circuit.OpXor, circuit.OpSumBit:
			if t := c.Tag[i]; s.counterTag[t] < 0 {
				s.counterTag[t] = p.tt.intern(c.Tags[t] + " counters")
			}
		default:
			return fmt.Errorf("reifier: node %d: unsupported op %s", i, op)
		}
		// L: the level of the gates reading the args (for an XOR, its counters).
		args := c.Args[c.ArgStart[i]:c.ArgStart[i+1]]
		L := int32(1)
		for _, a := range args {
			L = max(L, level[a]+1)
		}
		for _, a := range args {
			lastUse[a] = max(lastUse[a], L)
			if c.Ops[a] == circuit.OpConst {
				readConst(int32(a), L)
			}
		}
		if hasCounters(op) {
			L++
		}
		level[i] = L
		maxLevel = max(maxLevel, L)
	}
	outLevel := maxLevel + 1
	for _, o := range c.Outputs {
		if c.Ops[o] == circuit.OpConst {
			outLevel = max(outLevel, 2)
		}
	}
	for _, o := range c.Outputs {
		lastUse[o] = outLevel
		if c.Ops[o] == circuit.OpConst {
			readConst(int32(o), outLevel)
		}
	}
	for i, op := range c.Ops {
		if op == circuit.OpConst {
			level[i] = unset
			if firstUse[i] > 0 {
				level[i] = firstUse[i] - 1
				lastUse[i] = firstUse[i]
			}
		}
	}
	s.outLevel = outLevel
	p.constants(reads, firstUse)
	return nil
}

// constRead is a level that reads a constant.
type constRead struct{ level, op int32 }

// constants lays out the constants placed again: one gate for each level
// L that reads constant i above its first reader firstUse[i], at level
// L−1, after that level's entries, in op order.
func (p *planner) constants(reads []constRead, firstUse []int32) {
	s := p.s
	slices.SortFunc(reads, func(a, b constRead) int {
		return cmp.Or(cmp.Compare(a.level, b.level), cmp.Compare(a.op, b.op))
	})
	reads = slices.Compact(reads)
	s.constAt = make([]int32, s.outLevel+1)
	p.width = make([]int32, s.outLevel+1)
	for _, r := range reads {
		if r.level == firstUse[r.op] {
			continue
		}
		s.constOf = append(s.constOf, r.op)
		s.constAt[r.level-1] = int32(len(s.constOf))
		p.width[r.level-1]++
	}
	for L := int32(1); L <= s.outLevel; L++ {
		s.constAt[L] = max(s.constAt[L], s.constAt[L-1])
	}
}

// buckets sorts the entries by level, in op order, counting each level's
// gates and the edges, and the values that need carrying by the level of
// their first copy, level(v)+1: the inputs in input order, then the ops in
// op order. A value is carried while lastUse(v) > level(v)+1. (Bucket b
// starts at startAt[b], so its count is gathered in startAt[b+1] before
// the prefix sums.)
func (p *planner) buckets() {
	s, c := p.s, p.s.c
	level, lastUse, outLevel := p.level, p.lastUse, s.outLevel
	startAt := make([]int32, outLevel+2)
	p.carryAt = make([]int32, outLevel+2)
	carryAt := p.carryAt
	for _, v := range c.Inputs {
		if lastUse[v] > 1 {
			carryAt[2]++
			p.copies += int(lastUse[v] - 1)
		}
	}
	for i, op := range c.Ops {
		L := level[i]
		if op == circuit.OpInput || L == unset {
			continue
		}
		n := c.ArgStart[i+1] - c.ArgStart[i]
		if hasCounters(op) {
			nc := s.numCounters(int32(i))
			startAt[L]++ // counters, at L−1
			p.width[L-1] += nc
			p.edges += int(nc) * int(n)
			n = nc // the parity gate reads the counters
		}
		startAt[L+1]++
		p.width[L]++
		p.edges += int(n)
		if lastUse[i] > L+1 {
			carryAt[L+2]++
			p.copies += int(lastUse[i] - L - 1)
		}
	}
	for b := 1; b <= int(outLevel); b++ {
		startAt[b+1] += startAt[b]
		carryAt[b+1] += carryAt[b]
	}
	s.entries = make([]int32, startAt[outLevel+1])
	p.carry = make([]int32, carryAt[outLevel+1])
	fill := append([]int32(nil), startAt...)
	cfill := append([]int32(nil), carryAt...)
	for _, v := range c.Inputs {
		if lastUse[v] > 1 {
			p.carry[cfill[1]] = v
			cfill[1]++
		}
	}
	for i, op := range c.Ops {
		L := level[i]
		if op == circuit.OpInput || L == unset {
			continue
		}
		if hasCounters(op) {
			s.entries[fill[L-1]] = int32(2*i + 1)
			fill[L-1]++
		}
		s.entries[fill[L]] = int32(2 * i)
		fill[L]++
		if lastUse[i] > L+1 {
			p.carry[cfill[L+1]] = int32(i)
			cfill[L+1]++
		}
	}
	s.startAt = startAt[:outLevel+1]
}

// copyGates lays out the copy gates, level by level: the values alive
// across each level, in the order they started being carried; then the
// output level's copies.
func (p *planner) copyGates() {
	s, c, outLevel := p.s, p.s.c, p.s.outLevel
	s.copyAt = make([]int32, outLevel+1)
	s.copyOf = make([]int32, 0, p.copies)
	s.copyTag = make([]int32, 0, p.copies+len(c.Outputs))
	inputTag := int32(-1)
	tagOf := func(v int32) int32 {
		if c.Ops[v] != circuit.OpInput {
			return s.tag[c.Tag[v]]
		}
		if inputTag < 0 {
			inputTag = p.tt.intern("input")
		}
		return inputTag
	}
	var active []int32
	for L := int32(1); L < outLevel; L++ {
		active = append(active, p.carry[p.carryAt[L]:p.carryAt[L+1]]...)
		kept := active[:0]
		for _, v := range active {
			s.copyOf = append(s.copyOf, v)
			s.copyTag = append(s.copyTag, tagOf(v))
			if p.lastUse[v] > L+1 {
				kept = append(kept, v)
			}
		}
		active = kept
		s.copyAt[L] = int32(len(s.copyOf))
		p.width[L] += s.copyAt[L] - s.copyAt[L-1]
	}
	s.copyAt[outLevel] = s.copyAt[outLevel-1]
	for _, o := range c.Outputs {
		s.copyTag = append(s.copyTag, tagOf(o))
	}
	p.width[outLevel] = int32(len(c.Outputs))
}

// totals sets the layered circuit's level starts, gate and edge counts and
// tags.
func (p *planner) totals() {
	s, outLevel := p.s, p.s.outLevel
	s.levelStart = make([]int32, outLevel+1)
	for L := int32(1); L <= outLevel; L++ {
		s.levelStart[L] = s.levelStart[L-1] + p.width[L]
	}
	s.gates = int(s.levelStart[outLevel])
	s.edges = p.edges + len(s.copyOf) + len(s.c.Outputs)
	s.tags = p.tt.names
}
