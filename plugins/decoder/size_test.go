package decoder_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/tcforge/tcforge/plugins/decoder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestSize maps one circuit given by the environment (exploration).
func TestSize(t *testing.T) {
	what := os.Getenv("DEC")
	if what == "" {
		t.Skip("DEC not set")
	}
	ctx := context.Background()
	rounds, _ := strconv.Atoi(os.Getenv("ROUNDS"))
	k, _ := strconv.Atoi(os.Getenv("K"))
	var l *layered.Circuit
	var err error
	msb := false
	switch what {
	case "sha256", "sha256-reifier":
		msb = true
		c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "mode": "block", "rounds": int64(rounds)})
		if what == "sha256" {
			l, err = fusion.Compile(ctx, c, fusion.Options{MaxSum: 1 << 16})
		} else {
			l, err = reifier.CompileBounded(ctx, c, 1<<16)
		}
	case "sha3":
		c := sdktest.Build(t, keccak.Plugin, map[string]any{"preset": "sha3-256", "rounds": int64(rounds)})
		l, err = fusion.Compile(ctx, c, fusion.Options{})
	case "keccak8":
		c := sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(3), "rate": int64(100), "rounds": int64(rounds)})
		l, err = fusion.Compile(ctx, c, fusion.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	m, err := decoder.Map(ctx, l, decoder.Config{LevelsPerStep: k, BitOrder: map[bool]string{true: "msb-first", false: "lsb-first"}[msb]})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Stats()
	fmt.Printf("%s r%d k%d: depth %d, layers %d, d_model %d, heads %d, ffn %d, prompt %d, generated %d, kinds %d, params %d nz %d (map %v)\n",
		what, rounds, k, l.Depth(), s.Blocks, s.DModel, s.Heads, s.FFNHidden, m.Decoder.Prompt, m.Decoder.Generated(), m.Attrs["kinds"], s.ParamsDense, s.ParamsNonzero, time.Since(t0))
}

// TestSizeCheck maps like TestSize and checks N samples token by token.
func TestSizeCheck(t *testing.T) {
	if os.Getenv("DEC") == "" || os.Getenv("N") == "" {
		t.Skip("DEC or N not set")
	}
	ctx := context.Background()
	rounds, _ := strconv.Atoi(os.Getenv("ROUNDS"))
	k, _ := strconv.Atoi(os.Getenv("K"))
	n, _ := strconv.Atoi(os.Getenv("N"))
	var l *layered.Circuit
	var err error
	msb := true
	switch os.Getenv("DEC") {
	case "sha256-reifier":
		c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "mode": "block", "rounds": int64(rounds)})
		l, err = reifier.CompileBounded(ctx, c, 1<<16)
	case "sha3":
		msb = false
		c := sdktest.Build(t, keccak.Plugin, map[string]any{"preset": "sha3-256", "padding": "none", "message_bits": int64(1088), "rounds": int64(rounds)})
		l, err = fusion.Compile(ctx, c, fusion.Options{})
	default:
		c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "mode": "block", "rounds": int64(rounds)})
		l, err = fusion.Compile(ctx, c, fusion.Options{MaxSum: 1 << 16})
	}
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	m, err := decoder.Map(ctx, l, decoder.Config{LevelsPerStep: k, BitOrder: map[bool]string{true: "msb-first", false: "lsb-first"}[msb]})
	if err != nil {
		t.Fatal(err)
	}
	s := m.Stats()
	fmt.Printf("mapped in %v: layers %d, d_model %d, heads %d, ffn %d, generated %d, kinds %d, params %d\n", time.Since(t0), s.Blocks, s.DModel, s.Heads, s.FFNHidden, s.Generated, m.Attrs["kinds"], s.ParamsDense)
	t0 = time.Now()
	in := bitvec.Random(rand.New(rand.NewPCG(3, 4)), n, l.NumInputs)
	mc := sdktest.CheckModel(t, m, l, sdktest.ModelOptions{In: in})
	fmt.Printf("checked %d samples (every generated token, float32 and float64: exact in %s), margin %.4f in %v\n", n, mc.ExactIn, mc.MinMargin, time.Since(t0))
}
