package forward

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// BenchmarkPassSHA3_256 times the forward passes of the full SHA3-256
// tokens-as-gates models, 64 samples, as a model check of
// configs/bench/mappers-sha3-256.hcl runs them (the pipeline's time is
// these passes): float32, float32 probed, float64, and float32 at 0.8 β
// (a β-grid pass). Sub-benchmarks are layerer/mode/pass; cpu-sec/op is the
// process's user + system CPU time a pass and MAC/s its multiply-adds
// (Program.Work) over its wall time. Heavy tier only (minutes, 2-3 GB):
//
//	TCFORGE_HEAVY=1 go test ./internal/forward -run '^$' -bench PassSHA3_256/reifier/softmax -benchtime 1x
func BenchmarkPassSHA3_256(b *testing.B) {
	heavy(b, "full SHA3-256 passes")
	ctx := context.Background()
	c := build(b, keccak.Plugin, map[string]any{"preset": "sha3-256"})
	for _, lay := range []string{"reifier", "fusion"} {
		b.Run(lay, func(b *testing.B) {
			var l *layered.Circuit
			var err error
			if lay == "reifier" {
				l, err = reifier.Compile(ctx, c)
			} else {
				l, err = fusion.Compile(ctx, c, fusion.Options{})
			}
			if err != nil {
				b.Fatal(err)
			}
			for _, mode := range []model.AttnMode{model.Hard, model.Softmax} {
				b.Run(string(mode), func(b *testing.B) {
					m, err := tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: mode})
					if err != nil {
						b.Fatal(err)
					}
					p, err := Compile(m)
					if err != nil {
						b.Fatal(err)
					}
					beta, _ := m.SoftmaxBeta()
					in := bitvec.Random(rand.New(rand.NewPCG(1, 2)), 64, p.nIn)
					for _, bc := range []struct {
						name string
						opt  Options
					}{{"fp32", Options{}}, {"fp32-probe", Options{ProbeBeta: true}}, {"fp64", Options{Float64: true}}, {"fp32-beta", Options{Beta: 0.8 * beta}}} {
						if mode != model.Softmax && (bc.opt.ProbeBeta || bc.opt.Beta > 0) {
							continue
						}
						b.Run(bc.name, func(b *testing.B) {
							c0, t0 := cpuTime(b), time.Now()
							for b.Loop() {
								if _, err := p.Run(in, bc.opt); err != nil {
									b.Fatal(err)
								}
							}
							wall := time.Since(t0).Seconds()
							b.ReportMetric((cpuTime(b)-c0).Seconds()/float64(b.N), "cpu-sec/op")
							b.ReportMetric(float64(p.Work(len(in), bc.opt).MACs)*float64(b.N)/wall, "MAC/s")
						})
					}
				})
			}
		})
	}
}
