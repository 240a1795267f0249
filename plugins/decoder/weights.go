package decoder

import (
	"fmt"
	"math"

	"github.com/tcforge/tcforge/sdk/model"
)

// row collects one row of a matrix that reads a LayerNorm's output: LN(x)
// is x − μ (the ±C pin makes its scale 1), so the row also puts minus the
// sum of its weights on the sink, always 0, and μ cancels exactly.
type row struct {
	t   *tensor
	r   int
	sum float64
}

func (n *net) row(t *tensor, r int) *row { return &row{t: t, r: r} }

func (w *row) add(c int, v float64) {
	w.t.add(w.r, c, v)
	w.sum += v
}

func (w *row) done(sink int) { w.t.add(w.r, sink, -w.sum) }

// unit is one ReLU hidden unit under construction: relu(Σ w·LN(x) + bias).
type unit struct {
	in   []int
	inW  []float64
	bias float64
	out  []int
	outW []float64
}

// emit writes the model.
func (n *net) emit(g *dag, lo *layout, ks *kinds) (*model.Model, error) {
	d, H, hd := n.d, n.heads, n.hd
	T := lo.positions()
	if T > MaxPositions {
		return nil, fmt.Errorf("decoder: %d positions; the position code tells at most %d apart", T, MaxPositions)
	}
	// The units of every layer, kind by kind.
	units := make([][]unit, n.layers)
	maxS := 1.0
	for kind := 1; kind < len(ks.rep); kind++ {
		c := ks.rep[kind]
		for l, us := range n.kindUnits(int32(kind), c) {
			units[l] = append(units[l], us...)
			for _, u := range us {
				s := math.Abs(u.bias)
				for _, x := range u.inW {
					s += math.Abs(x)
				}
				maxS = max(maxS, s)
			}
		}
	}
	// The pin: ±cv makes LayerNorm's scale 1 + δ with |δ| ≤ Σ data²/(4cv²);
	// a unit's pre-activation then moves by at most maxS·δ, kept below
	// 1/40 of a step's margin.
	dataSq := float64(codePairs*(1+H) + n.kindBits + 8 + 8*H + 8 + (d - n.dimWork))
	cv := C
	for cv*cv < 10*Steep*maxS*dataSq {
		cv *= 2
	}
	n.cv = cv
	n.sigma0 = cv * math.Sqrt(2/float64(d))
	n.A = Gap / (1 - math.Cos(2*math.Pi/codeBase)) * math.Sqrt(float64(hd))
	m := &model.Model{Arch: "decoder/stock", Tokens: T, DModel: d,
		Attrs: map[string]int64{"depth": int64(g.depth), "C": int64(cv), "kinds": int64(len(ks.rep) - 1),
			"head_scale": 2, "max_sum": int64(maxS)}}
	// Embeddings.
	tok := newTensor("tok_embed", 256, d)
	for v := range 256 {
		for b := range 8 {
			if v>>b&1 == 1 {
				tok.add(v, n.dimTok+b, 1)
			}
		}
	}
	pos := newTensor("pos_embed", T, d)
	for p := range T {
		pos.add(p, n.dimPlus, cv)
		pos.add(p, n.dimMinus, -cv)
		for i, x := range code(p) {
			pos.add(p, n.dimKey+i, x)
		}
		t := p - lo.prompt + 1 // the generated token position p computes
		var kind int32
		var c *cone
		if t >= 0 && t < len(ks.of) {
			kind, c = ks.of[t], ks.cones[t]
		}
		for b := range n.kindBits {
			if kind>>b&1 == 1 {
				pos.add(p, n.dimKind+b, 1)
			}
		}
		for h := range H {
			target := p
			if c != nil && h < len(c.tokens) {
				target = int(c.tokens[h])
			}
			for i, x := range code(target) {
				pos.add(p, n.dimQuery+codeDims*h+i, x)
			}
		}
	}
	n.tensors = append(n.tensors, tok, pos)
	for l := range n.layers {
		if err := n.layer(m, l, units[l]); err != nil {
			return nil, err
		}
	}
	// The final norm and the head: logit_v = Σ_b (2v_b − 1)(2·out_b − 1).
	normW, normB := n.fill("norm_f.weight", n.sigma0), newTensor("norm_f.bias", 1, d)
	head, headB := newTensor("lm_head.weight", 256, d), newTensor("lm_head.bias", 1, 256)
	for v := range 256 {
		r := n.row(head, v)
		var cst float64
		for b := range 8 {
			s := float64(2*(v>>b&1) - 1)
			r.add(n.dimOut+b, 2*s)
			cst -= s
		}
		r.done(n.dimSink)
		headB.add(0, v, cst)
	}
	n.tensors = append(n.tensors, normW, normB, head, headB)
	m.Decoder = &model.Decoder{Vocab: 256, Positions: T, TokEmbed: tok.name, PosEmbed: pos.name,
		NormW: normW.name, NormB: normB.name, NormEps: Eps, HeadW: head.name, HeadB: headB.name,
		Prompt: lo.prompt, PromptBits: lo.promptBits, Working: lo.working, Digest: len(lo.gen) - lo.working,
		DigestBits: lo.digestBits, Step: lo.genStep}
	for _, t := range n.tensors {
		tt, err := t.b.Tensor()
		if err != nil {
			return nil, err
		}
		m.Tensors = append(m.Tensors, tt)
	}
	return m, nil
}

func (n *net) fill(name string, v float64) *tensor {
	t := newTensor(name, 1, n.d)
	for c := range n.d {
		t.add(0, c, v)
	}
	return t
}

// kindUnits returns the units of one kind, layer by layer: two a cone
// node (a saturated step of its sum), on the node's level; in the first
// layer, one a fetched bit an output copies and one for the outputs'
// constants. Every unit is gated by the kind: off at other positions.
func (n *net) kindUnits(kind int32, c *cone) [][]unit {
	out := make([][]unit, n.layers)
	fetchDim := func(j int32) int {
		s := c.fetch[j]
		for h, p := range c.tokens {
			if p == s.pos {
				return n.dimFetch + 8*h + int(s.b)
			}
		}
		panic("decoder: a fetched bit of no head")
	}
	// Which outputs read each node, with what weight.
	type use struct {
		b int
		w float64
	}
	uses := make([][]use, len(c.nodes))
	for b, o := range c.outs {
		for i, u := range o.node {
			uses[u] = append(uses[u], use{b, o.nodeW[i]})
		}
	}
	for i, nd := range c.nodes {
		var in []int
		var inW []float64
		bound := math.Abs(nd.theta)
		for k, u := range nd.in {
			in = append(in, n.dimWork+int(u))
			inW = append(inW, Steep*nd.inW[k])
			bound += math.Abs(nd.inW[k])
		}
		for k, j := range nd.fe {
			in = append(in, fetchDim(j))
			inW = append(inW, Steep*nd.feW[k])
			bound += math.Abs(nd.feW[k])
		}
		G := Steep*bound + 4
		for _, sh := range []float64{2, 1} { // relu(h), relu(h − 1), h = K(s − θ + ½)
			u := unit{in: in, inW: inW, bias: -Steep*nd.theta + sh}
			sign := 1.0
			if sh == 1 {
				sign = -1
			}
			u.out = append(u.out, n.dimWork+i)
			u.outW = append(u.outW, sign)
			for _, us := range uses[i] {
				u.out = append(u.out, n.dimOut+us.b)
				u.outW = append(u.outW, sign*us.w)
			}
			u.gateKind(n, kind, G)
			out[nd.level-1] = append(out[nd.level-1], u)
		}
	}
	// Outputs' copies of fetched bits and constants, in the first layer.
	var cst unit
	any := false
	for b, o := range c.outs {
		for k, j := range o.fe {
			u := unit{in: []int{fetchDim(j)}, inW: []float64{1}, out: []int{n.dimOut + b}, outW: []float64{o.feW[k]}}
			u.gateKind(n, kind, 2)
			out[0] = append(out[0], u)
		}
		if o.cst != 0 {
			cst.out = append(cst.out, n.dimOut+b)
			cst.outW = append(cst.outW, o.cst)
			any = true
		}
	}
	if any {
		cst.bias = 1
		cst.gateKind(n, kind, 2)
		out[0] = append(out[0], cst)
	}
	return out
}

// gateKind adds the kind gate to u: −G per kind bit that differs.
func (u *unit) gateKind(n *net, kind int32, G float64) {
	for b := range n.kindBits {
		if kind>>b&1 == 1 {
			u.in = append(u.in, n.dimKind+b)
			u.inW = append(u.inW, G)
			u.bias -= G
		} else {
			u.in = append(u.in, n.dimKind+b)
			u.inW = append(u.inW, -G)
		}
	}
}

// layer writes stock layer l: the heads fetch (layer 0), the FFN runs the
// layer's units.
func (n *net) layer(m *model.Model, l int, units []unit) error {
	d, H, hd := n.d, n.heads, n.hd
	p := fmt.Sprintf("layers.%d.", l)
	n1w, n1b := n.fill(p+"norm1.weight", n.sigma0), newTensor(p+"norm1.bias", 1, d)
	n2w, n2b := n.fill(p+"norm2.weight", n.sigma0), newTensor(p+"norm2.bias", 1, d)
	inW, inB := newTensor(p+"self_attn.in_proj_weight", 3*d, d), newTensor(p+"self_attn.in_proj_bias", 1, 3*d)
	outW, outB := newTensor(p+"self_attn.out_proj.weight", d, d), newTensor(p+"self_attn.out_proj.bias", 1, d)
	if l == 0 {
		for h := range H {
			for i := range codeDims {
				q := n.row(inW, h*hd+i)
				q.add(n.dimQuery+codeDims*h+i, n.A)
				q.done(n.dimSink)
				k := n.row(inW, d+h*hd+i)
				k.add(n.dimKey+i, 1)
				k.done(n.dimSink)
			}
			for b := range 8 {
				v := n.row(inW, 2*d+h*hd+b)
				v.add(n.dimTok+b, 1)
				v.done(n.dimSink)
				outW.add(n.dimFetch+8*h+b, h*hd+b, 1)
			}
		}
	}
	F := max(1, len(units))
	l1W, l1B := newTensor(p+"linear1.weight", F, d), newTensor(p+"linear1.bias", 1, F)
	l2W, l2B := newTensor(p+"linear2.weight", d, F), newTensor(p+"linear2.bias", 1, d)
	for i, u := range units {
		r := n.row(l1W, i)
		for k, c := range u.in {
			r.add(c, u.inW[k])
		}
		r.done(n.dimSink)
		l1B.add(0, i, u.bias)
		for k, c := range u.out {
			l2W.add(c, i, u.outW[k])
		}
	}
	n.tensors = append(n.tensors, n1w, n1b, inW, inB, outW, outB, n2w, n2b, l1W, l1B, l2W, l2B)
	m.Blocks = append(m.Blocks, model.Block{Layer: &model.EncoderLayer{Heads: H, Eps: Eps,
		Norm1W: n1w.name, Norm1B: n1b.name, InProjW: inW.name, InProjB: inB.name, OutProjW: outW.name, OutProjB: outB.name,
		Norm2W: n2w.name, Norm2B: n2b.name, Linear1W: l1W.name, Linear1B: l1B.name, Linear2W: l2W.name, Linear2B: l2B.name}})
	return nil
}
