package cli_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

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
