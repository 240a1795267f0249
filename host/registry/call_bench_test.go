package registry_test

import (
	"context"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/sdk"
)

// BenchmarkCallRoundTrip times one small call (Check, no blob) to a
// running plugin process: the fixed cost of every call over RPC.
func BenchmarkCallRoundTrip(b *testing.B) {
	l, err := launch(b, "toy", "toy", zerolog.Nop())
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	p := l.Plugin().(*sdk.Construction)
	ps, err := sdk.NewParams(p.Describe().Params, map[string]any{"n": 3})
	if err != nil {
		b.Fatal(err)
	}
	pass := &sdk.Pass{Params: ps}
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := p.Prepare(ctx, pass); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLaunch starts a plugin process (handshake, TLS, Describe) and
// stops it: the fixed cost of every plugin a run uses.
func BenchmarkLaunch(b *testing.B) {
	for b.Loop() {
		l, err := launch(b, "toy", "toy", zerolog.Nop())
		if err != nil {
			b.Fatal(err)
		}
		l.Close()
	}
}
