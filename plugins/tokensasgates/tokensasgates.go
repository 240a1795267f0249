// Package tokensasgates is the paper's tokens-as-gates mapper: one token per gate
// of the layered circuit (inputs included), attention routes predecessor
// values, the FFN evaluates the threshold. All blocks share one set of
// weights; block t computes circuit level t (and recomputes every other
// level from values that are correct for levels < t, so after D blocks
// every gate holds its value).
//
// Residual stream of token i (d_model = T + 4):
//
//	[0, T)  one-hot of i (static)      VAL = T     the gate's current value
//	ACC = T+1  attention's sum           THR = T+2   the gate's (rescaled) threshold
//	ONE = T+3  constant 1 (the FFN's bias)
//
// Attention (shared Q, V; one K and O per head):
//
//	Q[i, i] = 1 (i < T)          q_i = e_i
//	K_h[i, j] = 1 iff j is a predecessor of i in head h   s_ij = K_h[i, j]
//	V[0, VAL] = 1                v_j = value of gate j
//	O_h[ACC, 0] = σ_h·2^b_h
//
// Head h = (sign σ, bit b) holds the edges whose weight has that sign and
// bit b of |w| set, so Σ_h σ_h 2^b_h Σ_{j∈h} x_j = Σ_j w_ij x_j: the
// circuit's real integer weights, not only counts. Attention writes ACC, a
// slot of its own: it never adds into VAL, where the gate's stale value
// lives. Every token i also attends to itself if it is an input (a copy
// gate x ≥ 1 of itself).
//
// Modes:
//
//	hard:    a_ij = [s_ij = 1], ACC = Σ_j w_ij x_j exactly; THR = θ − ½.
//	softmax: every head of token i is padded with null tokens (value 0,
//	         score 1) to the same count N_i = max(1, max_h |h ∩ pred(i)|),
//	         and for every head (σ, b) the head (−σ, b) exists, so the
//	         leak of the implicit-zero scores cancels across heads:
//	         ACC = f_i·Σ_j w_ij x_j / N_i with f_i = (e^β−1)N_i/((e^β−1)N_i + T) → 1;
//	         THR = (θ − ½)/N_i (the threshold rescaled by the padded fan-in).
//
// FFN (4 hidden units, SiLU steps as in Reifier, scaled so that every
// SiLU argument on exact inputs is ≥ 96 in magnitude):
//
//	u1 = SiLU(κ(ACC − THR) + A)·ONE   u2 = SiLU(κ(ACC − THR) − A)·ONE
//	u3 = SiLU(G·ONE)·VAL              u4 = SiLU(G·ONE)·ACC
//	VAL += (u1 − u2)/(2A) − u3/SiLU(G)    ACC += −u4/SiLU(G)
//
// so VAL becomes [Σ w x ≥ θ] and ACC is cleared for the next block.
// Readout: output k is VAL of the k-th last-level gate's token, ≥ ½.
package tokensasgates

import (
	"context"
	"fmt"
	"math"
	"math/bits"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Plugin is the tokens-as-gates mapper.
var Plugin = &sdk.Mapper{
	Name:    "tokens-as-gates",
	Version: "0.1.0",
	Doc:     "The paper's tokens-as-gates mapping: one token per gate, attention (shared Q/K/V, one head per weight sign and bit) routes predecessor values, a 4-unit SwiGLU FFN evaluates the threshold; hard or softmax attention.",
	Params: []sdk.Param{
		{Name: "attention", Type: sdk.String, Default: string(model.Hard), Enum: []string{string(model.Hard), string(model.Softmax)},
			Doc: "\"hard\": unnormalised score-1 selection (the paper's assumption); \"softmax\": normalised attention with null-token padding and thresholds rescaled by fan-in"},
		{Name: "beta", Type: sdk.Number, Default: 0.0,
			Doc: "softmax inverse temperature; 0: ln(8·m·T + 1), m the largest max(θ, 1−θ), enough for f ≥ 1 − 1/(8m)"},
	},
	Prepare: func(_ context.Context, pass *sdk.Pass) (any, error) {
		p := pass.Params
		if b := p.Float("beta"); b < 0 || math.IsNaN(b) || math.IsInf(b, 0) {
			return nil, p.Errorf("beta", "must be ≥ 0 and finite, got %v", b)
		}
		return Options{Mode: model.AttnMode(p.String("attention")), Beta: p.Float("beta")}, nil
	},
	Map: func(ctx context.Context, pass *sdk.Pass, c *layered.Circuit) (*model.Model, error) {
		m, err := Map(ctx, c, pass.Prepared.(Options))
		if err != nil {
			return nil, err
		}
		return label(m, c)
	},
}

// Options select the attention mode and temperature.
type Options struct {
	Mode model.AttnMode
	// Beta is the softmax inverse temperature; 0 chooses one (see Plugin).
	Beta float64
}

// FFN constants: SiLU steps u = κ·y ± A with |y| ≥ margin on exact inputs,
// so |u| ≥ κ·margin − A = 96 (float32 SiLU is exact there: u or 0), and a
// pass-through gate G (SiLU(32) = 32 in float32, 1/32 exact).
const (
	stepA    = 64
	stepArg  = 96
	passG    = 32
	nullName = "null"
)

// edge is one weighted predecessor of a token.
type edge struct {
	src int32
	w   int64
}

// mapping is one Map call's state, filled phase by phase: tokens (the
// merged edges and thresholds of every gate's token), heads (one per
// weight sign and bit), padding (softmax: null tokens), scale (the
// residual layout, margin, κ and β), then the model's tensors (embedding,
// attention, ffn) and its blocks and readout.
type mapping struct {
	c   *layered.Circuit // flattened
	opt Options
	// nIn inputs, G gates, D levels; real = nIn + G tokens of the circuit.
	nIn, G, D, real int

	// tokens: token i's weighted sources are edges[rowPtr[i]:rowPtr[i+1]]
	// (merged, zero weights dropped); theta[i] its threshold.
	rowPtr []int32
	edges  []edge
	theta  []int64

	// heads: the used heads h = sign·nb + bit, nb the bits of the largest |w|.
	nb    int
	heads []int

	// padding (softmax): padTo[i] = N_i, the padded fan-in of token i's
	// heads; nulls the null tokens.
	padTo []int32
	nulls int

	// scale: T tokens, d = T + 4; the slots; the decision margin, κ, β and
	// the largest N_i.
	T, d                int
	VAL, ACC, THR, ONE  int
	margin, kappa, beta float64
	maxN                int32

	m *model.Model
}

// Map builds the tokens-as-gates model of c.
func Map(ctx context.Context, c *layered.Circuit, opt Options) (*model.Model, error) {
	if opt.Mode != model.Hard && opt.Mode != model.Softmax {
		return nil, fmt.Errorf("tokens-as-gates: unknown attention mode %q", opt.Mode)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("tokens-as-gates: %w", err)
	}
	// A token is a gate and attention routes its sources' values: a gate
	// reading forms reads their gates (a form is not a token).
	c = c.Flatten()
	mp := &mapping{c: c, opt: opt, nIn: c.NumInputs, G: c.NumGates(), D: c.Depth()}
	mp.real = mp.nIn + mp.G
	if err := mp.tokens(ctx); err != nil {
		return nil, err
	}
	mp.headsUsed()
	mp.padding()
	mp.scale()
	mp.newModel()
	tensors := append(mp.embedding(), mp.attention()...)
	tensors = append(tensors, mp.ffn()...)
	for _, b := range tensors {
		t, err := b.Tensor()
		if err != nil {
			return nil, fmt.Errorf("tokens-as-gates: %w", err)
		}
		mp.m.Tensors = append(mp.m.Tensors, t)
	}
	mp.blocksAndReadout()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return mp.m, nil
}

// tokenOf is the token of gate idx within level L (L = 0: inputs).
func (mp *mapping) tokenOf(L, idx int) int32 {
	if L == 0 {
		return int32(idx)
	}
	return int32(mp.nIn + int(mp.c.LevelStart[L-1]) + idx)
}

// tokens merges the edges of every real token (an input is a copy gate
// x ≥ 1 of itself) and records the thresholds.
func (mp *mapping) tokens(ctx context.Context) error {
	c, nIn := mp.c, mp.nIn
	mp.rowPtr = make([]int32, mp.real+1)
	mp.edges = make([]edge, 0, len(c.Src)+nIn)
	mp.theta = make([]int64, mp.real)
	for i := 0; i < nIn; i++ {
		mp.edges = append(mp.edges, edge{src: int32(i), w: 1})
		mp.theta[i] = 1
		mp.rowPtr[i+1] = int32(len(mp.edges))
	}
	merge := map[int32]int64{}
	for L := 1; L <= mp.D; L++ {
		if L%16 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		for g := c.LevelStart[L-1]; g < c.LevelStart[L]; g++ {
			src, w := c.Row(int(g))
			clear(merge)
			start := len(mp.edges)
			for k, s := range src {
				t := mp.tokenOf(L-1, int(s))
				if _, seen := merge[t]; !seen {
					mp.edges = append(mp.edges, edge{src: t})
				}
				merge[t] += int64(w[k])
			}
			out := mp.edges[:start]
			for _, e := range mp.edges[start:] {
				if e.w = merge[e.src]; e.w != 0 {
					out = append(out, e)
				}
			}
			mp.edges = out
			tok := nIn + int(g)
			mp.theta[tok] = int64(c.Threshold[g])
			mp.rowPtr[tok+1] = int32(len(mp.edges))
		}
	}
	return nil
}

// headsUsed finds the heads (sign, bit) some edge uses; softmax mirrors
// every head so the implicit-zero leak cancels.
func (mp *mapping) headsUsed() {
	maxAbs := int64(1)
	for _, e := range mp.edges {
		maxAbs = max(maxAbs, abs(e.w))
	}
	nb := bits.Len64(uint64(maxAbs))
	mp.nb = nb
	headOf := func(sign, b int) int { return sign*nb + b } // sign 0: +, 1: −
	used := make([]bool, 2*nb)
	for _, e := range mp.edges {
		s := 0
		if e.w < 0 {
			s = 1
		}
		for b := 0; b < nb; b++ {
			if abs(e.w)>>b&1 == 1 {
				used[headOf(s, b)] = true
			}
		}
	}
	if mp.opt.Mode == model.Softmax {
		for b := 0; b < nb; b++ {
			if used[headOf(0, b)] || used[headOf(1, b)] {
				used[headOf(0, b)], used[headOf(1, b)] = true, true
			}
		}
	}
	for h, u := range used {
		if u {
			mp.heads = append(mp.heads, h)
		}
	}
}

// headCounts sets count[hi] to the number of token i's edges in head
// heads[hi] and, if k is not nil, calls k(hi, e) for each.
func (mp *mapping) headCounts(i int, count []int32, k func(hi int, e edge)) {
	clear(count)
	for _, e := range mp.edges[mp.rowPtr[i]:mp.rowPtr[i+1]] {
		for hi, h := range mp.heads {
			if edgeIn(e.w, h, mp.nb) {
				if k != nil {
					k(hi, e)
				}
				count[hi]++
			}
		}
	}
}

// padding (softmax) pads every head of token i to N_i edges with null
// tokens, and counts the null tokens needed.
func (mp *mapping) padding() {
	mp.padTo = make([]int32, mp.real) // N_i
	if mp.opt.Mode != model.Softmax {
		return
	}
	count := make([]int32, len(mp.heads))
	for i := 0; i < mp.real; i++ {
		mp.headCounts(i, count, nil)
		n := int32(1)
		for _, k := range count {
			n = max(n, k)
		}
		mp.padTo[i] = n
		for _, k := range count {
			mp.nulls = max(mp.nulls, int(n-k))
		}
	}
	mp.nulls = max(mp.nulls, 1) // null tokens pad themselves with null 0
}

// scale lays out the residual stream and sets the decision margin of
// ACC − THR, κ and the softmax temperature.
func (mp *mapping) scale() {
	mp.T = mp.real + mp.nulls
	mp.d = mp.T + 4
	mp.VAL, mp.ACC, mp.THR, mp.ONE = mp.T, mp.T+1, mp.T+2, mp.T+3
	mp.margin = 0.5
	mMax := int64(1)
	for _, th := range mp.theta {
		mMax = max(mMax, th, 1-th)
	}
	mp.maxN = 1
	if mp.opt.Mode == model.Softmax {
		for _, n := range mp.padTo {
			mp.maxN = max(mp.maxN, n)
		}
		// With f ≥ 1 − 1/(8m): |f·z − (θ−½)| ≥ 3/8, over N_i.
		mp.margin = 3.0 / 8 / float64(mp.maxN)
		mp.beta = mp.opt.Beta
		if mp.beta == 0 {
			mp.beta = math.Log(8*float64(mMax)*float64(mp.T) + 1)
		}
	}
	mp.kappa = (stepA + stepArg) / mp.margin
}

// thr is token i's threshold slot: θ − ½, over N_i under softmax (null
// tokens: θ = 1, N = 1).
func (mp *mapping) thr(i int) float64 {
	if i >= mp.real {
		return 0.5
	}
	if mp.opt.Mode == model.Softmax {
		return (float64(mp.theta[i]) - 0.5) / float64(mp.padTo[i])
	}
	return float64(mp.theta[i]) - 0.5
}

// newModel starts the model: its shape and attributes.
func (mp *mapping) newModel() {
	mp.m = &model.Model{
		Arch:   "tokens-as-gates/" + string(mp.opt.Mode),
		Tokens: mp.T, DModel: mp.d,
		Attrs: map[string]int64{
			"circuit_depth": int64(mp.D), "circuit_gates": int64(mp.G), "null_tokens": int64(mp.nulls),
			"max_padded_fanin": int64(mp.maxN), "kappa_milli": int64(math.Round(mp.kappa * 1000)),
		},
	}
}

// embedding builds the static part of every token (one-hot, threshold,
// constant 1) and the input bits' map into VAL.
func (mp *mapping) embedding() []*model.Builder {
	T, d := mp.T, mp.d
	base := model.NewBuilder("embed.base", T, d)
	base.Grow(3 * T)
	for i := 0; i < T; i++ {
		base.Add(i, i, 1)
		base.Add(i, mp.THR, mp.thr(i))
		base.Add(i, mp.ONE, 1)
	}
	in := model.NewBuilder("embed.input", mp.nIn, d)
	mp.m.Embed = model.Embedding{Base: "embed.base", Input: "embed.input", InputToken: make([]int32, mp.nIn)}
	for b := 0; b < mp.nIn; b++ {
		in.Add(b, mp.VAL, 1)
		mp.m.Embed.InputToken[b] = int32(b)
	}
	return []*model.Builder{base, in}
}

// attention builds the shared Q and V, one K and O a head (K: a token's
// edges in that head, padded with null tokens under softmax), and records
// the heads for the blocks.
func (mp *mapping) attention() []*model.Builder {
	T, d, nHeads := mp.T, mp.d, len(mp.heads)
	q := model.NewBuilder("attn.q", T, d)
	q.Grow(T)
	for i := 0; i < T; i++ {
		q.Add(i, i, 1)
	}
	v := model.NewBuilder("attn.v", 1, d)
	v.Add(0, mp.VAL, 1)
	ks := make([]*model.Builder, nHeads)
	os := make([]*model.Builder, nHeads)
	for hi, h := range mp.heads {
		sign, b := h/mp.nb, h%mp.nb
		name := fmt.Sprintf("attn.head%d", hi)
		ks[hi] = model.NewBuilder(name+".k", T, d)
		os[hi] = model.NewBuilder(name+".o", d, 1)
		coef := math.Ldexp(1, b)
		if sign == 1 {
			coef = -coef
		}
		os[hi].Add(mp.ACC, 0, coef)
		mp.m.Attrs[fmt.Sprintf("head%d_coef", hi)] = int64(coef)
	}
	count := make([]int32, nHeads)
	for i := 0; i < T; i++ {
		clear(count)
		if i < mp.real {
			mp.headCounts(i, count, func(hi int, e edge) { ks[hi].Add(i, int(e.src), 1) })
		}
		if mp.opt.Mode == model.Softmax {
			n := int32(1)
			if i < mp.real {
				n = mp.padTo[i]
			}
			for hi := range mp.heads {
				for k := count[hi]; k < n; k++ {
					ks[hi].Add(i, mp.real+int(k-count[hi]), 1)
				}
			}
		}
	}
	out := []*model.Builder{q, v}
	out = append(out, ks...)
	return append(out, os...)
}

// ffn builds the 4-unit FFN: two SiLU steps of κ(ACC − THR) ± A into VAL,
// VAL's and ACC's old values cleared through the pass-through gate G.
func (mp *mapping) ffn() []*model.Builder {
	d, VAL, ACC, THR, ONE, kappa := mp.d, mp.VAL, mp.ACC, mp.THR, mp.ONE, mp.kappa
	sG := silu(passG)
	gate := model.NewBuilder("ffn.gate", 4, d)
	gate.Add(0, ACC, kappa)
	gate.Add(0, THR, -kappa)
	gate.Add(0, ONE, stepA)
	gate.Add(1, ACC, kappa)
	gate.Add(1, THR, -kappa)
	gate.Add(1, ONE, -stepA)
	gate.Add(2, ONE, passG)
	gate.Add(3, ONE, passG)
	value := model.NewBuilder("ffn.value", 4, d)
	value.Add(0, ONE, 1)
	value.Add(1, ONE, 1)
	value.Add(2, VAL, 1)
	value.Add(3, ACC, 1)
	out := model.NewBuilder("ffn.out", d, 4)
	out.Add(VAL, 0, 1.0/(2*stepA))
	out.Add(VAL, 1, -1.0/(2*stepA))
	out.Add(VAL, 2, -1/sG)
	out.Add(ACC, 3, -1/sG)
	return []*model.Builder{gate, value, out}
}

// blocksAndReadout adds D identical blocks (every head, the FFN) and reads
// output k from VAL of the k-th last-level gate's token.
func (mp *mapping) blocksAndReadout() {
	var mh []model.Head
	for hi := range mp.heads {
		name := fmt.Sprintf("attn.head%d", hi)
		mh = append(mh, model.Head{Q: "attn.q", K: name + ".k", V: "attn.v", O: name + ".o"})
	}
	for L := 0; L < mp.D; L++ {
		mp.m.Blocks = append(mp.m.Blocks, model.Block{
			Attn: &model.Attention{Mode: mp.opt.Mode, Beta: mp.beta, Residual: true, Heads: mh},
			FFN:  &model.FFN{Gate: "ffn.gate", Value: "ffn.value", Out: "ffn.out", Residual: true},
		})
	}
	for k := 0; k < mp.c.NumOutputs(); k++ {
		mp.m.Readout.Token = append(mp.m.Readout.Token, mp.tokenOf(mp.D, k))
		mp.m.Readout.Dim = append(mp.m.Readout.Dim, int32(mp.VAL))
		mp.m.Readout.Threshold = append(mp.m.Readout.Threshold, 0.5)
	}
}

// edgeIn reports whether an edge of weight w belongs to head h = sign·nb + bit.
func edgeIn(w int64, h, nb int) bool {
	sign, b := h/nb, h%nb
	if (w < 0) != (sign == 1) {
		return false
	}
	return abs(w)>>b&1 == 1
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func silu(x float64) float64 { return x / (1 + math.Exp(-x)) }
