// Package noattention is the paper's no-attention mapper: one token holds the
// whole circuit state, and each circuit level becomes one SwiGLU FFN
// sublayer, so the model has depth blocks and d_model ≥ width.
//
// Threshold steps use SiLU as Reifier does — two offset, scaled units per
// gate, (SiLU(κy + A) − SiLU(κy − A))/(2A) with y = Σwx − θ + ½ — scaled
// so that every SiLU argument on exact inputs is ≥ 96 in magnitude (float32
// SiLU is then exactly the identity or 0). Copy gates cost one pass-through
// unit SiLU(G)·x/SiLU(G), or nothing where the residual stream keeps them.
//
// Variants:
//
//	mlp:      FFN sublayers only, no residual, no norm — the MLP Reifier
//	          compiles. d_model = 1 + width: slot 0 is a constant 1 that
//	          every layer regenerates (it is the units' bias); slot 1+j holds
//	          gate j of the current level.
//	residual: real pre-norm encoder blocks, x ← x + Attn(RMSNorm(x)) with a
//	          present, all-zero attention sublayer, then
//	          x ← x + FFN(RMSNorm(x)), no biases — the form a Llama-style
//	          model computes. d_model = width + 1: the last dimension is an
//	          anchor holding a large constant C = 2¹⁶ that dominates the
//	          RMS, so RMSNorm scales every token by ρ ≈ √d/C and the units'
//	          offsets (read from the anchor) scale with it; each level
//	          overwrites the slots of the previous one (a unit adding −x
//	          clears a slot), and a copy whose value already sits in the
//	          slot it is assigned costs nothing.
package noattention

import (
	"context"
	"fmt"
	"math"

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
			return Residual(ctx, c)
		}
		return MLP(ctx, c)
	},
}

// Step and pass-through constants (see the package doc).
const (
	stepA   = 64.0
	stepArg = 96.0
	kappa   = 2 * (stepA + stepArg) // margin ½ on exact inputs
	passG   = 32.0
	// Anchor is the constant of the residual variant's anchor dimension.
	Anchor  = 65536.0
	normEps = 1e-6
)

func silu(x float64) float64 { return x / (1 + math.Exp(-x)) }

// row is one gate's merged sources (indices within the previous level).
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

// maxWidth is the widest level, inputs included.
func maxWidth(c *layered.Circuit) int {
	w := c.NumInputs
	for L := 1; L <= c.Depth(); L++ {
		w = max(w, c.LevelWidth(L))
	}
	return w
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
	d := 1 + maxWidth(c)
	const one = 0
	m := &model.Model{Arch: "no-attention/mlp", Tokens: 1, DModel: d,
		Attrs: map[string]int64{"circuit_depth": int64(D), "circuit_width": int64(d - 1)}}
	base := model.NewBuilder("embed.base", 1, d)
	base.Add(0, one, 1)
	in := model.NewBuilder("embed.input", nIn, d)
	m.Embed = model.Embedding{Base: "embed.base", Input: "embed.input", InputToken: make([]int32, nIn)}
	for b := 0; b < nIn; b++ {
		in.Add(b, 1+b, 1)
	}
	bs := []*model.Builder{base, in}
	sG := silu(passG)
	for L := 1; L <= D; L++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		lo, hi := int(c.LevelStart[L-1]), int(c.LevelStart[L])
		name := fmt.Sprintf("blocks.%d.ffn", L-1)
		// Hidden units: the constant, then per gate 1 (copy) or 2 (step).
		units := 1
		rows := make([]row, hi-lo)
		for g := lo; g < hi; g++ {
			rows[g-lo] = gateRow(c, g)
			if rows[g-lo].copy {
				units++
			} else {
				units += 2
			}
		}
		gate := model.NewBuilder(name+".gate", units, d)
		value := model.NewBuilder(name+".value", units, d)
		out := model.NewBuilder(name+".out", d, units)
		gate.Add(0, one, passG)
		value.Add(0, one, 1)
		out.Add(one, 0, 1/sG)
		u := 1
		for j, r := range rows {
			if r.copy {
				gate.Add(u, one, passG)
				value.Add(u, 1+int(r.src[0]), 1)
				out.Add(1+j, u, 1/sG)
				u++
				continue
			}
			for k, off := range []float64{stepA, -stepA} {
				for e, s := range r.src {
					gate.Add(u+k, 1+int(s), kappa*r.w[e])
				}
				gate.Add(u+k, one, -kappa*(r.theta-0.5)+off)
				value.Add(u+k, one, 1)
				out.Add(1+j, u+k, off/(2*stepA*stepA))
			}
			u += 2
		}
		bs = append(bs, gate, value, out)
		m.Blocks = append(m.Blocks, model.Block{FFN: &model.FFN{Gate: name + ".gate", Value: name + ".value", Out: name + ".out"}})
	}
	for k := 0; k < c.NumOutputs(); k++ {
		m.Readout.Token = append(m.Readout.Token, 0)
		m.Readout.Dim = append(m.Readout.Dim, int32(1+k))
		m.Readout.Threshold = append(m.Readout.Threshold, 0.5)
	}
	return finish(m, bs)
}

// Residual maps c to Llama-style pre-norm residual blocks.
func Residual(ctx context.Context, c *layered.Circuit) (*model.Model, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("no-attention: %w", err)
	}
	D, nIn := c.Depth(), c.NumInputs
	W := maxWidth(c)
	d := W + 1
	anchor := W
	rho0 := math.Sqrt(float64(d)) / Anchor // nominal 1/rms
	m := &model.Model{Arch: "no-attention/residual", Tokens: 1, DModel: d,
		Attrs: map[string]int64{"circuit_depth": int64(D), "circuit_width": int64(W), "anchor": Anchor}}
	base := model.NewBuilder("embed.base", 1, d)
	base.Add(0, anchor, Anchor)
	in := model.NewBuilder("embed.input", nIn, d)
	m.Embed = model.Embedding{Base: "embed.base", Input: "embed.input", InputToken: make([]int32, nIn)}
	slot := make([]int32, nIn) // slot of each gate of the current level
	for b := 0; b < nIn; b++ {
		in.Add(b, b, 1)
		slot[b] = int32(b)
	}
	bs := []*model.Builder{base, in}
	tensors := []model.Tensor{model.Ones("norm", d)}
	norm := &model.RMSNorm{Weight: "norm", Eps: normEps}
	// Unit weights, in normalised coordinates: x̂_s = v_s·ρ, x̂_anchor = C·ρ.
	gAnchor := passG / (Anchor * rho0)  // pass-through gate from the anchor: G·ρ/ρ₀
	passOut := 1 / (silu(passG) * rho0) // h ≈ G·v·ρ²/ρ₀ → ±v
	stepIn := kappa / rho0              // κ/ρ₀ on each source
	stepAnchor := 1 / (Anchor * rho0)   // times (−κ(θ−½) ± A) on the anchor
	stepValue := 1 / (Anchor * rho0)    // value ρ/ρ₀ from the anchor
	for L := 1; L <= D; L++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		lo, hi := int(c.LevelStart[L-1]), int(c.LevelStart[L])
		rows := make([]row, hi-lo)
		next := make([]int32, hi-lo)
		claimed := make([]bool, W)
		for g := lo; g < hi; g++ {
			rows[g-lo] = gateRow(c, g)
			next[g-lo] = -1
		}
		// Copies stay in their source's slot when it is free.
		for j, r := range rows {
			if r.copy {
				if s := slot[r.src[0]]; !claimed[s] {
					claimed[s] = true
					next[j] = s
				}
			}
		}
		inPlace := make([]bool, W)
		for j := range rows {
			if next[j] >= 0 {
				inPlace[next[j]] = true
			}
		}
		free := 0
		for j := range rows {
			if next[j] >= 0 {
				continue
			}
			for claimed[free] {
				free++
			}
			claimed[free] = true
			next[j] = int32(free)
		}
		name := fmt.Sprintf("blocks.%d", L-1)
		// Units: clear each previous-level slot not kept in place, then per gate.
		var clears []int32
		for _, s := range slot {
			if !inPlace[s] {
				clears = append(clears, s)
			}
		}
		units := len(clears)
		for j, r := range rows {
			switch {
			case r.copy && slot[r.src[0]] == next[j]:
			case r.copy:
				units++
			default:
				units += 2
			}
		}
		gate := model.NewBuilder(name+".ffn.gate", units, d)
		value := model.NewBuilder(name+".ffn.value", units, d)
		out := model.NewBuilder(name+".ffn.out", d, units)
		u := 0
		for _, s := range clears {
			gate.Add(u, anchor, gAnchor)
			value.Add(u, int(s), 1)
			out.Add(int(s), u, -passOut)
			u++
		}
		for j, r := range rows {
			dst := int(next[j])
			switch {
			case r.copy && slot[r.src[0]] == next[j]:
				// Already there.
			case r.copy:
				gate.Add(u, anchor, gAnchor)
				value.Add(u, int(slot[r.src[0]]), 1)
				out.Add(dst, u, passOut)
				u++
			default:
				for k, off := range []float64{stepA, -stepA} {
					for e, s := range r.src {
						gate.Add(u+k, int(slot[s]), stepIn*r.w[e])
					}
					gate.Add(u+k, anchor, stepAnchor*(-kappa*(r.theta-0.5)+off))
					value.Add(u+k, anchor, stepValue)
					out.Add(dst, u+k, off/(2*stepA*stepA))
				}
				u += 2
			}
		}
		slot = next
		bs = append(bs, gate, value, out)
		for _, p := range []string{".attn.q", ".attn.k", ".attn.v", ".attn.o"} {
			tensors = append(tensors, model.Zero(name+p, d, d))
		}
		m.Blocks = append(m.Blocks, model.Block{
			Attn: &model.Attention{Mode: model.Softmax, Beta: 1 / math.Sqrt(float64(d)), Norm: norm, Residual: true,
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
	return finish(m, bs)
}
