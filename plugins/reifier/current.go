package reifier

// The "current" mode: the lowering and layering of today's Reifier release
// (contramont/reifier, compile_keccak and the fast leveler it builds on),
// applied to any logic circuit. Compared with the paper's mode:
//
//   - Constants fold into thresholds: an operand of known value v and
//     weight w is no edge, θ −= w·v (Reifier: bias += w·v).
//   - NOT is free: a gate reading ¬x with weight w reads x with weight −w
//     and θ −= w (Reifier fuses ι's NOTs into the next level this way).
//   - An op with at most one live (non-constant) operand is no gate: it is
//     a constant, that operand, or its negation, whichever it computes.
//     So copies (one-operand OR or AND), x ⊕ 0, x ⊕ 1 cost nothing; in
//     particular absorbing a block into the zero state feeds the message
//     straight into round 1's θ, as Reifier's msg_to_state does, and the
//     padding constants fold into round 1's thresholds.
//   - Every other op is lowered as in the paper's mode (an n-operand XOR
//     keeps its n counters even when some operands are constants) and
//     placed as soon as possible after its live operands; values read
//     later are carried by one copy gate a level.
//   - The last level holds one gate per output: a copy, or [−x ≥ 0] where
//     the output is a negation (Reifier puts the last round's ι NOTs into
//     its output row), or a gate with no inputs for a constant output.
//
// For a Keccak sponge of one block this gives Reifier's compile_keccak
// exactly: five levels a round (θ counters, θ parity, χ's inhib with the
// copies of a[x], χ's counters, χ's parity), no level for the state, the
// absorb or ι, one output row: depth 5·rounds + 1.

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// A lit is the value of a logic node in current mode: lit>>1 is the node
// whose gate (or input) carries it and lit&1 says whether it is negated;
// the constants are litZero and litOne, so lit^1 negates any lit.
type lit = int32

// The constant lits.
const (
	litZero lit = -2
	litOne  lit = -1
)

// CompileCurrent lowers and layers c as today's Reifier release does (the
// layerer's mode = "current"; see the rules above).
func CompileCurrent(ctx context.Context, c *circuit.Circuit) (*layered.Circuit, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("reifier: invalid logic circuit: %w", err)
	}
	p, err := resolveCurrent(ctx, c)
	if err != nil {
		return nil, err
	}
	return p.emit(ctx)
}

// currentPlan is the layout of a circuit in current mode.
type currentPlan struct {
	c       *circuit.Circuit
	lit     []lit   // per node: its value
	level   []int32 // per node carrying a gate or input: the level of its value (an XOR's parity)
	lastUse []int32 // per such node: the highest level that reads it
	// outLevel is the output row's level, the depth.
	outLevel int32
	// startAt, entries: the gate entries of level L are
	// entries[startAt[L]:startAt[L+1]], in node order; entry 2i+1 stands
	// for the counters of XOR node i, entry 2i for node i's own gate.
	startAt []int32
	entries []int32
	// carryAt, carry: the nodes whose first copy is in level L are
	// carry[carryAt[L]:carryAt[L+1]] (inputs first, then nodes in order).
	carryAt []int32
	carry   []int32
	gates   int
	edges   int
}

// isGate reports whether node i is lowered to gates.
func (p *currentPlan) isGate(i int) bool {
	op := p.c.Ops[i]
	return op != circuit.OpInput && p.lit[i] == lit(2*i)
}

// resolveCurrent computes every node's lit and level, and lays out the
// levels.
func resolveCurrent(ctx context.Context, c *circuit.Circuit) (*currentPlan, error) {
	n := len(c.Ops)
	if n >= 1<<30 {
		return nil, fmt.Errorf("reifier: %d nodes: too many to layer", n)
	}
	p := &currentPlan{
		c:       c,
		lit:     make([]lit, n),
		level:   make([]int32, n),
		lastUse: make([]int32, n),
	}
	maxLevel := int32(0)
	for i, op := range c.Ops {
		if i%65536 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		args, _ := c.Operands(circuit.Node(i))
		switch op {
		case circuit.OpInput:
			p.lit[i] = lit(2 * i)
			continue
		case circuit.OpConst:
			p.lit[i] = litZero + c.Param[i]
			continue
		case circuit.OpNot:
			p.lit[i] = p.lit[args[0]] ^ 1
			continue
		case circuit.OpAnd, circuit.OpOr, circuit.OpAndNot, circuit.OpXor, circuit.OpThreshold:
		case circuit.OpSumBit:
			return nil, fmt.Errorf("reifier: node %d (%s): mode = \"current\" has no lowering of a modular addition (SUMBIT), as today's Reifier release has none; use mode = \"paper\"", i, c.Tags[c.Tag[i]])
		default:
			return nil, fmt.Errorf("reifier: node %d: unsupported op %s", i, op)
		}
		live, last := 0, lit(0)
		for _, a := range args {
			if l := p.lit[a]; l >= 0 {
				live++
				last = l
			}
		}
		if live <= 1 {
			// A function of at most one live value x: f(0), f(1) decide it.
			f0, f1 := p.eval(i, 0), p.eval(i, 1)
			switch {
			case live == 0 || f0 == f1:
				p.lit[i] = litZero + f0
			default:
				p.lit[i] = last&^1 | f0 // f = x when f(0) = 0, ¬x when f(0) = 1
			}
			continue
		}
		p.lit[i] = lit(2 * i)
		L := int32(1) // the level of the gates reading the operands
		for _, a := range args {
			if l := p.lit[a]; l >= 0 {
				L = max(L, p.level[l>>1]+1)
			}
		}
		for _, a := range args {
			if l := p.lit[a]; l >= 0 {
				p.lastUse[l>>1] = max(p.lastUse[l>>1], L)
			}
		}
		if op == circuit.OpXor {
			L++
		}
		p.level[i] = L
		maxLevel = max(maxLevel, L)
	}
	p.outLevel = maxLevel + 1
	for _, o := range c.Outputs {
		if l := p.lit[o]; l >= 0 {
			p.lastUse[l>>1] = p.outLevel
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	p.layout()
	return p, nil
}

// eval returns the value of node i (an AND, OR, ANDNOT, XOR or THRESHOLD
// with at most one live operand) when its live value, if any, is v;
// constant operands take their values.
func (p *currentPlan) eval(i int, v int32) int32 {
	c := p.c
	args, weights := c.Operands(circuit.Node(i))
	val := func(a circuit.Node) int32 {
		l := p.lit[a]
		x := l & 1 // a constant's value, or a literal's negation
		if l >= 0 {
			x ^= v
		}
		return x
	}
	ones, sum := 0, int64(0)
	for k, a := range args {
		x := val(a)
		ones += int(x)
		sum += int64(weights[k]) * int64(x)
	}
	var f bool
	switch n := len(args); c.Ops[i] {
	case circuit.OpAnd:
		f = ones == n
	case circuit.OpOr:
		f = ones > 0
	case circuit.OpAndNot:
		f = val(args[0]) == 0 && ones == n-1
	case circuit.OpXor:
		f = ones%2 == 1
	case circuit.OpThreshold:
		f = sum >= int64(c.Param[i])
	}
	if f {
		return 1
	}
	return 0
}

// layout buckets the gate entries and the carried values by level and
// counts the gates and edges.
func (p *currentPlan) layout() {
	c := p.c
	out := p.outLevel
	startAt := make([]int32, out+2)
	carryAt := make([]int32, out+2)
	gates, edges := len(c.Outputs), 0
	for _, o := range c.Outputs {
		if p.lit[o] >= 0 {
			edges++
		}
	}
	carried := func(v int32) {
		if p.lastUse[v] > p.level[v]+1 {
			carryAt[p.level[v]+2]++
			k := int(p.lastUse[v] - p.level[v] - 1)
			gates += k
			edges += k
		}
	}
	for _, v := range c.Inputs {
		carried(v)
	}
	for i := range c.Ops {
		if !p.isGate(i) {
			continue
		}
		L := p.level[i]
		n := int(c.ArgStart[i+1] - c.ArgStart[i])
		live := p.liveOperands(i)
		if c.Ops[i] == circuit.OpXor {
			startAt[L]++ // counters, at L−1
			gates += n
			edges += n * live
			live = n // the parity reads the counters
		}
		startAt[L+1]++
		gates++
		edges += live
		carried(int32(i))
	}
	for b := 1; b <= int(out); b++ {
		startAt[b+1] += startAt[b]
		carryAt[b+1] += carryAt[b]
	}
	p.entries = make([]int32, startAt[out+1])
	p.carry = make([]int32, carryAt[out+1])
	fill := append([]int32(nil), startAt...)
	cfill := append([]int32(nil), carryAt...)
	put := func(v int32) {
		if p.lastUse[v] > p.level[v]+1 {
			b := p.level[v] + 1
			p.carry[cfill[b]] = v
			cfill[b]++
		}
	}
	for _, v := range c.Inputs {
		put(v)
	}
	for i := range c.Ops {
		if !p.isGate(i) {
			continue
		}
		L := p.level[i]
		if c.Ops[i] == circuit.OpXor {
			p.entries[fill[L-1]] = int32(2*i + 1)
			fill[L-1]++
		}
		p.entries[fill[L]] = int32(2 * i)
		fill[L]++
		put(int32(i))
	}
	p.startAt = startAt[:out+1]
	p.carryAt = carryAt[:out+1]
	p.gates, p.edges = gates, edges
}

// liveOperands returns how many of node i's operands are not constants.
func (p *currentPlan) liveOperands(i int) int {
	args, _ := p.c.Operands(circuit.Node(i))
	live := 0
	for _, a := range args {
		if p.lit[a] >= 0 {
			live++
		}
	}
	return live
}

// emit writes the layered circuit level by level, straight into arrays
// of the sizes layout counted.
func (p *currentPlan) emit(ctx context.Context) (*layered.Circuit, error) {
	c := p.c
	l := &layered.Circuit{
		NumInputs:    len(c.Inputs),
		LevelStart:   make([]int32, 1, p.outLevel+1),
		Kind:         make([]layered.Kind, p.gates),
		Threshold:    make([]int32, p.gates),
		Tag:          make([]int32, p.gates),
		RowStart:     make([]int32, p.gates+1),
		Src:          make([]int32, p.edges),
		Weight:       make([]int32, p.edges),
		InputRanges:  append([]circuit.Range(nil), c.InputRanges...),
		OutputRanges: append([]circuit.Range(nil), c.OutputRanges...),
	}
	tt := &tagTable{index: map[string]int32{}}
	tags := make([]int32, len(c.Tags))
	counterTags := make([]int32, len(c.Tags))
	for t := range tags {
		tags[t], counterTags[t] = -1, -1
	}
	tagOf := func(v int32) int32 {
		if c.Ops[v] == circuit.OpInput {
			return tt.intern("input")
		}
		t := c.Tag[v]
		if tags[t] < 0 {
			tags[t] = tt.intern(c.Tags[t])
		}
		return tags[t]
	}
	counterTagOf := func(v int32) int32 {
		t := c.Tag[v]
		if counterTags[t] < 0 {
			counterTags[t] = tt.intern(c.Tags[t] + " counters")
		}
		return counterTags[t]
	}
	// pos[v]: the index of v's latest instance within its level (for an
	// XOR whose counters are placed but not its parity, its first counter).
	pos := make([]int32, len(c.Ops))
	for k, v := range c.Inputs {
		pos[v] = int32(k)
	}
	g, e := 0, 0 // the next gate and edge
	if c.HasPos() {
		l.InputPos = make([]int32, len(c.Inputs))
		for k, v := range c.Inputs {
			l.InputPos[k] = c.Pos[v]
		}
		l.Pos = make([]int32, p.gates)
	}
	// gate ends gate g, whose edges are written up to e; it lowers node
	// v (or carries it, a copy) and gets v's position hint.
	gate := func(kind layered.Kind, theta, tag, v int32) {
		l.Kind[g], l.Threshold[g], l.Tag[g] = kind, theta, tag
		if l.Pos != nil {
			l.Pos[g] = c.Pos[v]
		}
		g++
		l.RowStart[g] = int32(e)
	}
	// row writes node i's operands with nominal weights w(k), constants
	// and negations folded, and returns θ's adjustment.
	row := func(i int32, w func(k int) int32) int32 {
		args, _ := c.Operands(i)
		adj := int32(0)
		for k, a := range args {
			lt, wk := p.lit[a], w(k)
			switch {
			case lt < 0:
				adj -= wk * (lt & 1)
				continue
			case lt&1 == 1:
				wk = -wk
				adj += wk
			}
			l.Src[e], l.Weight[e] = pos[lt>>1], wk
			e++
		}
		return adj
	}
	one := func(int) int32 { return 1 }
	var active []int32
	for L := int32(1); L < p.outLevel; L++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		idx := int32(0)
		for _, entry := range p.entries[p.startAt[L]:p.startAt[L+1]] {
			i := entry >> 1
			n := c.ArgStart[i+1] - c.ArgStart[i]
			switch op := c.Ops[i]; {
			case entry&1 == 1: // counters [Σ args ≥ k], k = 1..n, one row
				start := e
				adj := row(i, one)
				m := e - start
				tag := counterTagOf(i)
				gate(layered.KindGate, 1+adj, tag, i)
				for k := int32(2); k <= n; k++ {
					copy(l.Src[e:e+m], l.Src[start:e])
					copy(l.Weight[e:e+m], l.Weight[start:e])
					e += m
					gate(layered.KindGate, k+adj, tag, i)
				}
				pos[i] = idx
				idx += n
				continue
			case op == circuit.OpXor: // [c₁ − c₂ + c₃ − … ≥ 1]
				for k := int32(0); k < n; k++ {
					l.Src[e], l.Weight[e] = pos[i]+k, 1-2*(k%2)
					e++
				}
				gate(layered.KindGate, 1, tagOf(i), i)
			case op == circuit.OpAnd: // [Σx ≥ n]
				adj := row(i, one)
				gate(layered.KindGate, n+adj, tagOf(i), i)
			case op == circuit.OpOr: // [Σx ≥ 1]
				adj := row(i, one)
				gate(layered.KindGate, 1+adj, tagOf(i), i)
			case op == circuit.OpAndNot: // [−x₀ + Σx₁.. ≥ n−1]
				adj := row(i, func(k int) int32 {
					if k == 0 {
						return -1
					}
					return 1
				})
				gate(layered.KindGate, n-1+adj, tagOf(i), i)
			case op == circuit.OpThreshold:
				_, ws := c.Operands(i)
				adj := row(i, func(k int) int32 { return ws[k] })
				gate(layered.KindGate, c.Param[i]+adj, tagOf(i), i)
			}
			pos[i] = idx
			idx++
		}
		active = append(active, p.carry[p.carryAt[L]:p.carryAt[L+1]]...)
		kept := active[:0]
		for _, v := range active {
			l.Src[e], l.Weight[e] = pos[v], 1
			e++
			gate(layered.KindCopy, 1, tagOf(v), v)
			pos[v] = idx
			idx++
			if p.lastUse[v] > L+1 {
				kept = append(kept, v)
			}
		}
		active = kept
		l.LevelStart = append(l.LevelStart, int32(g))
	}
	for _, o := range c.Outputs {
		switch lt := p.lit[o]; {
		case lt < 0: // a constant: [∅ ≥ 1 − value]
			gate(layered.KindGate, 1-(lt&1), tagOf(o), o)
		case lt&1 == 1: // [−x ≥ 0]
			l.Src[e], l.Weight[e] = pos[lt>>1], -1
			e++
			gate(layered.KindGate, 0, tagOf(o), o)
		default:
			l.Src[e], l.Weight[e] = pos[lt>>1], 1
			e++
			gate(layered.KindCopy, 1, tagOf(o), o)
		}
	}
	l.LevelStart = append(l.LevelStart, int32(g))
	l.Tags = tt.names
	if g != p.gates || e != p.edges {
		return nil, fmt.Errorf("reifier: internal error: wrote %d gates and %d edges, planned %d and %d", g, e, p.gates, p.edges)
	}
	return l, nil
}
