// Package tokensasstates is the tokens-as-states mapper: several tokens each
// hold a share of every circuit level, attention moves the values a token
// needs from other tokens, and each FFN sublayer computes one threshold
// level for every token at once. The model is a stack of stock PyTorch
// encoder layers (model.EncoderLayer: norm_first, ReLU, biases, softmax
// attention with 1/sqrt(head_dim) scaling), one a circuit level.
//
// Values. The residual stream holds, per level, the circuit's linear forms
// (the inputs on level 0, the gates themselves on the last level and in a
// circuit without forms): a form's constant is folded into the thresholds of
// the gates reading it. Every value of level L belongs to one token
// (Config): value i of W to token ⌊i·T/W⌋, or with "interleave" to token
// i mod T (Keccak's state bit 64(5y+x)+z goes to slice z mod T). Within its
// token a value has a slot, its rank among the level's values there; S is
// the most slots any level needs. A gate is computed on every token holding
// a value that reads it.
//
// Residual stream of a token (d_model dimensions):
//
//	0        sink: always 0 (see LayerNorm below)
//	1, 2     +C, −C (position embedding): they pin LayerNorm's scale
//	3, 4     cos, sin of 2πz/T (position z): relative-offset attention
//	5 …      one-hot of z: gates a unit to the tokens that own its gate
//	R …      S slots: the current level's values on this token
//	F …      fetched values: copies of other tokens' slots for one level
//
// LayerNorm. Every sublayer reads LN(x) = γ(x − μ)/σ + β. The ±C pair
// makes σ = C·sqrt(2/d)·(1 + δ) with |δ| ≤ Σ data²/(4C²), and
// γ = C·sqrt(2/d), β = 0, so LN(x) ≈ x − μ;
// every row that reads LN(x) puts −(Σ of its other weights) on the sink,
// so μ cancels exactly and the row reads (1 + δ')·Σ wᵢxᵢ. (Data are small
// integers and unit vectors: with C = 2¹³, |δ'| < 10⁻⁵.)
//
// Block b (computing level b from level b−1):
//
//   - attention: one head per offset r with which some gate of level b
//     reads a value of level b−1 on token z − r (mod T). Its query is
//     A·(cos, sin)(2π(z−r)/T) (a rotation of the position dimensions), its
//     key (cos, sin)(2πj/T): the score A·cos(2π(j−z+r)/T) peaks at j = z−r
//     with a gap ≥ Gap, so the softmax is one-hot to e^−Gap. Its value
//     copies the slots some gate needs from that offset, and the output
//     projection adds them to fetched dimensions.
//   - FFN: a gate s = Σ wᵢxᵢ ≥ θ (integer weights and values) is
//     relu(h) − relu(h − 1) with h = K(s − θ + ½), K = Steep: two hidden
//     units adding coef·step to the slot of every value on its token that
//     reads the gate. For integer s, h ≤ −K/2 or h ≥ K/2 = 2, so the
//     step saturates and small errors in its inputs do not reach its output
//     (with relu(s − θ + 1) − relu(s − θ) they would grow by Σ|wᵢ| a level).
//     Gates with the same weights over the same local and fetched
//     dimensions, threshold and outputs share their two units across
//     tokens; if some token lacks such a gate, the units are gated by
//     M·(Σ one-hots of the tokens having it − 1), M = K·(max |s| + |θ| + 1)
//     with max |s| over whatever values sit in those dimensions. Two units
//     relu(x), relu(−x) per slot and per fetched dimension write −x: the
//     level's old values and the fetched copies are cleared.
//
// Readout: output k is its slot ≥ ½. Every step's pre-activation is at
// least K/2 − 1 = 1 from its kinks and every readout ½ from its threshold
// on exact values; the forward pass reports the measured margin.
package tokensasstates

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Plugin is the tokens-as-states mapper.
var Plugin = &sdk.Mapper{
	Name:    "tokens-as-states",
	Version: "0.1.0",
	Doc:     "Several tokens each hold a share of every level's forms; attention moves values between tokens by relative position; one stock PyTorch encoder layer (LayerNorm, softmax MHA, ReLU FFN) per circuit level.",
	Params: []sdk.Param{
		{Name: "tokens", Type: sdk.Int, Default: 8, Min: sdk.Bound(1), Max: sdk.Bound(4096),
			Doc: "number of state tokens (at most the widest level)"},
		{Name: "assign", Type: sdk.String, Default: "chunks", Enum: []string{"chunks", "interleave"},
			Doc: "how gates are spread over tokens: \"chunks\" (gate i of W to token ⌊iT/W⌋) or \"interleave\" (gate i to token i mod T)"},
	},
	Prepare: func(_ context.Context, pass *sdk.Pass) (any, error) {
		return Config{Tokens: pass.Params.Int("tokens"), Interleave: pass.Params.String("assign") == "interleave"}, nil
	},
	Map: func(ctx context.Context, pass *sdk.Pass, c *layered.Circuit) (*model.Model, error) {
		return Map(ctx, c, pass.Prepared.(Config))
	},
}

// Config is the mapper's resolved parameters.
type Config struct {
	Tokens     int
	Interleave bool
}

// Constants of the construction (see the package doc).
const (
	// C is the value of the ±C dimensions.
	C = 8192.0
	// Gap is the least score gap between the attended token and any other.
	Gap = 40.0
	// Steep is the slope of a step's ramp: K(s − θ + ½) is ±K/2 away from
	// the ramp's middle for integer s, and K/2 − 1 away from its kinks.
	Steep = 4.0
	// Eps is the layer-norm epsilon (PyTorch's default).
	Eps = 1e-5
	// Fixed dimensions.
	dimSink, dimPlus, dimMinus, dimCos, dimSin, dimOneHot = 0, 1, 2, 3, 4, 5
)

// gate is one threshold gate over the values of the level below.
type gate struct {
	src []int32
	w   []int64
	thr int64
}

// value is what the residual stream holds of a level: Σ coef·gate over
// the level's gates (a form without its constant, which the gates reading
// it fold into their thresholds; on the last level, and without forms,
// one gate).
type value struct {
	src  []int32
	coef []int64
}

// values returns level L's values (1 ≤ L ≤ depth).
func values(c *layered.Circuit, L int) []value {
	if !c.HasForms() || L == c.Depth() {
		out := make([]value, c.LevelWidth(L))
		for i := range out {
			out[i] = value{src: []int32{int32(i)}, coef: []int64{1}}
		}
		return out
	}
	out := make([]value, c.NumForms(L))
	f0 := int(c.FormStart[L])
	for i := range out {
		_, src, coef := c.Form(f0 + i)
		v := value{src: src}
		for _, k := range coef {
			v.coef = append(v.coef, int64(k))
		}
		out[i] = v
	}
	return out
}

// gates returns level L's gates over level L−1's values (level 0: the
// inputs, the forms of level 0 composed in).
func gates(c *layered.Circuit, L int) []gate {
	out := make([]gate, c.LevelWidth(L))
	g0 := int(c.LevelStart[L-1])
	for i := range out {
		src, w := c.Row(g0 + i)
		acc := map[int32]int64{}
		thr := int64(c.Threshold[g0+i])
		switch {
		case !c.HasForms():
			for k, s := range src {
				acc[s] += int64(w[k])
			}
		case L == 1:
			for k, f := range src {
				k0, fs, fc := c.Form(int(f))
				thr -= int64(w[k]) * int64(k0)
				for e, s := range fs {
					acc[s] += int64(w[k]) * int64(fc[e])
				}
			}
		default:
			f0 := int(c.FormStart[L-1])
			for k, f := range src {
				k0, _, _ := c.Form(f0 + int(f))
				thr -= int64(w[k]) * int64(k0)
				acc[f] += int64(w[k])
			}
		}
		g := gate{thr: thr}
		for s, v := range acc {
			if v != 0 {
				g.src = append(g.src, s)
			}
		}
		slices.Sort(g.src)
		for _, s := range g.src {
			g.w = append(g.w, acc[s])
		}
		out[i] = g
	}
	return out
}

// tensor collects a sparse matrix row by row.
type tensor struct {
	name       string
	rows, cols int
	ent        []map[int32]float64
}

func newTensor(name string, rows, cols int) *tensor {
	t := &tensor{name: name, rows: rows, cols: cols, ent: make([]map[int32]float64, rows)}
	return t
}

func (t *tensor) add(r, c int, v float64) {
	if t.ent[r] == nil {
		t.ent[r] = map[int32]float64{}
	}
	t.ent[r][int32(c)] += v
}

// readLN makes row r a read of LayerNorm's output: the sink gets minus the
// sum of the row's other weights.
func (t *tensor) readLN(r int) {
	var s float64
	for c, v := range t.ent[r] {
		if c != dimSink {
			s += v
		}
	}
	if s != 0 {
		t.add(r, dimSink, -s)
	}
}

func (t *tensor) build() model.Tensor {
	m := model.Tensor{Name: t.name, Rows: t.rows, Cols: t.cols, RowPtr: make([]int32, t.rows+1)}
	for r, e := range t.ent {
		cols := make([]int32, 0, len(e))
		for c, v := range e {
			if v != 0 {
				cols = append(cols, c)
			}
		}
		slices.Sort(cols)
		for _, c := range cols {
			m.Col = append(m.Col, c)
			m.Val = append(m.Val, float32(e[c]))
		}
		m.RowPtr[r+1] = int32(len(m.Col))
	}
	return m
}

// fill sets every entry of a 1×n tensor to v.
func fill(t *tensor, v float64) *tensor {
	for c := range t.cols {
		t.add(0, c, v)
	}
	return t
}

// Map builds the model.
func Map(ctx context.Context, c *layered.Circuit, cfg Config) (*model.Model, error) {
	D := c.Depth()
	if D < 1 {
		return nil, fmt.Errorf("tokens-as-states: the circuit has no gate level")
	}
	// Level L's values: the inputs (L = 0), forms, or the output gates.
	vals := make([][]value, D+1)
	width := make([]int, D+1)
	width[0] = c.NumInputs
	for L := 1; L <= D; L++ {
		vals[L] = values(c, L)
		width[L] = len(vals[L])
	}
	T := min(cfg.Tokens, slices.Max(width))
	// tok[L][i], slot[L][i] of value i; S = most slots on one token.
	tok := make([][]int32, D+1)
	slot := make([][]int32, D+1)
	S := 0
	for L := 0; L <= D; L++ {
		W := width[L]
		tok[L], slot[L] = make([]int32, W), make([]int32, W)
		count := make([]int32, T)
		for i := range W {
			t := i * T / W
			if cfg.Interleave {
				t = i % T
			}
			tok[L][i], slot[L][i] = int32(t), count[t]
			count[t]++
			S = max(S, int(count[t]))
		}
	}
	// A gate is computed on every token holding a value that reads it:
	// inst[L] lists (gate, token) with the slots and coefficients it adds to.
	type out struct{ slot, coef int64 }
	type instance struct {
		g, t int32
		outs []out
	}
	inst := make([][]instance, D+1)
	gs := make([][]gate, D+1)
	for L := 1; L <= D; L++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		gs[L] = gates(c, L)
		at := map[[2]int32]int{}
		for i, v := range vals[L] {
			t := tok[L][i]
			for k, g := range v.src {
				key := [2]int32{g, t}
				j, ok := at[key]
				if !ok {
					j = len(inst[L])
					at[key] = j
					inst[L] = append(inst[L], instance{g: g, t: t})
				}
				inst[L][j].outs = append(inst[L][j].outs, out{int64(slot[L][i]), v.coef[k]})
			}
		}
	}
	// bound[L] is the largest magnitude a value of level L takes: a gated
	// unit reads, on the tokens it is off, whatever values sit there.
	bound := make([]float64, D+1)
	for L := range bound {
		bound[L] = 1
		if L == 0 || L == D {
			continue
		}
		for _, v := range vals[L] {
			var lo, hi float64
			for _, k := range v.coef {
				lo, hi = lo+float64(min(k, 0)), hi+float64(max(k, 0))
			}
			bound[L] = max(bound[L], -lo, hi)
		}
	}
	// needs[L]: per offset r (1..T−1), the sorted slots of level L−1 some
	// gate of level L reads from token z − r.
	type fetch struct {
		r     int
		slots []int32
	}
	needs := make([][]fetch, D+1)
	nhead, hdNeed, nF := 1, 2, 0
	for L := 1; L <= D; L++ {
		sets := map[int]map[int32]bool{}
		for _, in := range inst[L] {
			for _, s := range gs[L][in.g].src {
				r := (int(in.t) - int(tok[L-1][s]) + T) % T
				if r == 0 {
					continue
				}
				if sets[r] == nil {
					sets[r] = map[int32]bool{}
				}
				sets[r][slot[L-1][s]] = true
			}
		}
		var fs []fetch
		n := 0
		for r := 1; r < T; r++ {
			if sets[r] == nil {
				continue
			}
			f := fetch{r: r}
			for s := range sets[r] {
				f.slots = append(f.slots, s)
			}
			slices.Sort(f.slots)
			fs = append(fs, f)
			hdNeed = max(hdNeed, len(f.slots))
			n += len(f.slots)
		}
		needs[L] = fs
		nhead = max(nhead, len(fs))
		nF = max(nF, n)
	}
	oneHot := T > 1
	dimR := dimOneHot
	if oneHot {
		dimR += T
	}
	dimF := dimR + S
	d := dimF + nF
	hd := max(hdNeed, (d+nhead-1)/nhead)
	d = hd * nhead
	F := 0 // FFN width: the largest level's units

	m := &model.Model{Arch: "tokens-as-states/stock", Tokens: T, DModel: d,
		Attrs: map[string]int64{"depth": int64(D), "slots": int64(S), "fetched": int64(nF), "C": C}}
	var tensors []*tensor
	sigma0 := C * math.Sqrt(2/float64(d))

	// Embedding: the position embedding (base) and the input map.
	base := newTensor("embed.pos", T, d)
	for z := range T {
		base.add(z, dimPlus, C)
		base.add(z, dimMinus, -C)
		if oneHot {
			a := 2 * math.Pi * float64(z) / float64(T)
			base.add(z, dimCos, math.Cos(a))
			base.add(z, dimSin, math.Sin(a))
			base.add(z, dimOneHot+z, 1)
		}
	}
	in := newTensor("embed.input", c.NumInputs, d)
	m.Embed = model.Embedding{Base: base.name, Input: in.name, InputToken: make([]int32, c.NumInputs)}
	for i := range c.NumInputs {
		in.add(i, dimR+int(slot[0][i]), 1)
		m.Embed.InputToken[i] = tok[0][i]
	}
	tensors = append(tensors, base, in)

	A := 0.0 // query scale: a score gap of Gap, MHA's 1/sqrt(head_dim) folded in
	if T > 1 {
		A = Gap / (1 - math.Cos(2*math.Pi/float64(T))) * math.Sqrt(float64(hd))
	}
	for L := 1; L <= D; L++ {
		p := fmt.Sprintf("layers.%d.", L-1)
		n1w, n1b := fill(newTensor(p+"norm1.weight", 1, d), sigma0), newTensor(p+"norm1.bias", 1, d)
		n2w, n2b := fill(newTensor(p+"norm2.weight", 1, d), sigma0), newTensor(p+"norm2.bias", 1, d)
		inW, inB := newTensor(p+"self_attn.in_proj_weight", 3*d, d), newTensor(p+"self_attn.in_proj_bias", 1, 3*d)
		outW, outB := newTensor(p+"self_attn.out_proj.weight", d, d), newTensor(p+"self_attn.out_proj.bias", 1, d)
		// fdim[r][slot] is the fetched dimension of (offset, slot).
		fdim := map[[2]int32]int{}
		next := dimF
		for h, f := range needs[L] {
			a := 2 * math.Pi * float64(f.r) / float64(T)
			q, k, v := h*hd, d+h*hd, 2*d+h*hd
			// q = A·(cos, sin)(2π(z−r)/T) = A·rot(−r)(cos z, sin z).
			inW.add(q, dimCos, A*math.Cos(a))
			inW.add(q, dimSin, A*math.Sin(a))
			inW.add(q+1, dimCos, -A*math.Sin(a))
			inW.add(q+1, dimSin, A*math.Cos(a))
			inW.add(k, dimCos, 1)
			inW.add(k+1, dimSin, 1)
			for _, r := range []int{q, q + 1, k, k + 1} {
				inW.readLN(r)
			}
			for j, s := range f.slots {
				inW.add(v+j, dimR+int(s), 1)
				inW.readLN(v + j)
				outW.add(next, h*hd+j, 1)
				fdim[[2]int32{int32(f.r), s}] = next
				next++
			}
		}
		// FFN: a gate's two units, shared by the tokens on which the gate
		// reads the same dimensions with the same weights and threshold and
		// adds to the same slots with the same coefficients.
		type unit struct {
			dims []int
			w    []int64
			thr  int64
			outs []out
			toks []int32
			// bound is the largest |s| the unit's sum can take on any token.
			bound float64
		}
		units := map[string]*unit{}
		var order []string
		for _, in := range inst[L] {
			g := gs[L][in.g]
			u := &unit{thr: g.thr, outs: in.outs}
			for k, s := range g.src {
				u.bound += math.Abs(float64(g.w[k])) * bound[L-1]
				dim := dimR + int(slot[L-1][s])
				if r := (int(in.t) - int(tok[L-1][s]) + T) % T; r != 0 {
					dim = fdim[[2]int32{int32(r), slot[L-1][s]}]
				}
				u.dims = append(u.dims, dim)
				u.w = append(u.w, g.w[k])
			}
			// Two gates alike on one token are two units (their outputs add).
			key := fmt.Sprint(u.thr, u.dims, u.w, u.outs)
			for n := 0; ; n++ {
				k := fmt.Sprint(key, "#", n)
				if units[k] == nil {
					units[k] = u
					order = append(order, k)
				}
				if !slices.Contains(units[k].toks, in.t) {
					units[k].toks = append(units[k].toks, in.t)
					break
				}
			}
		}
		width := 2*len(order) + 2*(next-dimR)
		F = max(F, width)
		l1W, l1B := newTensor(p+"linear1.weight", width, d), newTensor(p+"linear1.bias", 1, width)
		l2W, l2B := newTensor(p+"linear2.weight", d, width), newTensor(p+"linear2.bias", 1, d)
		h := 0
		for _, key := range order {
			u := units[key]
			// h = K(s − θ + ½): the step is relu(h) − relu(h − 1), saturated
			// (h ≤ −K/2 or h ≥ K/2 ≥ 1 + K·error) so input errors die here.
			M := Steep * (u.bound + math.Abs(float64(u.thr)) + 1)
			for k := range u.dims {
				l1W.add(h, u.dims[k], Steep*float64(u.w[k]))
				l1W.add(h+1, u.dims[k], Steep*float64(u.w[k]))
			}
			gated := len(u.toks) < T
			if gated {
				for _, z := range u.toks {
					l1W.add(h, dimOneHot+int(z), M)
					l1W.add(h+1, dimOneHot+int(z), M)
				}
			}
			l1W.readLN(h)
			l1W.readLN(h + 1)
			b := Steep * (0.5 - float64(u.thr))
			if gated {
				b -= M
			}
			l1B.add(0, h, b)
			l1B.add(0, h+1, b-1)
			for _, o := range u.outs {
				l2W.add(dimR+int(o.slot), h, float64(o.coef))
				l2W.add(dimR+int(o.slot), h+1, -float64(o.coef))
			}
			h += 2
		}
		// Clear the old values and the fetched copies: x = relu(x) − relu(−x).
		for dim := dimR; dim < next; dim++ {
			l1W.add(h, dim, 1)
			l1W.add(h+1, dim, -1)
			l1W.readLN(h)
			l1W.readLN(h + 1)
			l2W.add(dim, h, -1)
			l2W.add(dim, h+1, 1)
			h += 2
		}
		tensors = append(tensors, n1w, n1b, inW, inB, outW, outB, n2w, n2b, l1W, l1B, l2W, l2B)
		m.Blocks = append(m.Blocks, model.Block{Layer: &model.EncoderLayer{Heads: nhead, Eps: Eps,
			Norm1W: n1w.name, Norm1B: n1b.name, InProjW: inW.name, InProjB: inB.name,
			OutProjW: outW.name, OutProjB: outB.name, Norm2W: n2w.name, Norm2B: n2b.name,
			Linear1W: l1W.name, Linear1B: l1B.name, Linear2W: l2W.name, Linear2B: l2B.name}})
	}
	// Every stock layer has the same dim_feedforward: pad to the widest.
	for _, t := range tensors {
		switch {
		case strings.HasSuffix(t.name, "linear1.weight"):
			t.ent = append(t.ent, make([]map[int32]float64, F-t.rows)...)
			t.rows = F
		case strings.HasSuffix(t.name, "linear1.bias"), strings.HasSuffix(t.name, "linear2.weight"):
			t.cols = F
		}
	}
	m.Attrs["ffn_width"] = int64(F)
	nOut := c.NumOutputs()
	m.Readout = model.Readout{Token: make([]int32, nOut), Dim: make([]int32, nOut), Threshold: make([]float32, nOut)}
	for k := range nOut {
		m.Readout.Token[k] = tok[D][k]
		m.Readout.Dim[k] = int32(dimR) + slot[D][k]
		m.Readout.Threshold[k] = 0.5
	}
	for _, t := range tensors {
		m.Tensors = append(m.Tensors, t.build())
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("tokens-as-states: built an invalid model: %w", err)
	}
	return m, nil
}
