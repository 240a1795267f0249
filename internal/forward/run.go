package forward

import (
	"errors"
	"fmt"
	"github.com/tcforge/tcforge/sdk/model"
	"math"
	"runtime"
	"sync"
	"unsafe"

	"github.com/tcforge/tcforge/sdk/bitvec"
)

// Float is the element type of a forward pass.
type Float interface{ ~float32 | ~float64 }

// Options tune a forward pass.
type Options struct {
	// Float64 runs the pass in float64 (default float32).
	Float64 bool
	// Beta, if > 0, replaces the inverse temperature of every softmax
	// attention sublayer (the weights are unchanged).
	Beta float64
	// Workers is the number of samples batches run at once (default
	// GOMAXPROCS).
	Workers int
	// Lanes is the largest number of samples one worker carries through the
	// model together (default: the samples spread over the workers, at
	// most 32). Memory grows with Workers × Lanes.
	Lanes int
	// KeepValues keeps every readout value in Result.Values.
	KeepValues bool
	// ProbeBeta derives Result.Beta, the smallest softmax β at which the
	// pass's stream is provably unchanged (see BetaBound).
	ProbeBeta bool
}

// Result is the outcome of a forward pass over a list of samples.
type Result struct {
	// Outputs[s] holds the output bits of sample s.
	Outputs []bitvec.Vec
	// Values[s][k] is the raw readout value of output k of sample s (with
	// Options.KeepValues).
	Values [][]float64
	// MinMargin is the smallest |value − threshold| over every readout of
	// every sample (NaN if some value is NaN).
	MinMargin float64
	// WorstSample and WorstOutput locate MinMargin.
	WorstSample, WorstOutput int
	// Beta is the probe's bound (with Options.ProbeBeta).
	Beta *BetaBound
}

// Forward compiles m and runs it on inputs.
func Forward(m *model.Model, inputs []bitvec.Vec, opt Options) (*Result, error) {
	p, err := Compile(m)
	if err != nil {
		return nil, err
	}
	return p.Run(inputs, opt)
}

// Model returns the compiled model.
func (p *Plan) Model() *model.Model { return p.m }

// Run evaluates the model on every input vector (bit b of inputs[s] is
// input bit b of sample s).
func (p *Plan) Run(inputs []bitvec.Vec, opt Options) (*Result, error) {
	for s, v := range inputs {
		if len(v)*64 < p.nIn {
			return nil, fmt.Errorf("model: sample %d has %d bits, the model reads %d", s, len(v)*64, p.nIn)
		}
	}
	if opt.Beta < 0 || math.IsNaN(opt.Beta) || math.IsInf(opt.Beta, 0) {
		return nil, fmt.Errorf("model: bad β override %v", opt.Beta)
	}
	if p.stock != nil && opt.Float64 {
		return stockRun[float64](p.stock, inputs, opt)
	}
	if p.stock != nil {
		return stockRun[float32](p.stock, inputs, opt)
	}
	if opt.Float64 {
		return run[float64](p, inputs, opt)
	}
	return run[float32](p, inputs, opt)
}

// typed holds the plan's weights converted to F, and the softmax weights
// for the pass's temperatures.
type typed[F Float] struct {
	subs []tsub[F]
	stSq []F
}

type tproj[F Float] struct {
	*proj
	dynW    []F
	statVal []F
}

type thead[F Float] struct {
	*head
	o    []F
	wp   []F // softmax: e^{β(s−m)} − e^{−βm} per score
	base []F // softmax: e^{−βm} per query
	invZ []F // softmax: 1/Z per query
}

type tsub[F Float] struct {
	*sublayer
	gDyn        []F // norm weight per dynamic index
	beta        float64
	vproj       []tproj[F]
	heads       []thead[F]
	gate, value tproj[F]
	outW        []F
	probe       *probeSub // softmax sublayer under Options.ProbeBeta
}

func conv[F Float](xs []float64) []F {
	if xs == nil {
		return nil
	}
	out := make([]F, len(xs))
	for i, x := range xs {
		out[i] = F(x)
	}
	return out
}

func typeProj[F Float](pr *proj) tproj[F] {
	if pr == nil {
		return tproj[F]{}
	}
	return tproj[F]{proj: pr, dynW: conv[F](pr.dyn.val), statVal: conv[F](pr.stat.val)}
}

func makeTyped[F Float](p *Plan, opt Options) (*typed[F], error) {
	tp := &typed[F]{stSq: conv[F](p.stSq)}
	projs := map[*proj]tproj[F]{}
	typeProj := func(pr *proj) tproj[F] {
		if pr == nil {
			return tproj[F]{}
		}
		t, ok := projs[pr]
		if !ok {
			t = typeProj[F](pr)
			projs[pr] = t
		}
		return t
	}
	type softKey struct {
		sc   *scoreMat
		beta float64
	}
	type softVal struct{ wp, base, invZ []F }
	softCache := map[softKey]softVal{}
	for _, s := range p.subs {
		ts := tsub[F]{sublayer: s, beta: s.beta}
		if opt.Beta > 0 {
			ts.beta = opt.Beta
		}
		if s.norm != nil {
			ts.gDyn = make([]F, p.nd)
			for k, c := range p.dyn {
				ts.gDyn[k] = F(s.norm.g[c])
			}
		}
		if s.attn {
			for _, v := range s.vproj {
				ts.vproj = append(ts.vproj, typeProj(v))
			}
			for _, h := range s.heads {
				th := thead[F]{head: h, o: conv[F](h.o.val)}
				if s.mode == model.Softmax && h.sc != nil {
					key := softKey{h.sc, ts.beta}
					c, ok := softCache[key]
					if !ok {
						c.wp, c.base, c.invZ = softWeights[F](h.sc, p.T, ts.beta)
						softCache[key] = c
					}
					th.wp, th.base, th.invZ = c.wp, c.base, c.invZ
				}
				ts.heads = append(ts.heads, th)
			}
			if opt.ProbeBeta && s.mode == model.Softmax {
				ps, err := probePlan(s, p.T, ts.beta)
				if err != nil {
					return nil, err
				}
				ts.probe = ps
			}
		} else {
			ts.gate, ts.value = typeProj(s.gate), typeProj(s.value)
			ts.outW = conv[F](s.out.val)
		}
		tp.subs = append(tp.subs, ts)
	}
	if opt.ProbeBeta {
		for i, ts := range tp.subs {
			if ts.probe == nil {
				continue
			}
			if i+1 == len(tp.subs) || tp.subs[i+1].attn {
				return nil, fmt.Errorf("sublayer %d: softmax attention not followed by an FFN", i)
			}
			if f := tp.subs[i+1]; f.norm != nil || !f.residual {
				return nil, fmt.Errorf("sublayer %d: the FFN after softmax attention has a norm or no residual", i+1)
			}
		}
	}
	return tp, nil
}

// softWeights precomputes, for a lane-independent score matrix and β, the
// terms of Σ_j e^{β s_ij} v_j / Z_i in the stable, O(nonzeros) form
//
//	m_i = max(s_ij over stored j, and 0 if some scores are implicit zeros)
//	out_i = (Σ_stored (e^{β(s_ij−m_i)} − e^{−βm_i}) v_j + e^{−βm_i} Σ_all v_j) / Z_i
//	Z_i  = Σ_stored e^{β(s_ij−m_i)} + (T − stored_i) e^{−βm_i}.
func softWeights[F Float](sc *scoreMat, T int, beta float64) (wp, base, invZ []F) {
	wp = make([]F, len(sc.s))
	base = make([]F, T)
	invZ = make([]F, T)
	for i := 0; i < T; i++ {
		a, b := sc.ptr[i], sc.ptr[i+1]
		implicit := T - int(b-a)
		m := math.Inf(-1)
		if implicit > 0 {
			m = 0
		}
		for e := a; e < b; e++ {
			m = math.Max(m, sc.s[e])
		}
		bs := 0.0 // no implicit zeros: no base term (it would only cancel)
		if implicit > 0 {
			bs = math.Exp(-beta * m)
		}
		z := float64(implicit) * bs
		for e := a; e < b; e++ {
			w := math.Exp(beta * (sc.s[e] - m))
			z += w
			wp[e] = F(w - bs)
		}
		base[i] = F(bs)
		invZ[i] = F(1 / z)
	}
	return wp, base, invZ
}

func run[F Float](p *Plan, inputs []bitvec.Vec, opt Options) (*Result, error) {
	n := len(inputs)
	res := &Result{Outputs: make([]bitvec.Vec, n), MinMargin: math.Inf(1), WorstSample: -1, WorstOutput: -1}
	if opt.KeepValues {
		res.Values = make([][]float64, n)
	}
	if n == 0 {
		return res, nil
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	lanes := opt.Lanes
	if lanes <= 0 {
		lanes = min(32, (n+workers-1)/workers)
	}
	lanes = max(1, min(lanes, n))
	batches := (n + lanes - 1) / lanes
	workers = min(workers, batches)
	tp, perr := makeTyped[F](p, opt)
	if perr != nil {
		// The probe does not apply: the pass runs without it.
		res.Beta = &BetaBound{Reason: perr.Error()}
		opt.ProbeBeta = false
		tp, _ = makeTyped[F](p, opt)
	}
	if opt.ProbeBeta {
		res.Beta = &BetaBound{Supported: true, Saturated: true}
	}

	type margin struct {
		m    float64
		s, k int
	}
	var (
		mu    sync.Mutex
		worst = margin{m: math.Inf(1), s: -1, k: -1}
		errs  []error
	)
	next := make(chan int, batches)
	for b := 0; b < batches; b++ {
		next <- b
	}
	close(next)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("model: forward pass panicked: %v", r))
					mu.Unlock()
				}
			}()
			w := newWorker(p, tp, lanes, opt.ProbeBeta)
			defer func() {
				if !opt.ProbeBeta {
					return
				}
				mu.Lock()
				defer mu.Unlock()
				bb := res.Beta
				if w.pr.err != nil && bb.Supported {
					*bb = BetaBound{Reason: w.pr.err.Error()}
				}
				if bb.Supported {
					bb.Min = max(bb.Min, w.pr.beta)
					bb.Saturated = bb.Saturated && w.pr.sat
				}
			}()
			for b := range next {
				lo := b * lanes
				hi := min(n, lo+lanes)
				w.load(inputs[lo:hi])
				for i := range tp.subs {
					w.sublayer(&tp.subs[i])
				}
				local := margin{m: math.Inf(1), s: -1, k: -1}
				for l := 0; l < hi-lo; l++ {
					out := bitvec.NewVec(len(p.outTok))
					var vals []float64
					if opt.KeepValues {
						vals = make([]float64, len(p.outTok))
					}
					for k := range p.outTok {
						v := w.readout(k, l)
						if vals != nil {
							vals[k] = v
						}
						if v >= p.outThr[k] {
							out.Set(k, 1)
						}
						mg := math.Abs(v - p.outThr[k])
						if math.IsNaN(mg) {
							if !math.IsNaN(local.m) {
								local = margin{m: mg, s: lo + l, k: k}
							}
						} else if mg < local.m {
							local = margin{m: mg, s: lo + l, k: k}
						}
					}
					res.Outputs[lo+l] = out
					if vals != nil {
						res.Values[lo+l] = vals
					}
				}
				mu.Lock()
				if math.IsNaN(local.m) && !math.IsNaN(worst.m) || local.m < worst.m {
					worst = local
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	res.MinMargin, res.WorstSample, res.WorstOutput = worst.m, worst.s, worst.k
	return res, nil
}

// worker carries L samples through the model.
type worker[F Float] struct {
	p    *Plan
	tp   *typed[F]
	L, n int  // lane capacity, lanes in use
	x    []F  // T × nd × L residual stream (dynamic part)
	dlt  []F  // T × nd × L sublayer output, when not in place
	v    []F  // T × ΣV-rows × L head values
	invr []F  // T × L norm factors
	sums []F  // ΣV-rows × L
	acc  []F  // attention output of one query
	g, h []F  // FFN gate and value per hidden unit × L
	ir   []F  // L norm factors of one token
	live bool // the static part lives
	// per-lane scratch of dynamic scores
	sAcc  []float64
	sSeen []bool
	sTch  []int32
	pr    *probeState[F] // Options.ProbeBeta
}

func newWorker[F Float](p *Plan, tp *typed[F], L int, probe bool) *worker[F] {
	w := &worker[F]{p: p, tp: tp, L: L}
	w.x = make([]F, p.T*p.nd*L)
	if p.delta {
		w.dlt = make([]F, p.T*p.nd*L)
	}
	w.v = make([]F, p.T*p.maxV*L)
	w.sums = make([]F, p.maxV*L)
	hid := 0
	norm := false
	for _, s := range p.subs {
		if !s.attn {
			hid = max(hid, s.gate.n)
		}
		norm = norm || s.norm != nil
	}
	if norm {
		w.invr = make([]F, p.T*L)
	}
	w.acc = make([]F, max(1, p.maxV)*L)
	w.g = make([]F, hid*L)
	w.h = make([]F, hid*L)
	w.ir = make([]F, L)
	if probe {
		w.pr = &probeState[F]{x1: make([]F, p.T*p.nd*L), pg: make([]F, L), pv: make([]F, L),
			gates: make([]F, hid*L), vals: make([]F, hid*L), sat: true,
			c1: make([]float64, p.nd*L), c2: make([]float64, p.nd*L), s1: make([]float64, p.nd*L), s2: make([]float64, p.nd*L)}
	}
	return w
}

// load sets the residual stream to the embedding of the samples.
func (w *worker[F]) load(in []bitvec.Vec) {
	p, L := w.p, w.L
	w.n = len(in)
	clear(w.x)
	w.live = true
	for t := 0; t < p.T; t++ {
		ks, vs := p.init.row(t)
		for e, k := range ks {
			row := w.x[(t*p.nd+int(k))*L:][:w.n]
			for l := range row {
				row[l] += F(vs[e])
			}
		}
	}
	for b := 0; b < p.nIn; b++ {
		ks, vs := p.in.row(b)
		if len(ks) == 0 {
			continue
		}
		t := int(p.inTok[b])
		for l, s := range in {
			if s.Get(b) == 0 {
				continue
			}
			for e, k := range ks {
				w.x[(t*p.nd+int(k))*L+l] += F(vs[e])
			}
		}
	}
}

// readout returns output k of lane l.
func (w *worker[F]) readout(k, l int) float64 {
	p := w.p
	if d := p.outDyn[k]; d >= 0 {
		return float64(w.x[(int(p.outTok[k])*p.nd+int(d))*w.L+l])
	}
	if p.stLive {
		return p.outStat[k]
	}
	return 0
}

func (w *worker[F]) sublayer(s *tsub[F]) {
	if s.attn {
		w.attention(s)
		if s.probe != nil {
			w.pr.pending = s.probe
		}
	} else {
		w.ffn(s)
		if w.pr != nil {
			w.pr.pending = nil
		}
	}
	if !s.residual {
		w.live = false
	}
}

// normFactors computes 1/sqrt(mean(x²)+ε) of token t for each lane into ir.
func (w *worker[F]) normFactors(s *tsub[F], t int, ir []F) {
	p, L := w.p, w.L
	var st F
	if s.stIn {
		st = w.tp.stSq[t]
	}
	for l := 0; l < w.n; l++ {
		ir[l] = st
	}
	xt := w.x[t*p.nd*L : (t+1)*p.nd*L]
	for k := 0; k < p.nd; k++ {
		row := xt[k*L : k*L+w.n]
		for l, x := range row {
			ir[l] += x * x
		}
	}
	d, eps := F(p.d), F(s.norm.eps)
	for l := 0; l < w.n; l++ {
		ir[l] = F(1 / math.Sqrt(float64(ir[l]/d+eps)))
	}
}

// project computes rows of pr for token t into out (rows × L), scaled by
// ir if the sublayer normalises.
func (w *worker[F]) project(pr *tproj[F], t int, ir []F, out []F) {
	p, L, n := w.p, w.L, w.n
	out = out[:pr.n*L]
	clear(out)
	if pr.stat.ptr != nil && w.live {
		a, b := pr.stat.ptr[t], pr.stat.ptr[t+1]
		for e := a; e < b; e++ {
			row := out[int(pr.stat.idx[e])*L:][:n]
			v := pr.statVal[e]
			for l := range row {
				row[l] = v
			}
		}
	}
	xt := w.x[t*p.nd*L : (t+1)*p.nd*L]
	for u := 0; u < pr.n; u++ {
		a, b := pr.dyn.ptr[u], pr.dyn.ptr[u+1]
		if a == b {
			continue
		}
		row := out[u*L:][:n]
		for e := a; e < b; e++ {
			wt := pr.dynW[e]
			xs := xt[int(pr.dyn.idx[e])*L:][:n]
			for l, x := range xs {
				row[l] += wt * x
			}
		}
	}
	if ir != nil {
		for u := 0; u < pr.n; u++ {
			row := out[u*L:][:n]
			for l := range row {
				row[l] *= ir[l]
			}
		}
	}
}

// siluRange returns the arguments beyond which SiLU in F is exactly the
// identity (x ≥ hi) or 0 (x ≤ lo).
func siluRange[F Float]() (hi, lo F) {
	var x F
	if unsafe.Sizeof(x) == 4 {
		return 17, -89
	}
	return 38, -745
}

// lanes sets dst (one lane per sample) to (c + Σ dynamic entries of row u
// of pr)·ir.
func (w *worker[F]) lanes(pr *tproj[F], u int, c F, xt, ir, dst []F) {
	L := w.L
	a, b := pr.dyn.ptr[u], pr.dyn.ptr[u+1]
	if a == b {
		for l := range dst {
			dst[l] = c
		}
	} else {
		fill(dst, xt[int(pr.dyn.idx[a])*L:], c, pr.dynW[a])
		for e := a + 1; e < b; e++ {
			axpy(dst, xt[int(pr.dyn.idx[e])*L:], pr.dynW[e])
		}
	}
	if ir != nil {
		ir := ir[:len(dst)]
		for l := range dst {
			dst[l] *= ir[l]
		}
	}
}

func (w *worker[F]) ffn(s *tsub[F]) {
	p, L, n := w.p, w.L, w.n
	nh := s.gate.n
	var ir []F
	if s.norm != nil {
		ir = w.ir[:n]
	}
	gp, vp := &s.gate, &s.value
	gStat := w.live && gp.stat.ptr != nil
	vStat := w.live && vp.stat.ptr != nil
	hi, lo := siluRange[F]()
	gr := w.g[:n]
	for t := 0; t < p.T; t++ {
		if ir != nil {
			w.normFactors(s, t, ir)
		}
		xt := w.x[t*p.nd*L : (t+1)*p.nd*L]
		var gi, ge, vi, ve int32
		if gStat {
			gi, ge = gp.stat.ptr[t], gp.stat.ptr[t+1]
		}
		if vStat {
			vi, ve = vp.stat.ptr[t], vp.stat.ptr[t+1]
		}
		h := w.h[:nh*L]
		probing := w.pr != nil && w.pr.pending != nil
		for u := 0; u < nh; u++ {
			var gc, vc F
			if gi < ge && gp.stat.idx[gi] == int32(u) {
				gc = gp.statVal[gi]
				gi++
			}
			if vi < ve && vp.stat.idx[vi] == int32(u) {
				vc = vp.statVal[vi]
				vi++
			}
			hr := h[u*L:][:n]
			if probing {
				G, V := w.pr.gates[u*L:][:n], w.pr.vals[u*L:][:n]
				w.lanes(gp, u, gc, xt, nil, G)
				w.lanes(vp, u, vc, xt, nil, V)
				copy(hr, V)
				siluMul(hr, G, lo, hi)
				continue
			}
			gDyn := ir != nil || gp.isDyn[u]
			vDyn := ir != nil || vp.isDyn[u]
			switch {
			case !gDyn && !vDyn:
				hv := silu(gc) * vc
				for l := range hr {
					hr[l] = hv
				}
			case !gDyn:
				w.lanes(vp, u, vc, xt, ir, hr)
				scale(hr, silu(gc))
			default:
				w.lanes(gp, u, gc, xt, ir, gr)
				if vDyn {
					w.lanes(vp, u, vc, xt, ir, hr)
				} else {
					for l := range hr {
						hr[l] = vc
					}
				}
				siluMul(hr, gr, lo, hi)
			}
		}
		if probing {
			w.probeFFN(s, t, w.pr.gates, w.pr.vals)
		}
		if !s.residual {
			clear(xt)
		}
		for u := 0; u < nh; u++ {
			a, b := s.out.ptr[u], s.out.ptr[u+1]
			hr := h[u*L:][:n]
			for e := a; e < b; e++ {
				axpy(xt[int(s.out.idx[e])*L:][:n], hr, s.outW[e])
			}
		}
	}
}

// vsrc locates the values of a V projection: row r of token j is
// buf[j*stride+off[r]:][:lanes].
type vsrc[F Float] struct {
	buf    []F
	stride int
	off    []int
}

func (v *vsrc[F]) row(j, r, n int) []F { return v.buf[j*v.stride+v.off[r]:][:n] }

func (w *worker[F]) attention(s *tsub[F]) {
	p, L, n := w.p, w.L, w.n
	T := p.T
	var ir []F
	if s.norm != nil {
		ir = w.invr
		for t := 0; t < T; t++ {
			w.normFactors(s, t, ir[t*L:(t+1)*L])
		}
	}
	// Values of every token for each V projection — read in place from the
	// stream when a row is one dynamic dimension — and their sums.
	srcs := make([]vsrc[F], len(s.vproj))
	sums := make([][]F, len(s.vproj))
	off := 0
	for vi := range s.vproj {
		pr := &s.vproj[vi]
		nl := pr.n * L
		if pr.alias != nil {
			vs := vsrc[F]{buf: w.x, stride: p.nd * L, off: make([]int, pr.n)}
			for r, k := range pr.alias {
				vs.off[r] = int(k) * L
			}
			srcs[vi] = vs
		} else {
			vb := w.v[off*T*L:]
			for t := 0; t < T; t++ {
				var irt []F
				if ir != nil {
					irt = ir[t*L : (t+1)*L]
				}
				w.project(pr, t, irt, vb[t*nl:(t+1)*nl])
			}
			vs := vsrc[F]{buf: vb, stride: nl, off: make([]int, pr.n)}
			for r := range vs.off {
				vs.off[r] = r * L
			}
			srcs[vi] = vs
		}
		if s.mode == model.Softmax {
			sum := w.sums[off*L : off*L+nl]
			clear(sum)
			vs := &srcs[vi]
			for t := 0; t < T; t++ {
				for r := 0; r < pr.n; r++ {
					row := vs.row(t, r, n)
					sr := sum[r*L:][:n]
					for l, x := range row {
						sr[l] += x
					}
				}
			}
			sums[vi] = sum
		}
		off += pr.n
	}
	dst := w.x
	if !s.inPlace {
		dst = w.dlt
		clear(dst)
	}
	for hi := range s.heads {
		h := &s.heads[hi]
		pr := &s.vproj[h.v]
		nv := pr.n
		vs := &srcs[h.v]
		if h.sc == nil {
			for l := 0; l < n; l++ {
				w.dynamicHead(s, h, pr, vs, sums[h.v], ir, dst, l)
			}
			continue
		}
		// One value row into one output dimension: accumulate in place.
		direct := nv == 1 && h.head.o.ptr[1] == 1
		var dk int
		var dw F
		if direct {
			dk, dw = int(h.head.o.idx[0]), h.o[0]
		}
		acc := w.acc[:nv*L]
		for i := 0; i < T; i++ {
			switch s.mode {
			case model.Hard:
				a, b := h.sel.ptr[i], h.sel.ptr[i+1]
				if a == b {
					continue
				}
				if direct {
					gather(dst[(i*p.nd+dk)*L:][:n], vs.buf, vs.stride, vs.off[0], h.sel.col[a:b], nil, dw)
					continue
				}
				clear(acc)
				for r := 0; r < nv; r++ {
					gather(acc[r*L:][:n], vs.buf, vs.stride, vs.off[r], h.sel.col[a:b], nil, 1)
				}
			case model.Softmax:
				bs := h.base[i]
				for r := 0; r < nv; r++ {
					ar, sr := acc[r*L:][:n], sums[h.v][r*L:][:n]
					for l, x := range sr {
						ar[l] = bs * x
					}
				}
				a, b := h.sc.ptr[i], h.sc.ptr[i+1]
				for r := 0; r < nv; r++ {
					gather(acc[r*L:][:n], vs.buf, vs.stride, vs.off[r], h.sc.col[a:b], h.wp[a:b], 0)
				}
				for r := 0; r < nv; r++ {
					scale(acc[r*L:][:n], h.invZ[i])
				}
				if s.probe != nil {
					w.probeAttnOut(h, nv, acc, sums[h.v], i)
				}
			}
			w.applyO(h, nv, acc, dst, i)
		}
	}
	if !s.inPlace {
		if s.residual {
			for k, d := range dst {
				w.x[k] += d
			}
		} else {
			copy(w.x, dst)
		}
	}
}

// applyO adds O·acc (acc: V rows × L) to token i of dst.
func (w *worker[F]) applyO(h *thead[F], nv int, acc, dst []F, i int) {
	p, L, n := w.p, w.L, w.n
	dt := dst[i*p.nd*L : (i+1)*p.nd*L]
	for r := 0; r < nv; r++ {
		a, b := h.head.o.ptr[r], h.head.o.ptr[r+1]
		ar := acc[r*L:][:n]
		for e := a; e < b; e++ {
			axpy(dt[int(h.head.o.idx[e])*L:][:n], ar, h.o[e])
		}
	}
}

// dynamicHead evaluates a head whose scores depend on the sample, for lane
// l: q_i and k_j are projected for every token, scores are formed through
// an inverted index of the keys, and the head's output for every query is
// added to dst.
func (w *worker[F]) dynamicHead(s *tsub[F], h *thead[F], pr *tproj[F], vs *vsrc[F], sum, ir, dst []F, l int) {
	p, L := w.p, w.L
	T := p.T
	q, k := h.head.q, h.head.k
	nr := q.n
	// Sparse per-lane projections of every token.
	vecs := func(pj *proj) csr {
		tpj := typeProj[float64](pj)
		out := csr{ptr: make([]int32, T+1)}
		val := make([]float64, nr)
		seen := make([]bool, nr)
		var touched []int32
		xs := make([]F, p.nd)
		for t := 0; t < T; t++ {
			for d := 0; d < p.nd; d++ {
				xs[d] = w.x[(t*p.nd+d)*L+l]
			}
			scale := 1.0
			if ir != nil {
				scale = float64(ir[t*L+l])
			}
			add := func(u int32, v float64) {
				if !seen[u] {
					seen[u] = true
					touched = append(touched, u)
				}
				val[u] += v
			}
			if pj.stat.ptr != nil && w.live {
				us, vs := pj.stat.row(t)
				for e, u := range us {
					add(u, vs[e])
				}
			}
			for u := 0; u < nr; u++ {
				a, b := pj.dyn.ptr[u], pj.dyn.ptr[u+1]
				for e := a; e < b; e++ {
					add(int32(u), tpj.dynW[e]*float64(xs[pj.dyn.idx[e]]))
				}
			}
			sortInt32(touched)
			for _, u := range touched {
				if v := val[u] * scale; v != 0 {
					out.idx = append(out.idx, u)
					out.val = append(out.val, v)
				}
				val[u], seen[u] = 0, false
			}
			touched = touched[:0]
			out.ptr[t+1] = int32(len(out.idx))
		}
		return out
	}
	qs, ks := vecs(q), vecs(k)
	// Inverted index of the keys: row → (token, value).
	inv := csr{ptr: make([]int32, nr+1)}
	for _, u := range ks.idx {
		inv.ptr[u+1]++
	}
	for u := 0; u < nr; u++ {
		inv.ptr[u+1] += inv.ptr[u]
	}
	next := append([]int32(nil), inv.ptr[:nr]...)
	inv.idx = make([]int32, len(ks.idx))
	inv.val = make([]float64, len(ks.idx))
	for j := 0; j < T; j++ {
		us, vs := ks.row(j)
		for e, u := range us {
			c := next[u]
			next[u]++
			inv.idx[c], inv.val[c] = int32(j), vs[e]
		}
	}
	if len(w.sAcc) < T {
		w.sAcc, w.sSeen = make([]float64, T), make([]bool, T)
	}
	nv := pr.n
	acc := make([]float64, nv)
	for i := 0; i < T; i++ {
		us, qv := qs.row(i)
		for e, u := range us {
			js, kv := inv.row(int(u))
			for f, j := range js {
				if !w.sSeen[j] {
					w.sSeen[j] = true
					w.sTch = append(w.sTch, j)
				}
				w.sAcc[j] += qv[e] * kv[f]
			}
		}
		clear(acc)
		switch s.mode {
		case model.Hard:
			for _, j := range w.sTch {
				if d := w.sAcc[j] - 1; d <= model.HardTol && d >= -model.HardTol {
					for r := 0; r < nv; r++ {
						acc[r] += float64(vs.row(int(j), r, l+1)[l])
					}
				}
			}
		case model.Softmax:
			beta := s.beta
			implicit := T
			m := math.Inf(-1)
			for _, j := range w.sTch {
				if w.sAcc[j] != 0 {
					implicit--
					m = math.Max(m, w.sAcc[j])
				}
			}
			if implicit > 0 {
				m = math.Max(m, 0)
			}
			bs := 0.0
			if implicit > 0 {
				bs = math.Exp(-beta * m)
			}
			z := float64(implicit) * bs
			for r := 0; r < nv; r++ {
				acc[r] = bs * float64(sum[r*L+l])
			}
			for _, j := range w.sTch {
				sj := w.sAcc[j]
				if sj == 0 {
					continue
				}
				e := math.Exp(beta * (sj - m))
				z += e
				for r := 0; r < nv; r++ {
					acc[r] += (e - bs) * float64(vs.row(int(j), r, l+1)[l])
				}
			}
			for r := range acc {
				acc[r] /= z
			}
		}
		for _, j := range w.sTch {
			w.sAcc[j], w.sSeen[j] = 0, false
		}
		w.sTch = w.sTch[:0]
		// O·acc into lane l of token i.
		dt := dst[i*p.nd*L : (i+1)*p.nd*L]
		for r := 0; r < nv; r++ {
			a, b := h.head.o.ptr[r], h.head.o.ptr[r+1]
			for e := a; e < b; e++ {
				dt[int(h.head.o.idx[e])*L+l] += h.o[e] * F(acc[r])
			}
		}
	}
}

func sortInt32(xs []int32) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

// silu is x·σ(x) = x / (1 + e^{−x}), evaluated in float64 and rounded to F,
// with the shortcuts that give the same value in F: for large x the
// denominator rounds to 1, for very negative x the result underflows
// (float32) or e^{−x} overflows.
func silu[F Float](x F) F {
	if unsafe.Sizeof(x) == 4 {
		if x >= 17 {
			return x
		}
		if x <= -89 {
			return 0
		}
	} else {
		if x >= 38 {
			return x
		}
		if x <= -745 {
			return 0
		}
	}
	v := float64(x)
	return F(v / (1 + math.Exp(-v)))
}
