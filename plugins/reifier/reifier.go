// Package reifier is the Reifier-style layerer: it lowers each logic op to
// threshold gates the way the Reifier compiler does and layers them as soon
// as possible, carrying values across levels with copy gates. Its job is to
// reproduce the paper's tables exactly.
//
// Lowering (a gate fires iff Σ wᵢxᵢ ≥ θ):
//
//	NOT x            [−x ≥ 0]
//	AND x₁..xₙ       [Σx ≥ n]
//	OR x₁..xₙ        [Σx ≥ 1]          (one operand: an explicit register)
//	ANDNOT x₀,x₁..xₙ [−x₀ + Σx₁.. ≥ n]
//	XOR x₁..xₙ       counters cₖ = [Σx ≥ k], k = 1..n; then [c₁ − c₂ + c₃ − … ≥ 1]
//	SUMBIT k         counters cⱼ = [Σ 2^eᵢ·xᵢ ≥ j·2^k], j = 1..⌊Σ 2^eᵢ / 2^k⌋ (eᵢ ≤ k);
//	                 then [c₁ − c₂ + c₃ − … ≥ 1] (bit k of S flips at each j·2^k)
//	THRESHOLD        itself
//	CONST 1 / 0      a gate with no inputs and θ = 0 / θ = 1
//
// Layering: a gate sits one level above its latest input. A constant has no
// inputs, so it is placed one level below each level that reads it (a gate
// reading a constant sits at level 2 or above): a constant read at several
// levels is made again below each, never carried, so a construction need
// not make its constants again for a reader far above the first (an MD
// feed-forward reading the IV). Any other value needed later is carried by
// one copy gate per level in between; a final level holds copies of the
// outputs, in order.
package reifier

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Plugin is the reifier layerer.
var Plugin = &sdk.Layerer{
	Name:    "reifier",
	Version: "0.1.0",
	Doc:     "Reifier-style backend: the paper's lowering and as-soon-as-possible layering with copy gates; reproduces the paper's tables.",
	Params: []sdk.Param{
		{Name: "mode", Type: sdk.String, Default: "paper", Enum: []string{"paper", "current"},
			Doc: "\"paper\": the form behind the paper's tables (state level, two-level absorb, ι levels, output copies); \"current\": today's Reifier release (compile_keccak): constants in thresholds, NOT and copies free, output row with the last NOTs (see current.go); it has no modular additions (SUMBIT)"},
		MaxWeightParam(),
	},
	Prepare: func(_ context.Context, pass *sdk.Pass) (any, error) {
		return Config{Mode: pass.Params.String("mode"), MaxWeight: int64(pass.Params.Int("max_weight"))}, nil
	},
	Layer: func(ctx context.Context, pass *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
		cfg := pass.Prepared.(Config)
		if cfg.Mode == "current" {
			return CompileCurrent(ctx, c)
		}
		return CompileBounded(ctx, c, cfg.MaxWeight)
	},
}

// Config is the reifier's resolved parameters (its Prepare's result).
type Config struct {
	// Mode is "paper" (Compile) or "current" (CompileCurrent).
	Mode string
	// MaxWeight bounds the sums of modular additions (SUMBIT nodes) in
	// paper mode; see MaxWeightParam.
	MaxWeight int64
}

// MaxWeightParam is the layerers' bound on the sums of modular additions
// (SUMBIT nodes), shared by reifier and fusion.
func MaxWeightParam() sdk.Param {
	return sdk.Param{Name: "max_weight", Type: sdk.Int, Default: int64(circuit.DefaultMaxSum), Min: sdk.Bound(2), Max: sdk.Bound(1 << 27),
		Doc: "bound on the weights and the reachable sum of the gates realising a modular addition (SUMBIT): wider additions are cut into chunks of b bits with carries (circuit.SplitSums), one more level per chunk; the default 2^22 keeps every pre-activation below 2^24, exact in float32"}
}

// tagTable interns the layered circuit's provenance tags in order of first
// use, as layered.Builder does.
type tagTable struct {
	names []string
	index map[string]int32
}

// intern returns the index of tag name, adding it if it is new.
func (t *tagTable) intern(name string) int32 {
	if i, ok := t.index[name]; ok {
		return i
	}
	i := int32(len(t.names))
	t.names = append(t.names, name)
	t.index[name] = i
	return i
}

// Compile lowers and layers c.
//
// It works on the logic ops directly rather than on a lowered gate graph:
// every op but an XOR lowers to one gate; an n-ary XOR lowers to n
// counters, which read the XOR's operands and so sit together one level
// below the XOR's parity gate. Compile first lays out every level (plan),
// then writes the gate arrays on two goroutines (emit).
func Compile(ctx context.Context, c *circuit.Circuit) (*layered.Circuit, error) {
	return CompileBounded(ctx, c, circuit.DefaultMaxSum)
}

// CompileBounded is Compile with additions (SUMBIT nodes) split so that
// no sum exceeds maxSum (see circuit.SplitSums): the counters of each
// chunk then have weights below maxSum and thresholds up to it.
func CompileBounded(ctx context.Context, c *circuit.Circuit, maxSum int64) (*layered.Circuit, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("reifier: invalid logic circuit: %w", err)
	}
	c, err := circuit.SplitSums(c, maxSum)
	if err != nil {
		return nil, fmt.Errorf("reifier: %w", err)
	}
	for i, op := range c.Ops {
		if op != circuit.OpSumBit {
			continue
		}
		var sum int64
		for _, e := range c.Weights[c.ArgStart[i]:c.ArgStart[i+1]] {
			if e <= c.Param[i] {
				sum += 1 << uint(e)
			}
		}
		if sum > 1<<30 {
			return nil, fmt.Errorf("reifier: node %d: SUMBIT sums to %d, more than int32 weights hold even after splitting", i, sum)
		}
	}
	s, err := plan(ctx, c)
	if err != nil {
		return nil, err
	}
	return s.emit(ctx)
}

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

// levelEntries returns the entries of level L (see schedule).
func (s *schedule) levelEntries(L int32) []int32 {
	return s.entries[s.startAt[L]:s.startAt[L+1]]
}

// levelConsts returns the constants placed again at level L.
func (s *schedule) levelConsts(L int32) []int32 {
	return s.constOf[s.constAt[L-1]:s.constAt[L]]
}

// levelCopies returns the values carried into level L by copy gates.
func (s *schedule) levelCopies(L int32) []int32 {
	return s.copyOf[s.copyAt[L-1]:s.copyAt[L]]
}

// args returns op i's operands.
func (s *schedule) args(i int32) []circuit.Node {
	return s.c.Args[s.c.ArgStart[i]:s.c.ArgStart[i+1]]
}

// emit writes the layered circuit laid out by s. The sources and the other
// gate arrays do not depend on each other, so two goroutines write them at
// once.
func (s *schedule) emit(ctx context.Context) (*layered.Circuit, error) {
	l := &layered.Circuit{
		NumInputs:    len(s.c.Inputs),
		LevelStart:   s.levelStart,
		Tags:         s.tags,
		InputRanges:  append([]circuit.Range(nil), s.c.InputRanges...),
		OutputRanges: append([]circuit.Range(nil), s.c.OutputRanges...),
	}
	if s.c.HasPos() {
		l.InputPos = make([]int32, len(s.c.Inputs))
		for p, v := range s.c.Inputs {
			l.InputPos[p] = s.c.Pos[v]
		}
		l.Pos = make([]int32, s.gates)
	}
	var srcErr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		l.Src, srcErr = s.sources(ctx)
	}()
	err := s.rows(ctx, l)
	<-done
	if err != nil {
		return nil, err
	}
	if srcErr != nil {
		return nil, srcErr
	}
	return l, nil
}

// sources returns the layered circuit's Src: each edge's source as an index
// within the previous level.
func (s *schedule) sources(ctx context.Context) ([]int32, error) {
	c := s.c
	src := make([]int32, s.edges)
	// pos[v]: the index of v's latest instance (gate or copy) within its
	// level; for an XOR whose counters are placed but not yet its parity
	// gate, the index of its first counter. An instance placed in level L
	// is read only from level L+1, so it is recorded as soon as it is
	// placed.
	pos := make([]int32, len(c.Ops))
	for p, v := range c.Inputs {
		pos[v] = int32(p)
	}
	e := 0
	for L := int32(1); L < s.outLevel; L++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		idx := int32(0) // index of the next gate within the level
		for _, entry := range s.levelEntries(L) {
			i := entry >> 1
			args := s.args(i)
			n := len(args)
			switch {
			case entry&1 == 1: // counters: nc gates with the same sources
				nc := int(s.numCounters(i))
				if nc > 0 {
					row := src[e : e+n]
					for k, a := range args {
						row[k] = pos[a]
					}
					e += n
					for k := 1; k < nc; k++ {
						e += copy(src[e:e+n], row)
					}
				}
				pos[i] = idx
				idx += int32(nc)
				continue
			case hasCounters(c.Ops[i]): // parity over its counters
				n = int(s.numCounters(i))
				row := src[e : e+n]
				for k := range row {
					row[k] = pos[i] + int32(k)
				}
				e += n
			default:
				row := src[e : e+n]
				for k, a := range args {
					row[k] = pos[a]
				}
				e += n
			}
			pos[i] = idx
			idx++
		}
		// Placed after the entries: a gate of this level reading one of
		// these constants reads the instance of the level below.
		for _, v := range s.levelConsts(L) {
			pos[v] = idx
			idx++
		}
		for _, v := range s.levelCopies(L) {
			src[e] = pos[v]
			e++
			pos[v] = idx
			idx++
		}
	}
	for _, o := range c.Outputs {
		src[e] = pos[o]
		e++
	}
	return src, nil
}

// rows fills in l's Kind, Threshold, Tag, RowStart and Weight, lowering
// each op as the package documentation describes, and l.Pos if the
// circuit has position hints: every gate lowering op i (its counters
// too) gets i's hint, a copy that of the value it carries.
func (s *schedule) rows(ctx context.Context, l *layered.Circuit) error {
	c := s.c
	l.Kind = make([]layered.Kind, s.gates) // KindGate is 0: only copies are marked
	l.Threshold = make([]int32, s.gates)
	l.Tag = make([]int32, s.gates)
	l.RowStart = make([]int32, s.gates+1)
	l.Weight = make([]int32, s.edges)
	gi, e, ci := 0, 0, 0
	var pos int32 // hint of the op or value being lowered
	// gate ends gate gi with threshold theta and tag tag after its weights
	// have been written up to e.
	gate := func(theta, tag int32) {
		l.Threshold[gi] = theta
		l.Tag[gi] = tag
		if l.Pos != nil {
			l.Pos[gi] = pos
		}
		gi++
		l.RowStart[gi] = int32(e)
	}
	ones := func(n int) {
		w := l.Weight[e : e+n]
		for k := range w {
			w[k] = 1
		}
		e += n
	}
	copyGate := func(v int32) {
		pos = c.PosOf(v)
		l.Kind[gi] = layered.KindCopy
		l.Weight[e] = 1
		e++
		gate(1, s.copyTag[ci])
		ci++
	}
	for L := int32(1); L < s.outLevel; L++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, entry := range s.levelEntries(L) {
			i := entry >> 1
			a, b := c.ArgStart[i], c.ArgStart[i+1]
			n := int(b - a)
			tag := s.tag[c.Tag[i]]
			pos = c.PosOf(i)
			switch op := c.Ops[i]; {
			case entry&1 == 1 && op == circuit.OpSumBit: // counters [Σ 2^e·x ≥ j·2^k]
				ct := s.counterTag[c.Tag[i]]
				k := c.Param[i]
				for j := int32(1); j <= s.numCounters(i); j++ {
					for q, x := range c.Weights[a:b] {
						l.Weight[e+q] = 0 // 2^x ≡ 0 mod 2^(k+1) above k
						if x <= k {
							l.Weight[e+q] = 1 << x
						}
					}
					e += n
					gate(j<<k, ct)
				}
			case entry&1 == 1: // counters [Σ args ≥ k], k = 1..n
				ct := s.counterTag[c.Tag[i]]
				for k := 1; k <= n; k++ {
					ones(n)
					gate(int32(k), ct)
				}
			case hasCounters(op): // [c₁ − c₂ + c₃ − … ≥ 1]
				n = int(s.numCounters(i))
				w := l.Weight[e : e+n]
				for k := range w {
					w[k] = 1 - 2*int32(k%2)
				}
				e += n
				gate(1, tag)
			case op == circuit.OpConst: // [∅ ≥ 1 − value]
				gate(1-c.Param[i], tag)
			case op == circuit.OpNot: // [−x ≥ 0]
				l.Weight[e] = -1
				e++
				gate(0, tag)
			case op == circuit.OpAnd: // [Σx ≥ n]
				ones(n)
				gate(int32(n), tag)
			case op == circuit.OpOr: // [Σx ≥ 1]
				ones(n)
				gate(1, tag)
			case op == circuit.OpAndNot: // [−x₀ + Σx₁.. ≥ n]
				ones(n)
				l.Weight[e-n] = -1
				gate(int32(n-1), tag)
			case op == circuit.OpThreshold:
				e += copy(l.Weight[e:], c.Weights[a:b])
				gate(c.Param[i], tag)
			}
		}
		for _, v := range s.levelConsts(L) {
			pos = c.PosOf(v)
			gate(1-c.Param[v], s.tag[c.Tag[v]])
		}
		for _, v := range s.levelCopies(L) {
			copyGate(v)
		}
	}
	for _, o := range c.Outputs {
		copyGate(o)
	}
	return nil
}

// hasCounters reports whether op lowers to a level of counters and a
// parity gate over them (XOR, SUMBIT).
func hasCounters(op circuit.Op) bool { return op == circuit.OpXor || op == circuit.OpSumBit }

// numCounters returns the number of counters of op i: its arity for an
// XOR; for a SUMBIT of bit k, ⌊Σ 2^e / 2^k⌋ over its exponents e ≤ k (the
// multiples of 2^k the sum can reach).
func (s *schedule) numCounters(i int32) int32 {
	c := s.c
	a, b := c.ArgStart[i], c.ArgStart[i+1]
	if c.Ops[i] != circuit.OpSumBit {
		return b - a
	}
	k := c.Param[i]
	var sum int64
	for _, e := range c.Weights[a:b] {
		if e <= k {
			sum += 1 << uint(e)
		}
	}
	return int32(sum >> uint(k))
}
