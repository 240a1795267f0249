package forward

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tcforge/tcforge/internal/forward/blasref"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
)

// BenchmarkFloor measures this machine's rate for the kernels the forward
// pass is made of: on every core (b.RunParallel) the float32 sparse
// gather-multiply-add (32 lanes, 8 weighted random columns a call) over a
// buffer in cache and one far larger than the caches, float64 exp
// (math.Exp, and expVec, the vectorised one with its bits), the stream
// bandwidth (d += x over 64 MiB); and on one core the dense FMA rate, a
// square float32 and float64 GEMM (gemm, fused) at sizes in and out of
// the caches, with OpenBLAS's sgemm and dgemm on one thread beside it
// where the openblas build tag links it (blasref). The MAC/s, exp/s and
// B/s metrics are the Floor the host measures (MeasureFloor) to put each
// pass's time against (BENCHMARKS.md, "ratio to the floor"):
//
//	go test -tags openblas ./internal/forward -run '^$' -bench Floor
func BenchmarkFloor(b *testing.B) {
	for _, bc := range []struct {
		name  string
		bytes int
	}{{"gather32-cache", 256 << 10}, {"gather32-mem", 64 << 20}} {
		b.Run(bc.name, func(b *testing.B) {
			buf, cols, ws := floorGatherBuf(bc.bytes)
			b.ResetTimer()
			t0 := time.Now()
			var macs int64
			b.RunParallel(func(pb *testing.PB) {
				acc := make([]float32, floorLanes)
				var n int64
				for pb.Next() {
					n += floorGatherSweep(acc, buf, cols, ws)
				}
				atomic.AddInt64(&macs, n)
			})
			b.ReportMetric(float64(macs)/time.Since(t0).Seconds(), "MAC/s")
		})
	}
	for _, bc := range []struct {
		name string
		vec  bool
	}{{"exp", false}, {"exp-vec", true}} {
		b.Run(bc.name, func(b *testing.B) {
			xs := floorExpArgs()
			t0 := time.Now()
			var exps int64
			b.RunParallel(func(pb *testing.PB) {
				var n int64
				ys := make([]float64, len(xs))
				sum := 0.0
				for pb.Next() {
					if bc.vec {
						expVec(ys, xs)
						sum += ys[len(ys)-1]
					} else {
						sum += floorExpSweep(xs)
					}
					n += int64(len(xs))
				}
				if math.IsNaN(sum) {
					n = 0
				}
				atomic.AddInt64(&exps, n)
			})
			b.ReportMetric(float64(exps)/time.Since(t0).Seconds(), "exp/s")
		})
	}
	b.Run("stream", func(b *testing.B) {
		t0 := time.Now()
		var bytes int64
		b.RunParallel(func(pb *testing.PB) {
			n := floorStreamBytes / 4
			d, x := make([]float32, n), make([]float32, n)
			var m int64
			for pb.Next() {
				addVec(d, x)
				m += 3 * floorStreamBytes
			}
			atomic.AddInt64(&bytes, m)
		})
		b.ReportMetric(float64(bytes)/time.Since(t0).Seconds(), "B/s")
	})
	for _, n := range []int{256, 1024} {
		benchDense[float32](b, fmt.Sprintf("sgemm-%d", n), n, n, n, false, blasref.Sgemm)
		benchDense[float64](b, fmt.Sprintf("dgemm-%d", n), n, n, n, false, blasref.Dgemm)
	}
}

// benchDense runs, on one core, C[m×n] += A[m×k]·op(B) with gemm (fused,
// as OpenBLAS) as name/tcforge and, where the openblas build tag links it,
// with OpenBLAS on one thread as name/openblas (skipped otherwise, saying
// how to run it): side by side in one run, on the same matrices.
func benchDense[F Float](b *testing.B, name string, m, n, k int, transB bool, ref func(m, n, k int, a []F, lda int, b []F, ldb int, transB bool, c []F, ldc int, threads int)) {
	ldb := n
	if transB {
		ldb = k
	}
	a, bb, c := floorMatrix[F](max(m, k), 1)[:m*k], floorMatrix[F](max(k, n), 2)[:k*n], make([]F, m*n)
	report := func(b *testing.B, t0 time.Time) {
		b.ReportMetric(float64(m)*float64(n)*float64(k)*float64(b.N)/time.Since(t0).Seconds(), "MAC/s")
	}
	b.Run(name+"/tcforge", func(b *testing.B) {
		var buf gemmBuf[F]
		t0 := time.Now()
		for b.Loop() {
			gemm(gemmFused, m, n, k, a, k, bb, ldb, transB, c, n, &buf)
		}
		report(b, t0)
	})
	b.Run(name+"/openblas", func(b *testing.B) {
		if !blasref.Available {
			b.Skip("OpenBLAS not linked: apt-get install -y libopenblas-dev; go test -tags openblas …")
		}
		b.Logf("OpenBLAS core %s, 1 thread", blasref.Core())
		t0 := time.Now()
		for b.Loop() {
			ref(m, n, k, a, k, bb, ldb, transB, c, n, 1)
		}
		report(b, t0)
	})
}

// TestFloor checks that MeasureFloor measures each rate (positive, finite)
// and that Floor.Time and PassInfo.Fields put work against them.
func TestFloor(t *testing.T) {
	f := MeasureFloor(context.Background(), 20*time.Millisecond)
	for name, r := range map[string]float64{"MACs": f.MACs, "MACsMem": f.MACsMem, "Dense": f.Dense, "Exps": f.Exps, "ExpsVec": f.ExpsVec, "Bandwidth": f.Bandwidth} {
		if !(r > 1e6) || math.IsInf(r, 0) {
			t.Errorf("%s rate %v a second", name, r)
		}
	}
	fl := Floor{MACs: 1e9, MACsMem: 5e8, Dense: 1e10, Exps: 1e7, ExpsVec: 1e8, Bandwidth: 1e10}
	w := Work{MACs: 2e9, DenseMACs: 1e10, Exps: 1e8, Bytes: 1e10}
	cache, mem := fl.Time(w)
	if cache != 4*time.Second || mem != 6*time.Second {
		t.Errorf("floor of %+v: %v, %v, want 4s, 6s", w, cache, mem)
	}
	pi := PassInfo{Samples: 64, Work: w, Took: 8 * time.Second, Phases: Phases{Sparse: 4 * time.Second, Dense: 2 * time.Second, Exp: time.Second, Other: time.Second}}
	got := pi.Fields(fl)
	for k, want := range map[string]any{"format": "fp32", "samples": 64, "pass_ms": 8000.0, "floor_ms": 4000.0, "ratio": 2.0,
		"sparse_ms": 4000.0, "sparse_floor_ms": 2000.0, "sparse_share": 0.5, "dense_floor_ms": 1000.0, "dense_share": 0.5,
		"exp_floor_ms": 1000.0, "exp_share": 1.0, "bytes_floor_ms": 1000.0, "bytes_share": 0.25, "other_ms": 1000.0} {
		if got[k] != want {
			t.Errorf("field %s = %v, want %v", k, got[k], want)
		}
	}
}

// TestWork checks Program.Work on tokens-as-gates models of a Keccak toy:
// linear in the samples; the hard model's skipped tokens (Program.need) not
// counted; the probe's work counted on top of the pass's; the softmax
// weights' exponentials once a pass for each score matrix and β (the
// stored scores and one for each query's implicit zeros); and WithTrace
// reporting a pass with these counts.
func TestWork(t *testing.T) {
	ctx := context.Background()
	c := build(t, keccak.Plugin, map[string]any{"log_w": int64(2), "rate": int64(50), "rounds": int64(3), "padding": "none"})
	l, err := reifier.Compile(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	progs := map[model.AttnMode]*Program{}
	for _, mode := range []model.AttnMode{model.Hard, model.Softmax} {
		m, err := tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if progs[mode], err = Compile(m); err != nil {
			t.Fatal(err)
		}
	}
	hard, soft := progs[model.Hard], progs[model.Softmax]
	if w1, w64 := hard.Work(1, Options{}), hard.Work(64, Options{}); w1.MACs <= 0 || w64.MACs != 64*w1.MACs || w1.Exps != 0 {
		t.Errorf("hard: %+v for 1 sample, %+v for 64", w1, w64)
	}
	need := hard.need
	hard.need = nil
	all := hard.Work(1, Options{})
	hard.need = need
	if skip := hard.Work(1, Options{}); skip.MACs >= all.MACs {
		t.Errorf("hard: %d MACs with tokens skipped, %d without", skip.MACs, all.MACs)
	}
	plain, probed := soft.Work(1, Options{}), soft.Work(1, Options{ProbeBeta: true})
	if probed.MACs <= plain.MACs {
		t.Errorf("softmax: %d MACs probed, %d not", probed.MACs, plain.MACs)
	}
	seen := map[*scoreMat]bool{}
	var exps int64
	for _, s := range soft.subs {
		for _, h := range s.heads {
			if h.sc != nil && !seen[h.sc] {
				seen[h.sc] = true
				exps += int64(len(h.sc.s) + soft.T)
			}
		}
	}
	if plain.Exps != exps || exps == 0 {
		t.Errorf("softmax: %d exponentials counted, want %d", plain.Exps, exps)
	}
	if half := soft.Work(1, Options{Beta: 1}); half.Exps != exps || half.MACs != plain.MACs {
		t.Errorf("softmax at β 1: %+v, want %+v", half, plain)
	}
	// The trace reports each pass with these counts.
	in := bitvec.Random(rand.New(rand.NewPCG(1, 1)), 8, hard.nIn)
	var got []PassInfo
	tctx := WithTrace(ctx, func(pi PassInfo) { got = append(got, pi) })
	res, err := hard.RunContext(tctx, in, Options{Float64: true})
	if err != nil {
		t.Fatal(err)
	}
	want := hard.Work(8, Options{Float64: true})
	want.Exps += res.SiLUExps
	if len(got) != 1 || got[0].Samples != 8 || !got[0].Float64 || got[0].Work != want || got[0].Took <= 0 || got[0].Phases.Sparse <= 0 {
		t.Errorf("trace %+v, want work %+v", got, want)
	}
	// In float64 the gates below −745 only are relu: the others' SiLU is
	// evaluated, as many as the lanes of negative gates between.
	if res.SiLUExps == 0 {
		t.Errorf("float64 pass: no SiLU evaluated")
	}
}

// BenchmarkDense runs the forward pass's dense tiles on their own shapes,
// one core, side by side with OpenBLAS on the same matrices (openblas
// build tag): a stock layer's head, Q·Kᵀ (T × T × head_dim, K transposed)
// and P·V (T × head_dim × T), for the fusion (head_dim
// 5) and reifier (14) tokens-as-states models of SHA3-256 (64 tokens), in
// float32; name/tcforge is gemm fused (as OpenBLAS), name/tcforge-muladd
// the product-then-sum the pass runs (the loop's bits):
//
//	go test -tags openblas ./internal/forward -run '^$' -bench Dense
func BenchmarkDense(b *testing.B) {
	for _, hd := range []int{5, 14} {
		const T = 64
		for _, sh := range []struct {
			name    string
			m, n, k int
			transB  bool
		}{{fmt.Sprintf("qk-%dx%dx%d", T, T, hd), T, T, hd, true}, {fmt.Sprintf("pv-%dx%dx%d", T, hd, T), T, hd, T, false}} {
			benchDense[float32](b, sh.name, sh.m, sh.n, sh.k, sh.transB, blasref.Sgemm)
			ldb := sh.n
			if sh.transB {
				ldb = sh.k
			}
			a, bb, c := floorMatrix[float32](T, 1)[:sh.m*sh.k], floorMatrix[float32](T, 2)[:sh.n*sh.k], make([]float32, sh.m*sh.n)
			b.Run(sh.name+"/tcforge-muladd", func(b *testing.B) {
				var buf gemmBuf[float32]
				t0 := time.Now()
				for b.Loop() {
					gemm(gemmMulAdd, sh.m, sh.n, sh.k, a, sh.k, bb, ldb, sh.transB, c, sh.n, &buf)
				}
				b.ReportMetric(float64(sh.m*sh.n*sh.k)*float64(b.N)/time.Since(t0).Seconds(), "MAC/s")
			})
		}
	}
}
