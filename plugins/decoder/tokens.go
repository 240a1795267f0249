package decoder

import (
	"fmt"
	"slices"
)

// The sequence: the prompt (the circuit's inputs, 8 a token), then every
// step's bits (8 a token, in step order), then the digest (the outputs, 8
// a token). Position p's stream computes token p+1, so the token a step
// writes is computed at the position before it.
//
// Every token has coordinates (row, col): a generated token's row is its
// step and its col its rank in the step; a prompt token's row is one less
// than the first step that reads it and its col follows the cols of the
// working, so that the steps of a periodic circuit find what they read at
// the same (row distance, col) every time.

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
	// row and col of every position's token.
	row, col []int32
}

// byteMap returns, for token bit b, which of the 8 circuit bits base …
// base+7 it carries (−1: none, past n): lsb-first bit base+b, msb-first
// bit base+7−b; auto by the bits' position hints (hint h is token bit
// h mod 8) where they are eight distinct ones, else lsb-first.
func byteMap(order string, base, n int, hint func(i int) int32) [8]int {
	var m [8]int
	for b := range m {
		m[b] = base + b
		if order == "msb-first" {
			m[b] = base + 7 - b
		}
	}
	if order == "auto" || order == "" {
		var byHint [8]int
		seen := 0
		for b := range byHint {
			byHint[b] = -1
		}
		ok := true
		for i := base; i < min(base+8, n); i++ {
			h := hint(i)
			if h < 0 || byHint[h%8] >= 0 {
				ok = false
				break
			}
			byHint[h%8] = i
			seen++
		}
		if ok && seen > 0 {
			m = byHint
		}
	}
	for b := range m {
		if m[b] >= n {
			m[b] = -1
		}
	}
	return m
}

func newLayout(g *dag, sc *schedule, w *working, order string) *layout {
	S := len(w.bits) - 1
	lo := &layout{prompt: (g.nIn + 7) / 8, where: make([][]int32, S+1)}
	if lo.prompt == 0 {
		lo.prompt = 1
	}
	lo.promptBits = make([]int32, 8*lo.prompt)
	lo.where[0] = make([]int32, g.nIn)
	for j := range lo.prompt {
		m := byteMap(order, 8*j, g.nIn, func(i int) int32 { return g.pos[i] })
		for b, i := range m {
			lo.promptBits[8*j+b] = int32(i)
			if i >= 0 {
				lo.where[0][i] = int32(8*j + b)
			}
		}
	}
	pos := lo.prompt
	for s := 1; s < S; s++ {
		n := len(w.bits[s])
		lo.where[s] = make([]int32, n)
		for _, tb := range packBits(g, w.bits[s], int32(s)) {
			for b, x := range tb {
				if x.ref.step > 0 {
					lo.where[s][x.ref.bit] = int32(8*pos + b)
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
		m := byteMap(order, 8*j, nOut, func(o int) int32 { return g.pos[g.out[o]] })
		for b, o := range m {
			tb[b] = tokenBit{ref: bitRef{-1, -1}, out: int32(o)}
			lo.digestBits[8*j+b] = int32(o)
		}
		lo.gen = append(lo.gen, tb)
		lo.genStep = append(lo.genStep, int32(S))
	}
	lo.coordinates(g, sc, w)
	return lo
}

// coordinates gives every position's token its (row, col).
func (lo *layout) coordinates(g *dag, sc *schedule, w *working) {
	T := lo.positions()
	lo.row, lo.col = make([]int32, T), make([]int32, T)
	// A generated token's col is its role: tokens of one structure (the
	// same bits of the same kind of value, say a′'s second byte) share a col
	// in every step, so that a step finds what it reads at the same (Δ row,
	// col) wherever the steps before wrote other tokens too.
	roles := map[string]int32{}
	maxCol := int32(0)
	for t := range lo.gen {
		p := lo.prompt + t
		lo.row[p] = lo.genStep[t]
		sig := lo.role(g, sc, w, t)
		r, ok := roles[sig]
		for ok && t > 0 && lo.taken(t, r) { // two tokens of one role in a step
			sig += "'"
			r, ok = roles[sig]
		}
		if !ok {
			r = int32(len(roles))
			roles[sig] = r
		}
		lo.col[p] = r
		maxCol = max(maxCol, r+1)
	}
	// A prompt token's row: one before the first step reading it.
	first := make([]int32, lo.prompt)
	for j := range first {
		first[j] = int32(len(w.bits))
	}
	// The steps reading each input, through the readers' coordinates.
	for v, rd := range w.reads {
		c := rd[0]
		if c == nil {
			continue
		}
		st := sc.step[v]
		for _, i := range c.bit {
			j := lo.where[0][i] / 8
			first[j] = min(first[j], st)
		}
	}
	for o, c := range w.outs {
		if c == nil || w.outStep[o] != 0 {
			continue
		}
		for _, i := range c.bit {
			j := lo.where[0][i] / 8
			first[j] = min(first[j], int32(len(w.bits)-1))
		}
	}
	next := map[int32]int32{}
	for j := range lo.prompt {
		r := max(0, first[j]-1)
		lo.row[j] = r
		lo.col[j] = maxCol + next[r]
		next[r]++
	}
}

// packBits packs a step's bits into tokens. A bit whose node has a
// position hint h (SHA-2: its bit of a word) goes to bit h mod 8 of a
// token, the first whose that bit is free and whose bits share ⌊h/8⌋, so
// that a word's bytes are tokens as the prompt's are (a step reads a word
// alike from the prompt or from the working); bits without a hint fill the
// free bits in order.
func packBits(g *dag, bits []bitDef, s int32) [][8]tokenBit {
	var toks [][8]tokenBit
	var group []int32 // per token: ⌊h/8⌋ of its hinted bits, −1 if none
	empty := func() [8]tokenBit {
		var tb [8]tokenBit
		for b := range tb {
			tb[b] = tokenBit{ref: bitRef{-1, -1}, out: -1}
		}
		return tb
	}
	var loose []int
	for k, d := range bits {
		h := g.pos[d.x.node[0]]
		if h < 0 {
			loose = append(loose, k)
			continue
		}
		slot, grp := int(h%8), h/8
		placed := false
		for t := range toks {
			if group[t] == grp && toks[t][slot].ref.step < 0 {
				toks[t][slot].ref = bitRef{s, int32(k)}
				placed = true
				break
			}
		}
		if !placed {
			tb := empty()
			tb[slot].ref = bitRef{s, int32(k)}
			toks = append(toks, tb)
			group = append(group, grp)
		}
	}
	for _, k := range loose {
		placed := false
		for t := range toks {
			for b := range 8 {
				if toks[t][b].ref.step < 0 && group[t] < 0 {
					toks[t][b].ref = bitRef{s, int32(k)}
					placed = true
					break
				}
			}
			if placed {
				break
			}
		}
		if !placed {
			tb := empty()
			tb[0].ref = bitRef{s, int32(k)}
			toks = append(toks, tb)
			group = append(group, -1)
		}
	}
	return toks
}

// taken reports whether col r is used by an earlier token of t's step.
func (lo *layout) taken(t int, r int32) bool {
	for u := t - 1; u >= 0 && lo.genStep[u] == lo.genStep[t]; u-- {
		if lo.col[lo.prompt+u] == r {
			return true
		}
	}
	return false
}

// role describes generated token t by the structure of its bits: for each,
// its position hint and the nodes that make it (their level in the step,
// threshold and coefficients), or the output it is.
func (lo *layout) role(g *dag, sc *schedule, w *working, t int) string {
	var b []byte
	for _, tb := range lo.gen[t] {
		switch {
		case tb.ref.step > 0:
			d := w.bits[tb.ref.step][tb.ref.bit]
			b = append(b, 'w')
			b = appendInt(b, d.cst)
			for i, v := range d.x.node {
				src, coef := g.terms(int(v))
				b = appendInt(b, int64(g.pos[v]))
				b = appendInt(b, int64(sc.local[v]))
				b = appendInt(b, g.theta[v])
				b = appendInt(b, d.x.coef[i])
				b = appendInt(b, int64(len(src)))
				cs := slices.Clone(coef)
				slices.Sort(cs)
				for _, c := range cs {
					b = appendInt(b, c)
				}
			}
		case tb.out >= 0:
			b = append(b, 'o')
			b = appendInt(b, int64(tb.out))
		default:
			b = append(b, '0')
		}
	}
	return string(b)
}

// positions returns the sequence length.
func (lo *layout) positions() int { return lo.prompt + len(lo.gen) }

// src is a fetched bit of a cone: the token at position pos, its bit b.
type src struct{ pos, b int32 }

// cnode is a node of a group's cone: a threshold of its terms (other cone
// nodes, by index; fetched bits, by fetch index; constants, by feature
// index), at its level in the step.
type cnode struct {
	v     int32 // the dag node
	level int32
	theta float64
	in    []int32 // cone indices
	inW   []float64
	fe    []int32 // fetch indices
	feW   []float64
	ft    []int32 // feature indices
	ftW   []float64
}

// coneSum is a bit of a generated token as a sum of cone nodes, fetched
// bits and features plus a constant.
type coneSum struct {
	node  []int32
	nodeW []float64
	fe    []int32
	feW   []float64
	ft    []int32
	ftW   []float64
	cst   float64
}

// cone is what the positions of one group compute: the nodes of the
// step that its tokens' bits depend on, in level order; the bits it
// fetches and the level that reads each; the constants it reads (its
// features); and every slot's 8 bits.
type cone struct {
	step   int32
	tokens []int // the group's generated tokens, one a slot
	nodes  []cnode
	fetch  []src
	// need[j] lists the levels (1-based) at which fetch j is read.
	need   [][]int32
	feats  []int32 // dag constant nodes
	outs   [][8]coneSum
	levels int32
}

// buildCone makes the cone of a group of generated tokens of one step.
func buildCone(g *dag, sc *schedule, w *working, lo *layout, ts []int) (*cone, error) {
	s := lo.genStep[ts[0]]
	c := &cone{step: s, tokens: ts}
	idx := map[int32]int32{} // dag node → cone index
	fidx := map[src]int32{}  // fetched bit → fetch index
	ftx := map[int32]int32{} // constant → feature index
	fetch := func(ref bitRef, level int32) int32 {
		wh := lo.where[ref.step][ref.bit]
		sr := src{wh / 8, wh % 8}
		j, ok := fidx[sr]
		if !ok {
			j = int32(len(c.fetch))
			fidx[sr] = j
			c.fetch = append(c.fetch, sr)
			c.need = append(c.need, nil)
		}
		if !slices.Contains(c.need[j], level) {
			c.need[j] = append(c.need[j], level)
		}
		return j
	}
	feat := func(v int32) int32 {
		j, ok := ftx[v]
		if !ok {
			j = int32(len(c.feats))
			ftx[v] = j
			c.feats = append(c.feats, v)
		}
		return j
	}
	// The in-step ancestors of the targets.
	var order []int32
	var visit func(v int32)
	visit = func(v int32) {
		if _, ok := idx[v]; ok {
			return
		}
		idx[v] = -1
		srcs, _ := g.terms(int(v))
		for _, u := range srcs {
			if sc.step[u] == s && int(u) >= g.nIn && !g.isConst(u) {
				visit(u)
			}
		}
		order = append(order, v)
	}
	type target struct {
		node  []int32
		nodeW []float64
		fe    []bitRef
		feW   []float64
		ft    []int32
		cst   float64
	}
	targets := make([][8]target, len(ts))
	for slot, t := range ts {
		for b, tb := range lo.gen[t] {
			tg := &targets[slot][b]
			switch {
			case tb.ref.step > 0:
				d := w.bits[tb.ref.step][tb.ref.bit]
				for i, v := range d.x.node {
					visit(v)
					tg.node = append(tg.node, v)
					tg.nodeW = append(tg.nodeW, float64(d.x.coef[i]))
				}
				tg.cst = float64(d.cst)
			case tb.out >= 0:
				v := g.out[tb.out]
				os := w.outStep[tb.out]
				switch {
				case os < 0:
					tg.ft = []int32{v}
				case os == s && int(v) >= g.nIn:
					visit(v)
					tg.node, tg.nodeW = []int32{v}, []float64{1}
				default:
					oc := w.outs[tb.out]
					if oc == nil {
						return nil, fmt.Errorf("decoder: output %d has no coordinates", tb.out)
					}
					for i, k := range oc.bit {
						tg.fe = append(tg.fe, bitRef{os, k})
						tg.feW = append(tg.feW, oc.alpha[i])
					}
					tg.cst = oc.cst
				}
			}
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
			switch {
			case g.isConst(u):
				n.ft = append(n.ft, feat(u))
				n.ftW = append(n.ftW, float64(coef[e]))
			case sc.step[u] == s && int(u) >= g.nIn:
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
				n.fe = append(n.fe, fetch(bitRef{s2, k}, n.level))
				n.feW = append(n.feW, cd.alpha[i])
			}
			n.theta -= cd.cst
		}
		c.levels = max(c.levels, n.level)
		c.nodes = append(c.nodes, n)
	}
	c.levels = max(c.levels, 1)
	c.outs = make([][8]coneSum, len(ts))
	for slot := range ts {
		for b := range 8 {
			tg := targets[slot][b]
			o := coneSum{cst: tg.cst}
			for i, v := range tg.node {
				o.node = append(o.node, idx[v])
				o.nodeW = append(o.nodeW, tg.nodeW[i])
			}
			for i, r := range tg.fe {
				o.fe = append(o.fe, fetch(r, 1))
				o.feW = append(o.feW, tg.feW[i])
			}
			for _, v := range tg.ft {
				o.ft = append(o.ft, feat(v))
				o.ftW = append(o.ftW, 1)
			}
			c.outs[slot][b] = o
		}
	}
	return c, nil
}

// coneNodes returns the in-step nodes generated token t's bits depend on.
func coneNodes(g *dag, sc *schedule, w *working, lo *layout, t int) map[int32]bool {
	s := lo.genStep[t]
	mine := map[int32]bool{}
	var visit func(v int32)
	visit = func(v int32) {
		if mine[v] {
			return
		}
		mine[v] = true
		srcs, _ := g.terms(int(v))
		for _, u := range srcs {
			if sc.step[u] == s && int(u) >= g.nIn && !g.isConst(u) {
				visit(u)
			}
		}
	}
	for _, tb := range lo.gen[t] {
		if tb.ref.step > 0 {
			for _, v := range w.bits[tb.ref.step][tb.ref.bit].x.node {
				visit(v)
			}
		} else if tb.out >= 0 && w.outStep[tb.out] == s && int(g.out[tb.out]) >= g.nIn {
			visit(g.out[tb.out])
		}
	}
	return mine
}
