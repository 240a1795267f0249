package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// memoryCgroup makes a memory cgroup of limit bytes where this machine
// lets the test (v1's memory hierarchy, or a v2 one whose root hands the
// memory controller down), and returns the file a process joins it by
// writing its pid; "" and why not otherwise. The cgroup is removed when
// the test ends.
func memoryCgroup(t *testing.T, limit int64) (string, string) {
	t.Helper()
	name := fmt.Sprintf("tcforge-test-%d", os.Getpid())
	type hier struct{ root, file string }
	var tried []string
	for _, h := range []hier{{"/sys/fs/cgroup/memory", "memory.limit_in_bytes"}, {"/sys/fs/cgroup", "memory.max"}, {"/sys/fs/cgroup/unified", "memory.max"}} {
		if h.file == "memory.max" {
			b, _ := os.ReadFile(filepath.Join(h.root, "cgroup.subtree_control"))
			if !strings.Contains(string(b), "memory") {
				tried = append(tried, h.root+" (no memory controller handed down)")
				continue
			}
		}
		dir := filepath.Join(h.root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", h.root, err))
			continue
		}
		t.Cleanup(func() { os.Remove(dir) })
		if err := os.WriteFile(filepath.Join(dir, h.file), []byte(fmt.Sprint(limit)), 0o644); err != nil {
			tried = append(tried, fmt.Sprintf("%s (%v)", dir, err))
			continue
		}
		return filepath.Join(dir, "cgroup.procs"), ""
	}
	return "", strings.Join(tried, "; ")
}

// TestMemoryUnderLimits: with no --memory, the host's bound is half the
// least of the physical memory, what RLIMIT_AS leaves of the address
// space and its cgroup's memory limit, so under `prlimit --as` (ulimit -v)
// or in a memory cgroup (a Slurm job's --mem) a model check that cannot
// fit is refused up front, in its row, as it is for the physical memory,
// and the plugin process, bounded by the same share, survives building
// the model. Before, the bound was half the RAM (12 GB here) whatever the
// limits: under the address-space limit the plugin died of out-of-memory
// building the model (a Go process maps 1.2 GB of address space before it
// allocates anything), and a model that fitted the limit but not the
// host's share was checked anyway. The 4-round model's check takes about
// 307 MiB; the cgroup's limit is 1000 MiB (the bound 500 MiB, the check's
// share 250), RLIMIT_AS 2600 MiB (what the host has mapped by then, over
// a GB, is not left: a bound of about 500 MiB).
func TestMemoryUnderLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and maps an 8-round SHA3-256 point (a few seconds)")
	}
	if raceEnabled {
		t.Skip("the race detector reserves more address space than the limit")
	}
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", strings.Replace(modelCheckPipeline, "rounds       = 8", "rounds       = 4", 1))
	tests := []struct {
		name     string
		limit    int64
		prefix   func(t *testing.T, limit int64) []string
		from     string
		min, max int64 // the bound's range
	}{
		{"prlimit", 2600 << 20, func(t *testing.T, limit int64) []string {
			if _, err := exec.LookPath("prlimit"); err != nil {
				t.Skip("no prlimit(1)")
			}
			return []string{"prlimit", fmt.Sprintf("--as=%d", limit), "--"}
		}, "half of the address space RLIMIT_AS (ulimit -v) leaves", 200 << 20, 600 << 20},
		{"cgroup", 1000 << 20, func(t *testing.T, limit int64) []string {
			procs, why := memoryCgroup(t, limit)
			if procs == "" {
				t.Skipf("no memory cgroup can be made here: %s", why)
			}
			return []string{"sh", "-c", `echo $$ > "$0" && exec "$@"`, procs}
		}, "half of the cgroup's memory limit", 500 << 20, 500 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(dir, tt.name)
			args := append(tt.prefix(t, tt.limit), os.Args[0], "run", "--log-level", "warn", "--progress", "never", "--jobs", "1", "--out", out, cfg)
			cmd := exec.Command(args[0], args[1:]...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
			}
			var m struct {
				Status          string `json:"status"`
				HostMemoryLimit int64  `json:"host_memory_limit"`
				HostMemoryFrom  string `json:"host_memory_from"`
			}
			readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
			if m.Status != "failed" || m.HostMemoryLimit < tt.min || m.HostMemoryLimit > tt.max || m.HostMemoryFrom != tt.from {
				t.Errorf("manifest %+v, want a bound in [%d, %d] MiB from %q", m, tt.min>>20, tt.max>>20, tt.from)
			}
			want := fmt.Sprintf("the model check would take about 307 MiB (122419 tokens, 2237485 nonzero parameters), over its share of the host's memory bound, %d MiB (half of --memory, over the points checked at once); not checked", m.HostMemoryLimit/2>>20)
			if !strings.Contains(stdout.String(), want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
			}
			t.Logf("%s: the host's bound %d MiB (%s)", tt.name, m.HostMemoryLimit>>20, m.HostMemoryFrom)
		})
	}
}

// TestMemoryFlagsOverflow: a --memory or --plugin-memory whose bytes
// would overflow 64 bits is refused with the largest value taken. Before,
// MiB << 20 wrapped: --memory 9999999999999999 became a negative bound.
func TestMemoryFlagsOverflow(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("p", "reifier"))
	for _, flag := range []string{"--memory", "--plugin-memory"} {
		r := tcforge(t, "run", flag, "9999999999999999", "--out", filepath.Join(dir, "out"), cfg)
		want := "Error: " + flag + " must be at most 8796093022207 (MiB), got 9999999999999999"
		if r.code != 2 || !strings.HasPrefix(r.stderr, want) {
			t.Errorf("%s: exit %d, want 2 and %q:\n%s", flag, r.code, want, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Error("a refused run wrote --out")
	}
}
