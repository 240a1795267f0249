package cli_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tcforge/tcforge/host/cli"
	"github.com/tcforge/tcforge/host/report"
)

// TestShardMerge runs testdata/shard.hcl (-short: shard-short.hcl, the
// same pipelines at smaller matrices, a third of the CPU) once and as
// three shards, merges the shards, and compares every file the two
// write: the same bytes apart from timings.
func TestShardMerge(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join("testdata", "shard.hcl")
	summary := "3 pipelines, 52 points, 104 rows: 104 circuits verified, 16 of 16 models verified, 48/48 met"
	if testing.Short() {
		cfg = filepath.Join("testdata", "shard-short.hcl")
		summary = "3 pipelines, 11 points, 22 rows: 22 circuits verified, 8 of 8 models verified, 9/9 met"
	}
	root := t.TempDir()
	single := filepath.Join(root, "single")
	var dirs []string
	for i := range 3 {
		dirs = append(dirs, filepath.Join(root, "shard", string(rune('0'+i))))
	}
	// The single run and the three shards are independent processes' work
	// (own output directories): run them at once.
	runs := [][]string{{"run", "--log-level", "warn", "--progress", "never", "--out", single, cfg}}
	for i, d := range dirs {
		runs = append(runs, []string{"run", "--log-level", "warn", "--progress", "never", "--shard", string(rune('0'+i)) + "/3", "--out", d, cfg})
	}
	results := make([]result, len(runs))
	var wg sync.WaitGroup
	for i, args := range runs {
		wg.Go(func() { results[i] = tcforge(t, args...) })
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", runs[i], r.code, r.stderr)
		}
	}
	merged := filepath.Join(root, "merged")
	r := tcforge(t, append([]string{"merge", "--log-level", "warn", "--out", merged}, dirs...)...)
	if r.code != 0 {
		t.Fatalf("merge: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, summary) {
		t.Errorf("merge summary:\n%s", r.stdout)
	}
	// Each shard ran some but not all points.
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "compare-md-paper.csv"))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "\n") - 1; n == 0 || n >= 64 {
			t.Errorf("%s: %d rows of compare-md-paper", d, n)
		}
	}
	sameReports(t, single, merged)
}

// manifestUntimed returns a run manifest with what is each run's own
// zeroed: its start and finish times, its process ID, its peak memory and
// bound, its plugin processes.
func manifestUntimed(t *testing.T, data []byte) []byte {
	t.Helper()
	var m report.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	m.Started, m.Finished = time.Time{}, time.Time{}
	// Which process wrote it, its peak memory and bound, the plugin
	// processes it started: the run's own.
	m.PID, m.HostPeakRSS, m.HostMemoryLimit, m.HostMemoryFrom, m.PluginProcesses = 0, 0, 0, "", nil
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestShardMergeRefuses: an incomplete or duplicated set of shards is
// refused with the reason (shard-short.hcl: the refusal does not depend on
// the pipelines' size).
func TestShardMergeRefuses(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join("testdata", "shard-short.hcl")
	root := t.TempDir()
	d0, d1 := filepath.Join(root, "0"), filepath.Join(root, "1")
	results := make([]result, 2)
	var wg sync.WaitGroup
	for i, d := range []string{d0, d1} {
		wg.Go(func() {
			results[i] = tcforge(t, "run", "--log-level", "warn", "--progress", "never", "--shard", string(rune('0'+i))+"/3", "--out", d, cfg)
		})
	}
	wg.Wait()
	for _, r := range results {
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	}
	for _, tc := range []struct {
		dirs []string
		want string
	}{
		{[]string{d0, d1}, "shard 2/3 missing"},
		// A task killed before it wrote its shard: its directory is named.
		{[]string{d0, d1, root}, "shard 2/3 missing (" + root + ": no tcforge-shard.gob, its task did not finish: cancelled, killed or never started); run them again"},
		{[]string{d0, d1, d0}, "shard 0/3 given twice"},
	} {
		r := tcforge(t, append([]string{"merge", "--out", filepath.Join(root, "m")}, tc.dirs...)...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("merge %v: exit %d, stderr %q, want %q", tc.dirs, r.code, r.stderr, tc.want)
		}
	}
	if r := tcforge(t, "run", "--shard", "3/3", "--out", root, cfg); r.code == 0 || !strings.Contains(r.stderr, "0 ≤ I < N") {
		t.Errorf("--shard 3/3: exit %d, %q", r.code, r.stderr)
	}
}

// csvTimesBlank blanks the timing columns of a CSV (layer_ms,
// time_vs_reifier).
func csvTimesBlank(t *testing.T, b []byte) []byte {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for c, name := range recs[0] {
		if strings.HasSuffix(name, "_ms") || strings.HasPrefix(name, "time_") {
			for _, r := range recs[1:] {
				r[c] = "T"
			}
		}
	}
	var out bytes.Buffer
	w := csv.NewWriter(&out)
	if err := w.WriteAll(recs); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// sameReports compares every file a single run wrote into single with
// the same file in merged (tcforge merge's --out): the same bytes apart
// from timings.
func sameReports(t *testing.T, single, merged string) {
	t.Helper()
	timing := regexp.MustCompile(`("[a-z_]*seconds": )[0-9.e+-]+|Generated [0-9: -]+`)
	var files []string
	err := filepath.Walk(single, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			rel, _ := filepath.Rel(single, path)
			files = append(files, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 10 {
		t.Fatalf("single run wrote only %v", files)
	}
	for _, rel := range files {
		if rel == ".tcforge-run.lock" {
			continue // which process held --out: "pid N"
		}
		a, err := os.ReadFile(filepath.Join(single, rel))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(merged, rel))
		if err != nil {
			t.Errorf("merge did not write %s: %v", rel, err)
			continue
		}
		if rel == report.ManifestFile {
			a, b = manifestUntimed(t, a), manifestUntimed(t, b)
		}
		na, nb := timing.ReplaceAll(a, []byte("${1}T")), timing.ReplaceAll(b, []byte("${1}T"))
		if strings.HasSuffix(rel, ".csv") {
			na, nb = csvTimesBlank(t, na), csvTimesBlank(t, nb)
		}
		if string(na) != string(nb) {
			t.Errorf("%s differs between the single run and the merged shards", rel)
		}
	}
}

// TestShardStopped: a shard stopped by SIGTERM to its whole process group
// (a Slurm time limit or scancel signals the host and its plugins alike)
// writes its finished rows marked incomplete and exits 143; merge then
// writes an incomplete report naming the shard and exits 1; run again,
// the shard completes the merge, which equals one run.
func TestShardStopped(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cfg := heldConfig(t, root)
	shards, err := cli.ShardsOf(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	s := shards["held"][0] // the shard of blocks = 1, held
	hold := filepath.Join(root, "hold-1")
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(root, "0"), filepath.Join(root, "1")}
	args := func(i int) []string {
		return []string{"run", "--log-level", "warn", "--progress", "never", "--jobs", "1", "--shard", fmt.Sprintf("%d/2", i), "--out", dirs[i], cfg}
	}
	cmd := exec.Command(os.Args[0], args(s)...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if r := tcforge(t, args(1-s)...); r.code != 0 {
		t.Fatalf("shard %d: exit %d\n%s", 1-s, r.code, r.stderr)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(root, "mark-1")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the held point did not start within a minute:\n%s", errb.String())
		}
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 143 {
		t.Fatalf("the stopped shard: exit %d, want 143\n%s", code, errb.String())
	}
	merged := filepath.Join(root, "merged")
	r := tcforge(t, "merge", "--log-level", "warn", "--out", merged, dirs[0], dirs[1])
	if want := fmt.Sprintf("incomplete: shard %d/2 terminated (SIGTERM); run them again", s); r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("merge of a stopped shard: exit %d, stderr\n%s\nwant exit 1 and %q", r.code, r.stderr, want)
	}
	var rep struct {
		Complete bool
		Stopped  string
		NotRun   []map[string]any `json:"not_run"`
	}
	b, err := os.ReadFile(filepath.Join(merged, "held.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Complete || rep.Stopped != fmt.Sprintf("shard %d/2 terminated (SIGTERM)", s) || len(rep.NotRun) == 0 {
		t.Errorf("merged held.json: complete %v, stopped %q, %d points not run", rep.Complete, rep.Stopped, len(rep.NotRun))
	}
	// Run again with nothing held: the merge is one run's.
	os.Remove(hold)
	single := filepath.Join(root, "single")
	var wg sync.WaitGroup
	results := make([]result, 2)
	wg.Go(func() { results[0] = tcforge(t, args(s)...) })
	wg.Go(func() {
		results[1] = tcforge(t, "run", "--log-level", "warn", "--progress", "never", "--out", single, cfg)
	})
	wg.Wait()
	for _, r := range results {
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
	}
	if r := tcforge(t, "merge", "--log-level", "warn", "--out", merged, dirs[0], dirs[1]); r.code != 0 {
		t.Fatalf("merge after the shard ran again: exit %d\n%s", r.code, r.stderr)
	}
	sameReports(t, single, merged)
}
