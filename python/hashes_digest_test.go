package python_test

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/blake2s"

	"github.com/tcforge/tcforge/plugins/ascon"
	"github.com/tcforge/tcforge/plugins/ascon/asconref"
	blake2splugin "github.com/tcforge/tcforge/plugins/blake2s"
	"github.com/tcforge/tcforge/plugins/blake2s/blake2sref"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// byteModule is one byte module of TestDigestModuleHashes: the
// construction's values, the message region of its ONNX input and the
// lengths it hashes, in bytes.
type byteModule struct {
	values           map[string]any
	region, min, max int
}

// TestDigestModuleBLAKE2s maps BLAKE2s-256 (mode "block": one final
// block, the byte counter an input; fusion at max_weight 2¹⁶) to stock
// layers with tokens-as-states, writes its byte module (bytes in, digest
// out: the message zero-padded, its bit length after it) as TorchScript
// and ONNX, and hashes a random message of every length 0 … 64 bytes and
// 65 of random lengths through torch.jit.load alone and in ONNX Runtime:
// at one round against blake2sref; with TCFORGE_HEAVY=1 at 10 rounds
// against golang.org/x/crypto/blake2s (PyTorch only: the full model's
// 2.5 GB ONNX file is past what ONNX Runtime parses without external
// data).
func TestDigestModuleBLAKE2s(t *testing.T) {
	checkByteModules(t, "blake2s", blake2splugin.Plugin, blake2sModules(), blake2sModules(), []int{1, blake2sref.Rounds}, blake2sDigest)
}

// TestDigestModuleAscon maps Ascon-Hash256 (padding "caller": one model
// for each of one to four padded blocks, as a sponge absorbs every block)
// to stock layers with tokens-as-states, writes each byte module (pad10*
// inside: messages of 8(n − 1) … 8n − 1 bytes) as TorchScript and ONNX,
// and hashes a random message of every length it takes and as many of
// random lengths through torch.jit.load alone and in ONNX Runtime: at one
// round the module of two blocks (8 … 15 bytes) against asconref; with
// TCFORGE_HEAVY=1 all four (0 … 31 bytes) at 12 rounds (asconref, pinned
// to NIST's ACVP vectors).
func TestDigestModuleAscon(t *testing.T) {
	all := asconModules()
	checkByteModules(t, "ascon", ascon.Plugin, all[1:2], all, []int{1, asconref.Rounds}, asconDigest)
}

// checkByteModules is TestDigestModuleBLAKE2s and TestDigestModuleAscon:
// the construction's modules ci at rounds[0] and, in the heavy tier, the
// modules heavy at rounds[1] (full), each hashing every length it takes
// and as many random ones.
func checkByteModules(t *testing.T, name string, plugin *sdk.Construction, ci, heavy []byteModule, rounds []int, digest func(msg []byte, rounds int) []byte) {
	needTorch(t)
	for i, r := range rounds {
		modules := ci
		if i > 0 {
			modules = heavy
		}
		t.Run(fmt.Sprintf("rounds=%d", r), func(t *testing.T) {
			if i > 0 {
				sdktest.Heavy(t, "the full hash as 95 to 280 stock layers: maps, writes and runs for minutes, GBs")
			} else if testing.Short() {
				t.Skip("-short: maps the one-round hash and runs it in PyTorch and ONNX Runtime")
			}
			dir := t.TempDir()
			rng := rand.New(rand.NewPCG(39, uint64(r)))
			var runs []jitRun
			var want [][]string
			for k, bm := range modules {
				values := map[string]any{"rounds": int64(r)}
				for p, v := range bm.values {
					values[p] = v
				}
				c := sdktest.Build(t, plugin, values)
				t0 := time.Now()
				config := exportStockOf(t, name, c, values, fusion.Options{MaxSum: tokensasstates.MaxWeight}, tokensasstates.Config{},
					filepath.Join(dir, "out", "models"), fmt.Sprintf("%s-%d.fusion.tokens-as-states-stock", name, k))
				buildModules(t, config)
				t.Logf("%v: mapped, exported and wrote the TorchScript and ONNX modules in %v", bm.values, time.Since(t0).Round(time.Millisecond))
				var msgs [][]byte
				var w []string
				span := bm.max - bm.min + 1
				for i := range 2 * span {
					n := bm.min + i
					if i >= span {
						n = bm.min + rng.IntN(span)
					}
					m := make([]byte, n)
					for j := range m {
						m[j] = byte(rng.Uint32())
					}
					msgs, w = append(msgs, m), append(w, hex.EncodeToString(digest(m, r)))
				}
				runs, want = append(runs, jitRun{strings.TrimSuffix(config, ".json") + ".pt", msgs}), append(want, w)
			}
			// One python process for every module (torch.jit.load alone),
			// then a message past a module's range, which it must name.
			res, more := jitAll(t, dir, `
for module, messages in zip(sys.argv[1::2], sys.argv[2::2]):
    m = torch.jit.load(module)
    longest = max(len(bytes.fromhex(l.strip())) for l in open(messages).read().split("\n")[:-1])
    try:
        m(torch.zeros(longest + 1, dtype=torch.uint8))
        print("no error")
    except Exception as e:
        print(str(e).strip().splitlines()[-1])
`, runs)
			refusals := strings.Split(strings.TrimSpace(more), "\n")
			for k, bm := range modules {
				checkDigests(t, fmt.Sprintf("%v, torch.jit.load", bm.values), res[k].digests, want[k])
				t.Logf("%v: PyTorch (torch.jit.load, batch of %d): %s s a message, load %s s", bm.values, len(runs[k].msgs), res[k].times.PerMessage, res[k].times.Load)
				span := fmt.Sprintf("%d to %d bytes", bm.min, bm.max)
				if w := fmt.Sprintf("digest module: a message of %d bytes; this model hashes %s", bm.max+1, span); k >= len(refusals) || !strings.Contains(refusals[k], w) {
					t.Errorf("%v: a %d-byte message: the module said %q, want %q", bm.values, bm.max+1, refusals, w)
				}
				if why := ortMissing(); why != "" {
					t.Log(why)
					continue
				}
				onnx := strings.TrimSuffix(runs[k].module, ".pt") + ".onnx"
				if fi, err := os.Stat(onnx); err != nil || fi.Size() >= 2<<30 {
					// Full BLAKE2s: 633 M parameters, 2.5 GB of float32 in
					// one protobuf, which ONNX Runtime cannot parse ("Protobuf
					// parsing failed"): the writer keeps no external data.
					t.Logf("%v: ONNX Runtime check skipped: %s (%v): an ONNX file of 2 GiB or more needs external data, which the module writer does not write", bm.values, filepath.Base(onnx), err)
					continue
				}
				r := runORT(t, onnx, bm.region, runs[k].msgs)
				checkDigests(t, fmt.Sprintf("%v, ONNX Runtime %s", bm.values, r.Version), r.Digests, want[k])
				t.Logf("%v: ONNX Runtime %s (onnxruntime-node): %.4f s a message, session %.2f s", bm.values, r.Version, r.SecondsPerMessage, r.LoadSeconds)
			}
		})
	}
}

// blake2sModules: BLAKE2s's one module, messages of 0 … 64 bytes (the
// block, then its bit length).
func blake2sModules() []byteModule {
	return []byteModule{{map[string]any{"mode": "block"}, 72, 0, 64}}
}

// asconModules: Ascon-Hash256's modules of one to four padded blocks,
// messages of 8(n − 1) … 8n − 1 bytes each.
func asconModules() []byteModule {
	var out []byteModule
	for n := 1; n <= 4; n++ {
		out = append(out, byteModule{map[string]any{"padding": "caller", "blocks": n}, 8 * n, 8 * (n - 1), 8*n - 1})
	}
	return out
}

// blake2sDigest is BLAKE2s-256 of msg with the given rounds: x/crypto's at
// 10 rounds (which blake2sref must equal there), blake2sref's otherwise.
func blake2sDigest(msg []byte, rounds int) []byte {
	d := blake2sref.Sum(msg, rounds)
	if rounds == blake2sref.Rounds {
		if std := blake2s.Sum256(msg); std != d {
			panic(fmt.Sprintf("blake2sref and x/crypto differ on %x", msg))
		}
	}
	return d[:]
}

// asconDigest is Ascon-Hash256 of msg with the given rounds (asconref).
func asconDigest(msg []byte, rounds int) []byte { return asconref.Hash256(msg, 8*len(msg), rounds) }
