package forward

import (
	"fmt"
	"math"
)

// BetaBound is what a probed forward pass (Options.ProbeBeta) derives about
// the inverse temperature of its softmax attention: the smallest β at which
// the pass's residual stream — and so every readout — is provably the same
// as at the pass's own β. docs/mappers.md ("β_min in one pass") has the
// derivation.
type BetaBound struct {
	// Supported reports whether the model has the shape the bound needs;
	// Reason says why not.
	Supported bool
	Reason    string
	// Min is the smallest β down to which every FFN unit whose input
	// depends on the attention weights stays in the region where SiLU is
	// exactly the identity or exactly 0 (in exact arithmetic), and the FFN
	// cancels that dependence; at most the pass's β.
	Min float64
	// Saturated reports whether, at the pass's own β, every such unit was
	// in its exact region (false: Min is the pass's β).
	Saturated bool
}

// probeTol is the relative tolerance of the cancellation checks: the
// identities hold in exact arithmetic, the pass computes them in F.
const probeTol = 1e-4

// probeHead holds, per query of a softmax sublayer with lane-independent
// two-level scores, the mass λ_i = e·n_i/(e·n_i + T), e = e^{β m_i} − 1, of
// its n_i top keys (score m_i > 0; every other score is 0) at the pass's β.
type probeSub struct {
	n   []int32
	m   []float64
	lam []float64
}

// prepareProbe checks that the probe applies to sublayer s (a softmax
// attention sublayer) and returns its per-query masses at β.
func prepareProbe(s *sublayer, T int, beta float64) (*probeSub, error) {
	ps := &probeSub{n: make([]int32, T), m: make([]float64, T), lam: make([]float64, T)}
	for hi, h := range s.heads {
		if h.sc == nil {
			return nil, fmt.Errorf("head %d's scores depend on the sample", hi)
		}
		for i := 0; i < T; i++ {
			a, b := h.sc.ptr[i], h.sc.ptr[i+1]
			if a == b {
				continue // output Σ_all v / T whatever β is
			}
			if int(b-a) == T {
				return nil, fmt.Errorf("head %d, query %d: every score is stored (no zero level)", hi, i)
			}
			m := h.sc.s[a]
			for e := a; e < b; e++ {
				if h.sc.s[e] != m {
					return nil, fmt.Errorf("head %d, query %d: stored scores differ (%v, %v)", hi, i, m, h.sc.s[e])
				}
			}
			if m <= 0 {
				return nil, fmt.Errorf("head %d, query %d: top score %v is not above the zero level", hi, i, m)
			}
			if ps.n[i] == 0 {
				ps.n[i], ps.m[i] = b-a, m
			} else if ps.n[i] != b-a || ps.m[i] != m {
				return nil, fmt.Errorf("query %d: heads differ in top keys or score (%d×%v, %d×%v)", i, ps.n[i], ps.m[i], b-a, m)
			}
		}
	}
	for i := 0; i < T; i++ {
		if ps.n[i] > 0 {
			e := math.Expm1(beta * ps.m[i])
			ps.lam[i] = e * float64(ps.n[i]) / (e*float64(ps.n[i]) + float64(T))
		}
	}
	return ps, nil
}

// betaAt returns the β at which query i's top mass is lam.
func (ps *probeSub) betaAt(i int, lam float64, T int) float64 {
	if lam <= 0 {
		return 0
	}
	e := lam * float64(T) / (float64(ps.n[i]) * (1 - lam))
	return math.Log1p(e) / ps.m[i]
}

// probeState is a worker's record of the probe.
type probeState[F Float] struct {
	x1      []F       // T × nd × L: the λ-proportional part of the last softmax sublayer's output
	mean    []F       // ΣV-rows × L: Σ_all v / T of the sublayer's V rows (probeMeans)
	pending *probeSub // x1 holds a softmax sublayer's part not yet cancelled by an FFN
	pg, pv  []F       // L: the gate and value projections of x1 for one unit
	gates   []F       // hidden × L: a token's gate pre-activations
	vals    []F       // hidden × L: a token's value projections
	c1, c2  []float64 // nd × L: coefficients of δ and δ² in a token's FFN output
	s1, s2  []float64 // nd × L: their scales (Σ |terms|)
	t1, t2  []float64 // L: one unit's coefficients of δ and δ²
	beta    float64   // the bound so far
	sat     bool
	err     error
}

func (w *worker[F]) probeFail(err error) {
	if w.pr.err == nil {
		w.pr.err = err
	}
}

// probeAttnOut adds O·(acc − Σ_all v / T) of query i to x1: the part of
// the head's output proportional to λ_i. mean holds Σ_all v / T (V rows ×
// L, probeMeans).
func (w *worker[F]) probeAttnOut(h *thead[F], nv int, acc, mean []F, i int) {
	p, L, n := w.p, w.L, w.n
	dt := w.pr.x1[i*p.nd*L : (i+1)*p.nd*L]
	for r := 0; r < nv; r++ {
		a, b := h.head.o.ptr[r], h.head.o.ptr[r+1]
		ar, mr := acc[r*L:][:n], mean[r*L:][:n]
		for e := a; e < b; e++ {
			d := dt[int(h.head.o.idx[e])*L:][:n]
			wt := h.o[e]
			if avx32[F](n) {
				probeO32(f32(d), f32(ar), f32(mr), float32(wt))
				continue
			}
			for l := range d {
				d[l] += wt * (ar[l] - mr[l])
			}
		}
	}
}

// probeMeans returns Σ_all v / T for the V sums of a softmax sublayer
// (rows × L), once a sublayer instead of once a query.
func (w *worker[F]) probeMeans(sums [][]F) [][]F {
	T := F(w.p.T)
	means := make([][]F, len(sums))
	off := 0
	for vi, sum := range sums {
		m := w.pr.mean[off : off+len(sum)]
		off += len(sum)
		for l, x := range sum {
			m[l] = x / T
		}
		means[vi] = m
	}
	return means
}

// probeFFN runs after the FFN of token t computed its hidden units: it
// bounds δ = λ/λ₀ − 1 from below so that every unit stays in its exact
// SiLU region and checks that the FFN's output cancels the attention's
// λ-dependence, then clears x1 of token t.
func (w *worker[F]) probeFFN(s *tsub[F], t int, gates, vconst []F) {
	p, L, n := w.p, w.L, w.n
	ps := w.pr.pending
	x1t := w.pr.x1[t*p.nd*L : (t+1)*p.nd*L]
	if ps.n[t] == 0 {
		for _, x := range x1t {
			if x != 0 {
				w.probeFail(fmt.Errorf("token %d has no top keys but depends on β", t))
				return
			}
		}
		return
	}
	hi, lo := siluRange[F]()
	nh := s.gate.n
	nd := p.nd
	fast := avx32[F](n) // the assembly kernels, the same arithmetic
	c1, c2, s1, s2 := w.pr.c1[:nd*L], w.pr.c2[:nd*L], w.pr.s1[:nd*L], w.pr.s2[:nd*L]
	for k := 0; k < nd; k++ {
		xs := x1t[k*L:][:n]
		c1k, s1k := c1[k*L:][:n], s1[k*L:][:n]
		if fast {
			probeInit64(&c1k[0], &s1k[0], f32(xs))
		} else {
			for l, x := range xs {
				v := float64(x)
				c1k[l], s1k[l] = v, math.Abs(v)
			}
		}
		clear(c2[k*L:][:n])
		clear(s2[k*L:][:n])
	}
	delta := -1.0
	pg, pv := w.pr.pg[:n], w.pr.pv[:n]
	t1s, t2s := w.pr.t1[:n], w.pr.t2[:n]
	var dmax [4]float64
	for u := 0; u < nh; u++ {
		w.lanes(&s.gate, u, 0, x1t, nil, pg)
		w.lanes(&s.value, u, 0, x1t, nil, pv)
		g := gates[u*L:][:n]
		vc := vconst[u*L:][:n]
		// t1s, t2s: the δ and δ² coefficients of the unit's output, per
		// lane; any: one of them is not zero (zero terms add nothing).
		any1, any2 := false, false
		if fast {
			// The candidates' maximum is the same in any order: every
			// candidate is ≤ 0 and finite or −∞ (a signed zero's sign
			// cannot change 1+δ).
			unit := probeUnit64
			if useAVX512 {
				unit = probeUnit64z
			}
			if f := unit(f32(g), f32(pg), f32(pv), f32(vc), float32(hi), float32(lo), &t1s[0], &t2s[0], &dmax[0]); f&4 == 0 {
				delta = max(delta, dmax[0], dmax[1], dmax[2], dmax[3])
				w.probeOut(s, u, f&1 != 0, f&2 != 0)
				continue
			}
		}
		for l, g0 := range g {
			dg, dv := float64(pg[l]), float64(pv[l])
			var t1, t2 float64
			switch {
			case g0 >= hi:
				if dg > 0 {
					delta = max(delta, float64(hi-g0)/dg)
				}
				t1, t2 = dg*float64(vc[l])+float64(g0)*dv, dg*dv
			case g0 <= lo:
				if dg < 0 {
					delta = max(delta, float64(lo-g0)/dg)
				}
			default:
				if dg != 0 {
					delta, w.pr.sat = 0, false
				}
				t1 = float64(silu(g0)) * dv
			}
			t1s[l], t2s[l] = t1, t2
			any1 = any1 || t1 != 0
			any2 = any2 || t2 != 0
		}
		w.probeOut(s, u, any1, any2)
	}
	for j := 0; j < nd*L; j += L {
		c1k, c2k, s1k, s2k := c1[j:][:n], c2[j:][:n], s1[j:][:n], s2[j:][:n]
		bad := false
		if fast {
			bad = probeBad64(&c1k[0], &s1k[0], &c2k[0], &s2k[0], probeTol)
		} else {
			for l := range c1k {
				bad = bad || math.Abs(c1k[l]) > probeTol*s1k[l] || math.Abs(c2k[l]) > probeTol*s2k[l]
			}
		}
		if !bad {
			continue
		}
		for l := range c1k {
			if math.Abs(c1k[l]) > probeTol*s1k[l] || math.Abs(c2k[l]) > probeTol*s2k[l] {
				w.probeFail(fmt.Errorf("token %d, dimension %d: the FFN does not cancel the attention's dependence on β (%.3g·δ + %.3g·δ²)",
					t, p.dyn[j/L], c1k[l], c2k[l]))
				return
			}
		}
	}
	clear(x1t)
	if delta > -1 {
		lam := ps.lam[t] * (1 + delta)
		w.pr.beta = max(w.pr.beta, ps.betaAt(t, lam, p.T))
	}
}

// probeOut adds unit u's δ and δ² coefficients (probeState.t1, t2, per
// lane) times its output weights to c1, c2 and their magnitudes to s1, s2,
// the terms that are not zero only (zero terms add nothing); any1, any2:
// some t1, t2 is not zero.
func (w *worker[F]) probeOut(s *tsub[F], u int, any1, any2 bool) {
	if !any1 && !any2 {
		return
	}
	L, n := w.L, w.n
	c1, c2, s1, s2 := w.pr.c1, w.pr.c2, w.pr.s1, w.pr.s2
	t1s, t2s := w.pr.t1[:n], w.pr.t2[:n]
	fast := avx32[F](n)
	for e := s.out.ptr[u]; e < s.out.ptr[u+1]; e++ {
		k := int(s.out.idx[e]) * L
		wt := float64(s.outW[e])
		if any1 {
			c1k, s1k := c1[k:][:n], s1[k:][:n]
			if fast {
				probeOut64(&c1k[0], &s1k[0], &t1s[0], wt)
			} else {
				for l, t1 := range t1s {
					if t1 != 0 {
						c1k[l] += wt * t1
						s1k[l] += math.Abs(wt * t1)
					}
				}
			}
		}
		if any2 {
			c2k, s2k := c2[k:][:n], s2[k:][:n]
			if fast {
				probeOut64(&c2k[0], &s2k[0], &t2s[0], wt)
			} else {
				for l, t2 := range t2s {
					if t2 != 0 {
						c2k[l] += wt * t2
						s2k[l] += math.Abs(wt * t2)
					}
				}
			}
		}
	}
}
