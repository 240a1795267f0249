package python_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/sha2/sha2ref"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestDigestModuleSHA256 maps SHA-256's compression function (mode
// "compress": chaining value and one block in) over fusion with max_weight
// 2¹⁶ (configs/transformers.hcl's transformers-sha256-block) to stock
// layers, writes its byte module (the IV as the chain, SHA-2's padding
// inside: messages of 0 … 55 bytes, MSB first) as TorchScript and ONNX,
// and hashes one random message of every length 0 … 55 and 64 of random
// lengths through torch.jit.load alone and in ONNX Runtime: at 8 rounds
// against sha2ref's reduced SHA-256; with TCFORGE_HEAVY=1 also at the full
// 64 rounds against crypto/sha256, then runs the README's SHA-256 lines.
func TestDigestModuleSHA256(t *testing.T) {
	needTorch(t)
	for _, tt := range []struct {
		rounds int
		heavy  bool
	}{
		{2, false},
		{64, true},
	} {
		t.Run(fmt.Sprintf("rounds=%d", tt.rounds), func(t *testing.T) {
			if tt.heavy {
				sdktest.Heavy(t, "full SHA-256 as 320-odd stock layers: maps, writes and runs for minutes, GBs")
			} else if testing.Short() {
				t.Skip("-short: maps 8-round SHA-256 and runs it in PyTorch and ONNX Runtime")
			}
			values := map[string]any{"preset": "sha256", "mode": "compress", "rounds": int64(tt.rounds)}
			c := sdktest.Build(t, sha2.Plugin, values)
			dir := t.TempDir()
			t0 := time.Now()
			config := exportStockOf(t, "sha2", c, values, fusion.Options{MaxSum: 1 << 16}, tokensasstates.Config{},
				filepath.Join(dir, "out", "models"), "transformers-sha256-block.fusion.tokens-as-states-stock")
			t.Logf("mapped and exported in %v", time.Since(t0).Round(time.Millisecond))
			t0 = time.Now()
			buildModules(t, config)
			t.Logf("wrote the TorchScript and ONNX modules in %v", time.Since(t0).Round(time.Millisecond))
			rng := rand.New(rand.NewPCG(256, uint64(tt.rounds)))
			var msgs [][]byte
			var want []string
			for i := range 56 + 64 {
				n := i
				if i >= 56 {
					n = rng.IntN(56)
				}
				m := make([]byte, n)
				for j := range m {
					m[j] = byte(rng.Uint32())
				}
				d := packMSB(sha2ref.SHA256.Sum(unpackMSB(m), tt.rounds))
				if tt.rounds == 64 {
					if std := sha256.Sum256(m); hex.EncodeToString(std[:]) != hex.EncodeToString(d) {
						t.Fatalf("sha2ref and crypto/sha256 differ on %x", m)
					}
				}
				msgs, want = append(msgs, m), append(want, hex.EncodeToString(d))
			}
			base := strings.TrimSuffix(config, ".json")
			got, times := jitTimes(t, dir, base+".pt", msgs)
			checkDigests(t, "torch.jit.load", got, want)
			t.Logf("PyTorch (torch.jit.load, batch of %d): %s s a message, load %s s, first call (two messages) %s s", len(msgs), times.PerMessage, times.Load, times.WarmUp)
			if why := ortMissing(); why != "" {
				t.Log(why)
			} else {
				r := runORT(t, base+".onnx", 64, msgs)
				checkDigests(t, "ONNX Runtime "+r.Version, r.Digests, want)
				t.Logf("ONNX Runtime %s (onnxruntime-node, batch of %d): %.4f s a message, session %.2f s", r.Version, len(msgs), r.SecondsPerMessage, r.LoadSeconds)
			}
			// A message past the block: the module names the problem.
			out := runPython(t, dir, `
import sys, torch
m = torch.jit.load(sys.argv[1])
try:
    m(torch.zeros(56, dtype=torch.uint8))
    print("no error")
except Exception as e:
    print(str(e).strip().splitlines()[-1])
`, base+".pt")
			if w := "digest module: a message of 56 bytes; this model hashes 0 to 55 bytes"; !strings.Contains(out, w) {
				t.Errorf("a 56-byte message: the module said %q, want %q", strings.TrimSpace(out), w)
			}
			if tt.rounds != 64 {
				checkSHA2Refusals(t, dir, config)
				return
			}
			sum := sha256.Sum256([]byte("abc"))
			checkDigestSnippet(t, dir, "digest-sha256", sum[:])
		})
	}
}

// unpackMSB returns the bits of b, one a byte, most significant first
// (sha2ref's form).
func unpackMSB(b []byte) []byte {
	out := make([]byte, 0, 8*len(b))
	for _, x := range b {
		for i := 7; i >= 0; i-- {
			out = append(out, x>>i&1)
		}
	}
	return out
}

// packMSB packs bits (one a byte), most significant first.
func packMSB(bits []byte) []byte {
	out := make([]byte, len(bits)/8)
	for i, bit := range bits {
		out[i/8] |= bit << (7 - i%8)
	}
	return out
}

// checkSHA2Refusals edits the computes section of a SHA-2 compression
// model's config (a preset without an IV table, a preset its parameters
// contradict, inputs of another shape, another bit order) and checks that `python3 -m tcforge_torch module` refuses each, naming
// the problem, in one line and exit status 1.
func checkSHA2Refusals(t *testing.T, dir, config string) {
	t.Helper()
	out := runPython(t, dir, `
import sys, json, os
from tcforge_torch.__main__ import main
cfg = json.load(open(sys.argv[1]))
cases = {
    "preset": lambda cp: cp["params"].update(preset="sha512-224", w=64, digest_bits=224),
    "other preset": lambda cp: cp["params"].update(preset="sha224"),
    "inputs": lambda cp: cp["inputs"].reverse(),
    "order": lambda cp: cp.update(bit_order="bits"),
}
for name, edit in cases.items():
    c = json.loads(json.dumps(cfg))
    edit(c["computes"])
    path = os.path.join(os.path.dirname(sys.argv[1]), "bad-" + name + ".json")
    json.dump(c, open(path, "w"))
    import io, contextlib
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(["tcforge_torch", "module", path])
    print(name, "|", rc, "|", err.getvalue().strip())
`, config)
	got := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if name, rest, ok := strings.Cut(l, " | "); ok {
			got[name] = rest
		}
	}
	for _, tc := range []struct{ name, want string }{
		{"preset", "1 | tcforge_torch: ERROR: " + filepath.Join(filepath.Dir(config), "bad-preset.json") + ": SHA-2 model of preset 'sha512-224': no IV table (byte modules take sha224, sha256, sha384, sha512)"},
		{"other preset", "1 | tcforge_torch: ERROR: " + filepath.Join(filepath.Dir(config), "bad-other preset.json") + ": computes.params.preset is 'sha224', whose digest_bits 224, but the parameters say digest_bits 256"},
		{"inputs", "1 | tcforge_torch: ERROR: " + filepath.Join(filepath.Dir(config), "bad-inputs.json") + ": SHA-2 compression model with inputs [('block', 512), ('chain', 256)] and 256 outputs: want chain (256 bits), block (512) and 256 outputs"},
		{"order", "1 | tcforge_torch: ERROR: " + filepath.Join(filepath.Dir(config), "bad-order.json") + ": computes.bit_order is 'bits', but construction 'sha2' maps bytes to bits msb-first"},
	} {
		if got[tc.name] != tc.want {
			t.Errorf("module of a config with a bad %s: got %q, want %q", tc.name, got[tc.name], tc.want)
		}
	}
}
