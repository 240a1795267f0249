package forward

import (
	"math"
	"runtime"
	"slices"
	"unsafe"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
)

// worker carries L samples through the model.
type worker[F Float] struct {
	p    *Program
	tp   *typed[F]
	L, n int   // lane capacity, lanes in use
	x    []F   // T × nd × L residual stream (dynamic part)
	dlt  []F   // T × nd × L sublayer output, when not in place
	v    []F   // T × ΣV-rows × L head values
	invr []F   // T × L norm factors
	sums []F   // ΣV-rows × L
	acc  []F   // attention output of one query
	g, h []F   // FFN gate and value per hidden unit × L
	ir   []F   // L norm factors of one token
	live bool  // the static part lives
	exps int64 // SiLU evaluated exactly, lane by lane (siluMul), this pass
	silu *siluCache
	slow []uint8 // per hidden unit: left to Go by ffn32z, ffn64z
	// per-lane scratch of dynamic scores
	sAcc  []float64
	sSeen []bool
	sTch  []int32
	pr    *probeState[F] // Options.ProbeBeta
	// fused blocks (block): the stream a block writes, then x; its heads;
	// the blocks run (tests).
	x2     []F
	ah     []attnHead
	blocks int
}

func newWorker[F Float](p *Program, tp *typed[F], L int, probe bool) *worker[F] {
	w := &worker[F]{p: p, tp: tp, L: L, silu: newSiLUCache()}
	w.x = make([]F, p.T*p.nd*L)
	if p.delta {
		w.dlt = make([]F, p.T*p.nd*L)
	}
	w.v = make([]F, p.T*p.maxVBuf*L)
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
		w.pr = &probeState[F]{x1: make([]F, p.T*p.nd*L), mean: make([]F, p.maxV*L), pg: make([]F, L), pv: make([]F, L),
			gates: make([]F, hid*L), vals: make([]F, hid*L), sat: true,
			t1: make([]float64, L), t2: make([]float64, L),
			c1: make([]float64, p.nd*L), c2: make([]float64, p.nd*L), s1: make([]float64, p.nd*L), s2: make([]float64, p.nd*L)}
	}
	return w
}

// getWorker returns an idle worker of p for lanes L (see Program.idle),
// ready for a pass over tp, or a new one.
func getWorker[F Float](p *Program, tp *typed[F], L int, probe bool) *worker[F] {
	p.idleMu.Lock()
	for i, x := range p.idle {
		w, ok := x.(*worker[F])
		if !ok || w.L != L || probe && w.pr == nil {
			continue
		}
		p.idle = slices.Delete(p.idle, i, i+1)
		p.idleMu.Unlock()
		w.tp, w.exps = tp, 0
		if !probe {
			w.pr = nil // its buffers are not needed
		} else {
			clear(w.pr.x1)
			w.pr.pending, w.pr.beta, w.pr.sat, w.pr.err = nil, 0, true, nil
		}
		return w
	}
	p.idleMu.Unlock()
	return newWorker(p, tp, L, probe)
}

// putWorker keeps w for a later pass of p.
func putWorker[F Float](p *Program, w *worker[F]) {
	w.tp = nil
	p.idleMu.Lock()
	p.idle = append(p.idle, w)
	p.idleMu.Unlock()
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

// ptrOf returns &xs[0], or nil for an empty slice.
func ptrOf[T any](xs []T) unsafe.Pointer {
	if len(xs) == 0 {
		return nil
	}
	return unsafe.Pointer(&xs[0])
}

// ffnKernel runs FFN sublayer s over the tokens it must compute with the
// fused AVX-512 kernels (ffnRun), and the β probe's check after each
// token's units where the pass probes. It returns false, having done
// nothing, where they do not apply (ffnFast).
func (w *worker[F]) ffnKernel(s *tsub[F]) bool {
	if w.pr != nil && w.pr.pending != nil {
		if !w.ffnFast(s, true) {
			return false
		}
		// Token by token: the kernel leaves each unit's gate and value
		// where probeFFN reads them (it reads the stream's λ part x1, not
		// the stream the kernel writes).
		for t := 0; t < w.p.T; t++ {
			w.ffnRun(s, w.x, t, t+1, true)
			w.probeFFN(s, t, w.pr.gates, w.pr.vals)
		}
		return true
	}
	if !w.ffnFast(s, false) {
		return false
	}
	for t0 := 0; t0 < w.p.T; {
		if !w.tp.needed(s, t0) {
			t0++
			continue
		}
		t1 := t0 + 1
		for t1 < w.p.T && w.tp.needed(s, t1) {
			t1++
		}
		w.ffnRun(s, w.x, t0, t1, false)
		t0 = t1
	}
	return true
}

// ffnFast reports whether ffnRun applies to FFN sublayer s: the AVX-512
// kernels over 32 lanes, no norm, some hidden unit; probed (after a
// softmax sublayer of a probed pass) or not, as probe says.
func (w *worker[F]) ffnFast(s *tsub[F], probe bool) bool {
	n := w.n
	return (avx512x32[F](n) || avx512x64[F](n)) && w.L == n && s.norm == nil && s.gate.n > 0 && (w.pr != nil && w.pr.pending != nil) == probe
}

// ffnRun runs FFN sublayer s on tokens t0 … t1−1 of stream x with the
// fused AVX-512 kernels (ffn32z, ffn64z): the same operations, in the same
// order, as the Go path of ffn below; with probe, the last token's gates
// and values are left in the probe's buffers.
func (w *worker[F]) ffnRun(s *tsub[F], x []F, t0, t1 int, probe bool) {
	p, L, n := w.p, w.L, w.n
	nh := s.gate.n
	gp, vp := &s.gate, &s.value
	size := floatSize[F]()
	hi, lo := siluRange[F]()
	if len(w.slow) < nh {
		w.slow = make([]uint8, nh)
	}
	a := ffnArgs{tokBytes: int64(p.nd*L) * size, nh: int64(nh),
		gPtr: ptrOf(gp.dyn.ptr), gIdx: ptrOf(gp.dyn.idx), gW: ptrOf(gp.dynW),
		vPtr: ptrOf(vp.dyn.ptr), vIdx: ptrOf(vp.dyn.idx), vW: ptrOf(vp.dynW),
		oPtr: ptrOf(s.out.ptr), oIdx: ptrOf(s.out.idx), oW: ptrOf(s.outW),
		h: ptrOf(w.h[:nh*L]), g: ptrOf(w.g[:nh*L]), slow: ptrOf(w.slow),
		lo: float64(lo), hi: float64(hi), lo32: float32(lo), hi32: float32(hi)}
	if s.residual {
		a.residual = 1
	}
	if w.live && gp.stat.ptr != nil {
		a.gsPtr, a.gsIdx, a.gsVal = unsafe.Pointer(&gp.stat.ptr[t0]), ptrOf(gp.stat.idx), ptrOf(gp.statVal)
	}
	if w.live && vp.stat.ptr != nil {
		a.vsPtr, a.vsIdx, a.vsVal = unsafe.Pointer(&vp.stat.ptr[t0]), ptrOf(vp.stat.idx), ptrOf(vp.statVal)
	}
	a.x, a.tokens = unsafe.Pointer(&x[t0*p.nd*L]), int64(t1-t0)
	_ = x[t1*p.nd*L-1]
	if probe {
		a.gOut, a.vOut = ptrOf(w.pr.gates[:nh*L]), ptrOf(w.pr.vals[:nh*L])
	}
	for {
		var r int
		if size == 4 {
			r = ffn32z(&a)
		} else {
			r = ffn64z(&a)
		}
		if r == 0 {
			break
		}
		// Units whose SiLU the kernel left: as siluMul does.
		for u, sl := range w.slow[:nh] {
			if sl != 0 {
				w.exps += int64(siluMul(w.h[u*L:][:n], w.g[u*L:][:n], lo, hi, w.silu))
			}
		}
		a.outOnly = 1
	}
	w.exps += a.exps
	runtime.KeepAlive(s)
	runtime.KeepAlive(x)
}

// blockChunk is the queries a fused block runs through its attention
// before their FFN (their streams, 256 × 256 bytes in float32, stay in
// cache between the two).
const blockChunk = 256

// block runs attention sublayer s and the FFN sublayer f after it (fusable,
// Program.fuse) a chunk of tokens at a time: the attention's queries read
// the keys' values from the stream before s, x, and write their streams
// (their own copied, the heads added) into x2, where f then runs on them;
// the two streams then swap. Every value gets the operations, in the same
// order, that the two sublayers one after the other give it, while each
// token's stream is read and written once instead of three times. It
// returns false, having done nothing, where its kernels do not apply.
func (w *worker[F]) block(s, f *tsub[F]) bool {
	p, L, n := w.p, w.L, w.n
	if !(avx512x32[F](n) || avx512x64[F](n)) || L != n || w.pr != nil || !w.ffnFast(f, false) {
		return false
	}
	T, nd := p.T, p.nd
	size := floatSize[F]()
	var sums [][]F
	if s.mode == model.Softmax {
		sums = make([][]F, len(s.vproj))
		off := 0
		for vi := range s.vproj {
			pr := &s.vproj[vi]
			sum := w.sums[off*L : (off+pr.n)*L]
			clear(sum)
			for r, k := range pr.alias {
				sumRows(sum[r*L:][:n], w.x, nd*L, int(k)*L, T)
			}
			sums[vi] = sum
			off += pr.n
		}
	}
	if w.x2 == nil {
		w.x2 = make([]F, len(w.x))
	}
	w.ah = w.ah[:0]
	for hi := range s.heads {
		h := &s.heads[hi]
		ow := h.o[0]
		ah := attnHead{vOff: int64(s.vproj[h.v].alias[0]) * int64(L) * size, oOff: int64(h.head.o.idx[0]) * int64(L) * size,
			ow64: float64(ow), ow32: float32(ow)}
		if s.mode == model.Softmax {
			ah.ptr, ah.cols, ah.wp = ptrOf(h.sc.ptr), ptrOf(h.sc.col), ptrOf(h.wp)
			ah.bs, ah.invZ, ah.sum, ah.soft = ptrOf(h.base), ptrOf(h.invZ), ptrOf(sums[h.v]), 1
		} else {
			ah.ptr, ah.cols = ptrOf(h.sel.ptr), ptrOf(h.sel.col)
		}
		w.ah = append(w.ah, ah)
	}
	tok := nd * L
	for t0 := 0; t0 < T; {
		if !w.tp.needed(s, t0) {
			t0++
			continue
		}
		t1 := min(T, t0+blockChunk)
		for c := t0 + 1; c < t1; c++ {
			if !w.tp.needed(s, c) {
				t1 = c
			}
		}
		a := attnArgs{xOld: unsafe.Pointer(&w.x[0]), xNew: unsafe.Pointer(&w.x2[t0*tok]), xSrc: unsafe.Pointer(&w.x[t0*tok]),
			tokBytes: int64(tok) * size, tokens: int64(t1 - t0), tok: int64(t0), nh: int64(len(w.ah)), heads: unsafe.Pointer(&w.ah[0])}
		if size == 4 {
			attnRun32z(&a)
		} else {
			attnRun64z(&a)
		}
		w.ffnRun(f, w.x2, t0, t1, false)
		t0 = t1
	}
	runtime.KeepAlive(s)
	w.x, w.x2 = w.x2, w.x
	w.blocks++
	if !f.residual {
		w.live = false
	}
	return true
}

func (w *worker[F]) ffn(s *tsub[F]) {
	if w.ffnKernel(s) {
		return
	}
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
		if !w.tp.needed(s, t) {
			continue
		}
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
				w.exps += int64(siluMul(hr, G, lo, hi, w.silu))
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
				w.exps += int64(siluMul(hr, gr, lo, hi, w.silu))
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
