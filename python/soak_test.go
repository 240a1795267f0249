package python_test

// Issue 34's soak over the Python side's new surfaces: the module writer
// (--export's byte modules) and `train`, their processes killed, crashed,
// interrupted and frozen at random moments, checking after each that
// nothing earlier is lost, no file is partial and no process is left.

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
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

// soakRounds is how many disturbed runs a soak makes: a few in the
// default tier, more with TCFORGE_HEAVY=1.
func soakRounds(kinds int) int {
	if sdktest.IsHeavy() {
		return 24
	}
	return kinds
}

// soakSeed is the soak's random seed: TCFORGE_SOAK_SEED, else the time
// (logged, so that a failing sequence can be replayed).
func soakSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("TCFORGE_SOAK_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (TCFORGE_SOAK_SEED=%d replays it)", seed, seed)
	return seed
}

// groupLeft lists the processes of process group pgid still alive (not
// zombies), waiting up to 5 s for them to go.
func groupLeft(pgid int) []string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		var left []string
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			_, rest, _ := bytes.Cut(stat, []byte(") "))
			f := strings.Fields(string(rest)) // state, ppid, pgrp, …
			if len(f) > 2 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
				left = append(left, e.Name()+" "+string(stat))
			}
		}
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// chaosPython is the module writer's interpreter in the soak: the real
// one, run as a child, and beside it a helper that sends it the signal
// named in the file "fault" beside the script after its delay (none: no
// signal). Its own pid, the group's, goes to "pgids".
const chaosPython = `#!/bin/sh
here=$(dirname "$0")
case "$*" in *"import torch"*) exec %[1]s "$@";; esac
echo $$ >> "$here/pgids"
read fault delay < "$here/fault"
%[1]s "$@" &
py=$!
if [ "$fault" != none ]; then (sleep "$delay"; kill -"$fault" "$py") >/dev/null 2>&1 & fi
wait "$py"
`

// TestSoakModuleWriter is issue 34's soak of the module writer: one
// undisturbed write of the toy model's byte module, then soakRounds
// writes whose interpreter is sent SIGKILL, SIGTERM, SIGSTOP (frozen: the
// run's context, ending 3 s later, stops it) or SIGSEGV (a crash) at a
// random moment.
// After each: the module is whole (the .onnx byte for byte the
// undisturbed one's, the .pt a sound archive with the same entries and
// weights) where the writer succeeded and absent where it failed; no
// temporary file; the export's config, weights and labels unchanged; no
// process of the interpreter's group alive. The undisturbed module hashes
// its test vector. CI's tier: one round of each fault but SIGSEGV.
func TestSoakModuleWriter(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "the module writer's soak (four module writes)")
	dir := t.TempDir()
	models := filepath.Join(dir, "models")
	exportWith(t, exportToy, models, nil, nil)
	cfg := filepath.Join(models, toyModel+".json")
	base := strings.TrimSuffix(cfg, ".json")
	exported := hashFiles(t, models)
	script := filepath.Join(dir, "chaos-python")
	if err := os.WriteFile(script, []byte(fmt.Sprintf(chaosPython, python)), 0o755); err != nil {
		t.Fatal(err)
	}
	setFault := func(fault string, delay time.Duration) {
		if err := os.WriteFile(filepath.Join(dir, "fault"), []byte(fmt.Sprintf("%s %.3f\n", fault, delay.Seconds())), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lastPgid := func() int {
		b, _ := os.ReadFile(filepath.Join(dir, "pgids"))
		f := strings.Fields(string(b))
		if len(f) == 0 {
			return 0
		}
		n, _ := strconv.Atoi(f[len(f)-1])
		return n
	}
	// The undisturbed write: the reference files and the time it takes.
	setFault("none", 0)
	w0 := pymod.NewModuleWriter(script, time.Hour, zerolog.Nop())
	defer w0.Close()
	if why := w0.Missing(context.Background()); why != "" {
		t.Fatal(why)
	}
	t0 := time.Now()
	if _, err := w0.WriteModule(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	refONNX, err := os.ReadFile(base + ".onnx")
	if err != nil {
		t.Fatal(err)
	}
	refPT := ptEntries(t, base+".pt")
	// The disturbed writes, bounded at twice the undisturbed one's time (a
	// frozen writer is stopped there; a slow one may be too, which is one
	// more way to fail that must leave nothing).
	timeout := 2*took + 2*time.Second
	w := pymod.NewModuleWriter(script, timeout, zerolog.Nop())
	defer w.Close()
	checkVector(t, base) // the reference hashes its test vector
	rng := rand.New(rand.NewPCG(soakSeed(t), 34))
	faults := []string{"KILL", "TERM", "STOP", "SEGV"}
	counts := map[string]int{}
	for i := range soakRounds(len(faults) - 1) { // the default tier: SIGSEGV (a crash, to the writer a kill) only with TCFORGE_HEAVY=1
		fault := faults[i%len(faults)]
		if i >= len(faults) {
			fault = faults[rng.IntN(len(faults))]
		}
		delay := time.Duration(rng.Float64() * 1.2 * float64(took))
		setFault(fault, delay)
		ctx, cancel := context.WithCancel(context.Background())
		if fault == "STOP" {
			// Frozen at delay: the run's context ends 3 s later (as
			// --timeout or a signal ends it), sooner than the writer's
			// own timeout.
			ctx, cancel = context.WithTimeout(ctx, delay+3*time.Second)
		}
		files, err := w.WriteModule(ctx, cfg)
		cancel()
		outcome := "written"
		if err != nil {
			outcome = "failed"
		}
		counts[fault+" "+outcome]++
		t.Logf("round %d: %s at %v: %s (%v)", i, fault, delay.Round(time.Millisecond), outcome, err)
		after := hashFiles(t, models)
		for name := range after {
			if strings.Contains(name, ".tmp-") {
				t.Errorf("round %d (%s): a temporary file is left: %s", i, fault, name)
			}
		}
		for name, b := range exported {
			if after[name] != b {
				t.Errorf("round %d (%s): %s changed", i, fault, name)
			}
		}
		_, hasPT := after[toyModel+".pt"]
		_, hasONNX := after[toyModel+".onnx"]
		switch {
		case err == nil:
			if len(files) != 2 || !hasPT || !hasONNX {
				t.Errorf("round %d (%s): written %q, but .pt %v, .onnx %v", i, fault, files, hasPT, hasONNX)
			} else {
				if after[toyModel+".onnx"] != string(refONNX) {
					t.Errorf("round %d (%s): the .onnx differs from the undisturbed one", i, fault)
				}
				if got := ptEntries(t, base+".pt"); !maps.Equal(got, refPT) {
					t.Errorf("round %d (%s): the .pt's entries or weights differ from the undisturbed one's", i, fault)
				}
			}
		case hasPT || hasONNX:
			t.Errorf("round %d (%s): the writer failed (%v) but left .pt %v, .onnx %v", i, fault, err, hasPT, hasONNX)
		}
		if pgid := lastPgid(); pgid == 0 {
			t.Errorf("round %d: the interpreter did not start", i)
		} else if left := groupLeft(pgid); len(left) != 0 {
			t.Errorf("round %d (%s): processes of the writer's group left: %q", i, fault, left)
		}
	}
	t.Logf("%d rounds (undisturbed write %v, timeout %v): %v", soakRounds(len(faults)-1), took.Round(time.Millisecond), timeout.Round(time.Millisecond), counts)
}

// ptEntries reads a TorchScript archive whole (every entry's checksum
// checked) and returns its entries, the weights (data/…) with their
// contents and the rest (code and debug records, which differ between
// writes) by name only.
func ptEntries(t *testing.T, path string) map[string]string {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Errorf("%s: %v", filepath.Base(path), err)
		return nil
	}
	defer zr.Close()
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Errorf("%s: %s: %v", filepath.Base(path), f.Name, err)
			continue
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Errorf("%s: %s: %v", filepath.Base(path), f.Name, err)
		}
		if strings.Contains(f.Name, "/data/") {
			out[f.Name] = string(b)
		} else {
			out[f.Name] = ""
		}
	}
	return out
}

// TestSoakTrain is issue 34's soak of `train`: a run of another name
// finished first, then soakRounds runs of one name with a long budget,
// each sent SIGKILL, SIGTERM, SIGINT, SIGSEGV (a crash), SIGSTOP then
// SIGKILL (frozen, then killed as a scheduler does), or a second run of
// its name beside it (refused), at a random moment. After each: the exit
// status says how it ended; the run's JSON is whole and, where this run
// wrote it, "interrupted" after SIGTERM or SIGINT and "running" after a
// kill (an earlier run's JSON unchanged where it had not got so far);
// the CSV holds whole rows only, no NUL byte; a temporary file only after
// a kill; the other run's files unchanged; no process of the run's group
// alive. A last run to its end cleans up what kills left. CI's tier: one
// round of each of the first four.
func TestSoakTrain(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "train's soak (six train processes)")
	dir := t.TempDir()
	cfg := exportAdder(t, dir)
	runs := filepath.Join(dir, "runs")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	train := func(args ...string) *exec.Cmd {
		cmd := trainCmd(ctx, t, dir, append([]string{cfg, "--out", "runs", "--progress", "never"}, args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd
	}
	if out, err := train("--name", "kept", "--steps", "0").CombinedOutput(); err != nil {
		t.Fatalf("the kept run: %v\n%s", err, out)
	}
	kept := map[string]string{}
	for _, ext := range []string{".json", ".csv", ".svg"} {
		b, err := os.ReadFile(filepath.Join(runs, "kept"+ext))
		if err != nil {
			t.Fatal(err)
		}
		kept[ext] = string(b)
	}
	stem := filepath.Join(runs, "soak")
	rng := rand.New(rand.NewPCG(soakSeed(t), 35))
	faults := []string{"TERM", "KILL", "INT", "second", "STOP", "SEGV"}
	counts := map[string]int{}
	for i := range soakRounds(len(faults) - 2) { // the default tier: frozen and crashed runs (to the files, kills) only with TCFORGE_HEAVY=1
		fault := faults[i%len(faults)]
		if i >= len(faults) {
			fault = faults[rng.IntN(len(faults))]
		}
		delay := time.Duration(rng.Float64() * float64(5*time.Second))
		before, _ := os.ReadFile(stem + ".json")
		cmd := train("--name", "soak", "--steps", "1000000", "--stop-exact", "0", "--log-every", "5")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid, pid2 := cmd.Process.Pid, 0
		time.Sleep(delay)
		switch fault {
		case "second":
			// Refused if the first holds its lock; else the second runs
			// (10 steps) and the first, finding it held, is refused.
			second := train("--name", "soak", "--steps", "10", "--log-every", "5")
			out, err := second.CombinedOutput()
			pid2 = second.Process.Pid
			if err != nil && (exitCode(err) != 1 || !bytes.Contains(out, []byte("is being written by another train process"))) {
				t.Errorf("round %d: a second run of the name: %v\n%s", i, err, out)
			}
			syscall.Kill(pid, syscall.SIGTERM)
		case "STOP":
			syscall.Kill(pid, syscall.SIGSTOP)
			time.Sleep(500 * time.Millisecond)
			syscall.Kill(pid, syscall.SIGKILL)
		default:
			syscall.Kill(pid, map[string]syscall.Signal{"TERM": syscall.SIGTERM, "KILL": syscall.SIGKILL, "INT": syscall.SIGINT, "SEGV": syscall.SIGSEGV}[fault])
		}
		err := cmd.Wait()
		code := exitCode(err)
		counts[fmt.Sprintf("%s → %d", fault, code)]++
		t.Logf("round %d: %s at %v: exit %d (%v)", i, fault, delay.Round(time.Millisecond), code, err)
		raw, jerr := os.ReadFile(stem + ".json")
		var meta map[string]any
		if jerr == nil && json.Unmarshal(raw, &meta) != nil {
			t.Errorf("round %d (%s): the JSON is not whole: %q", i, fault, raw)
		}
		mine := meta != nil && meta["pid"] == float64(pid)
		switch {
		case meta != nil && pid2 != 0 && meta["pid"] == float64(pid2):
			// The second run took the lock first: it finished; the first
			// was refused, or stopped before its lock.
			if meta["status"] != "done" || code == 0 {
				t.Errorf("round %d (%s): the second run's status %v, the first's exit %d", i, fault, meta["status"], code)
			}
		case !mine && !bytes.Equal(raw, before):
			t.Errorf("round %d (%s): the JSON changed, but not to this run's", i, fault)
		case !mine:
			// Stopped before it wrote anything: nothing to check but exit.
		case fault == "TERM" || fault == "INT" || fault == "second":
			want := map[string]int{"TERM": 143, "INT": 130, "second": 143}[fault]
			if meta["status"] != "interrupted" || code != want {
				t.Errorf("round %d (%s): exit %d, status %v; want %d and interrupted\n%s", i, fault, code, meta["status"], want, stderr.String())
			}
		default:
			if meta["status"] != "running" {
				t.Errorf("round %d (%s): status %v, want running (killed)", i, fault, meta["status"])
			}
		}
		if csvRaw, err := os.ReadFile(stem + ".csv"); err == nil {
			checkCSVWhole(t, fmt.Sprintf("round %d (%s)", i, fault), csvRaw)
		}
		if m, _ := filepath.Glob(filepath.Join(runs, ".*.tmp-*")); len(m) != 0 && (fault == "TERM" || fault == "INT" || fault == "second") {
			t.Errorf("round %d (%s): temporary files left: %q", i, fault, m)
		}
		for ext, b := range kept {
			if got, _ := os.ReadFile(filepath.Join(runs, "kept"+ext)); string(got) != b {
				t.Errorf("round %d (%s): kept%s changed", i, fault, ext)
			}
		}
		if left := groupLeft(pid); len(left) != 0 {
			t.Errorf("round %d (%s): processes left: %q", i, fault, left)
		}
	}
	t.Logf("%d rounds: %v", soakRounds(len(faults)-2), counts)
	if out, err := train("--name", "soak", "--steps", "0", "--log-every", "5").CombinedOutput(); err != nil {
		t.Fatalf("the last run: %v\n%s", err, out)
	}
	if _, meta := readRun(t, stem); meta["status"] != "done" {
		t.Errorf("the last run's status: %v", meta["status"])
	}
	if m, _ := filepath.Glob(filepath.Join(runs, ".*.tmp-*")); len(m) != 0 {
		t.Errorf("temporary files left after the last run: %q", m)
	}
	names, _ := os.ReadDir(runs)
	var files []string
	for _, e := range names {
		files = append(files, e.Name())
	}
	if want := []string{".tcforge-train.lock", "kept.csv", "kept.json", "kept.svg", "soak.csv", "soak.json", "soak.svg"}; !slices.Equal(files, want) {
		t.Errorf("--out holds %q, want %q", files, want)
	}
}

// checkCSVWhole fails t unless raw is a run's CSV of whole rows: the
// header, then rows of as many fields, steps 0, 5, 10, …, no NUL byte.
func checkCSVWhole(t *testing.T, what string, raw []byte) {
	t.Helper()
	if bytes.IndexByte(raw, 0) >= 0 {
		t.Errorf("%s: the CSV holds NUL bytes", what)
		return
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		t.Errorf("%s: the CSV ends in a partial row: %q", what, raw[max(0, len(raw)-80):])
	}
	rows, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil || len(rows) == 0 {
		t.Errorf("%s: the CSV: %v", what, err)
		return
	}
	for i, r := range rows[1:] {
		if len(r) != len(rows[0]) || r[0] != strconv.Itoa(5*i) {
			t.Errorf("%s: CSV row %d is %v, want step %d and %d fields", what, i+1, r, 5*i, len(rows[0]))
			return
		}
	}
}
