package decoder

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/tcforge/tcforge/sdk/model"
)

// tensor is a tensor under construction.
type tensor struct {
	b    *model.Builder
	name string
}

func newTensor(name string, rows, cols int) *tensor {
	return &tensor{b: model.NewBuilder(name, rows, cols), name: name}
}

func (t *tensor) add(r, c int, v float64) {
	if v != 0 {
		t.b.Add(r, c, v)
	}
}

// row collects one row of a matrix that reads a LayerNorm's output: LN(x)
// is x − μ (the ±C pin makes its scale 1), so the row also puts minus the
// sum of its weights on the sink, always 0, and μ cancels exactly.
type row struct {
	t   *tensor
	r   int
	sum float64
}

func (w *row) add(c int, v float64) {
	w.t.add(w.r, c, v)
	w.sum += v
}

func (w *row) done(sink int) { w.t.add(w.r, sink, -w.sum) }

// unit is one ReLU hidden unit: relu(Σ w·LN(x) + bias), written to out
// with weights outW.
type unit struct {
	in   []int
	inW  []float64
	bias float64
	out  []int
	outW []float64
	name string // its label
}

func (u *unit) read(dim int, w float64) {
	u.in = append(u.in, dim)
	u.inW = append(u.inW, w)
}

func (u *unit) write(dim int, w float64) {
	u.out = append(u.out, dim)
	u.outW = append(u.outW, w)
}

// gate adds −G per bit of the code in dims [dim, dim+nbits) that differs
// from code: the unit is off unless the position's code is code.
func (u *unit) gate(dim, nbits int, code int32, G float64) {
	for b := range nbits {
		if code>>b&1 == 1 {
			u.read(dim+b, G)
			u.bias -= G
		} else {
			u.read(dim+b, -G)
		}
	}
}

// builder writes the model of a plan.
type builder struct {
	*plan
	lo      *layout
	g       *dag
	tags    []string
	units   [][]unit
	labels  *model.Labels
	cv, A   float64
	sigma0  float64
	tensors []*tensor
}

// emit writes the model.
func (p *plan) emit(g *dag, lo *layout, tags []string) (*model.Model, error) {
	bd := &builder{plan: p, lo: lo, g: g, tags: tags, units: make([][]unit, p.layers), labels: &model.Labels{}}
	for f := range p.famRep {
		bd.familyUnits(int32(f))
	}
	// Every layer but the last clears the fetched dimensions for the next.
	for l := 0; l+1 < p.layers; l++ {
		for i := range 8 * p.H {
			u := unit{name: fmt.Sprintf("clears head %d's fetched bit %d for the next layer", i/8, i%8)}
			u.read(p.dimFetch+i, 1)
			u.write(p.dimFetch+i, -1)
			bd.units[l] = append(bd.units[l], u)
		}
	}
	maxS := 1.0
	for _, us := range bd.units {
		for _, u := range us {
			s := math.Abs(u.bias)
			for _, x := range u.inW {
				s += math.Abs(x)
			}
			maxS = max(maxS, s)
		}
	}
	// The pin: ±cv makes LayerNorm's scale 1 + δ with |δ| ≤ Σ data²/(4cv²);
	// a unit's pre-activation then moves by at most maxS·δ, kept below
	// 1/40 of a step's margin.
	formSq := 0.0
	for k := 1; k < len(p.rep); k++ {
		var sq float64
		for _, fc := range p.forms[k].clears {
			sq += max(fc.lo*fc.lo, fc.hi*fc.hi)
		}
		formSq = max(formSq, sq)
	}
	dataSq := float64(posPairs+3*rcPairs+p.kindBits+p.slotBits+8+p.nFeat+8*p.H+8) + formSq
	for l := range p.layers {
		if p.mode[l] == targeted {
			dataSq += float64(posPairs * p.heads[l])
		}
	}
	cv := C
	for cv*cv < 10*Steep*maxS*dataSq {
		cv *= 2
	}
	bd.cv = cv
	bd.sigma0 = cv * math.Sqrt(2/float64(p.d))
	bd.A = Gap / (1 - math.Cos(2*math.Pi/codeBase)) * math.Sqrt(float64(p.hd))
	T := lo.positions()
	m := &model.Model{Arch: "decoder/stock", Tokens: T, DModel: p.d,
		Attrs: map[string]int64{"depth": int64(g.depth), "C": int64(cv), "kinds": int64(len(p.rep) - 1),
			"head_scale": 2, "max_sum": int64(maxS), "features": int64(p.nFeat), "work_dims": int64(p.workDims)}}
	bd.embeddings(T)
	for l := range p.layers {
		bd.layer(m, l)
	}
	bd.head()
	dec := &model.Decoder{Vocab: 256, Positions: T, TokEmbed: "tok_embed", PosEmbed: "pos_embed",
		NormW: "norm_f.weight", NormB: "norm_f.bias", NormEps: Eps, HeadW: "lm_head.weight", HeadB: "lm_head.bias",
		Prompt: lo.prompt, PromptBits: lo.promptBits, Working: lo.working, Digest: len(lo.gen) - lo.working,
		DigestBits: lo.digestBits, Step: lo.genStep}
	m.Decoder = dec
	bd.valueLabels(int32(len(m.Blocks)))
	m.Labels = bd.labels
	for _, t := range bd.tensors {
		tt, err := t.b.Tensor()
		if err != nil {
			return nil, err
		}
		m.Tensors = append(m.Tensors, tt)
	}
	return m, nil
}

// embeddings writes the token embedding (a byte's bits) and the position
// embedding (the pin, codes, kind, slot, features, targeted queries).
func (bd *builder) embeddings(T int) {
	p, lo := bd.plan, bd.lo
	tok := newTensor("tok_embed", 256, p.d)
	for v := range 256 {
		for b := range 8 {
			if v>>b&1 == 1 {
				tok.add(v, p.dimTok+b, 1)
			}
		}
	}
	pos := newTensor("pos_embed", T, p.d)
	for q := range T {
		pos.add(q, p.dimPlus, bd.cv)
		pos.add(q, p.dimMinus, -bd.cv)
		put := func(dim int, xs []float64) {
			for i, x := range xs {
				pos.add(q, dim+i, x)
			}
		}
		put(p.dimPos, code(q, posPairs))
		put(p.dimRow, code(int(lo.row[q]), rcPairs))
		put(p.dimCol, code(int(lo.col[q]), rcPairs))
		t := q - lo.prompt + 1 // the generated token position q computes
		qrow := lo.row[q]
		var gi int32 = -1
		if t >= 0 && t < len(lo.gen) {
			gi = p.groupOf[t]
			qrow = lo.genStep[t]
		}
		put(p.dimQRow, code(int(qrow), rcPairs))
		if gi < 0 {
			for l := range p.layers {
				if p.mode[l] == targeted {
					for h := range p.heads[l] {
						put(p.dimQuery[l]+2*posPairs*h, code(q, posPairs))
					}
				}
			}
			continue
		}
		kind, slot := p.kind[gi], p.slotOf[t]
		kc := p.code(kind)
		for b := range p.kindBits {
			if kc>>b&1 == 1 {
				pos.add(q, p.dimKind+b, 1)
			}
		}
		for b := range p.slotBits {
			if slot>>b&1 == 1 {
				pos.add(q, p.dimSlot+b, 1)
			}
		}
		c := p.cones[gi]
		for j, v := range c.feats {
			if fd := p.featDim[kind][j]; fd >= 0 {
				pos.add(q, p.dimFeat+int(fd), bd.g.constValue(v))
			}
		}
		for l := range p.layers {
			if p.mode[l] != targeted {
				continue
			}
			ns := p.tneeds[l][gi]
			for h := range p.heads[l] {
				target := q
				if h < len(ns) {
					target = int(ns[h])
				}
				put(p.dimQuery[l]+2*posPairs*h, code(target, posPairs))
			}
		}
	}
	bd.tensors = append(bd.tensors, tok, pos)
}

// familyUnits adds the units of family f (its kinds' cones are alike but
// for the heads some fetches use): two a cone node (a saturated step of
// its sum) on the node's level, writing its forms; where several slots
// share the cone, two more a (slot, bit) the node feeds, gated by the slot
// too, writing the out dimension; one or two clearing each form where it
// is last read; and on the first layer one a fetched bit or feature an
// output copies and one for the outputs' constants. A unit alike in every
// kind of the family is gated by the family's code, one that reads
// fetches whose heads differ by each kind's.
func (bd *builder) familyUnits(f int32) {
	p := bd.plan
	var kinds []int32
	for k := range p.rep {
		if k > 0 && p.family[k] == f {
			kinds = append(kinds, int32(k))
		}
	}
	k0 := kinds[0]
	c := p.cones[p.rep[k0]]
	cf := p.forms[k0]
	multi := len(c.tokens) > 1
	famGate := func(u *unit, G float64) { u.gate(p.dimKind+p.varBits, p.famBits, f, G) }
	kindGate := func(k int32) func(u *unit, G float64) {
		return func(u *unit, G float64) { u.gate(p.dimKind, p.kindBits, p.code(k), G) }
	}
	// fetchTerms returns, in kind k's cone, the fetched terms of node i
	// (out < 0) or of output bit (slot, b) = out: their dims and weights,
	// sorted by dim, as read at level.
	type fterm struct {
		dim int
		w   float64
	}
	fetchTerms := func(k int32, i int, slot, b int) []fterm {
		gi := int(p.rep[k])
		ck := p.cones[gi]
		js, ws, level := []int32(nil), []float64(nil), int32(1)
		if i >= 0 {
			js, ws, level = ck.nodes[i].fe, ck.nodes[i].feW, ck.nodes[i].level
		} else {
			js, ws = ck.outs[slot][b].fe, ck.outs[slot][b].feW
		}
		out := make([]fterm, len(js))
		for x, j := range js {
			s := ck.fetch[j]
			out[x] = fterm{p.dimFetch + 8*int(p.headOf(bd.lo, gi, int(level)-1, s.pos)) + int(s.b), ws[x]}
		}
		slices.SortFunc(out, func(a, b fterm) int {
			if a.dim != b.dim {
				return a.dim - b.dim
			}
			return cmp.Compare(a.w, b.w)
		})
		return out
	}
	// alike reports whether those terms are the same in every kind.
	alike := func(i, slot, b int) bool {
		t0 := fetchTerms(k0, i, slot, b)
		for _, k := range kinds[1:] {
			if !slices.Equal(t0, fetchTerms(k, i, slot, b)) {
				return false
			}
		}
		return true
	}
	type use struct {
		slot, b int
		w       float64
	}
	uses := make([][]use, len(c.nodes))
	for slot, os := range c.outs {
		for b, o := range os {
			for i, u := range o.node {
				uses[u] = append(uses[u], use{slot, b, o.nodeW[i]})
			}
		}
	}
	for i, n := range c.nodes {
		theta := n.theta
		for k2, j := range n.ft { // folded constants
			if p.featDim[k0][j] < 0 {
				theta -= n.ftW[k2] * p.featVal[k0][j]
			}
		}
		// bound: |s − θ| at any position, whatever kind's values the dims
		// it reads hold there (the gate must turn it off everywhere else).
		bound := math.Abs(theta)
		var base unit
		for k2, dim := range cf.readDim[i] {
			base.read(p.dimWork+int(dim), Steep*cf.readW[i][k2])
			bound += math.Abs(cf.readW[i][k2]) * p.workMax[dim]
		}
		for k2, j := range n.ft {
			if fd := p.featDim[k0][j]; fd >= 0 {
				base.read(p.dimFeat+int(fd), Steep*n.ftW[k2])
				bound += math.Abs(n.ftW[k2])
			}
		}
		for _, w := range n.feW {
			bound += math.Abs(w)
		}
		G := Steep*bound + 4
		gname := bd.nodeName(n.v)
		emit := func(gate func(u *unit, G float64), fts []fterm, who string) {
			pair := func(extra func(u *unit), writes func(u *unit, sign float64), what string) {
				for _, sh := range []float64{2, 1} { // relu(h), relu(h − 1), h = K(s − θ + ½)
					half := "relu(h)"
					if sh == 1 {
						half = "relu(h − 1)"
					}
					u := unit{in: append([]int(nil), base.in...), inW: append([]float64(nil), base.inW...), bias: -Steep*theta + sh,
						name: fmt.Sprintf("%s of %s, step level %d (%s)%s", half, gname, n.level, who, what)}
					for _, ft := range fts {
						u.read(ft.dim, Steep*ft.w)
					}
					sign := 1.0
					if sh == 1 {
						sign = -1
					}
					writes(&u, sign)
					gate(&u, G)
					extra(&u)
					bd.units[n.level-1] = append(bd.units[n.level-1], u)
				}
			}
			none := func(*unit) {}
			toForms := func(u *unit, sign float64) {
				for k2, dim := range cf.writeDim[i] {
					u.write(p.dimWork+int(dim), sign*cf.writeW[i][k2])
				}
			}
			if !multi {
				pair(none, func(u *unit, sign float64) {
					toForms(u, sign)
					for _, us := range uses[i] {
						u.write(p.dimOut+us.b, sign*us.w)
					}
				}, "")
				return
			}
			if len(cf.writeDim[i]) > 0 {
				pair(none, toForms, "")
			}
			for _, us := range uses[i] {
				pair(func(u *unit) { u.gate(p.dimSlot, p.slotBits, int32(us.slot), G) },
					func(u *unit, sign float64) { u.write(p.dimOut+us.b, sign*us.w) },
					fmt.Sprintf(" → bit %d of slot %d's token", us.b, us.slot))
			}
		}
		if alike(i, 0, 0) {
			emit(famGate, fetchTerms(k0, i, 0, 0), fmt.Sprintf("family %d", f))
		} else {
			for _, k := range kinds {
				emit(kindGate(k), fetchTerms(k, i, 0, 0), fmt.Sprintf("family %d kind %d", f, k))
			}
		}
	}
	// Each form is cleared on the layer that reads it last.
	for _, fc := range cf.clears {
		G := p.workMax[fc.dim] + 2
		for _, sign := range []float64{1, -1} {
			if (sign > 0 && fc.hi <= 0) || (sign < 0 && fc.lo >= 0) {
				continue
			}
			u := unit{name: fmt.Sprintf("clears work dim %d after its last read (family %d)", fc.dim, f)}
			u.read(p.dimWork+int(fc.dim), sign)
			u.write(p.dimWork+int(fc.dim), -sign)
			famGate(&u, G)
			bd.units[fc.layer] = append(bd.units[fc.layer], u)
		}
	}
	// Outputs' copies of fetched bits and features, and their constants.
	for slot, os := range c.outs {
		var cst unit
		anyCst := false
		for b, o := range os {
			copyUnits := func(gate func(u *unit, G float64), fts []fterm) {
				for _, ft := range fts {
					u := unit{name: fmt.Sprintf("copies a fetched bit into bit %d of slot %d's token (family %d)", b, slot, f)}
					u.read(ft.dim, 1)
					u.write(p.dimOut+b, ft.w)
					gate(&u, 2)
					u.gate(p.dimSlot, p.slotBits, int32(slot), 2)
					bd.units[0] = append(bd.units[0], u)
				}
			}
			if alike(-1, slot, b) {
				copyUnits(famGate, fetchTerms(k0, -1, slot, b))
			} else {
				for _, k := range kinds {
					copyUnits(kindGate(k), fetchTerms(k, -1, slot, b))
				}
			}
			cst0 := o.cst
			for k2, j := range o.ft {
				fd := p.featDim[k0][j]
				if fd < 0 {
					cst0 += o.ftW[k2] * p.featVal[k0][j]
					continue
				}
				u := unit{name: fmt.Sprintf("copies a constant into bit %d of slot %d's token (family %d)", b, slot, f)}
				u.read(p.dimFeat+int(fd), 1)
				u.write(p.dimOut+b, o.ftW[k2])
				famGate(&u, 2)
				u.gate(p.dimSlot, p.slotBits, int32(slot), 2)
				bd.units[0] = append(bd.units[0], u)
			}
			if cst0 != 0 {
				cst.write(p.dimOut+b, cst0)
				anyCst = true
			}
		}
		if anyCst {
			cst.name = fmt.Sprintf("the constant bits of slot %d's token (family %d)", slot, f)
			cst.bias = 1
			famGate(&cst, 2)
			cst.gate(p.dimSlot, p.slotBits, int32(slot), 2)
			bd.units[0] = append(bd.units[0], cst)
		}
	}
}

// valueLabels names the residual dimensions (every position, every
// boundary): what each fixed dimension holds; the work dimensions hold a
// kind's forms, which its units' labels name.
func (bd *builder) valueLabels(nb int32) {
	p := bd.plan
	add := func(dim int, format string, a ...any) {
		bd.labels.Values = append(bd.labels.Values, model.ValueLabel{Token: -1, Dim: int32(dim), Until: nb, Kind: model.Aux, Name: fmt.Sprintf(format, a...)})
	}
	add(p.dimSink, "sink: always 0 (rows reading a LayerNorm put minus their sum here)")
	add(p.dimPlus, "+C: pins LayerNorm's scale")
	add(p.dimMinus, "−C: pins LayerNorm's scale")
	for i := range 2 * posPairs {
		add(p.dimPos+i, "key: the position's code, pair %d %s", i/2, [2]string{"cos", "sin"}[i%2])
	}
	for i := range 2 * rcPairs {
		add(p.dimRow+i, "key: the token's row (step) code, pair %d %s", i/2, [2]string{"cos", "sin"}[i%2])
		add(p.dimCol+i, "key: the token's col (role) code, pair %d %s", i/2, [2]string{"cos", "sin"}[i%2])
		add(p.dimQRow+i, "query: the row (step) of the token the position writes, pair %d %s", i/2, [2]string{"cos", "sin"}[i%2])
	}
	for b := range p.kindBits {
		add(p.dimKind+b, "kind code bit %d (family bits from %d)", b, p.varBits)
	}
	for b := range p.slotBits {
		add(p.dimSlot+b, "slot code bit %d (which token of its group the position writes)", b)
	}
	for b := range 8 {
		add(p.dimTok+b, "the position's token, bit %d", b)
		add(p.dimOut+b, "bit %d of the next token (the LM head reads it)", b)
	}
	for j := range p.nFeat {
		add(p.dimFeat+j, "constant %d of the position's kind (a round constant's bit)", j)
	}
	for l := range p.layers {
		if p.mode[l] == targeted {
			for h := range p.heads[l] {
				for i := range 2 * posPairs {
					add(p.dimQuery[l]+2*posPairs*h+i, "query: layer %d head %d's source code, pair %d", l, h, i/2)
				}
			}
		}
	}
	for h := range p.H {
		for b := range 8 {
			add(p.dimFetch+8*h+b, "head %d's fetched bit %d (cleared after each layer)", h, b)
		}
	}
	for i := range p.workDims {
		add(p.dimWork+i, "work %d: a form of a level of the position's kind (see the units writing it)", i)
	}
}

// nodeName names a dag node by the layered gate it is: its global index,
// level and scope tag.
func (bd *builder) nodeName(v int32) string {
	g := bd.g
	name := fmt.Sprintf("gate %d (level %d)", g.gate[v], g.level[v])
	if t := g.tag[v]; t >= 0 && int(t) < len(bd.tags) && bd.tags[t] != "" {
		name += " " + bd.tags[t]
	}
	if h := g.pos[v]; h >= 0 {
		name += fmt.Sprintf(" @%d", h)
	}
	return name
}

func (bd *builder) fill(name string, v float64) *tensor {
	t := newTensor(name, 1, bd.d)
	for c := range bd.d {
		t.add(0, c, v)
	}
	return t
}

// layer writes stock layer l: its heads fetch (row or targeted), its FFN
// runs the layer's units.
func (bd *builder) layer(m *model.Model, l int) {
	p := bd.plan
	d, hd := p.d, p.hd
	pre := fmt.Sprintf("layers.%d.", l)
	n1w, n1b := bd.fill(pre+"norm1.weight", bd.sigma0), newTensor(pre+"norm1.bias", 1, d)
	n2w, n2b := bd.fill(pre+"norm2.weight", bd.sigma0), newTensor(pre+"norm2.bias", 1, d)
	inW, inB := newTensor(pre+"self_attn.in_proj_weight", 3*d, d), newTensor(pre+"self_attn.in_proj_bias", 1, 3*d)
	outW, outB := newTensor(pre+"self_attn.out_proj.weight", d, d), newTensor(pre+"self_attn.out_proj.bias", 1, d)
	A := bd.A
	value := func(h int) {
		for b := range 8 {
			v := &row{t: inW, r: 2*d + h*hd + b}
			v.add(p.dimTok+b, 1)
			v.done(p.dimSink)
			outW.add(p.dimFetch+8*h+b, h*hd+b, 1)
		}
	}
	switch p.mode[l] {
	case rowHeads:
		for key, h := range p.rows[l] {
			// Query: the row code rotated back by Δ, and the col's code.
			for f := range rcPairs {
				T := math.Pow(codeBase, float64(f+1))
				th := 2 * math.Pi * float64(key.delta) / T
				ct, st := math.Cos(th), math.Sin(th)
				q0 := &row{t: inW, r: int(h)*hd + 2*f}
				q0.add(p.dimQRow+2*f, A*ct)
				q0.add(p.dimQRow+2*f+1, A*st)
				q0.done(p.dimSink)
				q1 := &row{t: inW, r: int(h)*hd + 2*f + 1}
				q1.add(p.dimQRow+2*f, -A*st)
				q1.add(p.dimQRow+2*f+1, A*ct)
				q1.done(p.dimSink)
			}
			for i, x := range code(int(key.col), rcPairs) {
				inB.add(0, int(h)*hd+2*rcPairs+i, A*x)
			}
			for i := range 2 * rcPairs {
				k := &row{t: inW, r: d + int(h)*hd + i}
				k.add(p.dimRow+i, 1)
				k.done(p.dimSink)
				k2 := &row{t: inW, r: d + int(h)*hd + 2*rcPairs + i}
				k2.add(p.dimCol+i, 1)
				k2.done(p.dimSink)
			}
			value(int(h))
		}
	case targeted:
		for h := range p.heads[l] {
			for i := range 2 * posPairs {
				q := &row{t: inW, r: h*hd + i}
				q.add(p.dimQuery[l]+2*posPairs*h+i, A)
				q.done(p.dimSink)
				k := &row{t: inW, r: d + h*hd + i}
				k.add(p.dimPos+i, 1)
				k.done(p.dimSink)
			}
			value(h)
		}
	}
	for h := range p.heads[l] {
		name := fmt.Sprintf("fetches the position's source %d (its code in the position embedding)", h)
		if p.mode[l] == rowHeads {
			for key, hh := range p.rows[l] {
				if int(hh) == h {
					name = fmt.Sprintf("fetches the token %d rows back at col %d", key.delta, key.col)
				}
			}
		}
		bd.labels.Units = append(bd.labels.Units, model.UnitLabel{Block: int32(l), Kind: model.HeadUnit, Index: int32(h), Name: name})
	}
	units := bd.units[l]
	for i, u := range units {
		if u.name != "" {
			bd.labels.Units = append(bd.labels.Units, model.UnitLabel{Block: int32(l), Kind: model.FFNUnit, Index: int32(i), Name: u.name})
		}
	}
	F := max(1, len(units))
	l1W, l1B := newTensor(pre+"linear1.weight", F, d), newTensor(pre+"linear1.bias", 1, F)
	l2W, l2B := newTensor(pre+"linear2.weight", d, F), newTensor(pre+"linear2.bias", 1, d)
	for i, u := range units {
		r := &row{t: l1W, r: i}
		for k, c := range u.in {
			r.add(c, u.inW[k])
		}
		r.done(p.dimSink)
		l1B.add(0, i, u.bias)
		for k, c := range u.out {
			l2W.add(c, i, u.outW[k])
		}
	}
	bd.tensors = append(bd.tensors, n1w, n1b, inW, inB, outW, outB, n2w, n2b, l1W, l1B, l2W, l2B)
	m.Blocks = append(m.Blocks, model.Block{Layer: &model.EncoderLayer{Heads: p.H, Eps: Eps,
		Norm1W: n1w.name, Norm1B: n1b.name, InProjW: inW.name, InProjB: inB.name, OutProjW: outW.name, OutProjB: outB.name,
		Norm2W: n2w.name, Norm2B: n2b.name, Linear1W: l1W.name, Linear1B: l1B.name, Linear2W: l2W.name, Linear2B: l2B.name}})
}

// head writes the final norm and the LM head: logit_v = Σ_b (2v_b − 1)(2·out_b − 1).
func (bd *builder) head() {
	p := bd.plan
	normW, normB := bd.fill("norm_f.weight", bd.sigma0), newTensor("norm_f.bias", 1, p.d)
	head, headB := newTensor("lm_head.weight", 256, p.d), newTensor("lm_head.bias", 1, 256)
	for v := range 256 {
		r := &row{t: head, r: v}
		var cst float64
		for b := range 8 {
			s := float64(2*(v>>b&1) - 1)
			r.add(p.dimOut+b, 2*s)
			cst -= s
		}
		r.done(p.dimSink)
		headB.add(0, v, cst)
	}
	bd.tensors = append(bd.tensors, normW, normB, head, headB)
}
