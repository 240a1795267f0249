package python_test

import (
	"context"
	"crypto/sha256"
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
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// sha256Check loads a stock model of SHA-256 (message and digest bits
// most significant first, as FIPS 180-4 writes them) and hashes every
// message of a file of hex messages with it, comparing each digest with
// hashlib.sha256 (rounds "full") or printing the digests.
const sha256Check = `
import sys, hashlib, torch, tcforge_torch
m = tcforge_torch.load(sys.argv[1])
msgs = [bytes.fromhex(l.strip()) for l in open(sys.argv[2]) if l.strip()]
bits = torch.tensor([[(x[j // 8] >> (7 - j % 8)) & 1 for j in range(8 * len(x))] for x in msgs], dtype=torch.uint8)
out = m.run(bits).tolist()
digests = [bytes(sum(int(o[8 * j + i]) << (7 - i) for i in range(8)) for j in range(len(o) // 8)) for o in out]
if sys.argv[3] == "full":
    equal = sum(d == hashlib.sha256(x).digest() for d, x in zip(digests, msgs))
    print(f"{equal} of {len(msgs)} digests equal hashlib.sha256")
else:
    print("\n".join(d.hex() for d in digests))
`

// TestStockSHA256 maps SHA-256 over fusion (max_weight 2¹⁶: 8-bit chunks)
// with tokens-as-states' defaults (32 tokens, one a bit position),
// exports the model and runs it in stock PyTorch modules
// (nn.TransformerEncoder loaded with strict=True) on 64 random 55-byte
// messages: at 8 rounds against the layered circuit (which the host's
// float32 pass must equal too); with TCFORGE_HEAVY=1 also at full rounds
// (320 stock layers; 9 min 23 s and 5.9 GB peak RSS on the loaded 2-core
// machine) against hashlib.sha256 and crypto/sha256.
func TestStockSHA256(t *testing.T) {
	needTorch(t)
	tests := []struct {
		rounds int
		heavy  bool
	}{
		{8, false},
		{64, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("rounds=%d", tt.rounds), func(t *testing.T) {
			if tt.heavy {
				sdktest.Heavy(t, "full SHA-256 in stock PyTorch (320 layers, 6 GB, minutes)")
			}
			ctx := context.Background()
			c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(tt.rounds)})
			l, err := fusion.Compile(ctx, c, fusion.Options{MaxSum: 1 << 16})
			if err != nil {
				t.Fatal(err)
			}
			m, err := tokensasstates.Map(ctx, l, tokensasstates.Config{})
			if err != nil {
				t.Fatal(err)
			}
			if m.Tokens != 32 || len(m.Blocks) != l.Depth()-1 {
				t.Fatalf("%d tokens, %d blocks; want 32 and %d", m.Tokens, len(m.Blocks), l.Depth()-1)
			}
			rng := rand.New(rand.NewPCG(256, uint64(tt.rounds)))
			msgs := make([][]byte, 64)
			in := make([]bitvec.Vec, len(msgs))
			var hexes strings.Builder
			for i := range msgs {
				msgs[i] = make([]byte, l.NumInputs/8)
				for j := range msgs[i] {
					msgs[i][j] = byte(rng.Uint32())
				}
				hexes.WriteString(hex.EncodeToString(msgs[i]) + "\n")
				in[i] = bitvec.NewVec(l.NumInputs)
				for j := range l.NumInputs {
					in[i].Set(j, uint(msgs[i][j/8]>>(7-j%8)&1))
				}
			}
			want, err := bitvec.EvalSliced(in, l.NumInputs, l.Evaluator())
			if err != nil {
				t.Fatal(err)
			}
			host, err := forward.Forward(m, in, forward.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var wantHex strings.Builder
			for i := range msgs {
				if !bitvec.Equal(host.Outputs[i], want[i], l.NumOutputs()) {
					t.Fatalf("message %d: the host's float32 pass differs from the layered circuit", i)
				}
				d := make([]byte, l.NumOutputs()/8)
				for j := range l.NumOutputs() {
					d[j/8] |= byte(want[i].Get(j)) << (7 - j%8)
				}
				if sum := sha256.Sum256(msgs[i]); tt.rounds == 64 && string(d) != string(sum[:]) {
					t.Fatalf("message %d: the layered circuit's digest differs from crypto/sha256", i)
				}
				wantHex.WriteString(hex.EncodeToString(d) + "\n")
			}
			dir := t.TempDir()
			info, err := safetensors.Export(m, dir, "sha256.tokens-as-states", 0)
			if err != nil {
				t.Fatal(err)
			}
			msgFile := filepath.Join(dir, "messages.hex")
			if err := os.WriteFile(msgFile, []byte(hexes.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			mode := "digests"
			if tt.rounds == 64 {
				mode = "full"
			}
			got := runPython(t, dir, sha256Check, info.Config, msgFile, mode)
			if tt.rounds == 64 {
				if w := fmt.Sprintf("%d of %d digests equal hashlib.sha256", len(msgs), len(msgs)); strings.TrimSpace(got) != w {
					t.Errorf("stock PyTorch: %s, want %s", strings.TrimSpace(got), w)
				}
			} else if got != wantHex.String() {
				t.Errorf("stock PyTorch digests\n%s\nlayered circuit\n%s", got, wantHex.String())
			}
			s := m.Stats()
			t.Logf("%d rounds: depth %d; tokens %d, d_model %d, blocks %d, heads %d, FFN %d, params dense %d nonzero %d; attrs %v; margin %.6f",
				tt.rounds, l.Depth(), s.Tokens, s.DModel, s.Blocks, s.Heads, s.FFNHidden, s.ParamsDense, s.ParamsNonzero, m.Attrs, host.MinMargin)
		})
	}
}
