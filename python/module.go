// Package python carries the tcforge_torch package (the .py files of
// this directory, embedded in the tcforge binary) and runs it from the
// host: ModuleWriter writes an exported stock model's byte module
// (bytes in, digest out) as TorchScript and ONNX beside its config, so
// that `tcforge run --export DIR` alone gives the files a user loads
// with torch.jit.load or ONNX Runtime (docs/export.md, "The byte
// module"). Where the interpreter or PyTorch is missing it says so once
// and writes nothing; it never fails or holds up a run.
package python

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// source is the tcforge_torch package, written to a temporary directory
// for the interpreter (the binary may run far from a checkout).
//
//go:embed tcforge_torch/*.py
var source embed.FS

// DefaultPython is the interpreter ModuleWriter runs by default:
// Debian's, the one python3-torch installs into.
const DefaultPython = "/usr/bin/python3"

// DefaultModuleTimeout bounds one model's module writing (full SHA3-256:
// seconds; full SHA-256's 320 layers: about a minute on a loaded 2-core
// machine).
const DefaultModuleTimeout = 10 * time.Minute

// probeTimeout bounds the check that the interpreter imports torch.
const probeTimeout = 2 * time.Minute

// ModuleWriter writes byte modules with one Python interpreter, one model
// at a time. Its zero value is not usable: NewModuleWriter. Close removes
// its copy of the package.
type ModuleWriter struct {
	python  string
	timeout time.Duration
	log     zerolog.Logger

	mu      sync.Mutex // one python process at a time
	probed  bool
	missing string // why no module is written ("" once the probe passed)
	dir     string // the package's copy (PYTHONPATH)
}

// NewModuleWriter returns a writer that runs python (DefaultPython if
// empty), each model bounded by timeout (DefaultModuleTimeout if ≤ 0),
// logging to log.
func NewModuleWriter(python string, timeout time.Duration, log zerolog.Logger) *ModuleWriter {
	if python == "" {
		python = DefaultPython
	}
	if timeout <= 0 {
		timeout = DefaultModuleTimeout
	}
	return &ModuleWriter{python: python, timeout: timeout, log: log}
}

// Missing says why no module can be written ("" if python imports torch),
// probing the interpreter on the first call.
func (w *ModuleWriter) Missing(ctx context.Context) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.probe(ctx)
}

// probe checks the interpreter and torch once and copies the package out
// (w.mu held).
func (w *ModuleWriter) probe(ctx context.Context) string {
	if w.probed {
		return w.missing
	}
	w.probed = true
	if _, err := exec.LookPath(w.python); err != nil {
		w.missing = fmt.Sprintf("no Python interpreter %s (apt-get install python3-torch, or --export-python PATH)", w.python)
		return w.missing
	}
	if _, stderr, err := w.run(ctx, probeTimeout, "-c", "import torch"); err != nil {
		w.missing = fmt.Sprintf("%s cannot import torch (apt-get install python3-torch): %v %s", w.python, err, lastLine(stderr))
		return w.missing
	}
	dir, err := os.MkdirTemp("", "tcforge-python-")
	if err == nil {
		err = writePackage(dir)
	}
	if err != nil {
		w.missing = fmt.Sprintf("copying tcforge_torch for %s: %v", w.python, err)
		return w.missing
	}
	w.dir = dir
	return ""
}

// writePackage writes the embedded tcforge_torch into dir.
func writePackage(dir string) error {
	return fs.WalkDir(source, "tcforge_torch", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := source.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
}

// run runs python with args under a timeout, its package on the path,
// and returns its stdout and stderr.
func (w *ModuleWriter) run(ctx context.Context, timeout time.Duration, args ...string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.python, args...)
	cmd.Env = os.Environ()
	if w.dir != "" {
		cmd.Env = append(cmd.Env, "PYTHONPATH="+w.dir)
	}
	cmd.WaitDelay = 5 * time.Second // a grandchild holding the pipes cannot hold Wait up
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if err != nil && ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("over %v, stopped: %w", timeout, err)
	}
	return out.Bytes(), errb.Bytes(), err
}

// ErrUnavailable is returned (wrapped, with the reason) by WriteModule
// where the interpreter or PyTorch is missing; its Unavailable method
// says so to a caller that does not import this package (host/run).
var ErrUnavailable error = unavailableError{}

type unavailableError struct{}

func (unavailableError) Error() string     { return "byte module not written" }
func (unavailableError) Unavailable() bool { return true }

// WriteModule writes config's byte module (config without .json, plus .pt
// and .onnx) with `python -m tcforge_torch module CONFIG` and returns the
// files. Where python or torch is missing it logs the reason once (one
// line, Warn) and returns an error wrapping ErrUnavailable; a model the
// package refuses (not stock, no byte interface) or a timeout gives an
// error with python's last line.
func (w *ModuleWriter) WriteModule(ctx context.Context, config string) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	first := !w.probed
	if why := w.probe(ctx); why != "" {
		if first {
			w.log.Warn().Str("python", w.python).Msg("no byte modules (.pt, .onnx) with --export: " + why)
		}
		return nil, fmt.Errorf("%s: %w: %s", config, ErrUnavailable, why)
	}
	stdout, stderr, err := w.run(ctx, w.timeout, "-m", "tcforge_torch", "module", config)
	if err != nil {
		return nil, fmt.Errorf("writing the byte module of %s: %s -m tcforge_torch module: %w: %s", config, w.python, err, lastLine(stderr))
	}
	return strings.Split(strings.TrimSpace(string(stdout)), "\n"), nil
}

// Close removes the writer's copy of the package.
func (w *ModuleWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dir == "" {
		return nil
	}
	err := os.RemoveAll(w.dir)
	w.dir = ""
	return err
}

// lastLine is the last non-empty line of out (python's error line).
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
