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
	nIn, G, D := c.NumInputs, c.NumGates(), c.Depth()
	real := nIn + G // tokens of the circuit
	// Token of gate idx within level L (L = 0: inputs).
	tokenOf := func(L, idx int) int32 {
		if L == 0 {
			return int32(idx)
		}
		return int32(nIn + int(c.LevelStart[L-1]) + idx)
	}
	// Merged edges and thresholds of every real token.
	rowPtr := make([]int32, real+1)
	edges := make([]edge, 0, len(c.Src)+nIn)
	theta := make([]int64, real)
	for i := 0; i < nIn; i++ {
		edges = append(edges, edge{src: int32(i), w: 1})
		theta[i] = 1
		rowPtr[i+1] = int32(len(edges))
	}
	merge := map[int32]int64{}
	for L := 1; L <= D; L++ {
		if L%16 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		for g := c.LevelStart[L-1]; g < c.LevelStart[L]; g++ {
			src, w := c.Row(int(g))
			clear(merge)
			start := len(edges)
			for k, s := range src {
				t := tokenOf(L-1, int(s))
				if _, seen := merge[t]; !seen {
					edges = append(edges, edge{src: t})
				}
				merge[t] += int64(w[k])
			}
			out := edges[:start]
			for _, e := range edges[start:] {
				if e.w = merge[e.src]; e.w != 0 {
					out = append(out, e)
				}
			}
			edges = out
			tok := nIn + int(g)
			theta[tok] = int64(c.Threshold[g])
			rowPtr[tok+1] = int32(len(edges))
		}
	}
	// Heads: (sign, bit).
	maxAbs := int64(1)
	for _, e := range edges {
		maxAbs = max(maxAbs, abs(e.w))
	}
	nb := bits.Len64(uint64(maxAbs))
	headOf := func(sign, b int) int { return sign*nb + b } // sign 0: +, 1: −
	used := make([]bool, 2*nb)
	for _, e := range edges {
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
	if opt.Mode == model.Softmax {
		// Mirror every head so the implicit-zero leak cancels.
		for b := 0; b < nb; b++ {
			if used[headOf(0, b)] || used[headOf(1, b)] {
				used[headOf(0, b)], used[headOf(1, b)] = true, true
			}
		}
	}
	var heads []int
	for h, u := range used {
		if u {
			heads = append(heads, h)
		}
	}
	// Per token and head: real edge counts; softmax pads to N_i.
	nHeads := len(heads)
	count := make([]int32, nHeads)
	padTo := make([]int32, real) // N_i
	nulls := 0
	if opt.Mode == model.Softmax {
		for i := 0; i < real; i++ {
			clear(count)
			for _, e := range edges[rowPtr[i]:rowPtr[i+1]] {
				for hi, h := range heads {
					if edgeIn(e.w, h, nb) {
						count[hi]++
					}
				}
			}
			n := int32(1)
			for _, k := range count {
				n = max(n, k)
			}
			padTo[i] = n
			for _, k := range count {
				nulls = max(nulls, int(n-k))
			}
		}
		nulls = max(nulls, 1) // null tokens pad themselves with null 0
	}
	T := real + nulls
	d := T + 4
	VAL, ACC, THR, ONE := T, T+1, T+2, T+3

	// Decision margin of ACC − THR and the temperature.
	margin := 0.5
	mMax := int64(1)
	for _, th := range theta {
		mMax = max(mMax, th, 1-th)
	}
	beta := 0.0
	maxN := int32(1)
	if opt.Mode == model.Softmax {
		for _, n := range padTo {
			maxN = max(maxN, n)
		}
		// With f ≥ 1 − 1/(8m): |f·z − (θ−½)| ≥ 3/8, over N_i.
		margin = 3.0 / 8 / float64(maxN)
		beta = opt.Beta
		if beta == 0 {
			beta = math.Log(8*float64(mMax)*float64(T) + 1)
		}
	}
	kappa := (stepA + stepArg) / margin

	thr := func(i int) float64 {
		if opt.Mode == model.Softmax {
			if i >= real {
				return 0.5 // null tokens: θ = 1, N = 1
			}
			return (float64(theta[i]) - 0.5) / float64(padTo[i])
		}
		if i >= real {
			return 0.5
		}
		return float64(theta[i]) - 0.5
	}

	m := &model.Model{
		Arch:   "tokens-as-gates/" + string(opt.Mode),
		Tokens: T, DModel: d,
		Attrs: map[string]int64{
			"circuit_depth": int64(D), "circuit_gates": int64(G), "null_tokens": int64(nulls),
			"max_padded_fanin": int64(maxN), "kappa_milli": int64(math.Round(kappa * 1000)),
		},
	}
	// Embedding.
	base := model.NewBuilder("embed.base", T, d)
	base.Grow(3 * T)
	for i := 0; i < T; i++ {
		base.Add(i, i, 1)
		base.Add(i, THR, thr(i))
		base.Add(i, ONE, 1)
	}
	in := model.NewBuilder("embed.input", nIn, d)
	m.Embed = model.Embedding{Base: "embed.base", Input: "embed.input", InputToken: make([]int32, nIn)}
	for b := 0; b < nIn; b++ {
		in.Add(b, VAL, 1)
		m.Embed.InputToken[b] = int32(b)
	}
	// Attention weights.
	q := model.NewBuilder("attn.q", T, d)
	q.Grow(T)
	for i := 0; i < T; i++ {
		q.Add(i, i, 1)
	}
	v := model.NewBuilder("attn.v", 1, d)
	v.Add(0, VAL, 1)
	ks := make([]*model.Builder, nHeads)
	os := make([]*model.Builder, nHeads)
	var mh []model.Head
	for hi, h := range heads {
		sign, b := h/nb, h%nb
		name := fmt.Sprintf("attn.head%d", hi)
		ks[hi] = model.NewBuilder(name+".k", T, d)
		os[hi] = model.NewBuilder(name+".o", d, 1)
		coef := math.Ldexp(1, b)
		if sign == 1 {
			coef = -coef
		}
		os[hi].Add(ACC, 0, coef)
		mh = append(mh, model.Head{Q: "attn.q", K: name + ".k", V: "attn.v", O: name + ".o"})
		m.Attrs[fmt.Sprintf("head%d_coef", hi)] = int64(coef)
	}
	for i := 0; i < T; i++ {
		clear(count)
		if i < real {
			for _, e := range edges[rowPtr[i]:rowPtr[i+1]] {
				for hi, h := range heads {
					if edgeIn(e.w, h, nb) {
						ks[hi].Add(i, int(e.src), 1)
						count[hi]++
					}
				}
			}
		}
		if opt.Mode == model.Softmax {
			n := int32(1)
			if i < real {
				n = padTo[i]
			}
			for hi := range heads {
				for k := count[hi]; k < n; k++ {
					ks[hi].Add(i, real+int(k-count[hi]), 1)
				}
			}
		}
	}
	// FFN.
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

	builders := []*model.Builder{base, in, q, v}
	builders = append(builders, ks...)
	builders = append(builders, os...)
	builders = append(builders, gate, value, out)
	for _, b := range builders {
		t, err := b.Tensor()
		if err != nil {
			return nil, fmt.Errorf("tokens-as-gates: %w", err)
		}
		m.Tensors = append(m.Tensors, t)
	}
	for L := 0; L < D; L++ {
		m.Blocks = append(m.Blocks, model.Block{
			Attn: &model.Attention{Mode: opt.Mode, Beta: beta, Residual: true, Heads: mh},
			FFN:  &model.FFN{Gate: "ffn.gate", Value: "ffn.value", Out: "ffn.out", Residual: true},
		})
	}
	for k := 0; k < c.NumOutputs(); k++ {
		m.Readout.Token = append(m.Readout.Token, tokenOf(D, k))
		m.Readout.Dim = append(m.Readout.Dim, int32(VAL))
		m.Readout.Threshold = append(m.Readout.Threshold, 0.5)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return m, nil
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
