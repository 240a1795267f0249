package tokensasgates_test

import (
	"context"
	"github.com/tcforge/tcforge/internal/forward"
	"math/rand/v2"
	"testing"

	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// layeredKeccak is the reifier-layered circuit of a keccak point.
func layeredKeccak(b testing.TB, values map[string]any) *layered.Circuit {
	b.Helper()
	p, err := sdk.NewPass(context.Background(), keccak.Plugin, values)
	if err != nil {
		b.Fatal(err)
	}
	c, err := keccak.Plugin.Build(context.Background(), p)
	if err != nil {
		b.Fatal(err)
	}
	l, err := reifier.Compile(context.Background(), c)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// mappers are the four mappings by name.
func mappers(ctx context.Context) map[string]func(*layered.Circuit) (*model.Model, error) {
	return map[string]func(*layered.Circuit) (*model.Model, error){
		"mlp":      func(l *layered.Circuit) (*model.Model, error) { return noattention.MLP(ctx, l) },
		"residual": func(l *layered.Circuit) (*model.Model, error) { return noattention.Residual(ctx, l) },
		"hard": func(l *layered.Circuit) (*model.Model, error) {
			return tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: model.Hard})
		},
		"softmax": func(l *layered.Circuit) (*model.Model, error) {
			return tokensasgates.Map(ctx, l, tokensasgates.Options{Mode: model.Softmax})
		},
	}
}

// BenchmarkMapSHA3_256 maps the full SHA3-256 layered circuit (reifier:
// depth 148, 697,408 gates) with each mapper.
func BenchmarkMapSHA3_256(b *testing.B) {
	l := layeredKeccak(b, map[string]any{"preset": "sha3-256"})
	ms := mappers(context.Background())
	for _, name := range []string{"mlp", "residual", "hard", "softmax"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := ms[name](l); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkForward compiles each model for the forward pass and runs it in
// float32 on 64 random inputs: full SHA3-256 for the one-token models, and
// Keccak-f[400] (w = 16, 20 rounds, 100 000 tokens) for tokens-as-gates,
// whose full-size pass takes tens of seconds (docs/mappers.md).
func BenchmarkForward(b *testing.B) {
	ms := mappers(context.Background())
	for _, bc := range []struct {
		name, mapper string
		values       map[string]any
		probe        bool // forward.Options.ProbeBeta: the β bound in the same pass
	}{
		{"sha3-256/mlp", "mlp", map[string]any{"preset": "sha3-256"}, false},
		{"sha3-256/residual", "residual", map[string]any{"preset": "sha3-256"}, false},
		{"keccak-f400/hard", "hard", map[string]any{"log_w": int64(4), "rate": int64(200)}, false},
		{"keccak-f400/softmax", "softmax", map[string]any{"log_w": int64(4), "rate": int64(200)}, false},
		{"keccak-f400/softmax-probe", "softmax", map[string]any{"log_w": int64(4), "rate": int64(200)}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			l := layeredKeccak(b, bc.values)
			m, err := ms[bc.mapper](l)
			if err != nil {
				b.Fatal(err)
			}
			in := bitvec.Random(rand.New(rand.NewPCG(1, 2)), 64, l.NumInputs)
			for b.Loop() {
				pl, err := forward.Compile(m)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := pl.Run(in, forward.Options{ProbeBeta: bc.probe}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
