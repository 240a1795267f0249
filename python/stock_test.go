package python_test

import (
	"context"
	"crypto/sha3"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/plugins/merkle"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestStockTokensAsStates maps toy Keccak (w = 1, 2, 8; and w = 1, three
// rounds, over fusion's round objective: one block a round, mixed-radix
// weights, a balance dimension), an MD and a Merkle point and the adder
// with tokens-as-states, exports them, and runs each in stock PyTorch
// modules (nn.TransformerEncoder loaded with strict=True, an nn.Linear
// input map, the position embedding and an nn.Linear readout) on 32
// random inputs, bit for bit against the layered circuit and the host's
// own float32 pass.
func TestStockTokensAsStates(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "nine tokens-as-states models in stock PyTorch modules (5 s quiet)")
	ctx := context.Background()
	fewer := map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(4), "padding": "none"}
	points := []struct {
		name   string
		plugin *sdk.Construction
		values map[string]any
		cfg    tokensasstates.Config
		opts   fusion.Options
		// blocks, tokens: the stock shape the point must map to (0: not checked).
		blocks, tokens int
	}{
		{"keccak-w1", keccak.Plugin, map[string]any{"log_w": int64(0), "rate": int64(16), "rounds": int64(2)}, tokensasstates.Config{Tokens: 4}, fusion.Options{}, 0, 0},
		{"keccak-w2", keccak.Plugin, map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(2)}, tokensasstates.Config{Tokens: 2, Interleave: true}, fusion.Options{}, 0, 0},
		{"keccak-w8", keccak.Plugin, map[string]any{"log_w": int64(3), "rate": int64(100), "rounds": int64(2)}, tokensasstates.Config{Tokens: 8, Interleave: true}, fusion.Options{}, 0, 0},
		{"keccak-w1-round", keccak.Plugin, map[string]any{"log_w": int64(0), "rate": int64(16), "rounds": int64(3), "padding": "none"}, tokensasstates.Config{Tokens: 1}, fusion.Options{Objective: fusion.Round}, 0, 0},
		{"md", md.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(3), "block_bits": int64(25), "blocks": int64(2)}, tokensasstates.Config{Tokens: 4}, fusion.Options{}, 0, 0},
		{"merkle", merkle.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(3), "block_bits": int64(25), "leaves": int64(2)}, tokensasstates.Config{Tokens: 4}, fusion.Options{}, 0, 0},
		{"adder", adder.Plugin, map[string]any{"n": int64(8)}, tokensasstates.Config{Tokens: 8, Interleave: true}, fusion.Options{}, 0, 0},
		// Toy Keccak (w = 2, four rounds) at one level a round, the toy form
		// of full SHA3-256 below 48 blocks (plugins/tokensasstates
		// TestFewerBlocksSHA3, configs/model-frontier.hcl): fusion's round
		// objective without rule 10 (depth rounds + 2) and with
		// round_levels = 2 (depth 2·rounds − 1), with tokens-as-states'
		// defaults (one token a slice). w = 4 would give FFN 57,996 and
		// 240–288 M dense parameters: too large for the default tier.
		{"keccak-w2-one-level-a-round", keccak.Plugin, fewer, tokensasstates.Config{}, fusion.Options{Objective: fusion.Round, NoPair: true}, 5, 2},
		{"keccak-w2-round-levels-2", keccak.Plugin, fewer, tokensasstates.Config{}, fusion.Options{Objective: fusion.Round, RoundLevels: 2}, 6, 2},
	}
	dir := t.TempDir()
	var args []string
	want := map[string]string{}
	for i, p := range points {
		c := sdktest.Build(t, p.plugin, p.values)
		l, err := fusion.Compile(ctx, c, p.opts)
		if err != nil {
			t.Fatal(err)
		}
		m, err := tokensasstates.Map(ctx, l, p.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if s := m.Stats(); p.blocks > 0 && (!m.IsStock() || s.Blocks != p.blocks || s.Tokens != p.tokens) {
			t.Fatalf("%s: depth %d: %d blocks, %d tokens (stock %v), want %d stock blocks, %d tokens", p.name, l.Depth(), s.Blocks, s.Tokens, m.IsStock(), p.blocks, p.tokens)
		}
		in := bitvec.Random(rand.New(rand.NewPCG(15, uint64(i))), 32, l.NumInputs)
		out, err := bitvec.EvalSliced(in, l.NumInputs, l.Evaluator())
		if err != nil {
			t.Fatal(err)
		}
		host, err := forward.Forward(m, in, forward.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var sb, hb strings.Builder
		for s := range out {
			sb.WriteString(out[s].Text(l.NumOutputs()) + "\n")
			hb.WriteString(host.Outputs[s].Text(l.NumOutputs()) + "\n")
		}
		if sb.String() != hb.String() {
			t.Fatalf("%s: the host's float32 pass differs from the layered circuit", p.name)
		}
		info, err := safetensors.Export(m, dir, p.name+".tokens-as-states", 0)
		if err != nil {
			t.Fatal(err)
		}
		inFile := filepath.Join(dir, p.name+".in")
		writeInputs(t, inFile, in, l.NumInputs)
		args = append(args, info.Config, inFile)
		want[inFile] = sb.String()
	}
	runPython(t, dir, runAll, args...)
	for inFile, w := range want {
		got, err := os.ReadFile(inFile + ".out")
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != w {
			t.Errorf("%s: PyTorch outputs\n%s\nlayered circuit\n%s", filepath.Base(inFile), got, w)
		}
	}
}

// TestStockSnippet runs docs/export.md's stock-modules snippet on the model
// configs/transformers.hcl exports for SHA3-256 of one padded block
// (fusion, tokens-as-states; the snippet pads b"abc") and checks that it
// prints sha3_256(b"abc") twice, from the stock nn.TransformerEncoder and
// from hashlib, both equal to Go's crypto/sha3.
func TestStockSnippet(t *testing.T) {
	needTorch(t)
	if testing.Short() {
		t.Skip("-short: the snippet maps and runs full SHA3-256")
	}
	ctx := context.Background()
	c := sdktest.Build(t, keccak.Plugin, map[string]any{"preset": "sha3-256", "padding": "none", "message_bits": int64(1088)})
	l, err := fusion.Compile(ctx, c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{Tokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := safetensors.Export(m, filepath.Join(dir, "out", "models"), "transformers-sha3-256-block.fusion.tokens-as-states-stock", 0); err != nil {
		t.Fatal(err)
	}
	snippet := docSnippet(t, "../docs/export.md", "stock")
	sum := sha3.Sum256([]byte("abc"))
	want := hex.EncodeToString(sum[:])
	got := strings.Fields(runPython(t, dir, snippet))
	if len(got) != 2 || got[0] != want || got[1] != want {
		t.Errorf("docs/export.md stock snippet printed %q, want %s twice (sha3_256(b\"abc\"))", got, want)
	}
}
