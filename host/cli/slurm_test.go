package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tcforge/tcforge/host/cli"
)

// slurmConfEnv names the slurm.conf of a running scheduler the tests may
// submit to (.ci/run starts one with scripts/slurm/start.sh). Without
// it, TestSlurm starts its own from that script in a temporary directory
// and stops it at the end.
const slurmConfEnv = "TCFORGE_SLURM_CONF"

// slurmEnv returns the environment of the Slurm commands: SLURM_CONF of
// the scheduler the tests use, started here if need be, or skips the
// test saying why there is none.
func slurmEnv(t *testing.T) []string {
	t.Helper()
	conf := os.Getenv(slurmConfEnv)
	if conf == "" {
		for _, cmd := range []string{"munged", "slurmctld", "slurmd", "sbatch"} {
			if _, err := exec.LookPath(cmd); err != nil {
				t.Skipf("no Slurm scheduler: %s not found (apt-get install slurm-wlm munge; .ci/run does) and $%s not set", cmd, slurmConfEnv)
			}
		}
		if os.Geteuid() != 0 {
			t.Skipf("no Slurm scheduler: $%s not set, and starting one needs root (slurmd starts each task as its user)", slurmConfEnv)
		}
		dir := t.TempDir()
		port := freePortPair(t)
		start := exec.Command(filepath.Join("..", "..", "scripts", "slurm", "start.sh"), dir)
		// Eight CPUs on any machine (the tasks are small, and mostly wait
		// here), a short KillWait: the tests own this scheduler.
		start.Env = append(os.Environ(), "SLURM_CPUS=8", "SLURM_KILLWAIT=10", "SLURM_MEMORY_MIB=16384", fmt.Sprintf("SLURM_PORT=%d", port))
		out, err := start.CombinedOutput()
		t.Cleanup(func() {
			if out, err := exec.Command(filepath.Join("..", "..", "scripts", "slurm", "stop.sh"), dir).CombinedOutput(); err != nil {
				t.Errorf("stopping the test's scheduler: %v\n%s", err, out)
			}
		})
		if err != nil {
			t.Fatalf("scripts/slurm/start.sh: %v\n%s", err, out)
		}
		t.Logf("%s", bytes.TrimSpace(out))
		conf = filepath.Join(dir, "slurm.conf")
	}
	env := append(os.Environ(), "SLURM_CONF="+conf)
	v, err := slurmOut(env, "sinfo", "-V")
	if err != nil {
		t.Fatalf("the scheduler at %s: %v", conf, err)
	}
	t.Logf("submitting to %s at %s", strings.TrimSpace(v), conf)
	return env
}

// freePortPair returns a port p such that p and p+1 are free on
// 127.0.0.1 (slurmctld's and slurmd's).
func freePortPair(t *testing.T) int {
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if l2, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p+1)); err == nil {
			l2.Close()
			return p
		}
	}
	t.Fatal("no two free ports in a row on 127.0.0.1")
	return 0
}

// slurmOut runs a Slurm client command with env.
func slurmOut(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("%s %v: %w: %s", name, args, err, errb.String())
	}
	return out.String(), nil
}

// tcforgeEnv runs the tcforge command line (this test binary) as a
// process with env: what the jobs run is this binary too.
func tcforgeEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

// sweepJobs returns the job ids of the sweep in dir, from its record:
// every array, merge and report job; and those of the last submission.
func sweepJobs(t *testing.T, dir string) (all []string, array, merge, report string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, cli.SweepFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Submissions []struct{ Array, Merge, Report string }
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	for _, s := range rec.Submissions {
		all = append(all, s.Array, s.Merge, s.Report)
		array, merge, report = s.Array, s.Merge, s.Report
	}
	return all, array, merge, report
}

// lastTasks returns the tasks of the sweep's last submission.
func lastTasks(t *testing.T, dir string) []int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, cli.SweepFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec struct{ Submissions []struct{ Tasks []int } }
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	return rec.Submissions[len(rec.Submissions)-1].Tasks
}

// submitSweep runs tcforge slurm with args and returns the sweep's
// jobs; they are cancelled when the test ends, if still queued.
func submitSweep(t *testing.T, env []string, dir string, args ...string) (array, merge, report string) {
	t.Helper()
	r := tcforgeEnv(t, env, append([]string{"slurm", "--dir", dir}, args...)...)
	t.Cleanup(func() {
		if all, _, _, _ := sweepJobs(t, dir); len(all) > 0 {
			slurmOut(env, "scancel", all...)
		}
	})
	if r.code != 0 {
		t.Fatalf("tcforge slurm %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "submitted array job") {
		t.Fatalf("tcforge slurm %v:\n%s", args, r.stdout)
	}
	_, array, merge, report = sweepJobs(t, dir)
	return array, merge, report
}

// waitJobs waits until none of the jobs is queued or running.
func waitJobs(t *testing.T, env []string, dir string, jobs ...string) {
	t.Helper()
	deadline := time.Now().Add(4 * time.Minute)
	for {
		out, err := slurmOut(env, "squeue", "-h", "-o", "%F")
		if err != nil {
			t.Fatal(err)
		}
		left := slices.ContainsFunc(strings.Fields(out), func(id string) bool { return slices.Contains(jobs, id) })
		if !left {
			return
		}
		if time.Now().After(deadline) {
			q, _ := slurmOut(env, "squeue")
			t.Fatalf("jobs %v still queued after 4 minutes:\n%s\n%s", jobs, q, logs(dir))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// logs returns the sweep's logs, for a failure message.
func logs(dir string) string {
	var b strings.Builder
	files, _ := filepath.Glob(filepath.Join(dir, "logs", "*"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		if len(data) > 3000 {
			data = data[len(data)-3000:]
		}
		fmt.Fprintf(&b, "== %s\n%s\n", f, data)
	}
	return b.String()
}

// jobState returns a job's state (COMPLETED, CANCELLED, FAILED …).
func jobState(t *testing.T, env []string, id string) string {
	t.Helper()
	out, err := slurmOut(env, "scontrol", "-o", "show", "job", id)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`JobState=(\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("scontrol show job %s: %s", id, out)
	}
	return m[1]
}

// jobLog returns the log of the merge or report job id.
func jobLog(t *testing.T, dir, id string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "logs", "merge_"+id+".log"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSlurm runs sweeps through a real Slurm scheduler (sbatch job
// arrays, afterok/afternotok jobs, time limits, scancel): the one
// $TCFORGE_SLURM_CONF names, else one started here; skipped, saying why,
// where neither can be had. The subtests run at once: the time limit
// (a minute, Slurm's least, checked every 30 s) sets the wall time.
func TestSlurm(t *testing.T) {
	t.Parallel()
	env := slurmEnv(t)
	t.Run("Sweep", func(t *testing.T) { t.Parallel(); testSlurmSweep(t, env) })
	t.Run("TimeLimit", func(t *testing.T) { t.Parallel(); testSlurmHeld(t, env, "timelimit") })
	t.Run("Scancel", func(t *testing.T) { t.Parallel(); testSlurmHeld(t, env, "scancel") })
	t.Run("FailedPoints", func(t *testing.T) { t.Parallel(); testSlurmFailed(t, env) })
}

// testSlurmSweep: testdata/shard-short.hcl as an 8-task array, merged by
// the afterok job, writes what one tcforge run writes, apart from times.
func testSlurmSweep(t *testing.T, env []string) {
	cfg := filepath.Join("testdata", "shard-short.hcl")
	root := t.TempDir()
	dir, single := filepath.Join(root, "sweep"), filepath.Join(root, "single")
	var r result
	var wg sync.WaitGroup
	wg.Go(func() { r = tcforge(t, "run", "--log-level", "warn", "--progress", "never", "--out", single, cfg) })
	array, merge, report := submitSweep(t, env, dir, "--shards", "8", "--time", "5m", "--mem", "1024", cfg)
	wg.Wait()
	if r.code != 0 {
		t.Fatalf("the single run: exit %d\n%s", r.code, r.stderr)
	}
	waitJobs(t, env, dir, array, merge, report)
	if st := jobState(t, env, merge); st != "COMPLETED" {
		t.Fatalf("merge job %s: %s\n%s", merge, st, logs(dir))
	}
	if st := jobState(t, env, report); st != "CANCELLED" {
		t.Errorf("report job %s (afternotok) after a sweep that succeeded: %s, want CANCELLED (its dependency never satisfied)", report, st)
	}
	log := jobLog(t, dir, merge)
	for i := range 8 {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d +%s_%d +COMPLETED +complete: \d+ rows$`, i, array, i)).MatchString(log) {
			t.Errorf("merge job's status: no completed line for task %d:\n%s", i, log)
		}
	}
	if !strings.Contains(log, "3 pipelines, 11 points, 22 rows: 22 verified, 9/9 met") {
		t.Errorf("merge job's summary:\n%s", log)
	}
	sameReports(t, single, filepath.Join(dir, "out"))
}

// heldConfig writes a pipeline of 12 points whose "holds" layerer waits
// at point blocks=b while DIR/hold-b exists (creating DIR/mark-b).
func heldConfig(t *testing.T, dir string) string {
	t.Helper()
	cfg := filepath.Join(dir, "held.hcl")
	src := fmt.Sprintf(`pipeline "held" {
  matrix {
    blocks = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
  }
  construction "keccak" {
    log_w   = 1
    rate    = 25
    rounds  = 1
    blocks  = matrix.blocks
    padding = "none"
  }
  layerer "reifier" {}
  layerer "holds" {
    while = "%[1]s/hold-${matrix.blocks}"
    mark  = "%[1]s/mark-${matrix.blocks}"
  }
}
`, dir)
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// waitFile waits until path exists.
func waitFile(t *testing.T, env []string, dir, path string) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			q, _ := slurmOut(env, "squeue")
			t.Fatalf("%s not there after 2 minutes:\n%s\n%s", path, q, logs(dir))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// testSlurmHeld holds points in chosen tasks of a 4-task array until
// Slurm stops them — "timelimit": one task, at its 1-minute limit;
// "scancel": one with scancel --full --signal=TERM, another with a plain
// scancel — and checks that each leaves its shard marked incomplete
// (SIGTERM, then SIGKILL after KillWait), that the report job names them,
// and that --resume submits only them and the final merge equals one
// tcforge run.
func testSlurmHeld(t *testing.T, env []string, fault string) {
	root := t.TempDir()
	dir := filepath.Join(root, "sweep")
	cfg := heldConfig(t, root)
	const n = 4
	shards, err := cli.ShardsOf(cfg, n)
	if err != nil {
		t.Fatal(err)
	}
	// Points (blocks = k+1) in distinct shards: one for the time limit,
	// two for scancel.
	want := map[string]int{"timelimit": 1, "scancel": 2}[fault]
	var held []int // blocks values
	taken := map[int]bool{}
	for k, s := range shards["held"] {
		if !taken[s] && len(held) < want {
			taken[s] = true
			held = append(held, k+1)
		}
	}
	if len(held) < want {
		t.Fatalf("points in %d distinct shards of %d: %v", want, n, shards["held"])
	}
	shardOfBlocks := func(b int) int { return shards["held"][b-1] }
	for _, b := range held {
		if err := os.WriteFile(filepath.Join(root, fmt.Sprintf("hold-%d", b)), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	limit := "5m"
	if fault == "timelimit" {
		limit = "1m"
	}
	array, merge, report := submitSweep(t, env, dir, "--shards", fmt.Sprint(n), "--time", limit, "--mem", "1024", cfg)
	wantState := map[int]string{}
	switch fault {
	case "timelimit":
		// exit 143: tcforge exited on SIGTERM, before KillWait's SIGKILL.
		wantState[shardOfBlocks(held[0])] = "TIMEOUT (exit 143)"
	case "scancel":
		// Once both tasks are stuck: SIGTERM to the task's processes (it
		// goes on as it likes), and a cancel (SIGTERM, SIGKILL after
		// KillWait).
		for _, b := range held {
			waitFile(t, env, dir, filepath.Join(root, fmt.Sprintf("mark-%d", b)))
		}
		s0, s1 := shardOfBlocks(held[0]), shardOfBlocks(held[1])
		if _, err := slurmOut(env, "scancel", "--full", "--signal=TERM", fmt.Sprintf("%s_%d", array, s0)); err != nil {
			t.Fatal(err)
		}
		if _, err := slurmOut(env, "scancel", fmt.Sprintf("%s_%d", array, s1)); err != nil {
			t.Fatal(err)
		}
		wantState[s0], wantState[s1] = "FAILED (exit 143)", "CANCELLED (exit 143)"
	}
	waitJobs(t, env, dir, array, merge, report)
	if st := jobState(t, env, merge); st != "CANCELLED" {
		t.Errorf("merge job %s (afterok) after a %s: %s, want CANCELLED", merge, fault, st)
	}
	if st := jobState(t, env, report); st != "FAILED" {
		t.Errorf("report job %s (afternotok) after a %s: %s, want FAILED (the merge is incomplete)\n%s", report, fault, st, logs(dir))
	}
	log := jobLog(t, dir, report)
	var stopped []string
	for i := range n {
		line := regexp.MustCompile(fmt.Sprintf(`(?m)^%d +%s_%d +(.*)$`, i, array, i)).FindStringSubmatch(log)
		if line == nil {
			t.Fatalf("report job's status has no line for task %d:\n%s", i, log)
		}
		st, ok := wantState[i]
		if !ok {
			if !regexp.MustCompile(`^COMPLETED +complete: \d+ rows$`).MatchString(line[1]) {
				t.Errorf("task %d: %q, want COMPLETED and complete", i, line[1])
			}
			continue
		}
		// Stopped within KillWait: the shard's file says so.
		if !regexp.MustCompile(`^` + regexp.QuoteMeta(st) + ` +stopped: terminated \(SIGTERM\), \d+ rows$`).MatchString(line[1]) {
			t.Errorf("task %d: %q, want %s and its shard stopped by SIGTERM", i, line[1], st)
		}
		stopped = append(stopped, fmt.Sprintf("shard %d/%d terminated (SIGTERM)", i, n))
	}
	if want := "incomplete: " + strings.Join(stopped, ", ") + "; run them again"; !strings.Contains(log, want) {
		t.Errorf("report job's merge does not say %q:\n%s", want, log)
	}
	if !strings.Contains(log, fmt.Sprintf("%d of %d tasks did not finish", len(stopped), n)) {
		t.Errorf("report job's status does not count the tasks to run again:\n%s", log)
	}

	// Resume with nothing held: only the stopped shards run again, and
	// the merge equals one run of the same file.
	for _, b := range held {
		os.Remove(filepath.Join(root, fmt.Sprintf("hold-%d", b)))
	}
	single := filepath.Join(root, "single")
	var r result
	var wg sync.WaitGroup
	wg.Go(func() { r = tcforge(t, "run", "--log-level", "warn", "--progress", "never", "--out", single, cfg) })
	res := tcforgeEnv(t, env, "slurm", "--resume", "--dir", dir)
	wg.Wait()
	if r.code != 0 {
		t.Fatalf("the single run: exit %d\n%s", r.code, r.stderr)
	}
	if res.code != 0 {
		t.Fatalf("tcforge slurm --resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	if want := fmt.Sprintf("resuming %d of %d tasks", len(wantState), n); !strings.Contains(res.stdout, want) {
		t.Errorf("--resume said\n%s\nwant %q", res.stdout, want)
	}
	_, array2, merge2, report2 := sweepJobs(t, dir)
	if array2 == array {
		t.Fatalf("--resume submitted no new array")
	}
	if got := lastTasks(t, dir); !slices.Equal(got, slices.Sorted(maps.Keys(wantState))) {
		t.Errorf("--resume submitted tasks %v, want the stopped ones, %v", got, slices.Sorted(maps.Keys(wantState)))
	}
	waitJobs(t, env, dir, array2, merge2, report2)
	if st := jobState(t, env, merge2); st != "COMPLETED" {
		t.Fatalf("merge job %s after --resume: %s\n%s", merge2, st, logs(dir))
	}
	log = jobLog(t, dir, merge2)
	for i := range n {
		job := fmt.Sprintf("%s_%d", array, i)
		if _, ok := wantState[i]; ok {
			job = fmt.Sprintf("%s_%d", array2, i)
		}
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d +%s +COMPLETED +complete: \d+ rows$`, i, job)).MatchString(log) {
			t.Errorf("after --resume, task %d is not %s COMPLETED and complete:\n%s", i, job, log)
		}
	}
	sameReports(t, single, filepath.Join(dir, "out"))
}

// testSlurmFailed: a task whose points fail verification exits 1; the
// report job merges the failures, and --resume finds nothing to run
// again (a shard with failed points is finished).
func testSlurmFailed(t *testing.T, env []string) {
	root := t.TempDir()
	dir := filepath.Join(root, "sweep")
	cfg := filepath.Join(root, "lies.hcl")
	src := `pipeline "lies" {
  matrix {
    rounds = [1, 2, 3]
  }
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = matrix.rounds
  }
  layerer "reifier" {}
  layerer "lies" {}
}
`
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	array, merge, report := submitSweep(t, env, dir, "--shards", "2", "--time", "5m", "--mem", "1024", cfg)
	waitJobs(t, env, dir, array, merge, report)
	if st := jobState(t, env, merge); st != "CANCELLED" {
		t.Errorf("merge job %s (afterok) after failed points: %s, want CANCELLED", merge, st)
	}
	if st := jobState(t, env, report); st != "FAILED" {
		t.Errorf("report job %s after failed points: %s, want FAILED", report, st)
	}
	log := jobLog(t, dir, report)
	if !regexp.MustCompile(`(?m)^\d +` + array + `_\d +FAILED \(exit 1\) +complete: \d+ rows, \d+ failed$`).MatchString(log) {
		t.Errorf("report job's status names no failed task:\n%s", log)
	}
	if !strings.Contains(log, "1 pipelines, 3 points, 6 rows: 3 verified") {
		t.Errorf("report job's merge summary:\n%s", log)
	}
	b, err := os.ReadFile(filepath.Join(dir, "out", "lies.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), ",lies,"); got != 3 {
		t.Errorf("merged lies.csv: %d rows of the lying layerer, want 3:\n%s", got, b)
	}
	res := tcforgeEnv(t, env, "slurm", "--resume", "--dir", dir)
	if res.code != 0 || !strings.Contains(res.stdout, "nothing to resume") {
		t.Errorf("--resume after failed points: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
}
