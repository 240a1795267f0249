package forward

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"
)

// Floor is this machine's rate for the kernels a forward pass is made of,
// measured by MeasureFloor with every core busy (a pass's workers run on
// all of them): the time a pass of Work w cannot beat is w.MACs/MACs +
// w.DenseMACs/Dense + w.Exps/ExpsVec, and w.Bytes/Bandwidth for its
// stream.
type Floor struct {
	// MACs is float32 multiply-adds a second of the sparse
	// gather-multiply-add kernel (gather: 32 lanes, 8 weighted random
	// columns a call), its buffer in cache (256 KiB).
	MACs float64
	// MACsMem is the same over a buffer far larger than the caches
	// (64 MiB), as a large model's residual stream is.
	MACsMem float64
	// Dense is float32 multiply-adds a second of the dense GEMM kernel
	// (gemm, fused, 256 × 256 × 256 on each core): the machine's dense
	// floor, what a stock layer's attention tiles run at.
	Dense float64
	// Exps is float64 exponentials a second of math.Exp; ExpsVec of
	// expVec, the vectorised exp with the same bits the pass uses.
	Exps, ExpsVec float64
	// Bandwidth is bytes a second read and written by streaming over 64
	// MiB on each core (d += x).
	Bandwidth float64
}

// Time returns the floor of a pass of work w: at the in-cache rate, and
// at the out-of-cache one (0 if a rate was not measured).
func (f Floor) Time(w Work) (cache, mem time.Duration) {
	if !(f.MACs > 0 && f.MACsMem > 0 && f.Dense > 0 && f.ExpsVec > 0) {
		return 0, 0
	}
	rest := float64(w.DenseMACs)/f.Dense + float64(w.Exps)/f.ExpsVec
	cache = seconds(float64(w.MACs)/f.MACs + rest)
	mem = seconds(float64(w.MACs)/f.MACsMem + rest)
	return cache, mem
}

// seconds converts s seconds to a Duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Fields returns the floor's rates as a debug line's fields (host/run
// logs them once a run).
func (f Floor) Fields() map[string]any {
	return map[string]any{"mac_per_s": f.MACs, "mac_mem_per_s": f.MACsMem, "dense_mac_per_s": f.Dense,
		"exp_per_s": f.Exps, "exp_vec_per_s": f.ExpsVec, "bytes_per_s": f.Bandwidth}
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

// floorGemmN is the side of the GEMM the dense floor runs on each core.
const floorGemmN = 256

// floorGemm multiplies two floorGemmN² float32 matrices (gemm, fused) for
// about d on one core and returns the multiply-adds it did.
func floorGemm(ctx context.Context, d time.Duration) int64 {
	n := floorGemmN
	a, b, c := floorMatrix[float32](n, 1), floorMatrix[float32](n, 2), make([]float32, n*n)
	var buf gemmBuf[float32]
	var macs int64
	for end := time.Now().Add(d); ctx.Err() == nil && time.Now().Before(end); {
		gemm(gemmFused, n, n, n, a, n, b, n, false, c, n, &buf)
		macs += int64(n * n * n)
	}
	return macs
}

// floorMatrix returns n² values in [−1, 1).
func floorMatrix[F Float](n int, seed uint64) []F {
	rng := rand.New(rand.NewPCG(37, seed))
	xs := make([]F, n*n)
	for i := range xs {
		xs[i] = F(2*rng.Float64() - 1)
	}
	return xs
}

// floorExpVec evaluates expVec over floorExpArgs for about d on one core
// and returns how many.
func floorExpVec(ctx context.Context, d time.Duration) int64 {
	xs := floorExpArgs()
	ys := make([]float64, len(xs))
	var n int64
	for end := time.Now().Add(d); ctx.Err() == nil && time.Now().Before(end); {
		expVec(ys, xs)
		n += int64(len(xs))
	}
	return n
}

// floorStreamBytes is the buffer the bandwidth floor streams over on each
// core: two of 32 MiB.
const floorStreamBytes = 32 << 20

// floorStream adds one buffer into another (d += x, float32) for about d
// on one core and returns the bytes it read and wrote.
func floorStream(ctx context.Context, dur time.Duration) int64 {
	n := floorStreamBytes / 4
	d, x := make([]float32, n), make([]float32, n)
	var bytes int64
	for end := time.Now().Add(dur); ctx.Err() == nil && time.Now().Before(end); {
		addVec(d, x)
		bytes += 3 * floorStreamBytes
	}
	return bytes
}

// MeasureFloor measures the machine's Floor, each kernel for about d on
// every core (7d in all).
func MeasureFloor(ctx context.Context, d time.Duration) Floor {
	var f Floor
	buf, cols, ws := floorGatherBuf(256 << 10)
	f.MACs = allCores(func() int64 { return floorGather(ctx, buf, cols, ws, d) })
	buf, cols, ws = floorGatherBuf(64 << 20)
	f.MACsMem = allCores(func() int64 { return floorGather(ctx, buf, cols, ws, d) })
	f.Dense = allCores(func() int64 { return floorGemm(ctx, d) })
	f.Exps = allCores(func() int64 { return floorExp(ctx, d) })
	f.ExpsVec = allCores(func() int64 { return floorExpVec(ctx, d) })
	f.Bandwidth = allCores(func() int64 { return floorStream(ctx, d) })
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
	// Phases splits Took by the kernels its workers ran.
	Phases Phases
}

// Phases is a pass's time by kind of kernel, in wall time (each worker's
// time over the workers, plus what ran before them): sparse kernels
// (attention gathers, FFN and projection rows over CSR), dense kernels
// (GEMM tiles), exponentials (the softmax weights, a stock layer's
// softmax), and the rest (loading the samples, norms, per-sample scores,
// the readout).
type Phases struct {
	Sparse, Dense, Exp, Other time.Duration
}

// add adds q to p.
func (p *Phases) add(q Phases) {
	p.Sparse += q.Sparse
	p.Dense += q.Dense
	p.Exp += q.Exp
	p.Other += q.Other
}

// over returns p over n workers.
func (p Phases) over(n int) Phases {
	d := time.Duration(max(1, n))
	return Phases{Sparse: p.Sparse / d, Dense: p.Dense / d, Exp: p.Exp / d, Other: p.Other / d}
}

// Fields returns the pass as a debug line's fields (host/run logs one a
// pass of a model check): what it computed (Work), its time and how its
// kernels split it (Phases), the floor of its work (Floor.Time, in cache
// and out of it) and their ratios, and per kind of kernel the floor of its
// share of the work and the share of that floor it reached (floor / time:
// 1 is the machine's rate). The stream's bytes over Bandwidth are the
// floor of its memory traffic, against the sparse kernels' time (which
// moves it).
func (pi PassInfo) Fields(f Floor) map[string]any {
	cache, mem := f.Time(pi.Work)
	format := "fp32"
	if pi.Float64 {
		format = "fp64"
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	share := func(floor, took time.Duration) float64 {
		if took <= 0 {
			return 0
		}
		return floor.Seconds() / took.Seconds()
	}
	w, ph := pi.Work, pi.Phases
	fl := func(n int64, rate float64) time.Duration {
		if rate <= 0 {
			return 0
		}
		return seconds(float64(n) / rate)
	}
	sparse, dense, exp, bytes := fl(w.MACs, f.MACs), fl(w.DenseMACs, f.Dense), fl(w.Exps, f.ExpsVec), fl(w.Bytes, f.Bandwidth)
	return map[string]any{
		"format": format, "probe": pi.ProbeBeta, "beta_override": pi.Beta, "samples": pi.Samples,
		"macs": w.MACs, "dense_macs": w.DenseMACs, "exps": w.Exps, "bytes": w.Bytes,
		"pass_ms": ms(pi.Took), "floor_ms": ms(cache), "floor_mem_ms": ms(mem),
		"ratio": share(pi.Took, cache), "ratio_mem": share(pi.Took, mem),
		"sparse_ms": ms(ph.Sparse), "dense_ms": ms(ph.Dense), "exp_ms": ms(ph.Exp), "other_ms": ms(ph.Other),
		"sparse_floor_ms": ms(sparse), "dense_floor_ms": ms(dense), "exp_floor_ms": ms(exp), "bytes_floor_ms": ms(bytes),
		"sparse_share": share(sparse, ph.Sparse), "dense_share": share(dense, ph.Dense),
		"exp_share": share(exp, ph.Exp), "bytes_share": share(bytes, ph.Sparse),
	}
}

type traceKey struct{}

// WithTrace returns a context under which every forward pass RunContext
// runs calls done when it finishes without error, with what it computed
// (Program.Work and the pass's Result.SiLUExps) and the time it took (the
// host logs each pass against the Floor).
func WithTrace(ctx context.Context, done func(PassInfo)) context.Context {
	return context.WithValue(ctx, traceKey{}, done)
}
