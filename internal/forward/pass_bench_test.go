package forward

import (
	"context"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
)

// BenchmarkPass times the forward passes of a model check (host/run's
// verification, its float64 pass, the β probe) on 64 samples of the
// tokens-as-gates models of Keccak-f[400] at 6 rounds (reifier: 44 k
// tokens, 38 blocks), the compiled Program reused as the host does:
// float32, float32 probed (softmax), float64. cpu-sec/op is the process's
// user + system CPU time a pass, the figure to compare on a shared machine.
func BenchmarkPass(b *testing.B) {
	ctx := context.Background()
	c := build(b, keccak.Plugin, map[string]any{"log_w": int64(4), "rate": int64(200), "rounds": int64(6)})
	l, err := reifier.Compile(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []model.AttnMode{model.Hard, model.Softmax} {
		m, err := tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: mode})
		if err != nil {
			b.Fatal(err)
		}
		p, err := Compile(m)
		if err != nil {
			b.Fatal(err)
		}
		in := bitvec.Random(rand.New(rand.NewPCG(1, 2)), 64, p.nIn)
		for _, bc := range []struct {
			name string
			opt  Options
		}{{"fp32", Options{}}, {"fp32-probe", Options{ProbeBeta: true}}, {"fp64", Options{Float64: true}}} {
			if bc.opt.ProbeBeta && mode != model.Softmax {
				continue
			}
			b.Run(string(mode)+"/"+bc.name, func(b *testing.B) {
				c0 := cpuTime(b)
				for b.Loop() {
					if _, err := p.Run(in, bc.opt); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric((cpuTime(b)-c0).Seconds()/float64(b.N), "cpu-sec/op")
			})
		}
	}
}

// cpuTime returns the process's user + system CPU time so far.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkStockPass times the stock pass of the tokens-as-states model of
// full SHA3-256 (fusion: 64 tokens, d_model 120, 48 stock encoder layers,
// 24 heads of 5 dimensions), 64 samples, float32 and float64; besides
// cpu-sec/op it reports the share of the pass in its dense tiles, its
// exponentials and its sparse projections (PassInfo.Phases).
func BenchmarkStockPass(b *testing.B) {
	ctx := context.Background()
	c := build(b, keccak.Plugin, map[string]any{"preset": "sha3-256"})
	l, err := fusion.Compile(ctx, c, fusion.Options{})
	if err != nil {
		b.Fatal(err)
	}
	m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{})
	if err != nil {
		b.Fatal(err)
	}
	p, err := Compile(m)
	if err != nil {
		b.Fatal(err)
	}
	in := bitvec.Random(rand.New(rand.NewPCG(1, 2)), 64, p.nIn)
	for _, f64 := range []bool{false, true} {
		name := "fp32"
		if f64 {
			name = "fp64"
		}
		b.Run(name, func(b *testing.B) {
			c0 := cpuTime(b)
			var ph Phases
			var took time.Duration
			for b.Loop() {
				t0 := time.Now()
				r, err := p.Run(in, Options{Float64: f64})
				if err != nil {
					b.Fatal(err)
				}
				took += time.Since(t0)
				ph.add(r.phases)
			}
			b.ReportMetric((cpuTime(b)-c0).Seconds()/float64(b.N), "cpu-sec/op")
			for _, x := range []struct {
				name string
				d    time.Duration
			}{{"dense", ph.Dense}, {"exp", ph.Exp}, {"sparse", ph.Sparse}} {
				b.ReportMetric(x.d.Seconds()/took.Seconds(), x.name+"-share")
			}
		})
	}
}
