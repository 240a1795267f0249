package tokensasstates_test

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestFullSHA3 maps full SHA3-256 over fusion and checks 64 random inputs
// in float32. Set TCFORGE_FULL=1 (TCFORGE_TOKENS=T to choose the tokens).
func TestFullSHA3(t *testing.T) {
	if os.Getenv("TCFORGE_FULL") == "" {
		t.Skip("set TCFORGE_FULL=1 to map full SHA3-256")
	}
	T := 64
	if s := os.Getenv("TCFORGE_TOKENS"); s != "" {
		T, _ = strconv.Atoi(s)
	}
	c := sdktest.Build(t, keccak.Plugin, map[string]any{"preset": "sha3-256"})
	l, err := fusion.Compile(context.Background(), c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := tokensasstates.Map(context.Background(), l, tokensasstates.Config{Tokens: T, Interleave: true})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Stats()
	t.Logf("tokens %d, d_model %d, blocks %d, heads %d, FFN %d, params %d dense %d nonzero", s.Tokens, s.DModel, s.Blocks, s.Heads, s.FFNHidden, s.ParamsDense, s.ParamsNonzero)
	in := bitvec.Random(rand.New(rand.NewPCG(1, 2)), 64, l.NumInputs)
	want, err := bitvec.EvalSliced(in, l.NumInputs, l.Eval)
	if err != nil {
		t.Fatal(err)
	}
	res, err := forward.Forward(m, in, forward.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := point.FirstMismatch("float32 stock pass vs layered circuit", res.Outputs, want, l.NumOutputs()); err != nil {
		t.Fatal(err)
	}
	t.Logf("margin %.4f", res.MinMargin)
}
