package tokensasstates_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestRoundLevels maps toy Keccak (w = 2, three rounds, one token a
// slice) layered by fusion's round objective with its modular forms on
// levels 1..k (Options.RoundLevels: k rounds at one level, the rest at
// two, depth 2·rounds + 1 − k) to stock layers, one a level but the
// folded last, and checks the float32 pass against the logic circuit on
// 64 random messages.
func TestRoundLevels(t *testing.T) {
	sdktest.Short(t, "toy Keccak with round_levels through tokens-as-states (10–30 s a point)")
	const rounds = 3
	ctx := context.Background()
	c := sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(rounds), "padding": "none"})
	in := bitvec.Random(rand.New(rand.NewPCG(18, 23)), 64, len(c.Inputs))
	want, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 2} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			l, err := fusion.Compile(ctx, c, fusion.Options{Objective: fusion.Round, RoundLevels: k})
			if err != nil {
				t.Fatal(err)
			}
			if l.Depth() != 2*rounds+1-k {
				t.Fatalf("depth %d, want %d", l.Depth(), 2*rounds+1-k)
			}
			m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{Tokens: 2, Interleave: true})
			if err != nil {
				t.Fatal(err)
			}
			if !m.IsStock() || len(m.Blocks) != 2*rounds-k {
				t.Fatalf("%d blocks (stock %v), want %d stock layers", len(m.Blocks), m.IsStock(), 2*rounds-k)
			}
			res := checkPass(t, "float32 stock pass vs logic circuit", m, in, want, l.NumOutputs())
			s := m.Stats()
			t.Logf("depth %d width %d; d_model %d, blocks %d, FFN %d, params %d dense; margin %.4f",
				l.Depth(), l.Stats().Width, s.DModel, s.Blocks, s.FFNHidden, s.ParamsDense, res.MinMargin)
		})
	}
}

// TestFewerBlocksSHA3 maps full SHA3-256 (one block, 135-byte messages)
// below the 48 stock blocks of depth first: fusion's round objective
// without rule 10 (depth 26: 25 stock blocks, the last level folded into
// the readout) and with its modular forms on levels 1..k
// (Options.RoundLevels), so k rounds take one level and the rest two —
// depth 49 − k, 48 − k stock blocks — and tokens-as-states with its
// defaults (64 tokens). Each model's float32 pass is checked against
// crypto/sha3 on 64 random messages (passSHA3). The log gives each
// point's figures and the process's peak RSS so far; run one point a
// process (-run 'TestFewerBlocksSHA3/no-rule-10$') for its own peak:
// 6.1 GiB for the 25-block point (fusion's layering 5.4 GB of it; the
// mapping, level by level, stays below that) in 8 min 31 s; the wide
// points take minutes each, hence the heavy tier.
func TestFewerBlocksSHA3(t *testing.T) {
	sdktest.Heavy(t, "full SHA3-256 at 25–47 stock blocks (minutes and about 6 GB a point)")
	ctx := context.Background()
	c := sdktest.Build(t, keccak.Plugin, map[string]any{"preset": "sha3-256"})
	for _, tt := range []struct {
		name  string
		opts  fusion.Options
		depth int
	}{
		// The round objective without rule 10 (max_width = 500000's plan,
		// configs/frontier.hcl): every round at one level, the last round's
		// digest bits exact one level later.
		{"no-rule-10", fusion.Options{Objective: fusion.Round, NoPair: true}, 26},
		{"k=12", fusion.Options{Objective: fusion.Round, RoundLevels: 12}, 37},
		{"k=6", fusion.Options{Objective: fusion.Round, RoundLevels: 6}, 43},
		{"k=3", fusion.Options{Objective: fusion.Round, RoundLevels: 3}, 46},
		{"k=1", fusion.Options{Objective: fusion.Round, RoundLevels: 1}, 48},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t0 := time.Now()
			l, err := fusion.Compile(ctx, c, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			tl := time.Since(t0)
			ls := l.Stats()
			if ls.Depth != tt.depth {
				t.Fatalf("depth %d, want %d", ls.Depth, tt.depth)
			}
			t0 = time.Now()
			m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{})
			if err != nil {
				t.Fatal(err)
			}
			tm := time.Since(t0)
			s := m.Stats()
			if !m.IsStock() || s.Blocks != tt.depth-1 || s.Tokens != 64 {
				t.Fatalf("%d blocks, %d tokens (stock %v), want %d stock blocks, 64 tokens", s.Blocks, s.Tokens, m.IsStock(), tt.depth-1)
			}
			numInputs := l.NumInputs
			l = nil // the pass does not need the circuit
			t0 = time.Now()
			res := passSHA3(t, m, numInputs)
			tp := time.Since(t0)
			var ru syscall.Rusage
			_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // Linux: Maxrss in KiB
			t.Logf("%s: depth %d width %d nonzeros %d (layer %v); tokens %d, d_model %d, blocks %d, heads %d, FFN %d, params %d dense %d nonzero (map %v); 64 digests equal crypto/sha3, margin %.4f (pass %v); peak RSS %.1f GB",
				tt.name, ls.Depth, ls.Width, ls.Nonzeros, tl.Round(time.Second), s.Tokens, s.DModel, s.Blocks, s.Heads, s.FFNHidden, s.ParamsDense, s.ParamsNonzero, tm.Round(time.Second),
				res.MinMargin, tp.Round(time.Second), float64(ru.Maxrss)/(1<<20))
		})
	}
}
