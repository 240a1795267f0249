package python_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestStockKeccakFewerBlocks maps toy Keccak (w = 2, four rounds, one
// block) layered at one level a round — fusion's round
// objective without rule 10 (depth rounds + 2) and with round_levels = 2
// (two rounds at one level, the rest at two: depth 2·rounds − 1) — with
// tokens-as-states' defaults (one token a slice), exports each model and
// runs it in stock PyTorch modules (nn.TransformerEncoder, strict=True) on
// 32 random inputs, bit for bit against the layered circuit and the
// host's float32 pass (w = 4 gives FFN 57,996, 240–288 M dense
// parameters: too large for the default tier): the toy form of full SHA3-256 below 48 blocks
// (plugins/tokensasstates TestFewerBlocksSHA3, configs/model-frontier.hcl).
func TestStockKeccakFewerBlocks(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "two toy Keccak models at one level a round in stock PyTorch (20–40 s; d_model 172, FFN 28,930)")
	ctx := context.Background()
	const rounds = 4
	for _, tt := range []struct {
		name          string
		logW          int64
		opts          fusion.Options
		blocks, slots int
	}{
		{"w2-one-level-a-round", 1, fusion.Options{Objective: fusion.Round, NoPair: true}, rounds + 1, 2},
		{"w2-round-levels-2", 1, fusion.Options{Objective: fusion.Round, RoundLevels: 2}, 2*rounds - 2, 2},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := int64(25) << tt.logW
			c := build(t, map[string]any{"log_w": tt.logW, "rate": b / 2, "rounds": int64(rounds), "padding": "none"})
			l, err := fusion.Compile(ctx, c, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{})
			if err != nil {
				t.Fatal(err)
			}
			s := m.Stats()
			if !m.IsStock() || s.Blocks != tt.blocks || s.Tokens != tt.slots {
				t.Fatalf("depth %d: %d blocks, %d tokens (stock %v), want %d stock blocks, %d tokens", l.Depth(), s.Blocks, s.Tokens, m.IsStock(), tt.blocks, tt.slots)
			}
			in := bitvec.Random(rand.New(rand.NewPCG(23, uint64(tt.logW))), 32, l.NumInputs)
			out, err := bitvec.EvalSliced(in, l.NumInputs, l.Evaluator())
			if err != nil {
				t.Fatal(err)
			}
			host, err := forward.Forward(m, in, forward.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var want, hb strings.Builder
			for k := range out {
				want.WriteString(out[k].Text(l.NumOutputs()) + "\n")
				hb.WriteString(host.Outputs[k].Text(l.NumOutputs()) + "\n")
			}
			if want.String() != hb.String() {
				t.Fatal("the host's float32 pass differs from the layered circuit")
			}
			dir := t.TempDir()
			info, err := safetensors.Export(m, dir, tt.name+".tokens-as-states", 0)
			if err != nil {
				t.Fatal(err)
			}
			inFile := filepath.Join(dir, "in.txt")
			writeInputs(t, inFile, in, l.NumInputs)
			runPython(t, dir, runAll, info.Config, inFile)
			got, err := os.ReadFile(inFile + ".out")
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want.String() {
				t.Errorf("PyTorch outputs\n%s\nlayered circuit\n%s", got, want.String())
			}
			t.Logf("depth %d width %d: d_model %d, blocks %d, heads %d, FFN %d, params %d dense", l.Depth(), l.Stats().Width, s.DModel, s.Blocks, s.Heads, s.FFNHidden, s.ParamsDense)
		})
	}
}

// TestStockSHA3RoundLevels1 maps full SHA3-256 (one block, 135-byte
// messages) layered by fusion's round objective with round_levels = 1
// (depth 48: 47 stock blocks, FFN 4,324) with tokens-as-states' defaults,
// exports it and hashes 64 random messages with it in stock PyTorch
// modules, each digest against hashlib.sha3_256. The wider points below
// it (FFN about 50,000: 2.7–3.3·10⁹ dense parameters, 11–13 GB as dense
// float32 modules) are verified by the host's float32 pass
// (configs/model-frontier.hcl), not loaded into PyTorch here.
func TestStockSHA3RoundLevels1(t *testing.T) {
	needTorch(t)
	sdktest.Heavy(t, "full SHA3-256 at 47 stock blocks in PyTorch (minutes, 1–2 GB)")
	ctx := context.Background()
	c := build(t, map[string]any{"preset": "sha3-256"})
	l, err := fusion.Compile(ctx, c, fusion.Options{Objective: fusion.Round, RoundLevels: 1})
	if err != nil {
		t.Fatal(err)
	}
	m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if s := m.Stats(); !m.IsStock() || s.Blocks != 47 || s.Tokens != 64 {
		t.Fatalf("%d blocks, %d tokens (stock %v), want 47 stock blocks, 64 tokens", s.Blocks, s.Tokens, m.IsStock())
	}
	rng := rand.New(rand.NewPCG(47, 1))
	var hexes strings.Builder
	for range 64 {
		msg := make([]byte, 135)
		for j := range msg {
			msg[j] = byte(rng.Uint32())
		}
		hexes.WriteString(hex.EncodeToString(msg) + "\n")
	}
	dir := t.TempDir()
	msgFile := filepath.Join(dir, "messages.hex")
	if err := os.WriteFile(msgFile, []byte(hexes.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	info, err := safetensors.Export(m, filepath.Join(dir, "models"), "sha3-256-round-levels-1.tokens-as-states", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(runPython(t, dir, sha3Check, info.Config, msgFile))
	if want := fmt.Sprintf("%d of %d digests equal hashlib.sha3_256", 64, 64); got != want {
		t.Errorf("%s, want %s", got, want)
	}
}
