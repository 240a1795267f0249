package forward

import (
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
)

// stockProgram runs a model whose blocks are stock PyTorch encoder layers
// (model.EncoderLayer): LayerNorm with affine weight and bias, multi-head
// softmax attention scaled by 1/sqrt(head_dim) with biased in/out
// projections, and a ReLU FFN with biases. It computes what PyTorch
// computes, sample by sample over the dense T × d_model stream, with the
// weight matrices kept sparse (CSR rows).
type stockProgram struct {
	m      *model.Model
	T, d   int
	base   []float64 // T×d
	in     *model.Tensor
	inTok  []int32
	layers []stockLayer
}

type stockLayer struct {
	heads               int
	eps                 float64
	n1w, n1b, n2w, n2b  []float64
	inW, outW, l1W, l2W *model.Tensor
	inB, outB, l1B, l2B []float64
	ffn                 int
}

func denseVec(t *model.Tensor) []float64 {
	out := make([]float64, t.Rows*t.Cols)
	for r := 0; r < t.Rows; r++ {
		cols, vals := t.Row(r)
		for k, c := range cols {
			out[r*t.Cols+int(c)] = float64(vals[k])
		}
	}
	return out
}

// compileStock prepares a stock model (validated by the caller).
func compileStock(m *model.Model) (*stockProgram, error) {
	if !m.IsStock() {
		return nil, fmt.Errorf("model: stock encoder layers cannot be mixed with other blocks")
	}
	idx := m.TensorIndex()
	p := &stockProgram{m: m, T: m.Tokens, d: m.DModel, base: denseVec(idx[m.Embed.Base]), in: idx[m.Embed.Input], inTok: m.Embed.InputToken}
	var err error
	p.layers, err = compileStockLayers(m)
	return p, err
}

// compileStockLayers prepares the stock layers of a model (validated by the
// caller) whose blocks are all stock layers.
func compileStockLayers(m *model.Model) ([]stockLayer, error) {
	if !m.IsStock() {
		return nil, fmt.Errorf("model: stock encoder layers cannot be mixed with other blocks")
	}
	idx := m.TensorIndex()
	var layers []stockLayer
	for _, b := range m.Blocks {
		l := b.Layer
		v := func(n string) []float64 { return denseVec(idx[n]) }
		layers = append(layers, stockLayer{heads: l.Heads, eps: l.Eps,
			n1w: v(l.Norm1W), n1b: v(l.Norm1B), n2w: v(l.Norm2W), n2b: v(l.Norm2B),
			inW: idx[l.InProjW], outW: idx[l.OutProjW], l1W: idx[l.Linear1W], l2W: idx[l.Linear2W],
			inB: v(l.InProjB), outB: v(l.OutProjB), l1B: v(l.Linear1B), l2B: v(l.Linear2B), ffn: l.FFNWidth(idx)})
	}
	return layers, nil
}

// stockRun runs the stock pass over every sample.
func stockRun[F Float](p *stockProgram, inputs []bitvec.Vec, workers int, opt Options) (*Result, error) {
	res := &Result{Outputs: make([]bitvec.Vec, len(inputs)), MinMargin: math.Inf(1)}
	nOut := p.m.NumOutputs()
	values := make([][]float64, len(inputs))
	if opt.Watch != nil {
		res.Watched = opt.Watch.newWatched(len(inputs))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var phases Phases
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := newStockState[F](p)
			for s := range next {
				if opt.ctx.Err() == nil {
					var watched [][]float64
					if res.Watched != nil {
						watched = res.Watched[s]
					}
					values[s] = st.sample(inputs[s], opt.Watch, watched)
				}
			}
			mu.Lock()
			phases.add(st.ph)
			mu.Unlock()
		}()
	}
	for s := range inputs {
		next <- s
	}
	close(next)
	wg.Wait()
	if err := opt.ctx.Err(); err != nil {
		return nil, err
	}
	r := p.m.Readout
	for s := range inputs {
		out := bitvec.NewVec(nOut)
		for k := range nOut {
			v, thr := values[s][k], float64(r.Threshold[k])
			if v >= thr {
				out.Set(k, 1)
			}
			if mg := math.Abs(v - thr); mg < res.MinMargin || math.IsNaN(v) {
				res.MinMargin, res.WorstSample, res.WorstOutput = mg, s, k
				if math.IsNaN(v) {
					res.MinMargin = math.NaN()
				}
			}
		}
		res.Outputs[s] = out
	}
	if opt.KeepValues {
		res.Values = values
	}
	res.phases = phases.over(workers)
	return res, nil
}

// stockState is one worker's buffers.
type stockState[F Float] struct {
	p                   *stockProgram
	x, h, qkv, att, hid []F
	scores              []F        // T × T: one head's scores, then its weights
	vt, ot              []F        // head_dim × T: a head's values and outputs, transposed
	args, exps          []float64  // T: one row's arguments of exp and its values
	gb                  gemmBuf[F] // gemm's buffers
	ph                  Phases     // the time of this worker's samples, by kernel
	t                   time.Time  // the end of the last timed step
}

func newStockState[F Float](p *stockProgram) *stockState[F] {
	F3, mf := 3*p.d, 0
	for _, l := range p.layers {
		mf = max(mf, l.ffn)
	}
	return &stockState[F]{p: p, x: make([]F, p.T*p.d), h: make([]F, p.T*p.d), qkv: make([]F, p.T*F3),
		att: make([]F, p.T*p.d), hid: make([]F, p.T*mf), scores: make([]F, p.T*p.T),
		args: make([]float64, p.T), exps: make([]float64, p.T)}
}

// lap adds the time since the last lap to *d.
func (st *stockState[F]) lap(d *time.Duration) {
	now := time.Now()
	*d += now.Sub(st.t)
	st.t = now
}

// matvec computes out[r] = Σ W[r][c]·x[c] + b[r] for every row r.
func matvec[F Float](W *model.Tensor, b []float64, x, out []F) {
	for r := 0; r < W.Rows; r++ {
		cols, vals := W.Row(r)
		acc := F(b[r])
		for k, c := range cols {
			acc += F(vals[k]) * x[c]
		}
		out[r] = acc
	}
}

// layerNorm writes LN(x) of one token into h, as torch.nn.LayerNorm does
// (biased variance, eps inside the root); the statistics are accumulated in
// float64.
func layerNorm[F Float](x, h []F, w, b []float64, eps float64) {
	var mu float64
	for _, v := range x {
		mu += float64(v)
	}
	mu /= float64(len(x))
	var vr float64
	for _, v := range x {
		dv := float64(v) - mu
		vr += dv * dv
	}
	vr /= float64(len(x))
	inv := F(1 / math.Sqrt(vr+eps))
	m := F(mu)
	for i, v := range x {
		h[i] = (v-m)*inv*F(w[i]) + F(b[i])
	}
}

// sample runs one sample and returns its readout values; with wt, it
// records the watched values at every layer boundary into watched.
func (st *stockState[F]) sample(in bitvec.Vec, wt *Watch, watched [][]float64) []float64 {
	p := st.p
	d := p.d
	st.t = time.Now()
	for i, v := range p.base {
		st.x[i] = F(v)
	}
	for bit := 0; bit < p.in.Rows; bit++ {
		if in.Get(bit) == 0 {
			continue
		}
		row := st.x[int(p.inTok[bit])*d:][:d]
		cols, vals := p.in.Row(bit)
		for k, c := range cols {
			row[c] += F(vals[k])
		}
	}
	if wt != nil {
		st.watch(wt, 0, watched)
	}
	for i := range p.layers {
		st.layer(&p.layers[i])
		if wt != nil {
			st.watch(wt, i+1, watched)
		}
	}
	r := p.m.Readout
	out := make([]float64, len(r.Token))
	for k := range out {
		out[k] = float64(st.x[int(r.Token[k])*d+int(r.Dim[k])])
	}
	st.lap(&st.ph.Other)
	return out
}

// layer runs one stock encoder layer on the T token rows of st.x (T × d,
// row-major), in place, as torch.nn.TransformerEncoderLayer with
// norm_first does: x = x + out_proj(MHA(LN1(x))), then x = x +
// linear2(relu(linear1(LN2(x)))). Its steps: the projections (matvec,
// CSR rows), the heads (attention) and the norms (layerNorm).
func (st *stockState[F]) layer(l *stockLayer) {
	p := st.p
	T, d := p.T, p.d
	// x = x + out_proj(MHA(LN1(x)))
	for t := range T {
		layerNorm(st.x[t*d:][:d], st.h[t*d:][:d], l.n1w, l.n1b, l.eps)
		matvec(l.inW, l.inB, st.h[t*d:][:d], st.qkv[t*3*d:][:3*d])
	}
	st.lap(&st.ph.Sparse)
	st.attention(l)
	for t := range T {
		matvec(l.outW, l.outB, st.att[t*d:][:d], st.h[t*d:][:d])
		x := st.x[t*d:][:d]
		for c, v := range st.h[t*d:][:d] {
			x[c] += v
		}
	}
	// x = x + linear2(relu(linear1(LN2(x))))
	for t := range T {
		x := st.x[t*d:][:d]
		h := st.h[t*d:][:d]
		layerNorm(x, h, l.n2w, l.n2b, l.eps)
		hid := st.hid[t*l.ffn:][:l.ffn]
		matvec(l.l1W, l.l1B, h, hid)
		for u, v := range hid {
			hid[u] = max(v, 0)
		}
		matvec(l.l2W, l.l2B, hid, h)
		for c, v := range h {
			x[c] += v
		}
	}
	st.lap(&st.ph.Sparse)
}

// attention sets st.att (T × d) to the heads' outputs over st.qkv (T rows
// of q, k, v): per head, the scores S = Q·Kᵀ/sqrt(head_dim) (a dense tile:
// gemm, each dot product's products rounded and added in order, then
// scaled, as a loop over the head's dimensions does), the softmax of each
// row (its maximum subtracted, expVec: math.Exp's bits, summed in order,
// divided) and the output P·V (gemm, each output's products in key
// order). A head whose values are not all finite takes
// attentionLoop instead: there a weight of 0 skips its value, where gemm
// would add 0·v (NaN for an infinite v; a signed zero otherwise adds
// nothing, the outputs starting at +0).
func (st *stockState[F]) attention(l *stockLayer) {
	T, d := st.p.T, st.p.d
	hd := d / l.heads
	scale := F(1 / math.Sqrt(float64(hd)))
	S := st.scores[:T*T]
	for hh := range l.heads {
		finite := true
		for j := 0; j < T && finite; j++ {
			for _, v := range st.qkv[j*3*d+2*d+hh*hd:][:hd] {
				finite = finite && !math.IsInf(float64(v), 0) && !math.IsNaN(float64(v))
			}
		}
		if !finite {
			st.attentionLoop(l, hh)
			st.lap(&st.ph.Other)
			continue
		}
		clear(S)
		gemm(gemmMulAdd, T, T, hd, st.qkv[hh*hd:], 3*d, st.qkv[d+hh*hd:], 3*d, true, S, T, &st.gb)
		st.lap(&st.ph.Dense)
		for i := range T {
			row := S[i*T:][:T]
			mx := F(math.Inf(-1))
			for j, s := range row {
				s *= scale
				row[j] = s
				mx = max(mx, s)
			}
			for j, s := range row {
				st.args[j] = float64(s - mx)
			}
			expVec(st.exps, st.args)
			var z F
			for j, e := range st.exps {
				row[j] = F(e)
				z += row[j]
			}
			for j := range row {
				row[j] /= z
			}
		}
		st.lap(&st.ph.Exp)
		for i := range T {
			clear(st.att[i*d+hh*hd:][:hd])
		}
		gemm(gemmMulAdd, T, hd, T, S, T, st.qkv[2*d+hh*hd:], 3*d, false, st.att[hh*hd:], d, &st.gb)
		st.lap(&st.ph.Dense)
	}
}

// attentionLoop sets head hh's outputs in st.att, query by query: the
// scalar loop attention replaces (the same values where every value is
// finite).
func (st *stockState[F]) attentionLoop(l *stockLayer, hh int) {
	T, d := st.p.T, st.p.d
	hd := d / l.heads
	scale := F(1 / math.Sqrt(float64(hd)))
	scores := st.scores[:T]
	for i := range T {
		q := st.qkv[i*3*d+hh*hd:][:hd]
		mx := F(math.Inf(-1))
		for j := range T {
			k := st.qkv[j*3*d+d+hh*hd:][:hd]
			var s F
			for c := range hd {
				s += q[c] * k[c]
			}
			s *= scale
			scores[j] = s
			mx = max(mx, s)
		}
		var z F
		for j := range T {
			e := F(math.Exp(float64(scores[j] - mx)))
			scores[j] = e
			z += e
		}
		o := st.att[i*d+hh*hd:][:hd]
		clear(o)
		for j := range T {
			a := scores[j] / z
			if a == 0 {
				continue
			}
			v := st.qkv[j*3*d+2*d+hh*hd:][:hd]
			for c := range hd {
				o[c] += a * v[c]
			}
		}
	}
}
