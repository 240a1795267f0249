package forward

import (
	"fmt"
	"math"
	"time"

	"github.com/tcforge/tcforge/sdk/model"
)

// typed holds the program's weights converted to F, and the softmax weights
// for the pass's temperatures.
type typed[F Float] struct {
	subs []tsub[F]
	stSq []F
	// need is Program.need, or nil under Options.ProbeBeta (the probe's
	// bound covers every token) and Options.Watch (it reads any token).
	need []int32
	// expTook is the time softWeights took (its exponentials).
	expTook time.Duration
}

// needed reports whether sublayer s must compute token t (see Program.need).
func (tp *typed[F]) needed(s *tsub[F], t int) bool { return tp.need == nil || tp.need[t] >= s.idx }

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
	// sparse: the sublayer runs sparse kernels only (no norm, no
	// per-sample scores): its time is Phases.Sparse, else Other.
	sparse bool
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

func makeTyped[F Float](p *Program, opt Options) (*typed[F], error) {
	tp := &typed[F]{stSq: conv[F](p.stSq)}
	if !opt.ProbeBeta && opt.Watch == nil {
		tp.need = p.need
	}
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
		ts := tsub[F]{sublayer: s, beta: s.beta, sparse: s.norm == nil}
		for _, h := range s.heads {
			ts.sparse = ts.sparse && h.sc != nil
		}
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
						t0 := time.Now()
						c.wp, c.base, c.invZ = softWeights[F](h.sc, p.T, ts.beta)
						tp.expTook += time.Since(t0)
						softCache[key] = c
					}
					th.wp, th.base, th.invZ = c.wp, c.base, c.invZ
				}
				ts.heads = append(ts.heads, th)
			}
			if opt.ProbeBeta && s.mode == model.Softmax {
				ps, err := prepareProbe(s, p.T, ts.beta)
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
