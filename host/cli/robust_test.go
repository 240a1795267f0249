package cli_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// writeFile writes src to dir/name and returns the path.
func writeFile(t *testing.T, dir, name, src string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// smallPipeline is a two-point pipeline of the given name and layerer.
func smallPipeline(name, layerer string) string {
	return `pipeline "` + name + `" {
  matrix {
    rounds = [1, 2]
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "` + layerer + `" {}
}
`
}

// TestUsageErrors: command-line mistakes are refused before anything
// runs, with the reason and the usage, exit status 2, writing nothing.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("p", "reifier"))
	afile := writeFile(t, dir, "afile", "")
	out := filepath.Join(dir, "out")
	tests := []struct {
		args  []string
		want  string
		usage string // the usage line shown
	}{
		{[]string{"run", "--samples", "0", cfg}, "--samples must be at least 1, got 0", "tcforge run [flags] FILE..."},
		{[]string{"run", "--samples", "-5", cfg}, "--samples must be at least 1, got -5", "tcforge run [flags] FILE..."},
		{[]string{"run", "--jobs", "0", cfg}, "--jobs must be at least 1, got 0", "tcforge run [flags] FILE..."},
		{[]string{"run", "--jobs", "-3", cfg}, "--jobs must be at least 1, got -3", "tcforge run [flags] FILE..."},
		{[]string{"run", "--max-edges", "-1", cfg}, "--max-edges must be at least 0 (0: no limit), got -1", "tcforge run [flags] FILE..."},
		{[]string{"run", "--max-points", "-1", cfg}, "--max-points must be at least 0 (0: no limit), got -1", "tcforge run [flags] FILE..."},
		{[]string{"run", "--timeout", "-5s", cfg}, "--timeout must be a duration of at least 0 (0: no limit), got -5s", "tcforge run [flags] FILE..."},
		{[]string{"run", "--log-level", "bogus", cfg}, `--log-level must be one of trace, debug, info, warn, error, disabled, got "bogus"`, "tcforge run [flags] FILE..."},
		{[]string{"run", "--log-format", "xml", cfg}, `--log-format must be auto, console or json, got "xml"`, "tcforge run [flags] FILE..."},
		{[]string{"run", "--progress", "sometimes", cfg}, `--progress: progress mode must be auto, always or never, got "sometimes"`, "tcforge run [flags] FILE..."},
		{[]string{"run", "--samples", "many", cfg}, `invalid argument "many" for "--samples"`, "tcforge run [flags] FILE..."},
		{[]string{"run", "--bogus", cfg}, "unknown flag: --bogus", "tcforge run [flags] FILE..."},
		{[]string{"run"}, "missing FILE: run needs at least one pipeline file", "tcforge run [flags] FILE..."},
		{[]string{"bogus"}, `unknown command "bogus" for "tcforge"`, "tcforge [command]"},
		{[]string{"inspect"}, "accepts 1 arg(s), received 0", "tcforge inspect [flags] FILE.hcl"},
		{[]string{"inspect", "--samples", "0", cfg}, "--samples must be at least 1, got 0", "tcforge inspect [flags] FILE.hcl"},
		{[]string{"run", "--out", afile, cfg}, "--out " + afile + ": is a file, not a directory", "tcforge run [flags] FILE..."},
		{[]string{"run", "--out", filepath.Join(afile, "sub"), cfg}, "--out " + filepath.Join(afile, "sub") + ": " + afile + " is a file, not a directory", "tcforge run [flags] FILE..."},
	}
	if runtime.GOOS == "linux" {
		// /proc takes no new files, even for root.
		tests = append(tests, struct {
			args        []string
			want, usage string
		}{[]string{"run", "--out", "/proc/tcforge-test/out", cfg}, "--out /proc/tcforge-test/out: cannot create files in /proc: ", "tcforge run [flags] FILE..."})
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := tt.args
			if args[0] == "run" && !strings.Contains(strings.Join(args, " "), "--out") && len(args) > 1 {
				args = append([]string{"run", "--out", out}, args[1:]...)
			}
			r := tcforge(t, args...)
			if r.code != 2 {
				t.Fatalf("exit %d, want 2\n%s%s", r.code, r.stdout, r.stderr)
			}
			if !strings.HasPrefix(r.stderr, "Error: "+tt.want) {
				t.Errorf("stderr does not start with %q:\n%s", "Error: "+tt.want, r.stderr)
			}
			if !strings.Contains(r.stderr, "\nUsage:\n  "+tt.usage) {
				t.Errorf("stderr lacks the usage %q:\n%s", tt.usage, r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout: %s", r.stdout)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused command wrote %s", out)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(afile, "sub")); err == nil {
		t.Error("--out under a file created something")
	}
}

// TestOddInputs: a file without pipelines is an error naming it; a
// binary file gives a capped list of diagnostics with control bytes
// escaped. Both exit 1 and write nothing.
func TestOddInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := make([]byte, 4096)
	x := uint32(1)
	for i := range bin {
		x = x*1664525 + 1013904223
		bin[i] = byte(x >> 24)
	}
	tests := []struct {
		name, src string
		want      []string
	}{
		{"empty.hcl", "", []string{"Error: No pipelines in " + filepath.Join(dir, "empty.hcl")}},
		{"comments.hcl", "# only\n// comments\n", []string{"Error: No pipelines in " + filepath.Join(dir, "comments.hcl")}},
		{"random.bin", string(bin), []string{"more errors (not shown; the first 10 are above)."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, dir, tt.name, tt.src)
			out := filepath.Join(dir, "out")
			r := tcforge(t, "run", "--out", out, path)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if n := strings.Count(r.stderr, "Error: "); n > 10 {
				t.Errorf("%d diagnostics printed", n)
			}
			for _, c := range r.stderr {
				if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f || c == '\uFFFD' {
					t.Fatalf("raw control character %U in the diagnostics", c)
				}
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("wrote %s", out)
			}
		})
	}
}

// TestHugeSweep: a sweep over --max-points is refused at once, located,
// before a single point is made; the pre-run check asks a plugin about
// each distinct parameter set once, however many points share it.
func TestHugeSweep(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	huge := writeFile(t, dir, "huge.hcl", `pipeline "huge" {
  matrix {
    a = range(1000)
    b = range(1000)
    c = range(1000)
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = 1
  }
  layerer "reifier" {}
}
`)
	out := filepath.Join(dir, "out")
	start := time.Now()
	r := tcforge(t, "run", "--out", out, huge)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	for _, w := range []string{"Error: Too many points", "huge.hcl:2:3", "1000000000 matrix points", "over the limit of 100000 points per run (--max-points)"} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a refused sweep wrote results")
	}
	t.Logf("refused 10^9 points in %v", time.Since(start))

	// 120 points, two distinct construction parameter sets (rounds 1, 2).
	cfg := writeFile(t, dir, "repeat.hcl", `pipeline "repeat" {
  matrix {
    copy   = range(60)
    rounds = [1, 2]
  }
  construction "counting" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
    log    = "`+filepath.Join(dir, "checks.log")+`"
  }
  layerer "reifier" {}
}
`)
	log := filepath.Join(dir, "checks.log")
	r = tcforge(t, "run", "--log-level", "warn", "--max-points", "120", "--samples", "8", "--progress", "always", cfg)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// The check before the run prepares and estimates rounds=1 and
	// rounds=2 once (one Check call each, whose answer carries the
	// estimate), and Run reuses what it prepared; the plugin process
	// also prepares for each of the 120 points' Build and Reference.
	// Checking every point would be 120×2 Check calls (480 prepares, 240
	// estimates).
	seen := map[string]int{}
	for _, c := range strings.Fields(string(b)) {
		seen[c]++
	}
	want := map[string]int{"estimate:rounds=1": 1, "estimate:rounds=2": 1, "prepare:rounds=1": 60*2 + 1, "prepare:rounds=2": 60*2 + 1}
	if !maps.Equal(seen, want) {
		t.Errorf("plugin calls for 2 distinct parameter sets over 120 points: %v, want %v", seen, want)
	}
	// The check shows its progress on the bar (--progress always here;
	// auto does on a terminal).
	if !strings.Contains(r.stderr, "checking repeat: point 120 of 120") {
		t.Errorf("no progress of the check on stderr:\n%q", r.stderr[:min(len(r.stderr), 400)])
	}
	if !strings.Contains(r.stdout, "1 pipelines, 120 points, 120 rows: 120 verified") {
		t.Errorf("summary:\n%s", r.stdout[max(0, len(r.stdout)-200):])
	}
}

// readJSON decodes a JSON file into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// manifest is the part of DIR/tcforge-run.json the tests read.
type manifest struct {
	Status    string   `json:"status"`
	Files     []string `json:"files"`
	Pipelines []struct {
		Name, Status string
		Rows         int
	} `json:"pipelines"`
}

// stoppedRun writes a config of three pipelines ("done", "stuck" whose
// layerer hangs, "never") into dir, with files an earlier run left in
// dir/out, and returns the config and the hang mark's path.
func stoppedRun(t *testing.T, dir string) (cfg, out, mark string) {
	t.Helper()
	mark = filepath.Join(dir, "stuck-now")
	stuck := strings.Replace(smallPipeline("stuck", "hangs"), `layerer "hangs" {}`, `layerer "hangs" { mark = "`+mark+`" }`, 1)
	cfg = writeFile(t, dir, "int.hcl", smallPipeline("done", "reifier")+stuck+smallPipeline("never", "reifier"))
	out = filepath.Join(dir, "out")
	// An earlier, complete run into the same directory.
	if err := os.MkdirAll(filepath.Join(out, "plots"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"never.csv", "never.json", "stuck.md", "report.html", "plots/never.depth-vs-rounds.svg", "other.csv", "plots/never.x.depth-vs-rounds.svg"} {
		writeFile(t, out, f, "from an earlier run: all ok\n")
	}
	return cfg, out, mark
}

// checkStopped checks the output directory of a run stopped while
// pipeline "stuck" hung: finished rows written, the stop said in every
// format, nothing of the earlier run presented as this one's.
func checkStopped(t *testing.T, out, why string) {
	t.Helper()
	if rows := sdktest.Table(t, filepath.Join(out, "done.csv")); len(rows) != 2 || rows[1]["verified"] != "true" || rows[1]["error"] != "" {
		t.Errorf("done.csv: %v", rows)
	}
	rows := sdktest.Table(t, filepath.Join(out, "stuck.csv"))
	if len(rows) != 2 {
		t.Fatalf("stuck.csv: %v", rows)
	}
	for _, row := range rows {
		if row["error"] != "not run: "+why || row["depth"] != "" || row["verified"] != "false" || row["expect_ok"] != "false" {
			t.Errorf("stuck.csv row %v, want a not-run marker", row)
		}
	}
	var js struct {
		Complete bool             `json:"complete"`
		OK       bool             `json:"ok"`
		Stopped  string           `json:"stopped"`
		NotRun   []map[string]any `json:"not_run"`
	}
	readJSON(t, filepath.Join(out, "stuck.json"), &js)
	if js.Complete || js.OK || js.Stopped != why || len(js.NotRun) != 2 {
		t.Errorf("stuck.json: %+v", js)
	}
	md, _ := os.ReadFile(filepath.Join(out, "stuck.md"))
	if !strings.Contains(string(md), "**Incomplete ("+why+"): 0 of 2 points finished**") || strings.Contains(string(md), "all rows verified") {
		t.Errorf("stuck.md:\n%s", md)
	}
	html, _ := os.ReadFile(filepath.Join(out, "report.html"))
	for _, w := range []string{"INCOMPLETE", "This run stopped early (" + why + ")", `id="p-done"`, `id="p-stuck"`} {
		if !strings.Contains(string(html), w) {
			t.Errorf("report.html lacks %q", w)
		}
	}
	if strings.Contains(string(html), `id="p-never"`) || strings.Contains(string(html), "all ok") {
		t.Error("report.html shows what did not run")
	}
	var m manifest
	readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
	if m.Status != "stopped: "+why || len(m.Pipelines) != 3 || m.Pipelines[0].Status != "ok" || m.Pipelines[1].Status != "incomplete" || m.Pipelines[2].Status != "not run" {
		t.Errorf("manifest: %+v", m)
	}
	// The earlier run's files of these pipelines are gone; another
	// pipeline's stay (the manifest does not list them).
	for _, f := range []string{"never.csv", "never.json", "plots/never.depth-vs-rounds.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); !os.IsNotExist(err) {
			t.Errorf("the earlier run's %s is still there", f)
		}
	}
	for _, f := range []string{"other.csv", "plots/never.x.depth-vs-rounds.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("another pipeline's %s was removed", f)
		}
		for _, g := range m.Files {
			if g == f {
				t.Errorf("the manifest lists %s", f)
			}
		}
	}
	// No temporary files are left behind.
	tmps, _ := filepath.Glob(filepath.Join(out, ".*.tmp-*"))
	if len(tmps) > 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}

// waitFor waits until path exists.
func waitFor(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
	t.Fatalf("%s never appeared", path)
}

// TestSIGTERM: SIGTERM to a real tcforge process stops the run as Ctrl-C
// does: the finished rows and report.html are written, the stop is said
// in every format, exit status 143.
func TestSIGTERM(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, out, mark := stoppedRun(t, dir)
	cmd := exec.Command(os.Args[0], "run", "--log-level", "warn", "--jobs", "1", "--out", out, cfg)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, mark)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Fatalf("exit %d (%v), want 143", code, err)
	}
	checkStopped(t, out, "terminated (SIGTERM)")
}

// TestClosedStdout: `tcforge run … | head -2`: when standard output is
// closed, the host stops as on an interrupt, without a crash or a goroutine
// dump, writes what finished and exits 141.
func TestClosedStdout(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("first", "reifier")+smallPipeline("second", "reifier"))
	out := filepath.Join(dir, "out")
	cmd := exec.Command(os.Args[0], "run", "--log-level", "warn", "--out", out, cfg)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout.Close() // the reader is gone before the first line
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 141 {
		t.Fatalf("exit %d, want 141\n%s", code, stderr.String())
	}
	if strings.Contains(stderr.String(), "goroutine ") || strings.Contains(stderr.String(), "panic") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "standard output closed") {
		t.Errorf("stderr does not say why it stopped:\n%s", stderr.String())
	}
	if rows := sdktest.Table(t, filepath.Join(out, "first.csv")); len(rows) != 2 || rows[0]["verified"] != "true" {
		t.Errorf("first.csv: %v", rows)
	}
	var m manifest
	readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
	if !strings.HasPrefix(m.Status, "stopped: standard output closed") || m.Pipelines[1].Status != "not run" {
		t.Errorf("manifest: %+v", m)
	}
}

// children returns the process IDs whose parent is pid (from /proc).
func children(t *testing.T, pid int) []int {
	t.Helper()
	var out []int
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, s := range stats {
		b, err := os.ReadFile(s)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(pid) {
			id, _ := strconv.Atoi(filepath.Base(filepath.Dir(s)))
			out = append(out, id)
		}
	}
	return out
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestHostKilled: SIGKILL to a real tcforge process mid-run (no chance to
// stop its plugins) leaves no plugin process behind: each ends on its own
// within about a second.
func TestHostKilled(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the plugin processes")
	}
	dir := t.TempDir()
	cfg, out, mark := stoppedRun(t, dir)
	cmd := exec.Command(os.Args[0], "run", "--log-level", "warn", "--jobs", "1", "--out", out, cfg)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, mark) // the "stuck" pipeline's layerer hangs in its call
	plugins := children(t, cmd.Process.Pid)
	if len(plugins) < 2 { // the construction and the hanging layerer at least
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("found %d plugin processes of the host, want at least 2", len(plugins))
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	killed := time.Now()
	for _, pid := range plugins {
		for alive(pid) && time.Since(killed) < 20*time.Second {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(pid) {
			syscall.Kill(pid, syscall.SIGKILL) // the test's own leftovers
			t.Errorf("plugin process %d survived its host's SIGKILL", pid)
		}
	}
	t.Logf("%d plugin processes gone %v after the host's SIGKILL", len(plugins), time.Since(killed))
}

// TestStartTimeout: a plugin process that never completes its start-up
// handshake is killed after --start-timeout and reported in one line;
// `tcforge plugins` lists the others; run fails that pipeline by name.
func TestStartTimeout(t *testing.T) {
	t.Parallel()
	sdktest.Short(t, "waits out a 10 s --start-timeout end to end (host/registry tests the timeout at milliseconds)")
	// The others must start within it, many test binaries at once on a
	// machine perhaps busy with other work: the default, 10 s (1 s failed
	// at load average 25), and more for instrumented binaries. The
	// timeout itself is tested at milliseconds in host/registry.
	timeout := 10 * time.Second
	if raceEnabled {
		timeout = time.Minute
	}
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("slow", "neverstarts")+smallPipeline("slow2", "neverstarts"))
	builtins := testBuiltins()
	builtins["neverstarts"] = allBuiltins()["neverstarts"]
	// Both commands wait out the timeout: at once.
	var plugins, run result
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		plugins = tcforgeWith(t, builtins, "--start-timeout", timeout.String(), "plugins")
	}()
	go func() {
		defer wg.Done()
		run = tcforgeWith(t, builtins, "--start-timeout", timeout.String(), "run", "--log-level", "warn", cfg)
	}()
	wg.Wait()
	if plugins.code != 1 {
		t.Fatalf("plugins: exit %d, want 1\n%s%s", plugins.code, plugins.stdout, plugins.stderr)
	}
	// One line for it (and one for the "oldproto" fixture, which
	// speaks another protocol); nothing from go-plugin about the kill.
	want := []string{
		`neverstarts: plugin "neverstarts" did not complete its start-up handshake within ` + timeout.String() + ` (--start-timeout)`,
		`oldproto: starting plugin "oldproto" (bundled): plugin "oldproto" speaks tcforge plugin protocol`,
	}
	lines := strings.Split(strings.TrimSuffix(plugins.stderr, "\n"), "\n")
	if len(lines) != len(want) || lines[0] != want[0] || !strings.HasPrefix(lines[1], want[1]) {
		t.Errorf("stderr:\n%s\nwant two lines:\n%s", plugins.stderr, strings.Join(want, "\n"))
	}
	for _, name := range []string{"keccak", "md", "merkle", "reifier", "fusion"} {
		if !strings.Contains(plugins.stdout, name) {
			t.Errorf("plugins does not list %s:\n%s", name, plugins.stdout)
		}
	}
	// Two pipelines use it: one line each, the same start (the registry
	// test checks that it is launched once).
	if run.code != 1 || strings.Count(run.stderr, `plugin "neverstarts" did not complete its start-up handshake within `+timeout.String()) == 0 {
		t.Errorf("run: exit %d\n%s", run.code, run.stderr)
	}
	r := tcforge(t, "--start-timeout", "-1s", "plugins")
	if r.code != 2 || !strings.Contains(r.stderr, "--start-timeout must be a duration of at least 0") {
		t.Errorf("--start-timeout -1s: exit %d\n%s", r.code, r.stderr)
	}
}

// TestAllErrorsTogether: every parameter of every block of every pipeline
// of every file is checked (schema and Prepare) before the first point
// runs; an invalid enum value does not hide the other errors; all are
// reported together, and nothing is written.
func TestAllErrorsTogether(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := writeFile(t, dir, "a.hcl", `pipeline "enum" {
  construction "keccak" {
    log_w = 1
    rate  = 25
  }
  layerer "reifier" {}
  mapper "tokens-as-gates" {
    attention = "bogus"
  }
}
pipeline "md" {
  construction "md" {
    log_w      = 2
    block_bits = 8
    chain_bits = 1000
  }
  layerer "reifier" {}
}
`)
	b := writeFile(t, dir, "b.hcl", `pipeline "leaves" {
  construction "merkle" {
    log_w      = 1
    block_bits = 4
    leaves     = 0
  }
  layerer "reifier" {}
}
pipeline "digest" {
  construction "merkle" {
    log_w       = 1
    block_bits  = 4
    digest_bits = 1000
  }
  layerer "reifier" {}
}
pipeline "beta" {
  construction "keccak" {
    log_w = 1
    rate  = 25
  }
  layerer "reifier" {}
  mapper "tokens-as-gates" {
    attention = "softmax"
    beta      = -1
  }
}
`)
	out := filepath.Join(dir, "out")
	r := tcforge(t, "run", "--out", out, a, b)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	for _, w := range []string{
		"a.hcl:8:17", `"bogus"`,
		"a.hcl:15:18", "1000 is larger than the Keccak-p state",
		"b.hcl:5:18", "needs at least one leaf, got 0",
		"b.hcl:13:19", "digest_bits",
		"b.hcl:25:17", "must be ≥ 0 and finite, got -1",
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if strings.Contains(r.stdout, "pipelines,") {
		t.Errorf("something ran:\n%s", r.stdout)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a bad config wrote %s", out)
	}
}

// TestHugeInstances: md and merkle estimate their circuits, so a huge
// instance is refused by the default --max-edges before anything is
// built (it used to grow the plugin to 20 GB), located, with the estimate.
func TestHugeInstances(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "huge.hcl", `pipeline "tree" {
  construction "merkle" {
    log_w  = 6
    leaves = 100000000
  }
  layerer "reifier" {}
}
pipeline "chain" {
  construction "md" {
    log_w  = 6
    blocks = 10000000
  }
  layerer "reifier" {}
}
`)
	out := filepath.Join(dir, "out")
	start := time.Now()
	r := tcforge(t, "run", "--out", out, cfg)
	t.Logf("refused in %v", time.Since(start))
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	for _, w := range []string{
		"huge.hcl:2:3", `construction "merkle" estimates its logic circuit`,
		"huge.hcl:9:3", `construction "md" estimates its logic circuit`,
		"over the limit of 50000000 edges",
	} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Error("a refused run wrote results")
	}
}

// TestOverrideWarned: an external tcforge-plugin-NAME on the plugin path
// replaces the bundled NAME, with a warning naming it, its path and its
// SHA-256; every row of the CSV, JSON and report.html says which plugin
// produced it: name, version and source (bundled, or path and SHA-256).
func TestOverrideWarned(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	exe := filepath.Join(dir, "tcforge-plugin-reifier")
	// The test binary serving the bundled reifier, as an external plugin.
	writeFile(t, dir, "tcforge-plugin-reifier", "#!/bin/sh\nexec "+os.Args[0]+" plugin serve reifier\n")
	if err := os.Chmod(exe, 0o755); err != nil {
		t.Fatal(err)
	}
	script, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := fmt.Sprintf("%x", sha256.Sum256(script))
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("p", "reifier"))
	out := filepath.Join(dir, "out")
	r := tcforge(t, "run", "--log-level", "warn", "--log-format", "console", "--plugin-dir", dir, "--lock", filepath.Join(dir, "none.lock.hcl"), "--out", out, cfg)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "an external plugin overrides the bundled one of the same name") || !strings.Contains(r.stderr, exe) || !strings.Contains(r.stderr, sum) {
		t.Errorf("no warning naming the override, its path and SHA-256 %s:\n%s", sum, r.stderr)
	}
	version := builtin.Plugins()["keccak"].Describe().Version
	rversion := builtin.Plugins()["reifier"].Describe().Version
	// provenance checks the CSV, JSON and HTML of a run into out: the
	// keccak plugin is bundled, the reifier one's source is reifier.
	provenance := func(t *testing.T, out, reifier string) {
		t.Helper()
		cell := "keccak " + version + " bundled; reifier " + rversion + " " + reifier
		b, err := os.ReadFile(filepath.Join(out, "p.csv"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := slices.Index(recs[0], "plugins")
		if col < 0 || len(recs) != 3 {
			t.Fatalf("p.csv has no plugins column or not 2 rows: %v", recs)
		}
		for _, rec := range recs[1:] {
			if rec[col] != cell {
				t.Errorf("plugins cell %q, want %q", rec[col], cell)
			}
		}
		var js struct {
			Rows []struct {
				Plugins []struct{ Kind, Name, Version, Source, SHA256 string }
			}
		}
		readJSON(t, filepath.Join(out, "p.json"), &js)
		for _, row := range js.Rows {
			got := []string{}
			for _, p := range row.Plugins {
				s := p.Kind + " " + p.Name + " " + p.Version + " " + p.Source
				if p.SHA256 != "" {
					s += " sha256:" + p.SHA256
				}
				got = append(got, s)
			}
			if want := []string{"construction keccak " + version + " bundled", "layerer reifier " + rversion + " " + reifier}; !slices.Equal(got, want) {
				t.Errorf("JSON row plugins %q, want %q", got, want)
			}
		}
		html, err := os.ReadFile(filepath.Join(out, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		src, hash, _ := strings.Cut(reifier, " sha256:")
		want := "<tr><td>layerer</td><td>reifier</td><td>" + rversion + "</td><td>"
		if hash == "" {
			want += "bundled</td><td></td></tr>"
		} else {
			want += "<code>" + src + "</code></td><td><code>" + hash + "</code></td></tr>"
		}
		if !strings.Contains(string(html), want) {
			t.Errorf("report.html lacks %s", want)
		}
	}
	provenance(t, out, exe+" sha256:"+sum)

	r = tcforge(t, "run", "--log-level", "warn", "--out", out, cfg)
	if strings.Contains(r.stderr, "overrides") {
		t.Errorf("a warning without an override:\n%s", r.stderr)
	}
	provenance(t, out, "bundled")
}

// TestMemoryBound: a plugin that cannot estimate and grows without bound
// is killed at --plugin-memory; its row fails with one line naming it and
// the bound, and the other pipelines run.
func TestMemoryBound(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", `pipeline "hog" {
  construction "hog" {
    log_w = 0
    rate  = 12
  }
  layerer "reifier" {}
}
`+smallPipeline("fine", "reifier"))
	r := tcforge(t, "run", "--log-level", "warn", "--plugin-memory", "256", cfg)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := `plugin "hog": Build: the plugin process grew to `
	if !strings.Contains(r.stdout+r.stderr, want) || !strings.Contains(r.stdout+r.stderr, "over the memory bound of 256 MiB (--plugin-memory); it was killed") {
		t.Errorf("no line naming the plugin and the bound:\n%s%s", r.stdout, r.stderr)
	}
	if strings.Contains(r.stderr, "signal: killed") || strings.Contains(r.stderr, "goroutine ") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	if !strings.Contains(r.stdout, "2 pipelines") {
		t.Errorf("the other pipeline did not run:\n%s", r.stdout)
	}
	for _, l := range strings.Split(r.stdout+r.stderr, "\n") {
		if strings.Contains(l, want) {
			t.Log(l)
		}
	}
}

// TestFailuresInOneLine: a plugin the Go runtime kills for running out of
// memory (a fatal error and a dump of every goroutine, hundreds of lines)
// and a plugin that writes to its standard output before the go-plugin
// handshake (13 lines of go-plugin's advice) each fail their rows with one
// line naming the plugin and the cause; the full text is saved, atomically,
// to logs/ in --out and listed in the run manifest, or without --out to a
// directory $TMPDIR/tcforge-logs-*. Each line gives the file.
func TestFailuresInOneLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", `pipeline "oom" {
  construction "oom" {
    log_w = 0
    rate  = 12
  }
  layerer "reifier" {}
}
`+smallPipeline("chat", "chatty")+smallPipeline("fine", "reifier"))
	out := filepath.Join(dir, "out")
	type failure struct {
		pipeline, line, file string // the row's error line and the log file
	}
	// check runs cfg and returns each failed row's line, with the file it
	// names, after checking that nothing else was said about them.
	check := func(t *testing.T, args ...string) []failure {
		r := tcforgeWith(t, allBuiltins(), append(append([]string{"run", "--log-level", "warn"}, args...), cfg)...)
		if r.code != 1 {
			t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
		}
		for _, flood := range []string{"goroutine ", "This usually means", "runtime.", "plugin process exited"} {
			if strings.Contains(r.stdout+r.stderr, flood) {
				t.Errorf("the output has %q:\n%s%s", flood, r.stdout, r.stderr)
			}
		}
		if !strings.Contains(r.stdout, "3 pipelines, 5 points, 5 rows: 2 verified") {
			t.Errorf("the good pipeline did not run:\n%s", r.stdout)
		}
		// One log event per failed row, on stderr.
		events := 0
		for _, l := range strings.Split(r.stderr, "\n") {
			if strings.Contains(l, `"message":"point `) {
				events++
			}
		}
		if events != 3 {
			t.Errorf("%d error events on stderr, want one for each of the 3 failed rows:\n%s", events, r.stderr)
		}
		var got []failure
		for _, l := range strings.Split(r.stdout, "\n") {
			if !strings.HasPrefix(l, "  error [") {
				continue
			}
			_, file, ok := strings.Cut(l, " (full output: ")
			if !ok || !strings.HasSuffix(file, ")") {
				t.Errorf("the error line names no file: %s", l)
				continue
			}
			p := "chat"
			if strings.Contains(l, `"oom"`) {
				p = "oom"
			}
			got = append(got, failure{p, l, strings.TrimSuffix(file, ")")})
		}
		if len(got) != 3 {
			t.Fatalf("%d error lines on stdout, want 3:\n%s", len(got), r.stdout)
		}
		for _, f := range got {
			t.Log(f.line)
			want := map[string][]string{
				"oom":  {`plugin "oom" exited during Build: exit status 2: fatal error: `, "goroutine ", "runtime.throw"},
				"chat": {`plugin "chatty" wrote "hello from chatty, before the handshake" to its standard output before the start-up handshake`, "This usually means"},
			}[f.pipeline]
			if !strings.Contains(f.line, want[0]) {
				t.Errorf("the line does not name the plugin and the cause %q: %s", want[0], f.line)
			}
			text, err := os.ReadFile(f.file)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range want {
				if !bytes.Contains(text, []byte(w)) {
					t.Errorf("%s lacks %q:\n%s", f.file, w, text)
				}
			}
			if f.pipeline == "oom" && bytes.Count(text, []byte("\n")) < 50 {
				t.Errorf("%s holds %d lines, not the whole dump", f.file, bytes.Count(text, []byte("\n")))
			}
		}
		return got
	}

	t.Run("out", func(t *testing.T) {
		got := check(t, "--out", out)
		var m struct {
			Pipelines []struct {
				Name  string
				Files []string
			}
			Files []string
		}
		readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
		for _, f := range got {
			rel, err := filepath.Rel(out, f.file)
			if err != nil || !strings.HasPrefix(rel, "logs"+string(filepath.Separator)) {
				t.Errorf("%s is not in %s/logs", f.file, out)
				continue
			}
			for _, p := range m.Pipelines {
				if p.Name == f.pipeline && !slices.Contains(p.Files, filepath.ToSlash(rel)) {
					t.Errorf("the manifest does not list %s among pipeline %s's files: %v", rel, p.Name, p.Files)
				}
			}
		}
		ents, _ := os.ReadDir(filepath.Join(out, "logs"))
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("a temporary file is left: %s", e.Name())
			}
		}
		// A second run into the same folder clears the first's logs.
		os.WriteFile(filepath.Join(out, "logs", "oom.log"), []byte("old"), 0o644)
		r := tcforge(t, "run", "--log-level", "warn", "--out", out, writeFile(t, dir, "fine.hcl", smallPipeline("oom", "reifier")))
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(out, "logs", "oom.log")); !os.IsNotExist(err) {
			t.Error("an earlier run's log of the pipeline was left")
		}
	})
	t.Run("no-out", func(t *testing.T) {
		for _, f := range check(t) {
			d := filepath.Dir(filepath.Dir(f.file))
			if !strings.HasPrefix(filepath.Base(d), "tcforge-logs-") || filepath.Dir(d) != os.TempDir() {
				t.Errorf("%s is not in $TMPDIR/tcforge-logs-*/logs", f.file)
				continue
			}
			t.Cleanup(func() { os.RemoveAll(d) }) // $TMPDIR is shared: leave nothing there
		}
	})
}

// TestReadmeFirstRun: the README says what the first `go run` costs, the
// Go version go.mod needs (its go line, as it is now) and how to build the
// binary once for repeated use (issue 16 item 13).
func TestReadmeFirstRun(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	mod, err := os.ReadFile(filepath.Join("..", "..", "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	var goLine string
	for l := range strings.Lines(string(mod)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "go "); ok {
			goLine = v
		}
	}
	if goLine == "" {
		t.Fatal("go.mod has no go line")
	}
	for _, want := range []string{
		"Go " + goLine + " or newer",
		"The first `go run` on a machine compiles tcforge",
		"go build -o bin/tcforge ./host/cmd/tcforge",
	} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
}

// TestPluginStartedAgain: a plugin process that died in one pipeline (here
// it exits in its first call; a memory kill or a timeout ends it the same
// way) is started again for the next pipeline, whose rows are computed as
// if nothing had happened.
func TestPluginStartedAgain(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	died := `layerer "diesonce" { died = "` + filepath.Join(dir, "died") + `" }`
	cfg := writeFile(t, dir, "p.hcl", `pipeline "first" {
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = 1
  }
  `+died+`
}
`+strings.Replace(smallPipeline("second", "diesonce"), `layerer "diesonce" {}`, died, 1))
	out := filepath.Join(dir, "out")
	r := tcforge(t, "run", "--log-level", "warn", "--out", out, cfg)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (the first pipeline fails)\n%s%s", r.code, r.stdout, r.stderr)
	}
	first := sdktest.Table(t, filepath.Join(out, "first.csv"))
	if len(first) != 1 || first[0]["verified"] != "false" || !strings.Contains(first[0]["error"], `plugin "diesonce" exited during Layer: exit status 3`) {
		t.Errorf("first pipeline: %v", first)
	}
	second := sdktest.Table(t, filepath.Join(out, "second.csv"))
	if len(second) != 2 {
		t.Fatalf("second pipeline: %d rows, want 2", len(second))
	}
	for _, row := range second {
		if row["verified"] != "true" || row["error"] != "" || row["depth"] == "0" || row["depth"] == "" {
			t.Errorf("second pipeline, after the plugin was started again: %v", row)
		}
	}
}
