package forward

import (
	"math"
	"slices"

	"github.com/tcforge/tcforge/sdk/model"
)

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
	off, boff := 0, 0 // V rows so far; those in w.v
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
			vb := w.v[boff*T*L:]
			boff += pr.n
			for t := 0; t < T; t++ {
				if w.tp.need != nil && w.tp.need[t] < s.idx-1 {
					continue // no query this sublayer computes reads it
				}
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
			for r := 0; r < pr.n; r++ {
				// Lane by lane in token order, row by row: the same sums.
				sumRows(sum[r*L:][:n], vs.buf, vs.stride, vs.off[r], T)
			}
			sums[vi] = sum
		}
		off += pr.n
	}
	var means [][]F
	if s.probe != nil {
		means = w.probeMeans(sums)
	}
	dst := w.x
	if !s.inPlace {
		dst = w.dlt
		clear(dst)
	}
	static := true
	for hi := range s.heads {
		static = static && s.heads[hi].sc != nil
	}
	if static {
		// Query by query, each head in turn: a head reads no dimension
		// any head writes (or writes to dlt), so this adds to every
		// output dimension what the head-by-head order adds, in the same
		// order, with the query's stream in cache across its heads.
		for i := 0; i < T; i++ {
			if !w.tp.needed(s, i) {
				continue
			}
			for hi := range s.heads {
				w.staticQuery(s, &s.heads[hi], srcs, sums, means, dst, i)
			}
		}
	} else {
		for hi := range s.heads {
			h := &s.heads[hi]
			if h.sc == nil {
				pr := &s.vproj[h.v]
				for l := 0; l < n; l++ {
					w.dynamicHead(s, h, pr, &srcs[h.v], sums[h.v], ir, dst, l)
				}
				continue
			}
			for i := 0; i < T; i++ {
				if w.tp.needed(s, i) {
					w.staticQuery(s, h, srcs, sums, means, dst, i)
				}
			}
		}
	}
	if !s.inPlace {
		if s.residual {
			addVec(w.x, dst)
		} else {
			copy(w.x, dst)
		}
	}
}

// staticQuery adds head h's output for query i, whose scores are the same
// for every lane, to dst.
func (w *worker[F]) staticQuery(s *tsub[F], h *thead[F], srcs []vsrc[F], sums, means [][]F, dst []F, i int) {
	p, L, n := w.p, w.L, w.n
	nv := s.vproj[h.v].n
	vs := &srcs[h.v]
	// One value row into one output dimension: accumulate in place.
	direct := nv == 1 && h.head.o.ptr[1] == 1
	acc := w.acc[:nv*L]
	switch s.mode {
	case model.Hard:
		a, b := h.sel.ptr[i], h.sel.ptr[i+1]
		if a == b {
			return
		}
		if direct {
			gather(dst[(i*p.nd+int(h.head.o.idx[0]))*L:][:n], vs.buf, vs.stride, vs.off[0], h.sel.col[a:b], nil, h.o[0])
			return
		}
		clear(acc)
		for r := 0; r < nv; r++ {
			gather(acc[r*L:][:n], vs.buf, vs.stride, vs.off[r], h.sel.col[a:b], nil, 1)
		}
	case model.Softmax:
		a, b := h.sc.ptr[i], h.sc.ptr[i+1]
		if direct {
			// The output row fused in: d += O·acc as applyO adds it.
			d := dst[(i*p.nd+int(h.head.o.idx[0]))*L:][:n]
			softRow(acc[:n], sums[h.v][:n], vs.buf, vs.stride, vs.off[0], h.sc.col[a:b], h.wp[a:b], h.base[i], h.invZ[i], d, h.o[0])
			if s.probe != nil {
				w.probeAttnOut(h, nv, acc, means[h.v], i)
			}
			return
		}
		for r := 0; r < nv; r++ {
			softRow(acc[r*L:][:n], sums[h.v][r*L:][:n], vs.buf, vs.stride, vs.off[r], h.sc.col[a:b], h.wp[a:b], h.base[i], h.invZ[i], nil, 0)
		}
		if s.probe != nil {
			w.probeAttnOut(h, nv, acc, means[h.v], i)
		}
	}
	w.applyO(h, nv, acc, dst, i)
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
			slices.Sort(touched)
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
