package forward

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/tcforge/tcforge/sdk/model"
)

// Generation is a decoder's greedy generation on a list of prompts.
type Generation struct {
	// Tokens[s] are the tokens sample s generated (working, then digest).
	Tokens [][]int32
	// MinMargin is the smallest gap between the chosen token's logit and
	// the runner-up's over every generated token of every sample, in units
	// of the head's scale (model attr "head_scale", 1 if absent): the
	// argmax holds while no logit moves by half of it. NaN if a logit is
	// NaN.
	MinMargin float64
	// WorstSample and WorstToken (index among the generated tokens) locate
	// MinMargin.
	WorstSample, WorstToken int
}

// GenerateOptions tune Generate.
type GenerateOptions struct {
	// Float64 runs the pass in float64 (default float32).
	Float64 bool
	// Workers is the number of samples generated at once (default
	// GOMAXPROCS).
	Workers int
	// Force, if set, feeds Force[s][i] back as generated token i of sample
	// s instead of the argmax (teacher forcing: the argmax is still
	// recorded), so that every token is checked against its expected
	// predecessors.
	Force [][]int32
}

// Generate runs decoder m greedily on every prompt (prompt s: m's Prompt
// tokens) as PyTorch runs its stock layers with a causal mask, keeping
// each layer's keys and values (a KV cache), and returns the tokens it
// writes. The weights stay sparse (CSR rows); the stream, the cache and the
// attention are dense.
func Generate(ctx context.Context, m *model.Model, prompts [][]int32, opt GenerateOptions) (*Generation, error) {
	d := m.Decoder
	if d == nil {
		return nil, fmt.Errorf("forward: model %q is not a decoder", m.Arch)
	}
	p, err := compileDecoder(m)
	if err != nil {
		return nil, err
	}
	for s, pr := range prompts {
		if len(pr) != d.Prompt {
			return nil, fmt.Errorf("forward: prompt %d has %d tokens, the decoder reads %d", s, len(pr), d.Prompt)
		}
		for i, t := range pr {
			if t < 0 || int(t) >= d.Vocab {
				return nil, fmt.Errorf("forward: prompt %d token %d is %d, outside the vocabulary 0..%d", s, i, t, d.Vocab-1)
			}
		}
	}
	if opt.Force != nil && len(opt.Force) != len(prompts) {
		return nil, fmt.Errorf("forward: %d forced sequences for %d prompts", len(opt.Force), len(prompts))
	}
	g := &Generation{Tokens: make([][]int32, len(prompts)), MinMargin: math.Inf(1)}
	margins := make([]float64, len(prompts))
	worst := make([]int, len(prompts))
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, max(1, len(prompts))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var run func(s int)
			if opt.Float64 {
				st := newDecState[float64](p)
				run = func(s int) { g.Tokens[s], margins[s], worst[s] = st.generate(ctx, prompts[s], forced(opt.Force, s)) }
			} else {
				st := newDecState[float32](p)
				run = func(s int) { g.Tokens[s], margins[s], worst[s] = st.generate(ctx, prompts[s], forced(opt.Force, s)) }
			}
			for s := range next {
				if ctx.Err() == nil {
					run(s)
				}
			}
		}()
	}
	for s := range prompts {
		next <- s
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for s, mg := range margins {
		if mg < g.MinMargin || math.IsNaN(mg) {
			g.MinMargin, g.WorstSample, g.WorstToken = mg, s, worst[s]
			if math.IsNaN(mg) {
				break
			}
		}
	}
	return g, nil
}

func forced(f [][]int32, s int) []int32 {
	if f == nil {
		return nil
	}
	return f[s]
}

// decProgram is a compiled decoder: its stock layers (stockLayer, as the
// encoder pass holds them) and its embeddings and head.
type decProgram struct {
	m            *model.Model
	d            int
	tok, pos     *model.Tensor
	normW, normB []float64
	headW        *model.Tensor
	headB        []float64
	layers       []stockLayer
	scale        float64
	// live[l] lists, per head of layer l, the dims of its queries and keys
	// that can both be nonzero (a product over the rest is an exact 0) and
	// the dims of its values that can be nonzero.
	live []liveDims
}

type liveDims struct{ qk, v [][]int }

func compileDecoder(m *model.Model) (*decProgram, error) {
	sp, err := compileStockLayers(m)
	if err != nil {
		return nil, err
	}
	dec := m.Decoder
	idx := m.TensorIndex()
	p := &decProgram{m: m, d: m.DModel, tok: idx[dec.TokEmbed], pos: idx[dec.PosEmbed], headW: idx[dec.HeadW],
		headB: denseVec(idx[dec.HeadB]), layers: sp, scale: 1}
	if dec.NormW != "" {
		p.normW, p.normB = denseVec(idx[dec.NormW]), denseVec(idx[dec.NormB])
	}
	if v, ok := m.Attrs["head_scale"]; ok && v > 0 {
		p.scale = float64(v)
	}
	d := m.DModel
	for _, l := range p.layers {
		hd := d / l.heads
		nz := func(r int) bool { // row r of the in-projection or its bias can be nonzero
			cols, _ := l.inW.Row(r)
			return len(cols) > 0 || l.inB[r] != 0
		}
		var ld liveDims
		for h := range l.heads {
			var qk, v []int
			for c := range hd {
				if nz(h*hd+c) && nz(d+h*hd+c) {
					qk = append(qk, c)
				}
				if nz(2*d + h*hd + c) {
					v = append(v, c)
				}
			}
			ld.qk, ld.v = append(ld.qk, qk), append(ld.v, v)
		}
		p.live = append(p.live, ld)
	}
	return p, nil
}

// decState is one worker's buffers and KV cache. The cache keeps, per
// layer and head, only the dims of its keys and values that can be
// nonzero (decProgram.live), packed position by position, so a step's
// attention reads each head's keys contiguously.
type decState[F Float] struct {
	p                  *decProgram
	x, h, qkv, att, hd []F
	k, v               [][][]F // per layer, per head: Positions × its live dims
	scores             []F
	logits             []F
	// expFloor: below it exp(x) rounds to 0 in F (e⁻¹⁰⁴ is under half of
	// float32's least denormal, e⁻⁷⁴⁶ under float64's), so skipping it
	// changes nothing.
	expFloor F
}

func newDecState[F Float](p *decProgram) *decState[F] {
	d, T := p.d, p.m.Decoder.Positions
	mf := 0
	for _, l := range p.layers {
		mf = max(mf, l.ffn)
	}
	st := &decState[F]{p: p, x: make([]F, d), h: make([]F, d), qkv: make([]F, 3*d), att: make([]F, d),
		hd: make([]F, mf), scores: make([]F, T), logits: make([]F, p.m.Decoder.Vocab), expFloor: -104}
	if _, f64 := any(st.expFloor).(float64); f64 {
		st.expFloor = -746
	}
	for li := range p.layers {
		lp := p.live[li]
		ks, vs := make([][]F, len(lp.qk)), make([][]F, len(lp.v))
		for h := range lp.qk {
			ks[h] = make([]F, T*len(lp.qk[h]))
			vs[h] = make([]F, T*len(lp.v[h]))
		}
		st.k = append(st.k, ks)
		st.v = append(st.v, vs)
	}
	return st
}

// generate runs one prompt and returns the generated tokens, the smallest
// logit gap and where it is.
func (st *decState[F]) generate(ctx context.Context, prompt, force []int32) ([]int32, float64, int) {
	p := st.p
	dec := p.m.Decoder
	gen := make([]int32, 0, dec.Generated())
	minGap, worst := math.Inf(1), 0
	tok := prompt[0]
	for pos := 0; pos < dec.Positions-1; pos++ {
		if pos&255 == 0 && ctx.Err() != nil {
			return gen, minGap, worst
		}
		st.step(pos, tok)
		if pos < dec.Prompt-1 {
			tok = prompt[pos+1]
			continue
		}
		best, gap := st.head()
		i := len(gen)
		if gap < minGap || math.IsNaN(gap) {
			minGap, worst = gap, i
		}
		gen = append(gen, best)
		tok = best
		if force != nil {
			tok = force[i]
		}
	}
	return gen, minGap, worst
}

// step runs token tok at position pos through every layer, adding its keys
// and values to the cache; st.x holds its output stream.
func (st *decState[F]) step(pos int, tok int32) {
	p := st.p
	d := p.d
	clear(st.x)
	for _, row := range []struct {
		t *model.Tensor
		r int
	}{{p.tok, int(tok)}, {p.pos, pos}} {
		cols, vals := row.t.Row(row.r)
		for k, c := range cols {
			st.x[c] += F(vals[k])
		}
	}
	for li, l := range p.layers {
		layerNorm(st.x, st.h, l.n1w, l.n1b, l.eps)
		matvec(l.inW, l.inB, st.h, st.qkv)
		hd := d / l.heads
		scale := F(1 / math.Sqrt(float64(hd)))
		lp := p.live[li]
		for hh := range l.heads {
			qk, vs := lp.qk[hh], lp.v[hh]
			nk, nv := len(qk), len(vs)
			kc, vc := st.k[li][hh], st.v[li][hh]
			for i, c := range qk {
				kc[pos*nk+i] = st.qkv[d+hh*hd+c]
			}
			for i, c := range vs {
				vc[pos*nv+i] = st.qkv[2*d+hh*hd+c]
			}
			o := st.att[hh*hd:][:hd]
			clear(o)
			if nv == 0 {
				continue // the head adds nothing
			}
			q := make([]F, 0, 16)
			for _, c := range qk {
				q = append(q, st.qkv[hh*hd+c])
			}
			mx := F(math.Inf(-1))
			sc := st.scores[:pos+1]
			for j := range sc {
				k := kc[j*nk:][:nk]
				var s F
				for i, x := range q {
					s += x * k[i]
				}
				s *= scale
				sc[j] = s
				mx = max(mx, s)
			}
			var z F
			for j := range sc {
				x := sc[j] - mx
				if x < st.expFloor {
					sc[j] = 0 // exp underflows to 0 in F: skipping it is exact
					continue
				}
				e := F(math.Exp(float64(x)))
				sc[j] = e
				z += e
			}
			for j, e := range sc {
				if e == 0 {
					continue
				}
				a := e / z
				if a == 0 {
					continue
				}
				v := vc[j*nv:][:nv]
				for i, c := range vs {
					o[c] += a * v[i]
				}
			}
		}
		matvec(l.outW, l.outB, st.att, st.h)
		for c, v := range st.h {
			st.x[c] += v
		}
		layerNorm(st.x, st.h, l.n2w, l.n2b, l.eps)
		hid := st.hd[:l.ffn]
		matvec(l.l1W, l.l1B, st.h, hid)
		for u, v := range hid {
			hid[u] = max(v, 0)
		}
		matvec(l.l2W, l.l2B, hid, st.h)
		for c, v := range st.h {
			st.x[c] += v
		}
	}
}

// head applies the final norm and the LM head to st.x and returns the
// argmax (the lowest index among ties, as torch.argmax) and its gap to
// the runner-up, in units of the head's scale.
func (st *decState[F]) head() (int32, float64) {
	p := st.p
	in := st.x
	if p.normW != nil {
		layerNorm(st.x, st.h, p.normW, p.normB, p.m.Decoder.NormEps)
		in = st.h
	}
	matvec(p.headW, p.headB, in, st.logits)
	best, second := 0, -1
	for t := 1; t < len(st.logits); t++ {
		v := st.logits[t]
		switch {
		case v > st.logits[best] || v != v:
			second, best = best, t
		case second < 0 || v > st.logits[second]:
			second = t
		}
	}
	gap := math.Inf(1)
	if second >= 0 {
		gap = float64(st.logits[best]-st.logits[second]) / p.scale
	}
	if st.logits[best] != st.logits[best] {
		gap = math.NaN()
	}
	return int32(best), gap
}
