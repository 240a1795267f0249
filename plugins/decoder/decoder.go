// Package decoder is the decoder mapper ("tokens as time"): it turns a
// layered circuit into a causal language model of ordinary shape — a byte
// vocabulary, token and position embeddings, a few stock PyTorch encoder
// layers run with a causal mask (GPT's block), a final LayerNorm and a
// linear LM head — that computes the circuit by writing out its working.
//
// The prompt is the circuit's inputs as bytes. Greedy decoding then writes
// the working, step by step, and ends with the digest bytes. A step is a
// run of at most k = levels_per_step levels of the circuit (retimed: every
// gate as late as its readers allow); its working is a basis of what later
// steps read of its values, as bits (each a 0/1 sum of its gates: a gate,
// or a switching function of one sum such as a sum's bit), 8 a token.
// Every token's bits are computed at the position before it, by the L = k
// layers: the first layer's heads fetch the earlier tokens it reads (the
// working of earlier steps and the prompt), and layer ℓ's FFN computes the
// step's level ℓ gates that the token's bits depend on (its cone). So the
// layers grow with k and the generated tokens with 1/k: the layers-versus-
// tokens trade-off is the one parameter.
//
// The model. The residual stream of every position holds:
//
//	sink        always 0: each row reading a LayerNorm puts minus the sum of
//	            its weights there, so the norm's mean cancels exactly
//	±C          pin LayerNorm's scale to 1 (σ is C·sqrt(2/d) to 1 part in
//	            10⁵), so LN(x) is x − μ
//	key code    (cos, sin)(2πp/Tᶠ) for T = 32, 32², 32³: the position
//	kind        the bits of the position's kind (the shape of the cone it
//	            computes; positions of a kind run the same units)
//	token bits  the bits of the position's token (token embedding)
//	queries     per head, the code of the position it fetches
//	fetched     per head, the 8 bits it fetched
//	out         the 8 bits of the next token
//	work        the cone's gates, one dimension each
//
// Attention: head h's query is A times the code of its target, its key the
// code of every position, so the softmax is one-hot to e⁻⁴⁸; its value is
// the token's bits. A gate Σw·x ≥ θ is relu(h) − relu(h − 1) with h =
// 4(s − θ + ½) minus a large multiple of the kind bits that differ from
// its kind's (off elsewhere). The LM head scores byte v by Σ_b (2v_b −
// 1)(2·out_b − 1): the argmax is the byte whose bits are out's.
package decoder

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Plugin is the decoder mapper.
var Plugin = &sdk.Mapper{
	Name:    "decoder",
	Version: "0.1.0",
	Doc:     "Tokens as time: a causal, GPT-shaped stock PyTorch model over a byte vocabulary that reads the input bytes and greedily writes the circuit's working (a basis of each step's values, 8 bits a token) and then the digest; levels_per_step levels a step, one stock layer a level.",
	Params: []sdk.Param{
		{Name: "levels_per_step", Type: sdk.Int, Default: 0, Min: sdk.Bound(0), Max: sdk.Bound(64),
			Doc: "circuit levels a step computes, hence the model's layers (more levels: more layers, fewer generated tokens); 0: a round's levels (the circuit's depth over the rounds its scopes name, at most 12), or fewer until d_model fits max_d_model"},
		{Name: "max_d_model", Type: sdk.Int, Default: 1024, Min: sdk.Bound(16),
			Doc: "the widest residual stream levels_per_step = 0 accepts"},
		{Name: "bit_order", Type: sdk.String, Default: "auto", Enum: []string{"auto", "lsb-first", "msb-first"},
			Doc: "how a token's bits map to circuit bits 8j … 8j+7: \"lsb-first\" (token bit b is bit 8j+b: Keccak's bytes), \"msb-first\" (bit 8j+7−b: SHA-2's), or \"auto\": by the bits' position hints (bit h of a word is token bit h mod 8, which gives both), lsb-first without them"},
	},
	// Additions in 8-bit chunks: a sum's bits then come a byte a chunk,
	// as the working's tokens do (and SHA-256's round at 10 reifier
	// levels, 1,234 generated tokens).
	MaxWeight: 1 << 16,
	Prepare: func(_ context.Context, pass *sdk.Pass) (any, error) {
		return Config{LevelsPerStep: pass.Params.Int("levels_per_step"), MaxDModel: pass.Params.Int("max_d_model"),
			BitOrder: pass.Params.String("bit_order")}, nil
	},
	Map: func(ctx context.Context, pass *sdk.Pass, c *layered.Circuit) (*model.Model, error) {
		return Map(ctx, c, pass.Prepared.(Config))
	},
}

// Config is the mapper's resolved parameters.
type Config struct {
	// LevelsPerStep is k; 0 chooses it (see the parameter).
	LevelsPerStep int
	// MaxDModel bounds the residual stream the automatic choice accepts.
	MaxDModel int
	// BitOrder is "auto" (or ""), "lsb-first" or "msb-first" (see the
	// parameter).
	BitOrder string
}

// Map maps layered circuit c to a decoder.
func Map(ctx context.Context, c *layered.Circuit, cfg Config) (*model.Model, error) {
	g, err := buildDAG(ctx, c)
	if err != nil {
		return nil, err
	}
	lv := g.alap()
	if cfg.LevelsPerStep > 0 {
		return mapK(ctx, c, g, lv, cfg, cfg.LevelsPerStep)
	}
	maxD := cfg.MaxDModel
	if maxD <= 0 {
		maxD = 1024
	}
	// A round a step, else fewer levels until the stream fits.
	var errs []string
	for k := min(roundLevels(c), 12); k >= 1; k-- {
		m, err := mapK(ctx, c, g, lv, cfg, k)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			errs = append(errs, fmt.Sprintf("levels_per_step = %d: %v", k, err))
			continue
		}
		if m.DModel <= maxD {
			return m, nil
		}
		errs = append(errs, fmt.Sprintf("levels_per_step = %d: d_model %d > max_d_model %d", k, m.DModel, maxD))
	}
	return nil, fmt.Errorf("decoder: no levels_per_step maps within max_d_model = %d (%s); raise max_d_model", maxD, strings.Join(errs, "; "))
}

// roundLevels returns the levels of one round of c: its depth over the
// rounds its scope tags name ("round N" in every block), at least 1; the
// whole depth if the tags name no rounds.
func roundLevels(c *layered.Circuit) int {
	rounds := map[string]bool{}
	for _, tag := range c.Tags {
		parts := strings.Split(tag, "/")
		for i, p := range parts {
			// "round N", also where a builder suffixes it ("round N
			// counters": an adder's counters inside the round).
			num, ok := strings.CutPrefix(p, "round ")
			if !ok {
				continue
			}
			if j := strings.IndexByte(num, ' '); j >= 0 {
				num = num[:j]
			}
			if _, err := strconv.Atoi(num); err == nil {
				rounds[strings.Join(append(parts[:i:i], "round "+num), "/")] = true
			}
		}
	}
	if len(rounds) == 0 {
		return max(1, c.Depth())
	}
	return max(1, int(math.Round(float64(c.Depth())/float64(len(rounds)))))
}

// mapK maps with k levels a step. The first step's length (1 … k) is
// the one whose steps pass the fewest distinct families of gates to later
// steps (what their working must carry, counted without building it).
func mapK(ctx context.Context, c *layered.Circuit, g *dag, lv []int32, cfg Config, k int) (*model.Model, error) {
	first, best := k, -1
	for f := k; f >= 1; f-- {
		if f > g.depth {
			continue
		}
		if n := crossing(g, newSchedule(g, lv, k, f)); best < 0 || n < best {
			first, best = f, n
		}
	}
	sc := newSchedule(g, lv, k, first)
	w, err := buildWorking(ctx, g, sc)
	if err != nil {
		return nil, err
	}
	lo := newLayout(g, sc, w, cfg.BitOrder)
	gs := groups(g, sc, w, lo)
	cones := make([]*cone, len(gs))
	for i, ts := range gs {
		if i&255 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		cn, err := buildCone(g, sc, w, lo, ts)
		if err != nil {
			return nil, err
		}
		cones[i] = cn
	}
	pl, err := newPlan(g, lo, gs, cones)
	if err != nil {
		return nil, err
	}
	m, err := pl.emit(g, lo, c.Tags)
	if err != nil {
		return nil, err
	}
	m.Attrs["levels_per_step"] = int64(k)
	m.Attrs["steps"] = int64(sc.steps())
	setWorking(m.Decoder, g, w, lo, c)
	return m, nil
}

// crossing counts, over the steps, the distinct families (single gates,
// or the steps of one sum) that a later step reads.
func crossing(g *dag, sc *schedule) int {
	seen := map[[2]int32]bool{}
	for v := g.nIn; v < g.nodes(); v++ {
		src, _ := g.terms(v)
		for _, u := range src {
			if g.isConst(u) || sc.step[u] == sc.step[v] {
				continue
			}
			f := g.family[u]
			if f < 0 {
				f = -1 - u
			}
			seen[[2]int32{sc.step[u], f}] = true
		}
	}
	return len(seen)
}

// setWorking writes the definitions and names of the generated tokens.
func setWorking(d *model.Decoder, g *dag, w *working, lo *layout, c *layered.Circuit) {
	d.WorkStart = []int32{0}
	value := func(v int32) int32 {
		if int(v) < g.nIn {
			return v
		}
		return int32(g.nIn) + g.gate[v]
	}
	for t := range lo.working {
		for _, tb := range lo.gen[t] {
			var cst int32
			if tb.ref.step > 0 {
				bd := w.bits[tb.ref.step][tb.ref.bit]
				for i, v := range bd.x.node {
					d.WorkSrc = append(d.WorkSrc, value(v))
					d.WorkCoef = append(d.WorkCoef, int32(bd.x.coef[i]))
				}
				cst = int32(bd.cst)
			}
			d.WorkConst = append(d.WorkConst, cst)
			d.WorkStart = append(d.WorkStart, int32(len(d.WorkSrc)))
		}
	}
	d.Names = make([]string, len(lo.gen))
	for t := range lo.gen {
		if t >= lo.working {
			d.Names[t] = fmt.Sprintf("digest · byte %d", t-lo.working)
			continue
		}
		// The scope of the token's first bit, and which byte of a word
		// its position hints make it.
		name := fmt.Sprintf("step %d", lo.genStep[t])
		for _, tb := range lo.gen[t] {
			if tb.ref.step > 0 {
				v := w.bits[tb.ref.step][tb.ref.bit].x.node[0]
				if tg := g.tag[v]; tg >= 0 && int(tg) < len(c.Tags) && c.Tags[tg] != "" {
					name += " · " + c.Tags[tg]
				}
				if h := g.pos[v]; h >= 0 {
					name += fmt.Sprintf(" · byte %d", h/8)
				}
				break
			}
		}
		d.Names[t] = name
	}
}
