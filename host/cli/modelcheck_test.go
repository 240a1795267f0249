package cli_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// modelCheckPipeline is a point whose model check (a tokens-as-gates
// softmax model of 8-round Keccak-f[1600] over 1000 message bits: 237 619
// tokens, 64 samples) takes over a minute of forward passes on a 2-core
// machine, after a second of building and mapping.
const modelCheckPipeline = `pipeline "check" {
  samples = 64
  construction "keccak" {
    preset       = "sha3-256"
    message_bits = 1000
    rounds       = 8
  }
  layerer "reifier" {}
  mapper "tokens-as-gates" { attention = "softmax" }
}
`

// startUntil starts cmd with its standard error piped and returns once a
// line of it contains mark, and the time it did.
func startUntil(t *testing.T, cmd *exec.Cmd, mark string) {
	t.Helper()
	pr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	seen := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), mark) {
				once = true
				close(seen)
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case <-seen:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the host never logged %q", mark)
	}
}

// TestSignalDuringModelCheck: SIGTERM and Ctrl-C (SIGINT) stop a run in
// the middle of a model check's forward passes within seconds (the passes
// check the context before every sublayer), write the point as not run
// and leave no plugin process; before, the host finished the check first
// (over a minute here, 4 minutes in the run).
func TestSignalDuringModelCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and maps an 8-round SHA3-256 point (a few seconds)")
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cfg := writeFile(t, dir, "p.hcl", modelCheckPipeline)
			out := filepath.Join(dir, "out")
			cmd := exec.Command(os.Args[0], "run", "--log-level", "debug", "--log-format", "json", "--progress", "never", "--out", out, cfg)
			startUntil(t, cmd, `"call":"Map"`) // the model is in the host: its check starts
			plugins := children(t, cmd.Process.Pid)
			time.Sleep(time.Second)
			t0 := time.Now()
			cmd.Process.Signal(sig)
			took := waitBounded(t, cmd, 60*time.Second)
			want := 128 + int(sig)
			if code := cmd.ProcessState.ExitCode(); code != want {
				t.Errorf("exit %d, want %d", code, want)
			}
			if took > 15*time.Second {
				t.Errorf("the host took %v to stop after %v", took, sig)
			}
			for _, pid := range plugins {
				if alive(pid) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("plugin process %d outlived the host", pid)
				}
			}
			var m manifest
			readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
			if !strings.HasPrefix(m.Status, "stopped: ") {
				t.Errorf("manifest status %q", m.Status)
			}
			t.Logf("%v: the host stopped %v after the signal", sig, time.Since(t0).Round(10*time.Millisecond))
		})
	}
}

// TestModelCheckRefused: a model check estimated over its share of the
// host's memory bound (half of --memory, over the points checked at once) is refused before
// it starts, in the model's row, as --max-edges refuses a point; the run
// ends normally (exit 1, manifest "failed"). Before, the host checked
// whatever model it got: SHA3-256 over 4000 bits grew it to 20 GB, and
// the kernel killed it with the manifest at "running".
func TestModelCheckRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and maps an 8-round SHA3-256 point (a few seconds)")
	}
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", modelCheckPipeline)
	out := filepath.Join(dir, "out")
	// A process of its own: the bound is on the host's whole process.
	cmd := exec.Command(os.Args[0], "run", "--log-level", "warn", "--progress", "never", "--memory", "1000", "--jobs", "2", "--out", out, cfg)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Run()
	r := result{cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()}
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	want := `mapper "tokens-as-gates" (tokens-as-gates/softmax, ` + cfg + `:9): the model check would take about 599 MiB (237619 tokens, 4426285 nonzero parameters), over its share of the host's memory bound, 500 MiB (half of --memory, over the points checked at once); not checked`
	if !strings.Contains(r.stdout, want) {
		t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
	}
	var m struct {
		Status          string `json:"status"`
		HostPeakRSS     int64  `json:"host_peak_rss"`
		HostMemoryLimit int64  `json:"host_memory_limit"`
	}
	readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
	if m.Status != "failed" || m.HostMemoryLimit != 1000<<20 || m.HostPeakRSS <= 0 || m.HostPeakRSS > m.HostMemoryLimit {
		t.Errorf("manifest %+v", m)
	}
	t.Logf("the host's peak: %d MiB", m.HostPeakRSS>>20)
}

// TestHostMemoryBound: a host that grows past its own bound (--memory)
// stops the run as a signal does — exit 1, the point written as not run,
// the manifest saying why, no plugin left — instead of growing until the
// kernel kills it. Here the host decodes and checks an 8-block SHA3-256
// circuit (about 16 M edges, over 150 MiB).
func TestHostMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds an 8-block SHA3-256 circuit (a few seconds)")
	}
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", `pipeline "big" {
  samples = 4
  construction "keccak" {
    preset = "sha3-256"
    blocks = 8
  }
  layerer "reifier" {}
}
`)
	out := filepath.Join(dir, "out")
	cmd := exec.Command(os.Args[0], "run", "--log-level", "warn", "--progress", "never", "--memory", "150", "--out", out, cfg)
	var stderr strings.Builder
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	took := waitBounded(t, cmd, 90*time.Second)
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, stderr.String())
	}
	const why = "over its memory bound of 150 MiB (--memory)"
	var m manifest
	readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
	if !strings.HasPrefix(m.Status, "stopped: the host grew to ") || !strings.HasSuffix(m.Status, why) {
		t.Errorf("manifest status %q", m.Status)
	}
	if !strings.Contains(stderr.String(), why) || strings.Contains(stderr.String(), "goroutine ") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	t.Logf("stopped after %v: %s", took.Round(10*time.Millisecond), m.Status)
}
