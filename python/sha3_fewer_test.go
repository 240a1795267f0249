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

	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

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
