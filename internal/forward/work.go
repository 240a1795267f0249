package forward

import (
	"unsafe"

	"github.com/tcforge/tcforge/sdk/model"
)

// Work counts what a forward pass computes, over every lane (sample): the
// multiply-adds of its sparse kernels (gathers over the rows of a CSR
// matrix: attention scores, projections, FFN rows) and of its dense ones
// (GEMM tiles: a stock layer's attention), the exponentials it evaluates,
// and the bytes of the residual stream it reads and writes (each token's
// dynamic part once a sublayer, read and written; the lower bound of its
// memory traffic when the stream does not fit in cache). Program.Work
// counts what the model's shape decides; the exact SiLU evaluations depend
// on the samples (Result.SiLUExps, added by the trace of WithTrace).
// Sample-dependent attention scores (heads whose Q or K read the stream)
// are not counted: for those models the counts are a lower bound.
type Work struct {
	MACs, DenseMACs, Exps, Bytes int64
}

// Work returns what a pass over n samples with options opt computes (see
// Work). It takes time linear in the tokens and sublayers, not their
// product.
func (p *Program) Work(n int, opt Options) Work {
	size := int64(4)
	if opt.Float64 {
		size = 8
	}
	if p.stock != nil {
		w := p.stock.work(size)
		w.MACs *= int64(n)
		w.DenseMACs *= int64(n)
		w.Exps *= int64(n)
		w.Bytes *= int64(n)
		return w
	}
	probe := opt.ProbeBeta
	need := p.need
	if probe {
		need = nil
	}
	S := len(p.subs)
	// over(f)[s] = Σ f(t) over the tokens t sublayer s computes.
	over := func(f func(t int) int64) []int64 {
		out := make([]int64, S+1)
		for t := 0; t < p.T; t++ {
			last := S - 1
			if need != nil {
				last = int(need[t])
			}
			if last >= 0 {
				out[last] += f(t)
			}
		}
		for s := S - 1; s >= 0; s-- {
			out[s] += out[s+1]
		}
		return out
	}
	tokens := over(func(int) int64 { return 1 })
	rowSums := map[*scoreMat][2][]int64{} // Σ row lengths; rows not empty
	rows := func(m *scoreMat) [2][]int64 {
		r, ok := rowSums[m]
		if !ok {
			r[0] = over(func(t int) int64 { return int64(m.ptr[t+1] - m.ptr[t]) })
			r[1] = over(func(t int) int64 {
				if m.ptr[t+1] > m.ptr[t] {
					return 1
				}
				return 0
			})
			rowSums[m] = r
		}
		return r
	}
	rowLen := func(c *csr, u int) int64 { return int64(c.ptr[u+1] - c.ptr[u]) }
	var per, bytes, exps int64 // per sample; per pass
	type softKey struct {
		sc   *scoreMat
		beta float64
	}
	soft := map[softKey]bool{}
	T := int64(p.T)
	for si, s := range p.subs {
		bytes += 2 * tokens[si] * int64(p.nd) * size
		if s.norm != nil {
			per += T * int64(p.nd)
		}
		if !s.attn {
			var unit int64 // one token's
			for u := 0; u < s.gate.n; u++ {
				g, v := rowLen(&s.gate.dyn, u), rowLen(&s.value.dyn, u)
				unit += rowLen(&s.out, u)
				switch {
				case probe:
					// The pass's projections, the probe's of the λ part, its
					// three products and the δ and δ² updates.
					unit += 2*(g+v) + 3 + 2*rowLen(&s.out, u)
				case s.norm != nil || s.gate.isDyn[u]:
					unit += g + v
				case s.value.isDyn[u]:
					unit += v
				}
			}
			per += tokens[si] * unit
			continue
		}
		for _, pr := range s.vproj {
			if pr.alias == nil {
				per += T * int64(len(pr.dyn.idx))
			}
			if s.mode == model.Softmax {
				per += T * int64(pr.n) // Σ_all v
				bytes += T * int64(pr.n) * size
			}
		}
		beta := s.beta
		if opt.Beta > 0 {
			beta = opt.Beta
		}
		for _, h := range s.heads {
			nv := int64(s.vproj[h.v].n)
			oe := int64(len(h.o.idx))
			switch {
			case h.sc == nil:
				// Sample-dependent scores: the Q and K projections only.
				per += T * int64(len(h.q.dyn.idx)+len(h.k.dyn.idx))
			case s.mode == model.Hard:
				r := rows(h.sel)
				per += r[0][si]*nv + r[1][si]*oe
			case s.mode == model.Softmax:
				r := rows(h.sc)
				q := tokens[si]
				per += (r[0][si]+2*q)*nv + q*oe // base, the gather, 1/Z; O
				if probe {
					per += q * oe
				}
				if k := (softKey{h.sc, beta}); !soft[k] {
					soft[k] = true
					exps += int64(len(h.sc.s)) + T // once a pass, for every sample
				}
			}
		}
	}
	return Work{MACs: per * int64(n), Exps: exps, Bytes: bytes * int64(n)}
}

// work returns what a stock pass computes for one sample, in bytes of
// size each: the sparse rows of the four projections for every token, the
// dense Q·Kᵀ and P·V tiles and T² exponentials of every head, and the
// stream (T × d) read and written by each of the layer's steps.
func (p *stockProgram) work(size int64) Work {
	T, d := int64(p.T), int64(p.d)
	var w Work
	for _, l := range p.layers {
		nnz := int64(len(l.inW.Col) + len(l.outW.Col) + len(l.l1W.Col) + len(l.l2W.Col))
		w.MACs += T * nnz
		w.DenseMACs += 2 * T * T * d // Q·Kᵀ and P·V over all heads: T²·head_dim each, heads·head_dim = d
		w.Exps += int64(l.heads) * T * T
		w.Bytes += 2 * 6 * T * d * size
	}
	return w
}

// floatSize returns the bytes of an F.
func floatSize[F Float]() int64 {
	var x F
	return int64(unsafe.Sizeof(x))
}
