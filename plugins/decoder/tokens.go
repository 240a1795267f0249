package decoder

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The sequence: the prompt (the circuit's inputs, 8 a token), then every
// step's bits (8 a token, in step order), then the digest (the outputs, 8
// a token). Position p's stream computes token p+1, so the token a step
// writes is computed at the position before it.

// bitRef names one bit of the sequence: step s's bit k (s = 0: input k).
type bitRef struct{ step, bit int32 }

// tokenBit says what bit b of a generated token is: a step's bit, an output
// (out ≥ 0), or the constant 0 (step < 0 and out < 0).
type tokenBit struct {
	ref bitRef
	out int32
}

type layout struct {
	prompt int
	// where[s][k] is the position of step s's bit k and its bit in the
	// token (position·8 + bit).
	where [][]int32
	// gen[t] are the 8 bits of generated token t (position prompt+t).
	gen     [][8]tokenBit
	genStep []int32
	working int
	// promptBits[8j+b] is the input of prompt bit (j, b); digestBits the
	// output of digest bit (j, b); −1: constant 0.
	promptBits, digestBits []int32
}

// byteBit returns which bit of a byte-sized group bit b of a token is:
// lsb-first maps token bit b to bit b of the group, msb-first to bit 7−b.
func byteBit(msb bool, b int) int {
	if msb {
		return 7 - b
	}
	return b
}

func newLayout(g *dag, w *working, msb bool) *layout {
	S := len(w.bits) - 1
	lo := &layout{prompt: (g.nIn + 7) / 8, where: make([][]int32, S+1)}
	if lo.prompt == 0 {
		lo.prompt = 1
	}
	lo.promptBits = make([]int32, 8*lo.prompt)
	lo.where[0] = make([]int32, g.nIn)
	for j := range lo.prompt {
		for b := range 8 {
			i := 8*j + byteBit(msb, b)
			lo.promptBits[8*j+b] = -1
			if i < g.nIn {
				lo.promptBits[8*j+b] = int32(i)
				lo.where[0][i] = int32(8*j + b)
			}
		}
	}
	pos := lo.prompt
	for s := 1; s < S; s++ {
		n := len(w.bits[s])
		lo.where[s] = make([]int32, n)
		for t := 0; t < (n+7)/8; t++ {
			var tb [8]tokenBit
			for b := range 8 {
				tb[b] = tokenBit{ref: bitRef{-1, -1}, out: -1}
				if k := 8*t + b; k < n {
					tb[b].ref = bitRef{int32(s), int32(k)}
					lo.where[s][k] = int32(8*pos + b)
				}
			}
			lo.gen = append(lo.gen, tb)
			lo.genStep = append(lo.genStep, int32(s))
			pos++
		}
	}
	lo.working = len(lo.gen)
	nOut := len(g.out)
	nd := max(1, (nOut+7)/8)
	lo.digestBits = make([]int32, 8*nd)
	for j := range nd {
		var tb [8]tokenBit
		for b := range 8 {
			o := 8*j + byteBit(msb, b)
			tb[b] = tokenBit{ref: bitRef{-1, -1}, out: -1}
			lo.digestBits[8*j+b] = -1
			if o < nOut {
				tb[b].out = int32(o)
				lo.digestBits[8*j+b] = int32(o)
			}
		}
		lo.gen = append(lo.gen, tb)
		lo.genStep = append(lo.genStep, int32(S))
	}
	return lo
}

// positions returns the sequence length.
func (lo *layout) positions() int { return lo.prompt + len(lo.gen) }

// src is a fetched bit of a cone: the token at position pos, its bit b.
type src struct{ pos, b int32 }

// cnode is a node of a token's cone: a threshold of its terms (other cone
// nodes, by index, and fetched bits, by fetch index), at its level in the
// step.
type cnode struct {
	v     int32 // the dag node
	level int32
	theta float64
	in    []int32   // cone indices
	inW   []float64 //
	fe    []int32   // fetch indices
	feW   []float64
}

// cone is what one generated token's position computes: its nodes in
// level order, the tokens it fetches, and each of its 8 bits as a sum of
// cone nodes and fetched bits plus a constant.
type cone struct {
	nodes []cnode
	// fetch[j] is the j-th fetched bit; tokens the distinct positions
	// fetched, in order of first use (the heads, in order).
	fetch  []src
	tokens []int32
	outs   [8]coneSum
	levels int32
}

type coneSum struct {
	node  []int32
	nodeW []float64
	fe    []int32
	feW   []float64
	cst   float64
}

// buildCone makes the cone of generated token t.
func buildCone(g *dag, sc *schedule, w *working, lo *layout, t int) (*cone, error) {
	s := lo.genStep[t]
	c := &cone{}
	idx := map[int32]int32{} // dag node → cone index
	fidx := map[src]int32{}  // fetched bit → fetch index
	tidx := map[int32]bool{} // fetched positions
	fetch := func(ref bitRef) int32 {
		wh := lo.where[ref.step][ref.bit]
		sr := src{wh / 8, wh % 8}
		if j, ok := fidx[sr]; ok {
			return j
		}
		j := int32(len(c.fetch))
		fidx[sr] = j
		c.fetch = append(c.fetch, sr)
		if !tidx[sr.pos] {
			tidx[sr.pos] = true
			c.tokens = append(c.tokens, sr.pos)
		}
		return j
	}
	// Collect the cone's nodes: the in-step ancestors of the targets.
	var order []int32
	var visit func(v int32)
	visit = func(v int32) {
		if _, ok := idx[v]; ok {
			return
		}
		idx[v] = -1
		srcs, _ := g.terms(int(v))
		for _, u := range srcs {
			if sc.step[u] == s && u >= int32(g.nIn) {
				visit(u)
			}
		}
		order = append(order, v)
	}
	var targets [8]coneSum
	for b, tb := range lo.gen[t] {
		switch {
		case tb.ref.step > 0:
			d := w.bits[tb.ref.step][tb.ref.bit]
			for i, v := range d.x.node {
				visit(v)
				targets[b].node = append(targets[b].node, v)
				targets[b].nodeW = append(targets[b].nodeW, float64(d.x.coef[i]))
			}
			targets[b].cst = float64(d.cst)
		case tb.out >= 0:
			v := g.out[tb.out]
			if w.outStep[tb.out] == s && int(v) >= g.nIn {
				visit(v)
				targets[b].node = []int32{v}
				targets[b].nodeW = []float64{1}
				continue
			}
			oc := w.outs[tb.out]
			os := w.outStep[tb.out]
			if oc == nil {
				return nil, fmt.Errorf("decoder: output %d has no coordinates", tb.out)
			}
			for i, k := range oc.bit {
				targets[b].fe = append(targets[b].fe, fetch(bitRef{os, k}))
				targets[b].feW = append(targets[b].feW, oc.alpha[i])
			}
			targets[b].cst = oc.cst
		}
	}
	// Level order, then node order: the same structure in every step
	// gives the same cone.
	slices.SortStableFunc(order, func(a, b int32) int {
		if sc.local[a] != sc.local[b] {
			return int(sc.local[a] - sc.local[b])
		}
		return int(a - b)
	})
	for i, v := range order {
		idx[v] = int32(i)
	}
	for _, v := range order {
		n := cnode{v: v, level: sc.local[v], theta: float64(g.theta[v])}
		srcs, coef := g.terms(int(v))
		for e, u := range srcs {
			if sc.step[u] == s && u >= int32(g.nIn) {
				n.in = append(n.in, idx[u])
				n.inW = append(n.inW, float64(coef[e]))
			}
		}
		// Earlier steps (and the inputs) through their bits.
		steps := make([]int32, 0, len(w.reads[v]))
		for s2 := range w.reads[v] {
			steps = append(steps, s2)
		}
		slices.Sort(steps)
		for _, s2 := range steps {
			cd := w.reads[v][s2]
			for i, k := range cd.bit {
				n.fe = append(n.fe, fetch(bitRef{s2, k}))
				n.feW = append(n.feW, cd.alpha[i])
			}
			n.theta -= cd.cst
		}
		c.levels = max(c.levels, n.level)
		c.nodes = append(c.nodes, n)
	}
	for b := range 8 {
		ts := targets[b]
		o := coneSum{fe: ts.fe, feW: ts.feW, cst: ts.cst}
		for i, v := range ts.node {
			o.node = append(o.node, idx[v])
			o.nodeW = append(o.nodeW, ts.nodeW[i])
		}
		c.outs[b] = o
	}
	return c, nil
}

// shape is a cone's structure with its fetched tokens numbered (the heads'
// order), for comparing cones: tokens whose cones have one shape share
// units.
func (c *cone) shape() string {
	var b strings.Builder
	head := map[int32]int{}
	for i, p := range c.tokens {
		head[p] = i
	}
	f := func(x float64) { b.WriteString(strconv.FormatUint(math.Float64bits(x), 36)); b.WriteByte(',') }
	fe := func(j int32) {
		s := c.fetch[j]
		fmt.Fprintf(&b, "h%d.%d*", head[s.pos], s.b)
	}
	for _, n := range c.nodes {
		fmt.Fprintf(&b, "N%d:", n.level)
		f(n.theta)
		for i, u := range n.in {
			fmt.Fprintf(&b, "n%d*", u)
			f(n.inW[i])
		}
		for i, j := range n.fe {
			fe(j)
			f(n.feW[i])
		}
	}
	for k, o := range c.outs {
		fmt.Fprintf(&b, "O%d:", k)
		f(o.cst)
		for i, u := range o.node {
			fmt.Fprintf(&b, "n%d*", u)
			f(o.nodeW[i])
		}
		for i, j := range o.fe {
			fe(j)
			f(o.feW[i])
		}
	}
	return b.String()
}
