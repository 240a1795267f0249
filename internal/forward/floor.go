package forward

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/tcforge/tcforge/sdk/model"
)

// Work counts what a forward pass computes: the multiply-adds of its
// kernels over every lane (sample), and the exponentials it evaluates.
// Program.Work counts what the model's shape decides; the exact SiLU
// evaluations depend on the samples (Result.SiLUExps, added by the trace
// of WithTrace). Sample-dependent attention scores (heads whose Q or K
// read the stream) are not counted: for those models the counts are a
// lower bound.
type Work struct {
	MACs, Exps int64
}

// Work returns what a pass over n samples with options opt computes (see
// Work). Models of stock encoder layers are not counted (zero). It takes
// time linear in the tokens and sublayers, not their product.
func (p *Program) Work(n int, opt Options) Work {
	if p.stock != nil {
		return Work{}
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
	var per, exps int64 // per sample; per pass
	type softKey struct {
		sc   *scoreMat
		beta float64
	}
	soft := map[softKey]bool{}
	T := int64(p.T)
	for si, s := range p.subs {
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
	return Work{MACs: per * int64(n), Exps: exps}
}

// Floor is this machine's rate for the kernels a forward pass is made of,
// measured by MeasureFloor with every core busy (a pass's workers run on
// all of them): the time a pass of Work w cannot beat is w.MACs/MACs +
// w.Exps/Exps.
type Floor struct {
	// MACs is float32 multiply-adds a second of the sparse
	// gather-multiply-add kernel (gather: 32 lanes, 8 weighted random
	// columns a call), its buffer in cache (256 KiB).
	MACs float64
	// MACsMem is the same over a buffer far larger than the caches
	// (64 MiB), as a large model's residual stream is.
	MACsMem float64
	// Exps is float64 exponentials (math.Exp) a second.
	Exps float64
}

// Time returns the floor of a pass of work w: at the in-cache rate, and
// at the out-of-cache one (0 if a rate was not measured).
func (f Floor) Time(w Work) (cache, mem time.Duration) {
	if !(f.MACs > 0 && f.MACsMem > 0 && f.Exps > 0) {
		return 0, 0
	}
	e := float64(w.Exps) / f.Exps
	cache = time.Duration((float64(w.MACs)/f.MACs + e) * float64(time.Second))
	mem = time.Duration((float64(w.MACs)/f.MACsMem + e) * float64(time.Second))
	return cache, mem
}

// floorLanes is the lane count the floor's gather runs at (the kernels'
// width, a worker's default).
const floorLanes = 32

// floorGatherBuf returns a buffer of tokens × floorLanes float32 values,
// and random columns (tokens) with weights for the gather.
func floorGatherBuf(bytes int) (buf []float32, cols []int32, ws []float32) {
	rng := rand.New(rand.NewPCG(28, 1))
	tokens := bytes / 4 / floorLanes
	buf = make([]float32, tokens*floorLanes)
	for i := range buf {
		buf[i] = float32(rng.NormFloat64())
	}
	cols = make([]int32, 1<<16)
	ws = make([]float32, len(cols))
	for i := range cols {
		cols[i] = int32(rng.IntN(tokens))
		ws[i] = float32(rng.NormFloat64())
	}
	return buf, cols, ws
}

// floorFan is the columns a gather call of the floor reads.
const floorFan = 8

// floorGatherSweep runs the gather kernel once over cols into acc
// (floorLanes values) and returns the multiply-adds it did.
func floorGatherSweep(acc, buf []float32, cols []int32, ws []float32) int64 {
	for k := 0; k+floorFan <= len(cols); k += floorFan {
		gather(acc, buf, floorLanes, 0, cols[k:k+floorFan], ws[k:k+floorFan], 0)
	}
	return int64(len(cols)/floorFan) * floorFan * floorLanes
}

// floorGather runs floorGatherSweep over buf for about d on one core and
// returns the multiply-adds it did.
func floorGather(ctx context.Context, buf []float32, cols []int32, ws []float32, d time.Duration) int64 {
	acc := make([]float32, floorLanes)
	var macs int64
	for end := time.Now().Add(d); ctx.Err() == nil && time.Now().Before(end); {
		macs += floorGatherSweep(acc, buf, cols, ws)
	}
	return macs
}

// floorExpSweep evaluates math.Exp at every xs and returns the sum.
func floorExpSweep(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += math.Exp(x)
	}
	return sum
}

// floorExpArgs are the arguments the exp floor evaluates, in [−20, 0].
func floorExpArgs() []float64 {
	xs := make([]float64, 4096)
	for i := range xs {
		xs[i] = -20 * float64(i) / float64(len(xs))
	}
	return xs
}

// floorExp evaluates math.Exp for about d on one core and returns how many.
func floorExp(ctx context.Context, d time.Duration) int64 {
	xs := floorExpArgs()
	var n int64
	sum := 0.0
	for end := time.Now().Add(d); ctx.Err() == nil && time.Now().Before(end); {
		sum += floorExpSweep(xs)
		n += int64(len(xs))
	}
	if math.IsNaN(sum) { // never: the sum keeps the loop
		return 0
	}
	return n
}

// allCores runs f on GOMAXPROCS goroutines and returns the sum of their
// counts over the wall time taken: a rate a second.
func allCores(f func() int64) float64 {
	workers := runtime.GOMAXPROCS(0)
	var mu sync.Mutex
	var total int64
	var wg sync.WaitGroup
	t0 := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := f()
			mu.Lock()
			total += n
			mu.Unlock()
		}()
	}
	wg.Wait()
	return float64(total) / time.Since(t0).Seconds()
}

// MeasureFloor measures the machine's Floor, each kernel for about d on
// every core (3d in all).
func MeasureFloor(ctx context.Context, d time.Duration) Floor {
	var f Floor
	buf, cols, ws := floorGatherBuf(256 << 10)
	f.MACs = allCores(func() int64 { return floorGather(ctx, buf, cols, ws, d) })
	buf, cols, ws = floorGatherBuf(64 << 20)
	f.MACsMem = allCores(func() int64 { return floorGather(ctx, buf, cols, ws, d) })
	f.Exps = allCores(func() int64 { return floorExp(ctx, d) })
	return f
}

// PassInfo describes a finished forward pass (see WithTrace).
type PassInfo struct {
	Samples   int
	Float64   bool
	ProbeBeta bool
	Beta      float64 // the β override (0: the model's own)
	Work      Work
	Took      time.Duration
}

type traceKey struct{}

// WithTrace returns a context under which every forward pass RunContext
// runs calls done when it finishes without error, with what it computed
// (Program.Work and the pass's Result.SiLUExps) and the time it took (the
// host logs each pass against the Floor).
func WithTrace(ctx context.Context, done func(PassInfo)) context.Context {
	return context.WithValue(ctx, traceKey{}, done)
}
