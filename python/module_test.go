package python_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/host/run"
	pymod "github.com/tcforge/tcforge/python"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// exportToy is a pipeline whose run exports a stock model with a byte
// interface (toy Keccak w = 2, two rounds, 32-bit blocks the caller
// supplies: 4-byte messages) and one without (the no-attention model).
const exportToy = `
pipeline "toy" {
  samples = 8
  construction "keccak" {
    log_w  = 1
    rate   = 32
    rounds = 2
  }
  layerer "fusion" {}
  mapper "tokens-as-states" {
    tokens = 2
    assign = "interleave"
  }
  mapper "no-attention" { variant = "residual" }
}
`

// runExport runs exportToy as `tcforge run --export DIR` does, with the
// byte modules written by python (the interpreter's path) under timeout,
// and returns DIR and the run's log.
func runExport(t *testing.T, python string, timeout time.Duration) (string, string) {
	t.Helper()
	return runExportOf(t, exportToy, python, timeout)
}

// runExportOf is runExport of the pipelines of src.
func runExportOf(t *testing.T, src, python string, timeout time.Duration) (string, string) {
	t.Helper()
	var logBuf bytes.Buffer
	mw := pymod.NewModuleWriter(python, timeout, zerolog.New(&logBuf))
	defer mw.Close()
	dir := t.TempDir()
	exportWith(t, src, dir, mw, &logBuf)
	return dir, logBuf.String()
}

// exportWith runs the pipelines of src as `tcforge run --export dir`
// does, the byte modules written by modules (nil: none), logging to
// logBuf (nil: nowhere); every row must verify.
func exportWith(t *testing.T, src, dir string, modules *pymod.ModuleWriter, logBuf *bytes.Buffer) {
	t.Helper()
	f, diags := config.Parse("export.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if logBuf == nil {
		logBuf = new(bytes.Buffer)
	}
	log := zerolog.New(logBuf)
	reg := registry.New(registry.Options{Builtins: builtin.Plugins(), InProcess: true, Log: zerolog.Nop()})
	defer reg.Close()
	r := &run.Runner{Registry: reg, Log: log, Jobs: 1, Export: dir}
	if modules != nil {
		r.Modules = modules
	}
	for _, p := range f.Pipelines {
		res, err := r.Run(context.Background(), p)
		if err != nil || !res.OK() {
			t.Fatalf("run --export: %v (the module writer must never fail a run)\n%s", err, logBuf.String())
		}
	}
}

// TestExportWritesModules runs a pipeline with --export as the CLI does
// (host/run's Runner with python.ModuleWriter): the stock model gets its
// byte module, .pt and .onnx, hashing like the construction; the
// no-attention model none.
func TestExportWritesModules(t *testing.T) {
	needTorch(t)
	dir, log := runExport(t, python, 0)
	base := filepath.Join(dir, "toy.fusion.tokens-as-states-stock")
	for _, ext := range []string{".json", ".safetensors", ".pt", ".onnx"} {
		if _, err := os.Stat(base + ext); err != nil {
			t.Errorf("--export wrote no %s: %v\n%s", ext, err, log)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "toy.fusion.no-attention-residual.*")); len(m) != 3 {
		t.Errorf("no-attention model: files %q, want the config, weights and labels only", m)
	}
	if !strings.Contains(log, `"message":"wrote the byte module"`) {
		t.Errorf("the run logged no written byte module:\n%s", log)
	}
	// The module reads 4-byte messages (toy sponge, 32-bit rate, caller's
	// padding); its test vectors give the digest of one.
	out := runPython(t, dir, `
import sys, json, torch
cfg = json.load(open(sys.argv[1] + ".json"))
vec = cfg["test_vectors"][0]
msg = bytes(sum(int(vec["input"][8 * j + i]) << i for i in range(8)) for j in range(4))
want = bytes(sum(int(vec["output"][8 * j + i]) << i for i in range(8)) for j in range(len(vec["output"]) // 8))
got = torch.jit.load(sys.argv[1] + ".pt")(torch.tensor(list(msg), dtype=torch.uint8)).numpy().tobytes()
print("equal" if got == want else f"differ {got.hex()}", msg.hex(), want.hex())
`, base)
	f := strings.Fields(out)
	if len(f) != 3 || f[0] != "equal" {
		t.Fatalf("the exported .pt against the export's test vector (verdict, message, digest): %s", out)
	}
	if why := ortMissing(); why != "" {
		t.Skip(why)
	}
	msg, err := hex.DecodeString(f[1])
	if err != nil {
		t.Fatal(err)
	}
	got := runORT(t, base+".onnx", 4, [][]byte{msg})
	checkDigests(t, "ONNX Runtime "+got.Version+" against the export's test vector", got.Digests, []string{f[2]})
}

// TestExportWithoutPython runs --export where the byte module cannot be
// written: no interpreter, one that cannot import torch, one that hangs.
// The run succeeds with every model exported, logs why once (one line),
// and a hanging interpreter is stopped at the timeout.
func TestExportWithoutPython(t *testing.T) {
	t.Parallel()
	scripts := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(scripts, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, python, log string
		warnings          int
	}{
		{"no interpreter", filepath.Join(scripts, "absent"), "no Python interpreter", 1},
		{"no torch", write("notorch", "echo \"ModuleNotFoundError: No module named 'torch'\" >&2\nexit 1\n"), "cannot import torch (apt-get install python3-torch): exit status 1 ModuleNotFoundError: No module named 'torch'", 1},
		{"hangs", write("hangs", "case \"$*\" in *\"import torch\"*) exit 0;; esac\nexec sleep 600\n"), "byte module not written (the model is exported)", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			dir, log := runExport(t, tc.python, 2*time.Second)
			if d := time.Since(t0); d > 2*time.Minute {
				t.Errorf("the run took %v", d)
			}
			if _, err := os.Stat(filepath.Join(dir, "toy.fusion.tokens-as-states-stock.safetensors")); err != nil {
				t.Errorf("the model was not exported: %v", err)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "*.pt")); len(m) != 0 {
				t.Errorf("wrote %q", m)
			}
			if !strings.Contains(log, tc.log) {
				t.Errorf("log has no %q:\n%s", tc.log, log)
			}
			if n := strings.Count(log, `"level":"warn"`); n != tc.warnings {
				t.Errorf("%d warnings, want %d:\n%s", n, tc.warnings, log)
			}
		})
	}
	// The writer's own error says what is missing.
	w := pymod.NewModuleWriter(filepath.Join(scripts, "absent"), 0, zerolog.Nop())
	_, err := w.WriteModule(context.Background(), "x.json")
	if !errors.Is(err, pymod.ErrUnavailable) || !strings.Contains(err.Error(), "no Python interpreter") {
		t.Errorf("WriteModule without an interpreter: %v", err)
	}
}

// exportDecoderToy is a pipeline whose run exports a decoder with a byte
// interface (toy Keccak w = 2, two rounds, 4-byte messages).
const exportDecoderToy = `
pipeline "toy" {
  samples = 8
  construction "keccak" {
    log_w  = 1
    rate   = 32
    rounds = 2
  }
  layerer "fusion" {}
  mapper "decoder" { levels_per_step = 2 }
}
`

// TestExportWritesDecoderModules runs a decoder's pipeline with --export
// as the CLI does: the config describes the decoder (its section, each
// layer's dim_feedforward, test vectors with prompts and tokens) and the
// byte module, .pt and .onnx, writes the test vectors' tokens and digests
// in PyTorch and ONNX Runtime; tcforge_torch.load's DecoderModel.run
// decodes the vectors' inputs to their outputs.
func TestExportWritesDecoderModules(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "a decoder's run --export with its byte module (the module writer, PyTorch, ONNX Runtime)")
	dir, log := runExportOf(t, exportDecoderToy, python, 0)
	base := filepath.Join(dir, "toy.fusion.decoder-stock")
	for _, ext := range []string{".json", ".safetensors", ".pt", ".onnx"} {
		if _, err := os.Stat(base + ext); err != nil {
			t.Errorf("--export wrote no %s: %v\n%s", ext, err, log)
		}
	}
	// The test vectors: message (4 bytes, LSB first), digest and tokens;
	// the module's working and digest must be theirs.
	out := runPython(t, dir, `
import sys, json, torch
cfg = json.load(open(sys.argv[1] + ".json"))
assert "embedding" not in cfg and "readout" not in cfg, sorted(cfg)
d = cfg["decoder"]
ffn = [b["layer"]["dim_feedforward"] for b in cfg["blocks"]]
assert all(cfg["tensors"][b["layer"]["tensors"]["linear1.weight"]]["rows"] == f for b, f in zip(cfg["blocks"], ffn)), ffn
assert len(d["step"]) == d["working"] + d["digest"] == len(cfg["test_vectors"][0]["tokens"])
# The loader: every test vector by greedy decoding (DecoderModel.run),
# and bits of the wrong width refused.
import tcforge_torch
dm = tcforge_torch.load(sys.argv[1] + ".json")
ins = torch.tensor([[int(c) for c in v["input"]] for v in cfg["test_vectors"]], dtype=torch.uint8)
assert dm.run(ins).tolist() == [[int(c) for c in v["output"]] for v in cfg["test_vectors"]], "DecoderModel.run"
try:
    dm.run(ins[:, 1:])
    raise AssertionError("31 bits a row ran")
except ValueError as e:
    assert "want bits of shape [n, 32], got [8, 31]" in str(e), e
m = torch.jit.load(sys.argv[1] + ".pt")
for vec in cfg["test_vectors"]:
    msg = bytes(sum(int(vec["input"][8 * j + i]) << i for i in range(8)) for j in range(4))
    want = bytes(sum(int(vec["output"][8 * j + i]) << i for i in range(8)) for j in range(len(vec["output"]) // 8))
    x = torch.tensor(list(msg), dtype=torch.uint8)
    ok = m(x).numpy().tobytes() == want and m.working(x).tolist() == vec["tokens"]
    print("equal" if ok else "differ", msg.hex(), want.hex(), "".join(f"{t:02x}" for t in vec["tokens"]))
`, base)
	var msgs [][]byte
	var digests, tokens []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) != 4 || f[0] != "equal" {
			t.Fatalf("the exported .pt against the export's test vectors (verdict, message, digest, tokens): %s", out)
		}
		m, err := hex.DecodeString(f[1])
		if err != nil {
			t.Fatal(err)
		}
		msgs, digests, tokens = append(msgs, m), append(digests, f[2]), append(tokens, f[3])
	}
	if len(msgs) != 8 {
		t.Fatalf("%d test vectors, want the 8 samples", len(msgs))
	}
	if why := ortMissing(); why != "" {
		t.Skip(why)
	}
	got := runORT(t, base+".onnx", 4, msgs)
	checkDigests(t, "ONNX Runtime "+got.Version+" against the export's test vectors", got.Digests, digests)
	for i, tok := range got.Tokens {
		var sb strings.Builder
		for _, x := range tok {
			fmt.Fprintf(&sb, "%02x", x)
		}
		if sb.String() != tokens[i] {
			t.Errorf("ONNX Runtime: test vector %d: tokens %s, want %s", i, sb.String(), tokens[i])
		}
	}
}
