package forward

import (
	"context"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// BenchmarkFloor measures this machine's rate for the kernels the forward
// pass is made of, on every core (b.RunParallel): the float32 sparse
// gather-multiply-add (32 lanes, 8 weighted random columns a call) over a
// buffer in cache and one far larger than the caches, and float64 exp. The
// MAC/s and exp/s metrics are the Floor the host measures (MeasureFloor)
// to put each pass's time against (BENCHMARKS.md, "ratio to the floor").
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
	b.Run("exp", func(b *testing.B) {
		xs := floorExpArgs()
		t0 := time.Now()
		var exps int64
		b.RunParallel(func(pb *testing.PB) {
			var n int64
			sum := 0.0
			for pb.Next() {
				sum += floorExpSweep(xs)
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

// TestFloor checks that MeasureFloor measures each rate (positive, finite)
// and that Floor.Time puts work against them.
func TestFloor(t *testing.T) {
	f := MeasureFloor(context.Background(), 20*time.Millisecond)
	for name, r := range map[string]float64{"MACs": f.MACs, "MACsMem": f.MACsMem, "Exps": f.Exps} {
		if !(r > 1e6) || math.IsInf(r, 0) {
			t.Errorf("%s rate %v a second", name, r)
		}
	}
	cache, mem := Floor{MACs: 1e9, MACsMem: 5e8, Exps: 1e8}.Time(Work{MACs: 2e9, Exps: 1e8})
	if cache != 3*time.Second || mem != 5*time.Second {
		t.Errorf("floor of 2e9 MACs and 1e8 exps: %v, %v, want 3s, 5s", cache, mem)
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
	c := sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(2), "rate": int64(50), "rounds": int64(3), "padding": "none"})
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
	want := hard.Work(8, Options{})
	want.Exps += res.SiLUExps
	if len(got) != 1 || got[0].Samples != 8 || !got[0].Float64 || got[0].Work != want || got[0].Took <= 0 {
		t.Errorf("trace %+v, want work %+v", got, want)
	}
	// In float64 the gates below −745 only are relu: the others' SiLU is
	// evaluated, as many as the lanes of negative gates between.
	if res.SiLUExps == 0 {
		t.Errorf("float64 pass: no SiLU evaluated")
	}
}
