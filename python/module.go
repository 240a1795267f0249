// Package python carries the tcforge_torch package (the .py files of
// this directory, embedded in the tcforge binary) and runs it from the
// host: ModuleWriter writes an exported stock model's byte module
// (bytes in, digest out) as TorchScript and ONNX beside its config, so
// that `tcforge run --export DIR` alone gives the files a user loads
// with torch.jit.load or ONNX Runtime (docs/export.md, "The byte
// module"). Where the interpreter or PyTorch is missing it says so once
// and writes nothing; it never fails or holds up a run.
//
// The interpreter runs isolated (python -I: no working directory, user
// site-packages or PYTHON* variables on its path) in a private working
// directory, the package's copy named explicitly, in a process group of
// its own that is stopped whole; its files are written whole or not at
// all, and a model's earlier byte module (an earlier export's, stale
// beside the new config) never survives its re-export.
package python

import (
	"archive/zip"
	"bytes"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// None is the interpreter name that writes no byte modules: the writer
// then only removes a model's stale ones (ClearModule).
const None = "none"

// stopGrace is how long a stopped interpreter has, after SIGTERM, to
// remove its temporary files before it is killed.
const stopGrace = 5 * time.Second

// bootstrap runs the package's command line from the copy named by its
// first argument: python -I puts neither the working directory nor
// PYTHONPATH on sys.path, so -m cannot find it. Until the package's main
// takes them over, SIGTERM and SIGINT end it at once in one line (it
// writes nothing while it imports torch, which takes seconds).
const bootstrap = `import os, signal, sys
def stop(n, f):
    sys.stderr.write("tcforge_torch: ERROR: stopped by %s\n" % signal.Signals(n).name)
    os._exit(128 + n)
for s in (signal.SIGTERM, signal.SIGINT):
    if signal.getsignal(s) is not signal.SIG_IGN:
        signal.signal(s, stop)
sys.path.insert(0, sys.argv.pop(1))
from tcforge_torch.__main__ import main
sys.exit(main(["tcforge_torch"] + sys.argv[1:]))`

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
	dir     string // private: the working directory, holding the package's copy
}

// NewModuleWriter returns a writer that runs python (DefaultPython if
// empty; None: none, stale modules only removed), each model bounded by
// timeout (DefaultModuleTimeout if ≤ 0), logging to log.
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
	if w.python == None {
		w.missing = "--export-python none"
		return w.missing
	}
	if _, err := exec.LookPath(w.python); err != nil {
		w.missing = fmt.Sprintf("no Python interpreter %s (apt-get install python3-torch, or --export-python PATH)", w.python)
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
	if _, stderr, err := w.run(ctx, probeTimeout, "-c", "import torch"); err != nil {
		w.missing = fmt.Sprintf("%s cannot import torch (apt-get install python3-torch): %v %s", w.python, err, lastLine(stderr))
		return w.missing
	}
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

// run runs python -I with args under a timeout in the writer's private
// directory (w.dir, which holds the package) and returns its stdout and
// stderr. At the timeout or ctx's end its process group is sent SIGTERM,
// then SIGKILL stopGrace later; whatever is left of the group is killed
// when it ends.
func (w *ModuleWriter) run(ctx context.Context, timeout time.Duration, args ...string) (stdout, stderr []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.python, append([]string{"-I"}, args...)...)
	cmd.Dir = w.dir
	inGroup(cmd)
	cmd.Cancel = func() error { return signalGroup(cmd, terminate) }
	cmd.WaitDelay = stopGrace // then the process is killed, and a grandchild holding the pipes cannot hold Wait up
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	_ = signalGroup(cmd, kill) // what the interpreter started and left
	if err != nil && ctx.Err() != nil {
		why := "stopped"
		if ctx.Err() == context.DeadlineExceeded {
			why = fmt.Sprintf("over %v, stopped", timeout)
		}
		err = fmt.Errorf("%s: %w", why, err)
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
// and .onnx) with `python -I … tcforge_torch module CONFIG` and returns
// the files. It first removes the model's earlier byte module
// (ClearModule), so that a module it does not write is none rather than a
// stale one; a file of that name that tcforge did not write is left alone
// and the module not written. Where python or torch is missing (or python
// is None) it logs the reason once (one line, Warn; nothing for None) and
// returns an error wrapping ErrUnavailable; a model the package refuses
// (not stock, no byte interface, its test vectors not reproduced) or a
// timeout gives an error with python's one-line reason, and leaves no
// file of the module, whole or partial.
func (w *ModuleWriter) WriteModule(ctx context.Context, config string) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := ClearModule(config); err != nil {
		return nil, fmt.Errorf("byte module of %s not written: %w", config, err)
	}
	first := !w.probed
	if why := w.probe(ctx); why != "" {
		if first && w.python != None {
			w.log.Warn().Str("python", w.python).Msg("no byte modules (.pt, .onnx) with --export: " + why)
		}
		return nil, fmt.Errorf("%s: %w: %s", config, ErrUnavailable, why)
	}
	abs, err := filepath.Abs(config) // python runs in w.dir
	if err != nil {
		return nil, err
	}
	stdout, stderr, err := w.run(ctx, w.timeout, "-c", bootstrap, w.dir, "module", abs)
	if err != nil {
		_, cerr := ClearModule(config) // what it wrote before it was stopped
		if why := lastLine(stderr); why != "" {
			err = fmt.Errorf("%w: %s", err, why)
		}
		return nil, errors.Join(fmt.Errorf("writing the byte module of %s: %s tcforge_torch module: %w", config, w.python, err), cerr)
	}
	files := strings.Split(strings.TrimSpace(string(stdout)), "\n")
	for i, f := range files {
		if rel, err := filepath.Rel(filepath.Dir(abs), f); err == nil {
			files[i] = filepath.Join(filepath.Dir(config), rel)
		}
	}
	return files, nil
}

// ClearModule is the package's ClearModule, for host/run's ModuleWriter.
func (w *ModuleWriter) ClearModule(config string) ([]string, error) { return ClearModule(config) }

// ModuleExts are the files of a byte module, config without .json plus
// each.
var ModuleExts = []string{".pt", ".onnx"}

// ClearModule removes the byte module beside config (config without
// .json, plus ModuleExts) if this package wrote it (WrittenHere), and
// any temporary file of its writing left by a writer that is gone (killed);
// it returns what it removed. A file of that name that tcforge did not
// write (a link, a directory, a user's own model) is left alone: an error
// says so.
func ClearModule(config string) ([]string, error) {
	base := strings.TrimSuffix(config, ".json")
	var removed []string
	var errs []error
	entries, _ := os.ReadDir(filepath.Dir(base))
	for _, ext := range ModuleExts {
		path := base + ext
		// tcforge_torch's atomic_write: .NAME.tmp-PID beside NAME.
		prefix := "." + filepath.Base(path) + ".tmp-"
		for _, e := range entries {
			pid, err := strconv.Atoi(strings.TrimPrefix(e.Name(), prefix))
			if strings.HasPrefix(e.Name(), prefix) && err == nil && e.Type().IsRegular() && gone(pid) {
				tmp := filepath.Join(filepath.Dir(path), e.Name())
				if os.Remove(tmp) == nil {
					removed = append(removed, tmp)
				}
			}
		}
		own, err := WrittenHere(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			errs = append(errs, err)
		case !own:
			errs = append(errs, fmt.Errorf("%s exists and is not a byte module tcforge wrote: left alone (remove it, or export to another directory)", path))
		default:
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
				continue
			}
			removed = append(removed, path)
		}
	}
	return removed, errors.Join(errs...)
}

// WrittenHere reports whether path is a byte module tcforge_torch wrote
// (tcforge_torch/digest.py's written_here, which the package checks before
// it replaces a file): a regular file, not a link, that is a TorchScript
// archive holding the package's provenance (extra/tcforge.json) or its
// DigestModule's code, or an ONNX model whose producer is tcforge_torch.
// An error wrapping fs.ErrNotExist says there is no such file.
func WrittenHere(path string) (bool, error) {
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		return false, err
	}
	f, err := openNoFollow(path) // a link swapped in since: ELOOP
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return false, err
	}
	head := make([]byte, 64)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	if bytes.HasPrefix(head, []byte("PK")) {
		zr, err := zip.NewReader(f, fi.Size())
		if err != nil {
			return false, nil
		}
		for _, e := range zr.File {
			if strings.HasSuffix(e.Name, "/extra/"+provenanceFile) || strings.HasSuffix(e.Name, "/code/__torch__/tcforge_torch/digest.py") {
				return true, nil
			}
		}
		return false, nil
	}
	// ModelProto: field 1 (ir_version, a varint), then field 2, the
	// producer name.
	if len(head) < 2 || head[0] != 0x08 {
		return false, nil
	}
	i := 1
	for i < len(head) && head[i]&0x80 != 0 {
		i++
	}
	want := append([]byte{0x12, byte(len(producer))}, producer...)
	return bytes.HasPrefix(head[min(i+1, len(head)):], want), nil
}

// provenanceFile and producer mark the files tcforge_torch writes
// (digest.py's PROVENANCE and PRODUCER).
const provenanceFile = "tcforge.json"

var producer = []byte("tcforge_torch")

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

// lastLine is the last non-empty line of out (python's error line, less
// the package's "tcforge_torch: ERROR: ").
func lastLine(out []byte) string {
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return strings.TrimPrefix(strings.TrimSpace(lines[len(lines)-1]), "tcforge_torch: ERROR: ")
}
