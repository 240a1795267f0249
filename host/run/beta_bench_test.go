package run

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// BenchmarkBetaMin times verification and β_min of a softmax
// tokens-as-gates model of Keccak-f[400] (one block, 64 samples) as the
// host runs them: "bisection" a plain verification pass and the six passes
// of betaSearch (before issue 19), "probe" a probed verification pass and
// betaMin's passes. Both report the β_min they found (equal).
func BenchmarkBetaMin(b *testing.B) {
	ctx := context.Background()
	c := sdktest.Build(b, keccak.Plugin, map[string]any{"log_w": int64(4), "rate": int64(200)})
	l, err := reifier.Compile(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	m, err := tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: model.Softmax})
	if err != nil {
		b.Fatal(err)
	}
	beta, _ := m.SoftmaxBeta()
	in := point.Samples(1, 64, l.NumInputs)
	want, err := bitvec.EvalSliced(in, l.NumInputs, l.Eval)
	if err != nil {
		b.Fatal(err)
	}
	prog, err := forward.Compile(m)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("bisection", func(b *testing.B) {
		var got float64
		for b.Loop() {
			if _, err := prog.Run(in, forward.Options{}); err != nil {
				b.Fatal(err)
			}
			if got, _, err = betaSearch(ctx, prog, in, want, l.NumOutputs(), beta, 0); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(got, "β_min")
	})
	b.Run("probe", func(b *testing.B) {
		var got float64
		for b.Loop() {
			res, err := prog.Run(in, forward.Options{ProbeBeta: true})
			if err != nil {
				b.Fatal(err)
			}
			if got, _, _, _, err = betaMin(ctx, prog, res.Beta, in, want, l.NumOutputs(), beta, 0, zerolog.Nop()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(got, "β_min")
	})
}
