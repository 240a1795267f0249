package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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

// soakConfig is a pipeline per rate, each of rounds points, through a
// chaos plugin of every kind (chaos_test.go): a plugin that crashed fails
// the later points of its pipeline, a fresh process serves the next
// pipeline. It returns the config and the pipelines' names.
func soakConfig(rates []int, rounds int) (string, []string) {
	var sb strings.Builder
	var names []string
	for _, rate := range rates {
		names = append(names, fmt.Sprintf("soak-%d", rate))
		fmt.Fprintf(&sb, `pipeline "soak-%d" {
  samples = 8
  matrix {
    rounds = range(1, %d)
  }
  construction "chaos-keccak" {
    log_w  = 0
    rate   = %d
    rounds = matrix.rounds
  }
  layerer "chaos-layer" {}
  mapper "chaos-map" {}
}
`, rate, rounds+1, rate)
	}
	return sb.String(), names
}

// soakRun is one run of the host as a real process, with the plugin
// processes it was seen to start.
type soakRun struct {
	cmd     *exec.Cmd
	mu      sync.Mutex
	plugins map[int]bool
	done    chan struct{}
}

// startSoak starts `tcforge run` on cfg into out, exporting the models to
// out+"-models" (CSR: small files), with chaos seed seed ("": none) and watches
// its children.
func startSoak(t *testing.T, cfg, out, seed string) *soakRun {
	t.Helper()
	cmd := exec.Command(os.Args[0], "run", "--log-level", "error", "--progress", "never", "--timeout", "3s", "--jobs", "2", "--out", out,
		"--export", out+"-models", "--export-python", "none", "--export-dense-max", "0", cfg)
	cmd.Env = os.Environ()
	if seed != "" {
		cmd.Env = append(cmd.Env, chaosEnv+"="+seed)
	}
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &soakRun{cmd: cmd, plugins: map[int]bool{}, done: make(chan struct{})}
	go func() {
		for {
			select {
			case <-r.done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			for _, pid := range children(t, cmd.Process.Pid) {
				r.mu.Lock()
				r.plugins[pid] = true
				r.mu.Unlock()
			}
		}
	}()
	return r
}

// end waits for the host (killing it past limit), then checks that every
// plugin process it started is gone within 5 s.
func (r *soakRun) end(t *testing.T, limit time.Duration) int {
	t.Helper()
	waitBounded(t, r.cmd, limit)
	close(r.done)
	r.mu.Lock()
	defer r.mu.Unlock()
	gone := time.Now().Add(5 * time.Second)
	for pid := range r.plugins {
		for alive(pid) && time.Now().Before(gone) {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGCONT)
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("plugin process %d outlived its host", pid)
		}
	}
	return r.cmd.ProcessState.ExitCode()
}

// soakManifest is the part of the manifest the soak reads.
type soakManifest struct {
	PID      int    `json:"pid"`
	Status   string `json:"status"`
	Previous string `json:"previous"`
	Files    []string
}

// checkWhole checks that no file under out is partial: no temporary file
// is left, every file the manifest lists exists, every JSON file parses,
// every CSV has a header and whole records.
func checkWhole(t *testing.T, out string, m soakManifest) {
	t.Helper()
	filepath.Walk(out, func(path string, fi os.FileInfo, err error) error {
		if err != nil || fi.IsDir() {
			return nil
		}
		if strings.Contains(fi.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", path)
		}
		switch filepath.Ext(path) {
		case ".json":
			b, _ := os.ReadFile(path)
			if !json.Valid(b) {
				t.Errorf("%s: not whole JSON", path)
			}
		case ".csv":
			sdktest.Table(t, path) // fails on a torn record
		}
		return nil
	})
	for _, f := range m.Files {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the manifest lists %s: %v", f, err)
		}
	}
}

// rowKey names a CSV row by its point and layerer.
func rowKey(pipeline string, row map[string]string) string {
	return pipeline + "/" + row["rounds"] + "/" + row["layerer"]
}

// stableCells returns a row's cells that do not vary between runs (not the
// timings).
func stableCells(row map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range row {
		if strings.HasSuffix(k, "_ms") || strings.HasPrefix(k, "time_") {
			continue
		}
		out[k] = v
	}
	return out
}

// checkExports checks the models exported to dir: no temporary or
// partial file (a run killed mid-export leaves its unnamed file to the
// kernel), every config whole with the weights and labels it names, each
// model the undisturbed run's (clean), byte for byte.
func checkExports(t *testing.T, dir, clean string) {
	t.Helper()
	checkWhole(t, dir, soakManifest{})
	configs, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, c := range configs {
		if strings.HasSuffix(c, ".labels.json") {
			continue
		}
		if _, err := safetensors.Import(c); err != nil {
			t.Errorf("exported %s: %v", c, err)
		}
		for _, suffix := range []string{".json", ".safetensors", ".labels.json"} {
			f := strings.TrimSuffix(filepath.Base(c), ".json") + suffix
			got, err := os.ReadFile(filepath.Join(dir, f))
			want, werr := os.ReadFile(filepath.Join(clean, f))
			if err != nil || werr != nil || !bytes.Equal(got, want) {
				t.Errorf("exported %s: %v, %v; not the undisturbed run's", f, err, werr)
			}
		}
	}
}

// exportedName is the export name of a model row of pipeline p's CSV.
func exportedName(p string, row map[string]string) string {
	return p + ".rounds-" + row["rounds"] + "." + row["layerer"] + "." + strings.ReplaceAll(row["arch"], "/", "-")
}

// TestSoak runs a pipeline of chaos plugins (every kind crashes, freezes
// or lies at random) while the host is killed (SIGKILL, SIGTERM, SIGINT)
// at random moments and started again into the same --out and --export,
// then lets a last run finish. After every run no plugin process is left
// and no file is partial (in --out or among the exported models); every
// manifest says how its run ended (a SIGKILLed run's in the next run's
// "previous"); every exported model is whole and the undisturbed run's;
// and every row the last run verified equals an undisturbed run's, its
// model exported. Default tier: 40 points (5 pipelines), 3 kills;
// TCFORGE_HEAVY: 200 points (10 pipelines), 12 kills.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the host several times (about half a minute)")
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the plugin processes")
	}
	rates, rounds, kills := []int{4, 8, 12, 16, 20}, 8, 3
	if sdktest.IsHeavy() {
		rates, rounds, kills = []int{2, 4, 6, 8, 10, 12, 14, 16, 18, 20}, 20, 12
	}
	dir := t.TempDir()
	src, soakPipelines := soakConfig(rates, rounds)
	cfg := writeFile(t, dir, "soak.hcl", src)
	points := len(rates) * rounds

	clean := filepath.Join(dir, "clean")
	t0 := time.Now()
	if code := startSoak(t, cfg, clean, "").end(t, 10*time.Minute); code != 0 {
		t.Fatalf("the undisturbed run: exit %d", code)
	}
	took := time.Since(t0)
	want := map[string]map[string]string{}
	for _, p := range soakPipelines {
		for _, row := range sdktest.Table(t, filepath.Join(clean, p+".csv")) {
			want[rowKey(p, row)] = stableCells(row)
		}
	}
	if len(want) != points {
		t.Fatalf("the undisturbed run has %d rows, want %d", len(want), points)
	}

	out := filepath.Join(dir, "out")
	rng := rand.New(rand.NewPCG(27, 0))
	signals := []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGINT}
	lastRunning := false // the last manifest written was left "running" (its run SIGKILLed)
	var outcomes []string
	for i := 0; i <= kills; i++ {
		r := startSoak(t, cfg, out, fmt.Sprint(i))
		sig := syscall.Signal(0)
		if i < kills {
			// Each signal in turn, at a random moment, mostly mid-run.
			time.Sleep(time.Duration(float64(min(took, 20*time.Second)) * (0.1 + 0.8*rng.Float64())))
			sig = signals[i%len(signals)]
			r.cmd.Process.Signal(sig)
		}
		code := r.end(t, 10*time.Minute)
		var m soakManifest
		if _, err := os.Stat(filepath.Join(out, "tcforge-run.json")); err == nil {
			readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
		}
		checkWhole(t, out, m)
		checkExports(t, out+"-models", clean+"-models")
		// A run stopped during its check, before it wrote anything,
		// leaves the directory (and the last run's manifest) as it was.
		if m.PID != r.cmd.Process.Pid {
			if code != 143 && code != 130 && code != -1 {
				t.Errorf("run %d: exit %d and no manifest of its own", i, code)
			}
			outcomes = append(outcomes, fmt.Sprintf("%v→%d (stopped before writing)", sig, code))
			continue
		}
		if lastRunning && !strings.HasPrefix(m.Previous, "killed: ") {
			t.Errorf("run %d: the manifest does not say the run before was killed: %+v", i, m)
		}
		// How it ended, by the exit status, and what the manifest says.
		want := map[int]string{0: "ok", 1: "failed", 143: "stopped: terminated (SIGTERM)", 130: "stopped: interrupted", -1: "running"}[code]
		if want == "" || m.Status != want {
			t.Errorf("run %d: %v, exit %d, manifest %q", i, sig, code, m.Status)
		}
		lastRunning = m.Status == "running"
		outcomes = append(outcomes, fmt.Sprintf("%v→%d %q", sig, code, m.Status))
	}
	if last := outcomes[len(outcomes)-1]; !strings.Contains(last, `"ok"`) && !strings.Contains(last, `"failed"`) {
		t.Errorf("the last run did not finish: %s", last)
	}

	same, failed, exported := 0, 0, 0
	var errs []string
	for _, p := range soakPipelines {
		rows := sdktest.Table(t, filepath.Join(out, p+".csv"))
		if len(rows) != rounds {
			t.Errorf("%s: the last run has %d rows, want %d", p, len(rows), rounds)
		}
		for _, row := range rows {
			if row["verified"] != "true" || row["error"] != "" {
				failed++
				if e := row["error"]; !slices.Contains(errs, e) && len(errs) < 6 {
					errs = append(errs, e)
				}
				continue
			}
			w, ok := want[rowKey(p, row)]
			if !ok {
				t.Errorf("row %s is not in the undisturbed run", rowKey(p, row))
				continue
			}
			got := stableCells(row)
			for k, v := range w {
				if got[k] != v {
					t.Errorf("row %s: %s = %q, undisturbed %q", rowKey(p, row), k, got[k], v)
				}
			}
			same++
			if row["model_verified"] == "true" {
				// Nothing lost: a verified model is exported.
				name := exportedName(p, row)
				if _, err := os.Stat(filepath.Join(out+"-models", name+".safetensors")); err != nil {
					t.Errorf("row %s: its model %s was not exported: %v", rowKey(p, row), name, err)
				}
				exported++
			}
		}
	}
	if same == 0 {
		t.Error("no row of the last run verified")
	}
	t.Logf("undisturbed run: %d points in %v", len(want), took.Round(time.Millisecond))
	t.Logf("runs: %s", strings.Join(outcomes, "; "))
	t.Logf("last run: %d rows equal the undisturbed run's (%d models verified and exported), %d failed by the chaos plugins, e.g. %q", same, exported, failed, errs)
}
