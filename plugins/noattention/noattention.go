// Package noattention is the paper's no-attention mapper: one token holds the
// whole circuit state, and each circuit level becomes one SwiGLU FFN
// sublayer, so the model has depth blocks. The residual stream holds the
// circuit's linear forms (one dimension per form of the current level; a
// circuit without forms has one per gate), the FFN's hidden units compute
// the next level's gates from them, and its output matrix writes the next
// level's forms: d_model = 1 + the most forms on one level.
//
// Variants:
//
//	mlp:      FFN sublayers only, no residual, no norm — the MLP Reifier
//	          compiles. Dimension 0 is a constant 1 that every layer
//	          regenerates (it is the units' bias); dimension 1+i holds form
//	          i of the current level. A step [S ≥ θ] of an integer sum is
//	          (r(θ−1) − r(θ))/κ with the ramp r(k) = SiLU(κ(S − k)),
//	          κ = 1024: every argument is 0 or at least 1024 in magnitude,
//	          where SiLU is exactly the identity or 0 in float32 and in
//	          float64 (e^−1024 is below float64's precision and e^1024
//	          overflows it; at κ = 128, float64 SiLU(−128) = −3·10⁻⁵⁴ and
//	          such residues grew block by block into wrong bits), so the
//	          pass is exact in integers; κ a power of two keeps κ·S exact
//	          wherever S is. Gates that read the same row share their
//	          ramps (the counters [S ≥ 1] … [S ≥ n] of a parity need n + 1
//	          units, not 2n). A copy of a 0/1 form costs one pass-through
//	          unit SiLU(G)·x/SiLU(G), G = 64 (SiLU(64) = 64 in both).
//	residual: real pre-norm encoder blocks, x ← x + Attn(RMSNorm(x)) with a
//	          present, all-zero attention sublayer, then
//	          x ← x + FFN(RMSNorm(x)), no biases — the form a Llama-style
//	          model computes. d_model = forms + 1: the last dimension is an
//	          anchor holding a large constant C ≥ 2¹⁶ (a power of two sized
//	          to the forms, see anchorFor) that dominates the RMS, so
//	          RMSNorm scales every token by ρ ≈ √d/C and the units'
//	          offsets (read from the anchor) scale with it. Values are then
//	          only nearly exact, so steps saturate: two offset, scaled units
//	          per gate, (SiLU(κy + A) − SiLU(κy − A))/(2A) with
//	          y = Σwx − θ + ½, every SiLU argument ≥ 96 in magnitude. Each
//	          level overwrites the slots of the previous one (a unit adding
//	          −x clears a slot), and a copy whose value already sits in the
//	          slot it is assigned costs nothing.
package noattention

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Plugin is the no-attention mapper.
var Plugin = &sdk.Mapper{
	Name:    "no-attention",
	Version: "0.1.0",
	Doc:     "The paper's no-attention mapping: one token, one SwiGLU FFN sublayer per circuit level, d_model ≥ width; as Reifier's MLP or as Llama-style pre-norm residual blocks.",
	Params: []sdk.Param{
		{Name: "variant", Type: sdk.String, Default: "mlp", Enum: []string{"mlp", "residual"},
			Doc: "\"mlp\": FFN sublayers only (Reifier's MLP); \"residual\": pre-RMSNorm residual blocks with a zero attention sublayer (Llama form)"},
	},
	Prepare: func(_ context.Context, pass *sdk.Pass) (any, error) { return pass.Params.String("variant"), nil },
	Map: func(ctx context.Context, pass *sdk.Pass, c *layered.Circuit) (*model.Model, error) {
		if pass.Prepared == "residual" {
			m, slots, err := residual(ctx, c)
			if err != nil {
				return nil, err
			}
			return labelResidual(m, c, slots)
		}
		m, err := MLP(ctx, c)
		if err != nil {
			return nil, err
		}
		return labelMLP(m, c)
	},
}

// Step and pass-through constants (see the package doc).
const (
	stepA   = 64.0
	stepArg = 96.0
	kappa   = 2 * (stepA + stepArg) // margin ½ on exact inputs
	// rampK is the mlp variant's ramp scale κ: a power of two, so that
	// r(k)/κ is exact, and at least 745, so that SiLU(−κ) is exactly 0
	// in float64 (see the package doc).
	rampK = 1024.0
	passG = 32.0
	// mlpPass is the mlp variant's pass-through gate: SiLU(64) is exactly
	// 64 in float32 and float64 (e^−64 < 2^−54), where SiLU(32) is
	// 32 − 4·10⁻¹³ in float64.
	mlpPass = 64.0
	// Anchor is the smallest constant of the residual variant's anchor
	// dimension (circuits whose forms are 0/1 or small sums get it).
	Anchor  = 65536.0
	normEps = 1e-6
)

func silu(x float64) float64 { return x / (1 + math.Exp(-x)) }

// row is one gate's merged sources (indices of forms of the previous level).
type row struct {
	src   []int32
	w     []float64
	theta float64
	copy  bool // a pure copy [x ≥ 1] of src[0]
}

func gateRow(c *layered.Circuit, g int) row {
	src, w := c.Row(g)
	r := row{theta: float64(c.Threshold[g])}
	idx := map[int32]int{}
	for k, s := range src {
		if i, ok := idx[s]; ok {
			r.w[i] += float64(w[k])
			continue
		}
		idx[s] = len(r.src)
		r.src = append(r.src, s)
		r.w = append(r.w, float64(w[k]))
	}
	n := 0
	for i := range r.src {
		if r.w[i] != 0 {
			r.src[n], r.w[n] = r.src[i], r.w[i]
			n++
		}
	}
	r.src, r.w = r.src[:n], r.w[:n]
	r.copy = len(r.src) == 1 && r.w[0] == 1 && r.theta == 1
	return r
}

// sameRow reports whether two merged rows read the same sources with the
// same weights.
func sameRow(a, b row) bool {
	if len(a.src) != len(b.src) {
		return false
	}
	for i := range a.src {
		if a.src[i] != b.src[i] || a.w[i] != b.w[i] {
			return false
		}
	}
	return true
}

// levelForms is the residual-stream view of level L's forms: form i is
// konst[i] + Σ coef·gate(src) over [start[i], start[i+1]); without
// explicit forms, and on the last level (the outputs), each gate is its
// own. member lists, per gate, the forms it is a term of: forms
// memForm[memStart[j]:memStart[j+1]] with coefficients memCoef.
type levelForms struct {
	n                 int
	konst             []int32
	start, src, coef  []int32
	memStart, memForm []int32
	memCoef           []int32
}

func formsOf(c *layered.Circuit, L int) *levelForms {
	width := c.LevelWidth(L)
	f := &levelForms{n: c.NumForms(L)}
	if !c.HasForms() || L >= c.Depth() {
		f.konst = make([]int32, width)
		f.start, f.src, f.coef = make([]int32, width+1), make([]int32, width), make([]int32, width)
		for j := range width {
			f.start[j+1], f.src[j], f.coef[j] = int32(j+1), int32(j), 1
		}
	} else {
		a, b := c.FormStart[L], c.FormStart[L+1]
		f.konst = c.FormConst[a:b]
		lo, hi := c.FormRowStart[a], c.FormRowStart[b]
		f.start = make([]int32, f.n+1)
		for i := range f.n {
			f.start[i+1] = c.FormRowStart[int(a)+i+1] - lo
		}
		f.src, f.coef = c.FormSrc[lo:hi], c.FormCoef[lo:hi]
	}
	f.memStart = make([]int32, width+1)
	for _, s := range f.src {
		f.memStart[s+1]++
	}
	for j := range width {
		f.memStart[j+1] += f.memStart[j]
	}
	next := append([]int32(nil), f.memStart[:width]...)
	f.memForm, f.memCoef = make([]int32, len(f.src)), make([]int32, len(f.src))
	for i := range f.n {
		for e := f.start[i]; e < f.start[i+1]; e++ {
			s := f.src[e]
			f.memForm[next[s]], f.memCoef[next[s]] = int32(i), f.coef[e]
			next[s]++
		}
	}
	return f
}

// unitGate returns the gate that form i is, if it is exactly one gate
// (constant 0, coefficient 1): its value is then 0 or 1.
func (f *levelForms) unitGate(i int32) (int32, bool) {
	a, b := f.start[i], f.start[i+1]
	if f.konst[i] != 0 || b-a != 1 || f.coef[a] != 1 {
		return 0, false
	}
	return f.src[a], true
}

// maxForms is the most forms on one level, inputs and outputs included.
func maxForms(c *layered.Circuit) int {
	n := 0
	for L := 0; L <= c.Depth(); L++ {
		n = max(n, c.NumForms(L))
	}
	return n
}

func finish(m *model.Model, bs []*model.Builder) (*model.Model, error) {
	for _, b := range bs {
		t, err := b.Tensor()
		if err != nil {
			return nil, fmt.Errorf("no-attention: %w", err)
		}
		m.Tensors = append(m.Tensors, t)
	}
	return m, nil
}

// MLP maps c to Reifier's MLP form: one replacing FFN sublayer per level.
func MLP(ctx context.Context, c *layered.Circuit) (*model.Model, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("no-attention: %w", err)
	}
	D, nIn := c.Depth(), c.NumInputs
	d := 1 + maxForms(c)
	const one = 0
	m := &model.Model{Arch: "no-attention/mlp", Tokens: 1, DModel: d,
		Attrs: map[string]int64{"circuit_depth": int64(D), "circuit_width": int64(c.Stats().Width), "forms": int64(d - 1)}}
	base := model.NewBuilder("embed.base", 1, d)
	base.Add(0, one, 1)
	in := model.NewBuilder("embed.input", nIn, d)
	m.Embed = model.Embedding{Base: "embed.base", Input: "embed.input", InputToken: make([]int32, nIn)}
	prev := formsOf(c, 0)
	for i := range prev.n {
		base.Add(0, 1+i, float64(prev.konst[i]))
		for e := prev.start[i]; e < prev.start[i+1]; e++ {
			in.Add(int(prev.src[e]), 1+i, float64(prev.coef[e]))
		}
	}
	bs := []*model.Builder{base, in}
	sG := silu(mlpPass)
	for L := 1; L <= D; L++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		lo, hi := int(c.LevelStart[L-1]), int(c.LevelStart[L])
		cur := formsOf(c, L)
		name := fmt.Sprintf("blocks.%d.ffn", L-1)
		// Units: the constant; a pass-through per copy of a 0/1 form; the
		// ramps of each run of gates reading the same row, one per knot.
		rows := make([]row, hi-lo)
		pass := make([]bool, hi-lo)
		units := 1
		type run struct {
			j0, j1 int // gates [j0, j1) of the level
			knots  []float64
		}
		var runs []run
		for g := lo; g < hi; g++ {
			j := g - lo
			rows[j] = gateRow(c, g)
			if r := rows[j]; r.copy {
				if _, ok := prev.unitGate(r.src[0]); ok {
					pass[j] = true
					units++
					continue
				}
			}
			if n := len(runs); n > 0 && runs[n-1].j1 == j && sameRow(rows[runs[n-1].j0], rows[j]) {
				runs[n-1].j1++
			} else {
				runs = append(runs, run{j0: j, j1: j + 1})
			}
		}
		for i := range runs {
			var ks []float64
			for j := runs[i].j0; j < runs[i].j1; j++ {
				ks = append(ks, rows[j].theta-1, rows[j].theta)
			}
			slices.Sort(ks)
			runs[i].knots = slices.Compact(ks)
			units += len(runs[i].knots)
		}
		gate := model.NewBuilder(name+".gate", units, d)
		value := model.NewBuilder(name+".value", units, d)
		out := model.NewBuilder(name+".out", d, units)
		gate.Add(0, one, mlpPass)
		value.Add(0, one, 1)
		out.Add(one, 0, 1/sG)
		for i := range cur.n {
			out.Add(1+i, 0, float64(cur.konst[i])/sG)
		}
		// writes adds v·(gate j's value) to every form of cur that j is a
		// term of, through unit u.
		writes := func(j, u int, v float64) {
			for e := cur.memStart[j]; e < cur.memStart[j+1]; e++ {
				out.Add(1+int(cur.memForm[e]), u, v*float64(cur.memCoef[e]))
			}
		}
		u := 1
		for j, r := range rows {
			if pass[j] {
				gate.Add(u, one, mlpPass)
				value.Add(u, 1+int(r.src[0]), 1)
				writes(j, u, 1/sG)
				u++
			}
		}
		for _, rn := range runs {
			r := rows[rn.j0]
			for k, knot := range rn.knots {
				for e, s := range r.src {
					gate.Add(u+k, 1+int(s), rampK*r.w[e])
				}
				gate.Add(u+k, one, -rampK*knot)
				value.Add(u+k, one, 1)
			}
			for j := rn.j0; j < rn.j1; j++ {
				t := rows[j].theta
				writes(j, u+slices.Index(rn.knots, t-1), 1/rampK)
				writes(j, u+slices.Index(rn.knots, t), -1/rampK)
			}
			u += len(rn.knots)
		}
		bs = append(bs, gate, value, out)
		m.Blocks = append(m.Blocks, model.Block{FFN: &model.FFN{Gate: name + ".gate", Value: name + ".value", Out: name + ".out"}})
		prev = cur
	}
	for k := 0; k < c.NumOutputs(); k++ {
		m.Readout.Token = append(m.Readout.Token, 0)
		m.Readout.Dim = append(m.Readout.Dim, int32(1+k))
		m.Readout.Threshold = append(m.Readout.Threshold, 0.5)
	}
	return finish(m, bs)
}

// Float32 limits of the residual variant (see anchorFor).
const (
	// driftBudget bounds the error the RMSNorm scale's drift puts on a
	// pre-activation y′ (where |y′| ≥ ½ on exact inputs and the steps
	// saturate for errors up to about 0.2).
	driftBudget = 1.0 / 16
	// marginBudget bounds the drift of any value written or cleared (a
	// clear leaves v·(1 − (ρ/ρ₀)²) behind, in a slot a readout may reuse),
	// so a readout keeps its margin ½ to within 2^-12.
	marginBudget = 1.0 / 4096
	// maxAnchor keeps C² (the anchor's share of Σx²) inside float32's
	// range with room to spare.
	maxAnchor = 1 << 60
	// maxStepArg bounds κ·|pre-activation|: float32 rounds such a sum to
	// within 2^-24 of its size per addition, which must stay far below
	// the steps' saturation margin (κ/2 − A − 17 = 79 on a SiLU argument).
	maxStepArg = 1 << 26
)

// anchorFor returns the anchor constant C for c, or why c cannot be
// mapped exactly in float32 by the residual variant.
//
// RMSNorm divides by √(C² + Σv²)/√d, not by the nominal C/√d, so every unit
// is off by ρ/ρ₀ = (1 + Σv²/C²)^−½ and every value written or cleared by
// (ρ/ρ₀)² ≈ 1 − Σv²/C²: a pre-activation Σw·F reading forms F of size up to
// |F| is off by about (Σv²/C²)·Σ|w||F|. With 0/1 gates (SHA-3, any circuit
// without forms) Σv² is small and C = 2¹⁶ suffices; forms that are sums of
// bits with weights up to 2¹⁵ (SHA-2's additions) make Σv² of order C² and
// the drift flips bits. So C is the smallest power of two from 2¹⁶ up with
// B·P/C² ≤ 1/16 and B·F/C² ≤ 2^-12, where F bounds a form (|const| +
// Σ|coef|), B bounds Σv² on any level and P bounds any gate's
// pre-activation Σ|w||F| + |θ|;
// once C² exceeds B·2²⁴ the drift is below float32's resolution of the norm
// itself.
func anchorFor(c *layered.Circuit) (float64, error) {
	var B, P, F float64
	prev := formsOf(c, 0)
	bound := func(f *levelForms) []float64 {
		b := make([]float64, f.n)
		var sq float64
		for i := range f.n {
			b[i] = math.Abs(float64(f.konst[i]))
			for e := f.start[i]; e < f.start[i+1]; e++ {
				b[i] += math.Abs(float64(f.coef[e]))
			}
			sq += b[i] * b[i]
			F = max(F, b[i])
		}
		B = max(B, sq)
		return b
	}
	pb := bound(prev)
	for L := 1; L <= c.Depth(); L++ {
		for g := int(c.LevelStart[L-1]); g < int(c.LevelStart[L]); g++ {
			src, w := c.Row(g)
			p := math.Abs(float64(c.Threshold[g]))
			for k, s := range src {
				p += math.Abs(float64(w[k])) * pb[s]
			}
			P = max(P, p)
		}
		pb = bound(formsOf(c, L))
	}
	if kappa*P > maxStepArg {
		return 0, fmt.Errorf("no-attention: residual variant: a pre-activation reaches %.0f; κ·%.0f = %.3g exceeds 2^26: float32 cannot keep its saturating steps exact (cut additions into narrower chunks, e.g. max_weight = 65536)", P, P, kappa*P)
	}
	C := Anchor
	for B*P/(C*C) > driftBudget || B*F/(C*C) > marginBudget {
		if C >= maxAnchor {
			return 0, fmt.Errorf("no-attention: residual variant: forms up to Σv² = %.3g with pre-activations up to %.0f need an anchor above 2^60, beyond float32's range", B, P)
		}
		C *= 2
	}
	return C, nil
}

// Residual maps c to Llama-style pre-norm residual blocks.
func Residual(ctx context.Context, c *layered.Circuit) (*model.Model, error) {
	m, _, err := residual(ctx, c)
	return m, err
}

// residual is Residual; it also returns the slot of every form of every
// level (slots[L][i]: the dimension form i of level L sits in). Its phases:
// newResidualMap (dimensions, anchor, unit weights), embed (level 0's forms
// into the first slots), then per level placeSlots (where each new form
// goes) and levelFFN (the FFN that writes them), and the readout.
func residual(ctx context.Context, c *layered.Circuit) (*model.Model, [][]int32, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, fmt.Errorf("no-attention: %w", err)
	}
	r, err := newResidualMap(c)
	if err != nil {
		return nil, nil, err
	}
	m := r.m
	prev := formsOf(c, 0)
	slot, bs := r.embed(prev)
	slots := [][]int32{slot}
	tensors := []model.Tensor{model.Ones("norm", r.d)}
	norm := &model.RMSNorm{Weight: "norm", Eps: normEps}
	for L := 1; L <= c.Depth(); L++ {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		lo, hi := int(c.LevelStart[L-1]), int(c.LevelStart[L])
		cur := formsOf(c, L)
		rows := make([]row, hi-lo)
		for g := lo; g < hi; g++ {
			rows[g-lo] = gateRow(c, g)
		}
		p := r.placeSlots(prev, cur, rows, slot)
		name := fmt.Sprintf("blocks.%d", L-1)
		bs = append(bs, r.levelFFN(name, prev, cur, rows, slot, p)...)
		slot = p.next
		slots = append(slots, slot)
		prev = cur
		for _, p := range []string{".attn.q", ".attn.k", ".attn.v", ".attn.o"} {
			tensors = append(tensors, model.Zero(name+p, r.d, r.d))
		}
		m.Blocks = append(m.Blocks, model.Block{
			Attn: &model.Attention{Mode: model.Softmax, Beta: 1 / math.Sqrt(float64(r.d)), Norm: norm, Residual: true,
				Heads: []model.Head{{Q: name + ".attn.q", K: name + ".attn.k", V: name + ".attn.v", O: name + ".attn.o"}}},
			FFN: &model.FFN{Gate: name + ".ffn.gate", Value: name + ".ffn.value", Out: name + ".ffn.out", Norm: norm, Residual: true},
		})
	}
	for k := 0; k < c.NumOutputs(); k++ {
		m.Readout.Token = append(m.Readout.Token, 0)
		m.Readout.Dim = append(m.Readout.Dim, slot[k])
		m.Readout.Threshold = append(m.Readout.Threshold, 0.5)
	}
	m.Tensors = tensors
	m, err = finish(m, bs)
	return m, slots, err
}

// residualMap is the residual variant's layout of one circuit: d =
// W + 1 dimensions, W slots for forms and the anchor (the last), whose
// value C sets RMSNorm's scale, and the FFN units' weights in normalised
// coordinates (x̂_s = v_s·ρ, x̂_anchor = C·ρ, ρ₀ = √d/C the nominal 1/rms).
type residualMap struct {
	c          *layered.Circuit
	m          *model.Model
	W, d       int
	anchor     int     // the anchor's dimension, W
	C, rho0    float64 // the anchor's value; the nominal 1/rms
	gAnchor    float64 // pass-through gate from the anchor: G·ρ/ρ₀
	passOut    float64 // h ≈ G·v·ρ²/ρ₀ → ±v
	stepIn     float64 // κ/ρ₀ on each source
	stepAnchor float64 // times (−κ(θ−½) ± A) on the anchor
	stepValue  float64 // value ρ/ρ₀ from the anchor
}

// newResidualMap sizes the model for c and picks its anchor (anchorFor).
func newResidualMap(c *layered.Circuit) (*residualMap, error) {
	W := maxForms(c)
	d := W + 1
	C, err := anchorFor(c)
	if err != nil {
		return nil, err
	}
	rho0 := math.Sqrt(float64(d)) / C
	return &residualMap{
		c: c, W: W, d: d, anchor: W, C: C, rho0: rho0,
		m: &model.Model{Arch: "no-attention/residual", Tokens: 1, DModel: d,
			Attrs: map[string]int64{"circuit_depth": int64(c.Depth()), "circuit_width": int64(c.Stats().Width), "forms": int64(W), "anchor": int64(C)}},
		gAnchor:    passG / (C * rho0),
		passOut:    1 / (silu(passG) * rho0),
		stepIn:     kappa / rho0,
		stepAnchor: 1 / (C * rho0),
		stepValue:  1 / (C * rho0),
	}, nil
}

// embed writes the embedding: the anchor C and level 0's forms (their
// constants from the base token, their input terms from the inputs) in
// slots 0, 1, …; it returns those slots and the two builders.
func (r *residualMap) embed(f *levelForms) ([]int32, []*model.Builder) {
	base := model.NewBuilder("embed.base", 1, r.d)
	base.Add(0, r.anchor, r.C)
	in := model.NewBuilder("embed.input", r.c.NumInputs, r.d)
	r.m.Embed = model.Embedding{Base: "embed.base", Input: "embed.input", InputToken: make([]int32, r.c.NumInputs)}
	slot := make([]int32, f.n)
	for i := range f.n {
		slot[i] = int32(i)
		base.Add(0, i, float64(f.konst[i]))
		for e := f.start[i]; e < f.start[i+1]; e++ {
			in.Add(int(f.src[e]), i, float64(f.coef[e]))
		}
	}
	return slot, []*model.Builder{base, in}
}

// placement is where a level's forms go: next[i] the slot of form i;
// stays[j] whether gate j is a copy whose form keeps its source's slot (it
// needs no unit); inPlace[s] whether slot s is so kept.
type placement struct {
	next           []int32
	stays, inPlace []bool
}

// placeSlots places the forms of cur given the slots of prev's. A form of
// this level that is one copy gate, itself a copy of a form of the
// previous level that is one gate (so both are that gate's value), and of
// which the copy is the only term, may stay in that form's slot when it is
// free; every other form takes the lowest free slot.
func (r *residualMap) placeSlots(prev, cur *levelForms, rows []row, slot []int32) placement {
	p := placement{next: make([]int32, cur.n), stays: make([]bool, len(rows)), inPlace: make([]bool, r.W)}
	claimed := make([]bool, r.W)
	for i := range cur.n {
		p.next[i] = -1
		j, ok := cur.unitGate(int32(i))
		if !ok || !rows[j].copy || cur.memStart[j+1]-cur.memStart[j] != 1 {
			continue
		}
		if _, ok := prev.unitGate(rows[j].src[0]); !ok {
			continue
		}
		if s := slot[rows[j].src[0]]; !claimed[s] {
			claimed[s] = true
			p.next[i] = s
			p.stays[j] = true
		}
	}
	for i := range p.next {
		if p.next[i] >= 0 {
			p.inPlace[p.next[i]] = true
		}
	}
	free := 0
	for i := range p.next {
		if p.next[i] >= 0 {
			continue
		}
		for claimed[free] {
			free++
		}
		claimed[free] = true
		p.next[i] = int32(free)
	}
	return p
}

// levelFFN builds the FFN of one level (gate, value and out builders): a
// unit clearing each previous-level slot not kept in place, one writing
// the constants of the new forms, then per gate: none for a copy that
// stays, one pass-through for a copy of a one-gate form, else two steps.
func (r *residualMap) levelFFN(name string, prev, cur *levelForms, rows []row, slot []int32, p placement) []*model.Builder {
	var clears []int32
	for _, s := range slot {
		if !p.inPlace[s] {
			clears = append(clears, s)
		}
	}
	units := len(clears)
	konst := slices.ContainsFunc(cur.konst, func(k int32) bool { return k != 0 })
	if konst {
		units++
	}
	for j, rw := range rows {
		switch {
		case p.stays[j]:
		case rw.copy:
			if _, ok := prev.unitGate(rw.src[0]); ok {
				units++
				continue
			}
			units += 2
		default:
			units += 2
		}
	}
	gate := model.NewBuilder(name+".ffn.gate", units, r.d)
	value := model.NewBuilder(name+".ffn.value", units, r.d)
	out := model.NewBuilder(name+".ffn.out", r.d, units)
	writes := func(j, u int, v float64) {
		for e := cur.memStart[j]; e < cur.memStart[j+1]; e++ {
			out.Add(int(p.next[cur.memForm[e]]), u, v*float64(cur.memCoef[e]))
		}
	}
	u := 0
	for _, s := range clears {
		gate.Add(u, r.anchor, r.gAnchor)
		value.Add(u, int(s), 1)
		out.Add(int(s), u, -r.passOut)
		u++
	}
	if konst { // the constants: a pass-through of the anchor's ρ/ρ₀
		gate.Add(u, r.anchor, r.gAnchor)
		value.Add(u, r.anchor, r.stepValue)
		for i := range cur.n {
			out.Add(int(p.next[i]), u, float64(cur.konst[i])*r.passOut*r.rho0)
		}
		u++
	}
	for j, rw := range rows {
		pass := false
		if rw.copy {
			_, pass = prev.unitGate(rw.src[0])
		}
		switch {
		case p.stays[j]:
			// Already there.
		case rw.copy && pass:
			gate.Add(u, r.anchor, r.gAnchor)
			value.Add(u, int(slot[rw.src[0]]), 1)
			writes(j, u, r.passOut)
			u++
		default:
			for k, off := range []float64{stepA, -stepA} {
				for e, s := range rw.src {
					gate.Add(u+k, int(slot[s]), r.stepIn*rw.w[e])
				}
				gate.Add(u+k, r.anchor, r.stepAnchor*(-kappa*(rw.theta-0.5)+off))
				value.Add(u+k, r.anchor, r.stepValue)
				writes(j, u+k, off/(2*stepA*stepA))
			}
			u += 2
		}
	}
	return []*model.Builder{gate, value, out}
}
