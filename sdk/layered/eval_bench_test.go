package layered_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/keccak"
	"github.com/tcforge/tcforge/sdk/layered"
)

// sha3Layered compiles SHA3-256 on one 1088-bit block with the named
// backend ("reifier" or "fusion"), once per test binary.
func sha3Layered(tb testing.TB, backend string) *layered.Circuit {
	sha3Once.Do(func() {
		p := keccak.Perm{LogW: 6, Rounds: 24}
		b := circuit.NewBuilder()
		msg := b.Input("msg", 1088)
		b.Output("digest", p.Sponge(b, p.ZeroState(b), [][]circuit.Node{msg}, 1088, 256))
		c := b.Circuit()
		var err error
		if sha3Reifier, err = reifier.Compile(context.Background(), c); err != nil {
			sha3Err = err
			return
		}
		sha3Fusion, sha3Err = fusion.Compile(context.Background(), c, fusion.Options{})
	})
	if sha3Err != nil {
		tb.Fatal(sha3Err)
	}
	if backend == "fusion" {
		return sha3Fusion
	}
	return sha3Reifier
}

var (
	sha3Once                sync.Once
	sha3Reifier, sha3Fusion *layered.Circuit
	sha3Err                 error
)

// BenchmarkEvaluatorPlan measures building the evaluator (the per-circuit
// plan) for SHA3-256.
func BenchmarkEvaluatorPlan(b *testing.B) {
	for _, backend := range []string{"reifier", "fusion"} {
		l := sha3Layered(b, backend)
		b.Run(backend, func(b *testing.B) {
			for b.Loop() {
				l.Evaluator()
			}
		})
	}
}

// BenchmarkEvaluatorBatch measures one 64-lane batch of SHA3-256 on one core.
func BenchmarkEvaluatorBatch(b *testing.B) {
	for _, backend := range []string{"reifier", "fusion"} {
		l := sha3Layered(b, backend)
		r := rand.New(rand.NewPCG(1, 2))
		in := make([]uint64, l.NumInputs)
		for i := range in {
			in[i] = r.Uint64()
		}
		ev := l.Evaluator()
		b.Run(backend, func(b *testing.B) {
			for b.Loop() {
				if _, err := ev(in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(64*float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
