package python_test

// Issue 34's Python side: the module writer isolated from the user's
// directory and environment, byte modules written whole with no stale one
// left beside a re-export, corrupted exports refused, one-line errors.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	pymod "github.com/tcforge/tcforge/python"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// toyModel is exportToy's stock model (toy Keccak, w = 2, two rounds,
// 4-byte blocks), without .json.
const toyModel = "toy.fusion.tokens-as-states-stock"

// vectorCheck loads a byte module with torch.jit.load alone, isolated
// (python -I, no tcforge on the path), and prints "equal" if it hashes
// the first test vector of its config as the config says.
const vectorCheck = `
import sys, json, torch
cfg = json.load(open(sys.argv[1] + ".json"))
vec = cfg["test_vectors"][0]
msg = bytes(sum(int(vec["input"][8 * j + i]) << i for i in range(8)) for j in range(len(vec["input"]) // 8))
want = bytes(sum(int(vec["output"][8 * j + i]) << i for i in range(8)) for j in range(len(vec["output"]) // 8))
got = torch.jit.load(sys.argv[1] + ".pt")(torch.tensor(list(msg), dtype=torch.uint8)).numpy().tobytes()
print("equal" if got == want else f"differ {got.hex()} {want.hex()}")
`

// checkVector runs vectorCheck on base (a model without .json).
func checkVector(t *testing.T, base string) {
	t.Helper()
	out, err := exec.Command(python, "-I", "-c", vectorCheck, base).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "equal" {
		t.Errorf("%s.pt against its config's test vector: %v %s", filepath.Base(base), err, out)
	}
}

// liveProcs returns the processes (not zombies) whose command line holds
// marker.
func liveProcs(marker string) []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil || e.Name() == strconv.Itoa(os.Getpid()) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(marker)) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil {
			if _, rest, ok := bytes.Cut(stat, []byte(") ")); ok && bytes.HasPrefix(rest, []byte("Z")) {
				continue
			}
		}
		out = append(out, e.Name()+" "+string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
	}
	return out
}

// noProcsLeft fails t if a process whose command line holds marker is
// alive 5 s from now (a killed process's parent may take a moment to
// reap it).
func noProcsLeft(t *testing.T, marker string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		left := liveProcs(marker)
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("processes left running: %q", left)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestModuleWriterIsolated is issue 34 item 3: a torch.py and a
// tcforge_torch/ planted in the working directory, a torch.py, a
// tcforge_torch/ and a sitecustomize.py on PYTHONPATH and a
// usercustomize.py in the user's site-packages are each imported by a
// plain `python3 -c "import torch"` there (checked first: the plants
// work); the module writer, run from that directory in that environment,
// imports none of them (each would leave a mark) and writes a module that
// hashes its test vector. Before, its probe ran `python3 -c "import
// torch"` in the user's directory, importing the planted torch.py.
func TestModuleWriterIsolated(t *testing.T) {
	// Not parallel: it changes the working directory and environment.
	if why := torchMissing(); why != "" {
		t.Skip(why)
	}
	sdktest.Short(t, "a byte module written among planted modules")
	dir := t.TempDir()
	models := filepath.Join(dir, "models")
	exportWith(t, exportToy, models, nil, nil)
	marks := filepath.Join(dir, "imported")
	evil := fmt.Sprintf("open(%q, 'a').write(__file__ + '\\n')\nraise SystemExit('a planted module was imported: ' + __file__)\n", marks)
	cwd, pypath, home := filepath.Join(dir, "cwd"), filepath.Join(dir, "pythonpath"), filepath.Join(dir, "home")
	userSite, err := exec.Command("env", "HOME="+home, python, "-c", "import site; print(site.getusersitepackages())").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{
		filepath.Join(cwd, "torch.py"), filepath.Join(cwd, "tcforge_torch", "__init__.py"), filepath.Join(cwd, "tcforge_torch", "__main__.py"),
		filepath.Join(pypath, "torch.py"), filepath.Join(pypath, "sitecustomize.py"), filepath.Join(pypath, "tcforge_torch", "__init__.py"),
		filepath.Join(strings.TrimSpace(string(userSite)), "usercustomize.py"),
	} {
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte(evil), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(cwd)
	t.Setenv("PYTHONPATH", pypath)
	t.Setenv("HOME", home)
	// The plants work: an unisolated interpreter imports them.
	if out, err := exec.Command(python, "-c", "import torch").CombinedOutput(); err == nil || !bytes.Contains(out, []byte("a planted module was imported")) {
		t.Fatalf("the planted modules are not imported by a plain python3 -c 'import torch' (%v %s): the test shows nothing", err, out)
	}
	if err := os.Remove(marks); err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	w := pymod.NewModuleWriter(python, 0, zerolog.New(&logBuf))
	defer w.Close()
	cfg := filepath.Join(models, toyModel+".json")
	files, err := w.WriteModule(context.Background(), cfg)
	if err != nil {
		t.Fatalf("WriteModule: %v\n%s", err, logBuf.String())
	}
	if want := []string{filepath.Join(models, toyModel+".pt"), filepath.Join(models, toyModel+".onnx")}; !slices.Equal(files, want) {
		t.Errorf("wrote %q, want %q", files, want)
	}
	if b, err := os.ReadFile(marks); err == nil {
		t.Errorf("the module writer imported planted modules:\n%s", b)
	}
	// The module hashes the config's test vectors: `module` checked them
	// through it before it wrote it (TestCorruptedExports loads one).
}

// TestStaleModules is issue 34 item 5: a model re-exported (rounds 2 → 3)
// with --export-python none, or with a module writer that fails, has no
// byte module left from the earlier model (before: the earlier .pt and
// .onnx stayed, hashing the old function); a NAME.pt that tcforge did not
// write (a user's file, a link) is left alone, the module not written, and
// the run says why; `module` by hand refuses to replace such a file.
func TestStaleModules(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "byte modules written, re-exported and planted")
	dir := t.TempDir()
	base := filepath.Join(dir, toyModel)
	var logBuf bytes.Buffer
	mw := pymod.NewModuleWriter(python, 0, zerolog.New(&logBuf))
	defer mw.Close()
	exportWith(t, exportToy, dir, mw, &logBuf)
	written := map[string][]byte{}
	for _, ext := range pymod.ModuleExts {
		if own, err := pymod.WrittenHere(base + ext); !own || err != nil {
			t.Fatalf("%s%s: written here %v, %v\n%s", toyModel, ext, own, err, logBuf.String())
		}
		written[ext], _ = os.ReadFile(base + ext)
	}
	rounds3 := strings.Replace(exportToy, "rounds = 2", "rounds = 3", 1)
	// --export-python none: the earlier model's files go.
	none := pymod.NewModuleWriter(pymod.None, 0, zerolog.Nop())
	logBuf.Reset()
	exportWith(t, rounds3, dir, none, &logBuf)
	for _, ext := range pymod.ModuleExts {
		if _, err := os.Lstat(base + ext); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("after a re-export with --export-python none, %s%s is still there (%v)", toyModel, ext, err)
		}
	}
	if strings.Contains(logBuf.String(), `"level":"warn"`) {
		t.Errorf("--export-python none warned:\n%s", logBuf.String())
	}
	// A writer that fails after its probe: no module, none stale (the
	// first model's module put back as it was written).
	for ext, b := range written {
		if err := os.WriteFile(base+ext, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fails := filepath.Join(t.TempDir(), "fails")
	if err := os.WriteFile(fails, []byte("#!/bin/sh\ncase \"$*\" in *\"import torch\"*) exit 0;; esac\necho 'tcforge_torch: ERROR: no' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fw := pymod.NewModuleWriter(fails, 0, zerolog.Nop())
	defer fw.Close()
	exportWith(t, rounds3, dir, fw, nil)
	if m, _ := filepath.Glob(base + ".*"); len(m) != 3 {
		t.Errorf("after a failed module write: %q, want the config, weights and labels only", m)
	}
	// Files tcforge did not write are left alone, and said so.
	for _, tc := range []struct {
		name  string
		plant func(path string) error
	}{
		{"a user's file", func(p string) error { return os.WriteFile(p, []byte("my own model"), 0o644) }},
		{"a link", func(p string) error { return os.Symlink(filepath.Join(dir, "elsewhere"), p) }},
		{"a directory", func(p string) error { return os.Mkdir(p, 0o755) }},
	} {
		if err := tc.plant(base + ".pt"); err != nil {
			t.Fatal(err)
		}
		logBuf.Reset()
		exportWith(t, exportToy, dir, mw, &logBuf)
		if !strings.Contains(logBuf.String(), toyModel+`.pt exists and is not a byte module tcforge wrote: left alone`) {
			t.Errorf("%s as NAME.pt: the run did not say it was left alone:\n%s", tc.name, logBuf.String())
		}
		if _, err := os.Lstat(base + ".onnx"); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s as NAME.pt: an .onnx was written beside it (%v)", tc.name, err)
		}
		if tc.name == "a user's file" {
			if b, _ := os.ReadFile(base + ".pt"); string(b) != "my own model" {
				t.Errorf("the user's NAME.pt was changed: %q", b)
			}
			// By hand: refused, one line.
			out, err := exec.Command(python, "-I", "-c", "import sys; sys.path.insert(0, sys.argv.pop(1)); from tcforge_torch.__main__ import main; sys.exit(main(['x'] + sys.argv[1:]))",
				pkgDir(t), "module", base+".json").CombinedOutput()
			want := "tcforge_torch: ERROR: " + base + ".pt exists and is not a byte module tcforge_torch wrote: not replaced (remove it, or give -o)\n"
			if code := exitCode(err); code != 1 || string(out) != want {
				t.Errorf("module by hand over a user's NAME.pt: exit %d, %q; want 1, %q", code, out, want)
			}
		}
		if err := os.RemoveAll(base + ".pt"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was written through the planted link: %v", err)
	}
}

// pkgDir is the directory holding tcforge_torch (this one).
func pkgDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// exitCode is err's exit status (0 for nil, -1 if it did not exit).
func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestModuleWriterStopped is issue 34 item 5's second half: the module
// writer stopped while it writes the .pt — the interpreter frozen there
// (SIGSTOP) and the run's context ending (as its timeout does), SIGKILLed
// there, or sent SIGTERM there — leaves no byte module, whole or partial,
// no temporary file and no process; the model's other files are as
// exported. Before, a writer killed at its timeout left a partial .pt.
func TestModuleWriterStopped(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "three module writers stopped mid-write (half a minute)")
	dir := t.TempDir()
	exportWith(t, exportToy, dir, nil, nil)
	cfg := filepath.Join(dir, toyModel+".json")
	before := hashFiles(t, dir)
	w := pymod.NewModuleWriter(python, time.Hour, zerolog.Nop())
	defer w.Close()
	if why := w.Missing(context.Background()); why != "" {
		t.Fatal(why)
	}
	for _, tc := range []struct {
		name string
		stop func(pid int, cancel context.CancelFunc)
		want string
	}{
		{"frozen, then its context ends", func(pid int, cancel context.CancelFunc) { cancel() }, "stopped: signal: killed"},
		{"SIGKILL", func(pid int, _ context.CancelFunc) {
			syscall.Kill(pid, syscall.SIGKILL)
			syscall.Kill(pid, syscall.SIGCONT)
		}, "signal: killed"},
		{"SIGTERM", func(pid int, _ context.CancelFunc) {
			syscall.Kill(pid, syscall.SIGTERM)
			syscall.Kill(pid, syscall.SIGCONT)
		}, "exit status 143: stopped by SIGTERM"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		caught := make(chan string, 1)
		go func() {
			// Freeze the interpreter the moment its temporary .pt appears.
			prefix := "." + toyModel + ".pt.tmp-"
			for ctx.Err() == nil {
				entries, _ := os.ReadDir(dir)
				for _, e := range entries {
					if pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), prefix)); err == nil && strings.HasPrefix(e.Name(), prefix) {
						syscall.Kill(pid, syscall.SIGSTOP)
						caught <- e.Name()
						tc.stop(pid, cancel)
						return
					}
				}
				time.Sleep(2 * time.Millisecond)
			}
			caught <- ""
		}()
		t0 := time.Now()
		_, err := w.WriteModule(ctx, cfg)
		cancel()
		tmp := <-caught
		if tmp == "" {
			t.Errorf("%s: the writer ended (%v) before its temporary .pt was seen", tc.name, err)
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: WriteModule: %v, want an error saying %q", tc.name, err, tc.want)
		}
		t.Logf("%s (%s frozen): %v after %v", tc.name, tmp, err, time.Since(t0).Round(time.Millisecond))
		if after := hashFiles(t, dir); !maps.Equal(before, after) {
			t.Errorf("%s: the export directory holds %v, want %v (no module, no temporary file)", tc.name, slices.Sorted(maps.Keys(after)), slices.Sorted(maps.Keys(before)))
		}
		noProcsLeft(t, cfg)
	}
}

// hashFiles maps every entry of dir (hidden ones too) to its contents.
func hashFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			out[e.Name()] = "unreadable: " + err.Error()
			continue
		}
		out[e.Name()] = string(b)
	}
	return out
}

// corruptToy is exportToy's keccak pipeline beside a SHA3-256 block model
// reduced to one round (configs/transformers.hcl's
// transformers-sha3-256-block at rounds = 1).
const corruptToy = exportToy + `
pipeline "block" {
  samples = 8
  construction "keccak" {
    preset       = "sha3-256"
    padding      = "none"
    message_bits = 1088
    rounds       = 1
  }
  layerer "fusion" {}
  mapper "tokens-as-states" { tokens = 64 }
}
`

// TestCorruptedExports is issue 34 item 7: exports edited after the run —
// a weight + 1000, layer_norm_eps 1e308, the bit order flipped, the preset
// changed, a test vector's output bit flipped, and the one-round SHA3-256
// block model's rounds claimed to be 24 — are refused by `module` (one
// line naming the problem, exit 1, no file written), and all but the last
// by the loader itself (its test vectors, its config checks). Before,
// each loaded and wrote byte modules with wrong digests, exit 0. The
// unedited exports write their modules.
func TestCorruptedExports(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "nine corrupted exports loaded and refused")
	dir := t.TempDir()
	exportWith(t, corruptToy, dir, nil, nil)
	toy, block := filepath.Join(dir, toyModel), filepath.Join(dir, "block.fusion.tokens-as-states-stock")
	cases := []struct {
		name, base string
		edit       func(cfg map[string]any, weights []byte) []byte // the safetensors file (nil: unchanged)
		load, mod  string                                          // what load and module say ("": load passes)
	}{
		{"weight + 1000", toy, func(_ map[string]any, w []byte) []byte {
			return editTensor(t, w, "layers.0.linear1.weight.values", func(d []byte) {
				binary.LittleEndian.PutUint32(d, math.Float32bits(math.Float32frombits(binary.LittleEndian.Uint32(d))+1000))
			})
		}, "of 8: output bit", "of 8: output bit"},
		{"layer_norm_eps 1e308", toy, func(c map[string]any, _ []byte) []byte {
			for _, b := range c["blocks"].([]any) {
				b.(map[string]any)["layer"].(map[string]any)["layer_norm_eps"] = 1e308
			}
			c["stock"].(map[string]any)["layer_norm_eps"] = 1e308
			return nil
		}, "blocks[0].layer.layer_norm_eps is 1e+308: want a number in (0, 0.01]", ""},
		{"bit order flipped", toy, func(c map[string]any, _ []byte) []byte {
			c["computes"].(map[string]any)["bit_order"] = "msb-first"
			return nil
		}, "computes.bit_order is 'msb-first', but construction 'keccak' maps bytes to bits lsb-first", ""},
		{"preset set", toy, func(c map[string]any, _ []byte) []byte {
			c["computes"].(map[string]any)["params"].(map[string]any)["preset"] = "sha3-256"
			return nil
		}, "computes.params.preset is 'sha3-256', whose w 64, capacity 512, rate 1088, but the parameters say w 2, capacity 18, rate 32", ""},
		{"preset changed", block, func(c map[string]any, _ []byte) []byte {
			c["computes"].(map[string]any)["params"].(map[string]any)["preset"] = "sha3-512"
			return nil
		}, "computes.params.preset is 'sha3-512', whose capacity 1024, rate 576, but the parameters say capacity 512, rate 1088", ""},
		{"test vector edited", block, func(c map[string]any, _ []byte) []byte {
			v := c["test_vectors"].([]any)[2].(map[string]any)
			out := []byte(v["output"].(string))
			out[5] ^= 1
			v["output"] = string(out)
			return nil
		}, "test vector 3 of 8: output bit 5 is", ""},
		{"rounds claimed 24", block, func(c map[string]any, _ []byte) []byte {
			c["computes"].(map[string]any)["params"].(map[string]any)["rounds"] = 24
			return nil
		}, "", "hashlib.sha3_256's"},
	}
	var args []string
	for _, tc := range cases {
		cfg, err := os.ReadFile(tc.base + ".json")
		if err != nil {
			t.Fatal(err)
		}
		weights, err := os.ReadFile(tc.base + ".safetensors")
		if err != nil {
			t.Fatal(err)
		}
		var c map[string]any
		if err := json.Unmarshal(cfg, &c); err != nil {
			t.Fatal(err)
		}
		if w := tc.edit(c, weights); w != nil {
			weights = w
		}
		sub := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(tc.base)
		c["weights"] = name + ".safetensors"
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, name+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, name+".safetensors"), weights, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, filepath.Join(sub, name+".json"))
	}
	// One interpreter: load each, then `module` each as the command line
	// runs it (its exit status and stderr), then the unedited two.
	out := runPython(t, dir, `
import sys, io, contextlib, tcforge_torch
from tcforge_torch.__main__ import main
def module(path):
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["tcforge_torch", "module", path])
    return f"{rc} {err.getvalue().strip()}"
for path in sys.argv[1:]:
    try:
        m = tcforge_torch.load(path)
        print(f"loaded ({m.vectors_checked} vectors) | " + module(path).strip())
    except tcforge_torch.FormatError as e:
        print(f"{e} | " + module(path).strip())
`, append(args, toy+".json", block+".json")...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(cases)+2 {
		t.Fatalf("printed %d lines for %d configs:\n%s", len(lines), len(cases)+2, out)
	}
	for i, tc := range cases {
		load, mod, _ := strings.Cut(lines[i], " | ")
		if tc.load == "" {
			if load != "loaded (8 vectors)" {
				t.Errorf("%s: load said %q, want it loaded with its 8 vectors", tc.name, load)
			}
		} else if !strings.Contains(load, args[i]) || !strings.Contains(load, tc.load) {
			t.Errorf("%s: load said %q, want it to name %s and %q", tc.name, load, args[i], tc.load)
		}
		want := tc.mod
		if want == "" {
			want = tc.load
		}
		if !strings.HasPrefix(mod, "1 tcforge_torch: ERROR: "+args[i]+": ") || !strings.Contains(mod, want) || strings.Contains(mod, "\n") {
			t.Errorf("%s: module said %q, want exit 1 and one line naming %q", tc.name, mod, want)
		}
		if m, _ := filepath.Glob(strings.TrimSuffix(args[i], ".json") + ".*"); len(m) != 2 {
			t.Errorf("%s: files %q after module refused, want the config and weights only", tc.name, m)
		}
	}
	for i, base := range []string{toy, block} {
		if l := lines[len(cases)+i]; l != "loaded (8 vectors) | 0" {
			t.Errorf("unedited %s: %q, want loaded and module exit 0", filepath.Base(base), l)
		}
	}
	checkVector(t, toy)
}

// pyRun is `python3 -m tcforge_torch args...` with the package on the
// path, in dir, its stdin empty.
func pyRun(ctx context.Context, t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, python, append([]string{"-m", "tcforge_torch"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pkgDir(t), "TCFORGE_DEBUG=")
	cmd.Stdin = strings.NewReader("")
	return cmd
}

// TestOneLineErrors is issue 34 item 15: the package's commands fail in
// one line, "tcforge_torch: ERROR: …", exit status 2 for a usage error and
// 1 otherwise, with no traceback unless --debug asks for it; a FIFO as
// the config is refused at once (not waited on). Before, many paths
// printed a traceback. Real processes for a missing config, a FIFO and
// --debug; the other paths through the same main in one interpreter.
// (SIGTERM during `module`: TestModuleWriterStopped; train's arguments:
// TestTrainBadArgs.)
func TestOneLineErrors(t *testing.T) {
	needTorch(t)
	dir := t.TempDir()
	exportWith(t, exportToy, dir, nil, nil)
	cfg := filepath.Join(dir, toyModel+".json")
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	oneLine := func(name string, code int, stderr string, wantCode int, want string) {
		t.Helper()
		if code != wantCode || !strings.HasPrefix(stderr, "tcforge_torch: ERROR: ") || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d and one line naming %q", name, code, stderr, wantCode, want)
		}
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no config", []string{"run", filepath.Join(dir, "absent.json")}, "absent.json: cannot open the config: No such file or directory"},
		{"FIFO config", []string{"run", fifo}, "fifo.json: the config is not a regular file"},
	} {
		// A bound, so that a read blocked on the FIFO fails the test.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := pyRun(ctx, t, dir, tc.args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		cancel()
		oneLine(tc.name, exitCode(err), stderr.String(), 1, tc.want)
	}
	if testing.Short() {
		return
	}
	cases := []struct {
		name  string
		args  []string
		stdin string
		code  int
		want  string
	}{
		{"bad input line", []string{"run", cfg}, "0101\n", 1, "input line 1: want 32 bits of 0/1, got 4 characters"},
		{"not stock", []string{"module", filepath.Join(dir, "toy.fusion.no-attention-residual.json")}, "", 1, "architecture 'no-attention/residual' is not stock encoder layers"},
		{"module into a missing directory", []string{"module", cfg, "-o", filepath.Join(dir, "absent", "x")}, "", 1, "x: the directory " + filepath.Join(dir, "absent") + " does not exist"},
		{"train: no config", []string{"train", filepath.Join(dir, "absent.json")}, "", 1, "absent.json: cannot open the config"},
		{"unknown flag", []string{"run", "--bogus", cfg}, "", 2, "unrecognized arguments: --bogus"},
		{"decoder: bad input line", []string{"run", exportDecoder(t, decToys[5], dir, 1, rand.New(rand.NewPCG(35, 5))).config}, "0101\n", 1, "input line 1: want 32 bits of 0/1, got 4 characters"},
	}
	var args []string
	for _, tc := range cases {
		b, _ := json.Marshal(map[string]any{"args": tc.args, "stdin": tc.stdin})
		args = append(args, string(b))
	}
	out := runPython(t, dir, `
import sys, io, json, contextlib
from tcforge_torch.__main__ import main
for arg in sys.argv[1:]:
    c = json.loads(arg)
    err = io.StringIO()
    sys.stdin = io.StringIO(c["stdin"])
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        rc = main(["tcforge_torch"] + c["args"])
    print(json.dumps([rc, err.getvalue()]))
`, args...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("%d results for %d cases:\n%s", len(lines), len(cases), out)
	}
	for i, tc := range cases {
		var r []any
		if err := json.Unmarshal([]byte(lines[i]), &r); err != nil || len(r) != 2 {
			t.Fatalf("%s: %q", tc.name, lines[i])
		}
		oneLine(tc.name, int(r[0].(float64)), r[1].(string), tc.code, tc.want)
	}
	// --debug: the traceback, then the line.
	cmd := pyRun(context.Background(), t, dir, "--debug", "run", filepath.Join(dir, "absent.json"))
	out2, err := cmd.CombinedOutput()
	if exitCode(err) != 1 || !bytes.Contains(out2, []byte("Traceback (most recent call last)")) || !bytes.HasSuffix(out2, []byte("cannot open the config: No such file or directory\n")) {
		t.Errorf("--debug: exit %v, %q; want the traceback and the line", err, out2)
	}
}
