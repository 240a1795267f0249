package cli_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// exportPipeline builds SHA3-256 over 1000 message bits at the given
// rounds, layers it with reifier and maps it with tokens-as-gates (hard
// attention: no β search), checking the model on samples inputs: at 8
// rounds a 238 k-token model whose answer, check and export take most of
// the run.
func exportPipeline(rounds, samples int) string {
	return fmt.Sprintf(`pipeline "big" {
  samples = %d
  construction "keccak" {
    preset       = "sha3-256"
    message_bits = 1000
    rounds       = %d
  }
  layerer "reifier" {}
  mapper "tokens-as-gates" {}
}
`, samples, rounds)
}

// loadAverage returns the machine's one-minute load average, for the log.
func loadAverage() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "?"
	}
	return f[0]
}

// stopAt runs the host on cfg into dir/out (exporting to dir/ex) and,
// after d (never if d < 0), SIGTERMs it. It returns the exit status and
// how long the host took to end after the signal (0 without one, or if
// it ended first), having checked that no plugin process it started is
// alive 5 s after it ended.
func stopAt(t *testing.T, cfg, dir string, d time.Duration) (int, time.Duration) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "run", "--log-level", "warn", "--progress", "never", "--jobs", "1",
		"--out", filepath.Join(dir, "out"), "--export", filepath.Join(dir, "ex"), "--export-python", "none", cfg)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	plugins := map[int]bool{}
	watched := make(chan struct{})
	stopWatch := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			for _, pid := range children(t, cmd.Process.Pid) {
				mu.Lock()
				plugins[pid] = true
				mu.Unlock()
			}
			select {
			case <-stopWatch:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	exited := make(chan time.Time, 1)
	go func() {
		waitBounded(t, cmd, 10*time.Minute)
		exited <- time.Now()
	}()
	var took time.Duration
	select {
	case <-exited:
	case <-afterOrNever(d):
		t0 := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		took = (<-exited).Sub(t0)
	}
	close(stopWatch)
	<-watched
	code := cmd.ProcessState.ExitCode()
	gone := time.Now().Add(5 * time.Second)
	for pid := range plugins {
		for alive(pid) && time.Now().Before(gone) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGCONT)
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("plugin process %d outlived its host", pid)
		}
	}
	if code != 0 && code != 143 {
		t.Errorf("exit %d\n%s", code, b.String())
	}
	return code, took
}

// afterOrNever is time.After(d), or a channel that never fires if d < 0.
func afterOrNever(d time.Duration) <-chan time.Time {
	if d < 0 {
		return nil
	}
	return time.After(d)
}

// checkMarks checks what a run into dir left: a manifest that says how
// it ended (never "running" for a run that ended on its own or by
// SIGTERM), no temporary file, every exported config whole with the
// weights it names, and the same model as the undisturbed run's.
func checkMarks(t *testing.T, dir string, code int, want map[string]int64) {
	t.Helper()
	out, ex := filepath.Join(dir, "out"), filepath.Join(dir, "ex")
	var m soakManifest
	if _, err := os.Stat(filepath.Join(out, "tcforge-run.json")); err == nil {
		readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
		status := map[int]string{0: "ok", 143: "stopped: terminated (SIGTERM)"}[code]
		if m.Status != status {
			t.Errorf("exit %d, manifest %q, want %q", code, m.Status, status)
		}
	} else if code != 143 {
		t.Errorf("exit %d and no manifest", code)
	}
	checkWhole(t, out, m)
	checkWhole(t, ex, soakManifest{})
	configs, _ := filepath.Glob(filepath.Join(ex, "*-hard.json"))
	for _, c := range configs {
		md, err := safetensors.Import(c)
		if err != nil {
			t.Errorf("exported %s: %v", c, err)
			continue
		}
		if n, ok := want[filepath.Base(c)]; !ok || md.Stats().ParamsNonzero != n {
			t.Errorf("exported %s: %d nonzero parameters, the undisturbed run's %d", c, md.Stats().ParamsNonzero, n)
		}
	}
	if code == 0 && len(configs) != len(want) {
		t.Errorf("a finished run exported %d models, want %d", len(configs), len(want))
	}
}

// sigtermMoments runs the host undisturbed once, then SIGTERMs it at n
// moments drawn at random over its undisturbed wall time (mostly while it
// maps, checks and exports the model), each into a fresh directory: every
// run ends within 10 s of its signal (a scheduler's KillWait is often
// 30 s), writes its marks and leaves no process.
func sigtermMoments(t *testing.T, rounds, samples, n int) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "big.hcl", exportPipeline(rounds, samples))
	t0 := time.Now()
	clean := filepath.Join(dir, "clean")
	if code, _ := stopAt(t, cfg, clean, -1); code != 0 {
		t.Fatalf("the undisturbed run: exit %d", code)
	}
	total := time.Since(t0)
	want := map[string]int64{}
	configs, _ := filepath.Glob(filepath.Join(clean, "ex", "*-hard.json"))
	for _, c := range configs {
		md, err := safetensors.Import(c)
		if err != nil {
			t.Fatal(err)
		}
		want[filepath.Base(c)] = md.Stats().ParamsNonzero
	}
	if len(want) != 1 {
		t.Fatalf("the undisturbed run exported %d models", len(want))
	}
	t.Logf("undisturbed: %v (load %s)", total.Round(time.Millisecond), loadAverage())
	rng := rand.New(rand.NewPCG(34, uint64(rounds)))
	var worst time.Duration
	var lines []string
	for i := range n {
		at := time.Duration(float64(total) * rng.Float64())
		sub := filepath.Join(dir, fmt.Sprint("run", i))
		code, took := stopAt(t, cfg, sub, at)
		checkMarks(t, sub, code, want)
		if took > 10*time.Second {
			t.Errorf("SIGTERM at %v: the host ended %v after it, over 10 s", at.Round(time.Millisecond), took.Round(time.Millisecond))
		}
		worst = max(worst, took)
		lines = append(lines, fmt.Sprintf("%v→%d in %v", at.Round(10*time.Millisecond), code, took.Round(10*time.Millisecond)))
	}
	slices.Sort(lines)
	t.Logf("SIGTERM at (moment → exit in time to end): %s", strings.Join(lines, "; "))
	t.Logf("slowest end after SIGTERM: %v (load %s)", worst.Round(time.Millisecond), loadAverage())
}

// TestSIGTERMAnyMoment: SIGTERM at any moment of a run that maps, checks
// and exports a model ends it within 10 s, its marks written (the
// manifest says "stopped: terminated (SIGTERM)", every file whole, the
// exported model the undisturbed run's or none), no plugin process left.
// Default tier: a 2-round model (about 30 k tokens) at 3 moments;
// TCFORGE_HEAVY: the 8-round model (238 k tokens, its answer decoded and
// its export written in seconds) at 24.
func TestSIGTERMAnyMoment(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the host several times")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the plugin processes")
	}
	t.Parallel() // its own host processes and directories
	rounds, samples, n := 2, 8, 3
	if sdktest.IsHeavy() {
		rounds, samples, n = 8, 8, 24
	}
	sigtermMoments(t, rounds, samples, n)
}
