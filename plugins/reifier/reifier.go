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
//	THRESHOLD        itself
//	CONST 1 / 0      a gate with no inputs and θ = 0 / θ = 1
//
// Layering: a gate sits one level above its latest input. A constant has no
// inputs, so it is placed one level below its first reader (a gate reading a
// constant sits at level 2 or above); a value needed later is carried by one
// copy gate per level in between; a final level holds copies of the outputs,
// in order.
package reifier

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Plugin is the reifier layerer.
var Plugin = &sdk.Layerer{
	Name:    "reifier",
	Version: "0.1.0",
	Doc:     "Reifier-style backend: the paper's lowering and as-soon-as-possible layering with copy gates; reproduces the paper's tables.",
	Layer: func(ctx context.Context, c *circuit.Circuit, _ sdk.Params) (*layered.Circuit, error) {
		return Compile(ctx, c)
	},
}

// tgraph is the lowered threshold-gate DAG, before layering: nodes
// 0..nIn-1 are the inputs, the rest gates in topological order.
//
// A gate's operands are src[lo:hi] with weights w[lo:hi]. Gates may share a
// range: the n counters [S ≥ k] of an n-ary XOR all read the same operands
// with the same weights, so the range is stored once, not n times.
type tgraph struct {
	nIn    int
	theta  []int32
	lo, hi []int32 // operand range of each gate in src/w
	src    []int32 // tnode ids
	w      []int32
	tag    []int32 // layered tag index
	isCon  []bool
	nGates int
	edges  int // edges of the lowered gates, shared ranges counted per gate
}

// newTGraph returns an empty tgraph with room for c's lowering: sizing it
// up front keeps the millions of edges of full SHA-3 from being copied
// again and again as slices grow.
func newTGraph(nIn int, c *circuit.Circuit) *tgraph {
	gates, edges := 0, 0
	for i, op := range c.Ops {
		n := int(c.ArgStart[i+1] - c.ArgStart[i])
		switch op {
		case circuit.OpInput:
		case circuit.OpXor:
			gates += n + 1
			edges += 2 * n
		default:
			gates++
			edges += n
		}
	}
	return &tgraph{
		nIn:   nIn,
		theta: make([]int32, 0, gates),
		lo:    make([]int32, 0, gates),
		hi:    make([]int32, 0, gates),
		src:   make([]int32, 0, edges),
		w:     make([]int32, 0, edges),
		tag:   make([]int32, 0, gates),
		isCon: make([]bool, 0, gates),
	}
}

func (g *tgraph) gate(theta int32, tag int32, src []int32, w []int32) int32 {
	lo := int32(len(g.src))
	g.src = append(g.src, src...)
	g.w = append(g.w, w...)
	return g.gateRange(theta, tag, lo, int32(len(g.src)))
}

// sharesRange reports whether gate k reads the same operand range as gate
// k−1 (the counters of one XOR).
func (g *tgraph) sharesRange(k int) bool {
	return k > 0 && g.lo[k] == g.lo[k-1] && g.hi[k] == g.hi[k-1] && g.lo[k] != g.hi[k]
}

// gateRange adds a gate reading the operand range [lo, hi) of src/w.
func (g *tgraph) gateRange(theta int32, tag int32, lo, hi int32) int32 {
	id := int32(g.nIn + g.nGates)
	g.theta = append(g.theta, theta)
	g.tag = append(g.tag, tag)
	g.lo = append(g.lo, lo)
	g.hi = append(g.hi, hi)
	g.isCon = append(g.isCon, lo == hi)
	g.nGates++
	g.edges += int(hi - lo)
	return id
}

// Compile lowers and layers c.
func Compile(ctx context.Context, c *circuit.Circuit) (*layered.Circuit, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("reifier: invalid logic circuit: %w", err)
	}
	nIn := len(c.Inputs)
	lb := layered.NewBuilder(nIn, c.InputRanges)
	tags := make([]int32, len(c.Tags))
	counterTags := make([]int32, len(c.Tags))
	for i, t := range c.Tags {
		tags[i] = lb.Tag(t)
		counterTags[i] = -1
	}
	counterTag := func(t int32) int32 {
		if counterTags[t] < 0 {
			counterTags[t] = lb.Tag(c.Tags[t] + " counters")
		}
		return counterTags[t]
	}

	g := newTGraph(nIn, c)
	val := make([]int32, len(c.Ops)) // logic node -> tnode holding its value
	var srcBuf, wBuf []int32
	// XOR scratch: counter ids, and the alternating weights +1, −1, +1, …
	maxArgs := 0
	for i := range c.Ops {
		maxArgs = max(maxArgs, int(c.ArgStart[i+1]-c.ArgStart[i]))
	}
	counterBuf, alt := make([]int32, maxArgs), make([]int32, maxArgs)
	for k := range alt {
		alt[k] = 1 - 2*int32(k%2)
	}
	ones := func(n int) []int32 {
		wBuf = wBuf[:0]
		for i := 0; i < n; i++ {
			wBuf = append(wBuf, 1)
		}
		return wBuf
	}
	for i, op := range c.Ops {
		if i%65536 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		args, weights := c.Operands(circuit.Node(i))
		srcBuf = srcBuf[:0]
		for _, a := range args {
			srcBuf = append(srcBuf, val[a])
		}
		tag := tags[c.Tag[i]]
		n := int32(len(args))
		switch op {
		case circuit.OpInput:
			val[i] = c.Param[i]
		case circuit.OpConst:
			val[i] = g.gate(1-c.Param[i], tag, nil, nil)
		case circuit.OpNot:
			val[i] = g.gate(0, tag, srcBuf, []int32{-1})
		case circuit.OpAnd:
			val[i] = g.gate(n, tag, srcBuf, ones(len(args)))
		case circuit.OpOr:
			val[i] = g.gate(1, tag, srcBuf, ones(len(args)))
		case circuit.OpAndNot:
			w := ones(len(args))
			w[0] = -1
			val[i] = g.gate(n-1, tag, srcBuf, w)
		case circuit.OpThreshold:
			val[i] = g.gate(c.Param[i], tag, srcBuf, weights)
		case circuit.OpXor:
			ct := counterTag(c.Tag[i])
			counters := counterBuf[:n]
			counters[0] = g.gate(1, ct, srcBuf, ones(len(args)))
			lo, hi := g.lo[counters[0]-int32(nIn)], g.hi[counters[0]-int32(nIn)]
			for k := int32(2); k <= n; k++ {
				counters[k-1] = g.gateRange(k, ct, lo, hi)
			}
			val[i] = g.gate(1, tag, counters, alt[:n])
		default:
			return nil, fmt.Errorf("reifier: node %d: unsupported op %s", i, op)
		}
	}
	outputs := make([]int32, len(c.Outputs))
	for j, o := range c.Outputs {
		outputs[j] = val[o]
	}
	return layer(ctx, g, lb, outputs, c.OutputRanges)
}

// layer assigns levels as soon as possible (constants lazily), inserts copy
// gates and emits the layered circuit with a final level of output copies.
func layer(ctx context.Context, g *tgraph, lb *layered.Builder, outputs []int32, outRanges []circuit.Range) (*layered.Circuit, error) {
	total := g.nIn + g.nGates
	level := make([]int32, total) // inputs: 0; constants: filled in below
	maxLevel := int32(0)
	for k := 0; k < g.nGates; k++ {
		v := g.nIn + k
		if g.isCon[k] {
			continue
		}
		if g.sharesRange(k) {
			level[v] = level[v-1] // same operands, same level
			continue
		}
		var L int32 = 1
		for e := g.lo[k]; e < g.hi[k]; e++ {
			s := g.src[e]
			var need int32
			if s >= int32(g.nIn) && g.isCon[s-int32(g.nIn)] {
				need = 2
			} else {
				need = level[s] + 1
			}
			if need > L {
				L = need
			}
		}
		level[v] = L
		if L > maxLevel {
			maxLevel = L
		}
	}
	outLevel := maxLevel + 1
	for _, o := range outputs {
		if o >= int32(g.nIn) && g.isCon[o-int32(g.nIn)] && outLevel < 2 {
			outLevel = 2
		}
	}
	// Constants: one level below their first reader. lastUse: the highest
	// level that reads a value.
	const unset = int32(1 << 30)
	lastUse := make([]int32, total)
	for k := 0; k < g.nGates; k++ {
		if g.isCon[k] {
			level[g.nIn+k] = unset
		}
	}
	for k := 0; k < g.nGates; k++ {
		if g.isCon[k] || g.sharesRange(k) {
			continue // a shared range's reads were recorded by its first gate
		}
		L := level[g.nIn+k]
		for e := g.lo[k]; e < g.hi[k]; e++ {
			s := g.src[e]
			if L > lastUse[s] {
				lastUse[s] = L
			}
			if s >= int32(g.nIn) && g.isCon[s-int32(g.nIn)] && L-1 < level[s] {
				level[s] = L - 1
			}
		}
	}
	for _, o := range outputs {
		lastUse[o] = outLevel
		if o >= int32(g.nIn) && g.isCon[o-int32(g.nIn)] && outLevel-1 < level[o] {
			level[o] = outLevel - 1
		}
	}
	// Bucket gates by level, keeping creation order.
	count := make([]int32, outLevel+1)
	for k := 0; k < g.nGates; k++ {
		if L := level[g.nIn+k]; L != unset {
			count[L]++
		}
	}
	startAt := make([]int32, outLevel+2)
	for L := int32(1); L <= outLevel; L++ {
		startAt[L+1] = startAt[L] + count[L]
	}
	byLevel := make([]int32, startAt[outLevel+1])
	fill := append([]int32(nil), startAt...)
	for k := 0; k < g.nGates; k++ {
		if L := level[g.nIn+k]; L != unset {
			byLevel[fill[L]] = int32(g.nIn + k)
			fill[L]++
		}
	}
	// Values start being carried at level(v)+1 while lastUse(v) > level(v)+1.
	startCarry := make([][]int32, outLevel+1)
	copies := 0
	for v := 0; v < total; v++ {
		if level[v] == unset {
			continue // a constant nobody reads
		}
		if lastUse[v] > level[v]+1 {
			startCarry[level[v]+1] = append(startCarry[level[v]+1], int32(v))
			copies += int(lastUse[v] - level[v] - 1)
		}
	}
	lb.Grow(len(byLevel)+copies+len(outputs), g.edges+copies+len(outputs))
	pos := make([]int32, total) // index of v's instance in the previous level
	for i := 0; i < g.nIn; i++ {
		pos[i] = int32(i)
	}
	var active, placed []int32
	var srcBuf []int32
	for L := int32(1); L <= outLevel; L++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		placed = placed[:0]
		if L == outLevel {
			for _, o := range outputs {
				lb.Copy(pos[o], tagOf(g, o, lb))
			}
			break
		}
		for _, v := range byLevel[startAt[L]:startAt[L+1]] {
			k := v - int32(g.nIn)
			if !(g.sharesRange(int(k)) && len(placed) > 0 && placed[len(placed)-1] == v-1) {
				srcBuf = srcBuf[:0]
				for e := g.lo[k]; e < g.hi[k]; e++ {
					srcBuf = append(srcBuf, pos[g.src[e]])
				}
			}
			lb.Gate(layered.KindGate, g.theta[k], srcBuf, g.w[g.lo[k]:g.hi[k]], g.tag[k])
			placed = append(placed, v)
		}
		// Copies: values alive across this level.
		active = append(active, startCarry[L]...)
		kept := active[:0]
		for _, v := range active {
			if lastUse[v] > L {
				lb.Copy(pos[v], tagOf(g, v, lb))
				placed = append(placed, v)
				if lastUse[v] > L+1 {
					kept = append(kept, v)
				}
			}
		}
		active = kept
		lb.Level()
		for i, v := range placed {
			pos[v] = int32(i)
		}
	}
	lb.Level()
	return lb.Circuit(outRanges), nil
}

// tagOf returns the tag a copy of v carries: its source gate's, or "input".
func tagOf(g *tgraph, v int32, lb *layered.Builder) int32 {
	if v < int32(g.nIn) {
		return lb.Tag("input")
	}
	return g.tag[v-int32(g.nIn)]
}
