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
	"syscall"
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
		stop := filepath.Join("..", "..", "scripts", "slurm", "stop.sh")
		// A watcher stops the scheduler if this process dies first (go
		// test's timeout panics past the cleanups; a kill): no daemon
		// outlives the test.
		watch := exec.Command("sh", "-c", `while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2" "$3"`, "sh", fmt.Sprint(os.Getpid()), stop, dir)
		watch.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := watch.Start(); err != nil {
			t.Fatal(err)
		}
		out, err := start.CombinedOutput()
		t.Cleanup(func() {
			watch.Process.Kill()
			watch.Wait()
			if out, err := exec.Command(stop, dir).CombinedOutput(); err != nil {
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

// raceRunArgs is what the runs a sweep's jobs and pods start need on a
// busy machine or under the race detector, whose plugins start several
// times slower: the start timeout tcforgeWith gives.
func raceRunArgs() []string {
	return []string{"--run-arg=--start-timeout=5m"}
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
	if !slices.Contains(args, "--train") {
		args = append(raceRunArgs(), args...)
	}
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
// where neither can be had, and under -short. The subtests run at once,
// each from a goroutine of its own rather than as parallel tests: they
// mostly wait on the scheduler, and would otherwise hold go test's
// -parallel slots (two on two cores) from the package's other tests for
// as long. The time limit (a minute, Slurm's least, checked every 30 s)
// sets the wall time.
func TestSlurm(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a minute and a half of Slurm time limits: go test without -short runs it")
	}
	env := slurmEnv(t)
	var wg sync.WaitGroup
	for _, sub := range []struct {
		name string
		test func(*testing.T)
	}{
		{"TimeLimit", func(t *testing.T) { testSlurmHeld(t, env, "timelimit") }},
		{"Sweep", func(t *testing.T) { testSlurmSweep(t, env) }},
		{"Scancel", func(t *testing.T) { testSlurmHeld(t, env, "scancel") }},
		{"FailedPoints", func(t *testing.T) { testSlurmFailed(t, env) }},
		{"Train", func(t *testing.T) { testSlurmTrain(t, env) }},
	} {
		wg.Go(func() { t.Run(sub.name, sub.test) })
	}
	wg.Wait()
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
	if !strings.Contains(log, "3 pipelines, 11 points, 22 rows: 22 circuits verified, 8 of 8 models verified, 9/9 met") {
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

// testSlurmTrain: a training array (--train) runs each line's arguments,
// quoted words intact, through the interpreter (here a stand-in for
// python3 -m tcforge_torch train that logs its arguments and fails for a
// marked run); the report job names the run that failed, and --resume
// runs it alone.
func testSlurmTrain(t *testing.T, env []string) {
	root := t.TempDir()
	dir := filepath.Join(root, "sweep")
	py := filepath.Join(root, "python")
	script := `#!/bin/sh
# python -m tcforge_torch train --threads N --progress never ARGS --skip-done 1
log=$(printf '%s|' "$@")
echo "$log" >>` + filepath.Join(root, "calls") + `
name=$9
[ ! -e ` + root + `/fail-"$name" ] || exit 1
`
	if err := os.WriteFile(py, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	runs := filepath.Join(root, "runs.txt")
	if err := os.WriteFile(runs, []byte("# three runs\n--name a --instance \"adder n=8\"\n\n--name 'b c' --steps 5\n--name d --sigma 1e-6\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "fail-d"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	array, merge, report := submitSweep(t, env, dir, "--train", runs, "--python", py, "--time", "5m", "--mem", "256")
	waitJobs(t, env, dir, array, merge, report)
	if st := jobState(t, env, report); st != "FAILED" {
		t.Errorf("report job %s after a failed run: %s, want FAILED\n%s", report, st, logs(dir))
	}
	log := jobLog(t, dir, report)
	for i, want := range []string{"COMPLETED +done", "COMPLETED +done", `FAILED \(exit 1\) +not done`} {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^%d +%s_%d +%s$`, i, array, i, want)).MatchString(log) {
			t.Errorf("report job's status: no line %d %s:\n%s", i, want, log)
		}
	}
	b, err := os.ReadFile(filepath.Join(root, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	slices.Sort(calls)
	want := []string{
		"-m|tcforge_torch|train|--threads|1|--progress|never|--name|a|--instance|adder n=8|--skip-done|1|",
		"-m|tcforge_torch|train|--threads|1|--progress|never|--name|b c|--steps|5|--skip-done|1|",
		"-m|tcforge_torch|train|--threads|1|--progress|never|--name|d|--sigma|1e-6|--skip-done|1|",
	}
	if !slices.Equal(calls, want) {
		t.Errorf("the runs' arguments:\n%s\nwant\n%s", strings.Join(calls, "\n"), strings.Join(want, "\n"))
	}
	os.Remove(filepath.Join(root, "fail-d"))
	res := tcforgeEnv(t, env, "slurm", "--resume", "--dir", dir)
	if res.code != 0 || !strings.Contains(res.stdout, "resuming 1 of 3 tasks: 2\n") {
		t.Fatalf("--resume: exit %d\n%s%s", res.code, res.stdout, res.stderr)
	}
	_, array2, merge2, report2 := sweepJobs(t, dir)
	waitJobs(t, env, dir, array2, merge2, report2)
	if st := jobState(t, env, merge2); st != "COMPLETED" || !strings.Contains(jobLog(t, dir, merge2), "every task finished") {
		t.Errorf("merge job after --resume: %s\n%s", st, logs(dir))
	}
	if b, _ := os.ReadFile(filepath.Join(root, "calls")); strings.Count(string(b), "\n") != 4 {
		t.Errorf("after --resume, %d runs in all, want 4 (the failed one again):\n%s", strings.Count(string(b), "\n"), b)
	}
}

// TestSlurmScripts: without a scheduler, --dry-run writes the batch
// scripts with the requests asked for and prints the sbatch commands;
// mistakes are refused before anything is written; (not under -short)
// the scripts, run by bash as Slurm would (SLURM_ARRAY_TASK_ID …), write
// the shards and a merge equal to one run, and --resume --dry-run lists
// only the tasks that did not finish.
func TestSlurmScripts(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "sweep")
	cfg := filepath.Join("testdata", "slurm.hcl")
	r := tcforge(t, append([]string{"slurm", "--dry-run", "--dir", dir, "--shards", "3", "--throttle", "2", "--time", "90m", "--mem", "2048", "--cpus", "2",
		"--partition", "debug", "--sbatch=--account=proj", "--run-arg=--seed=3", cfg}, raceRunArgs()...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	array, merge := filepath.Join(dir, "array.sbatch"), filepath.Join(dir, "merge.sbatch")
	for _, want := range []string{
		"(each 2 CPU, 2048 MiB, 90 min: given)",
		"jid=$(sbatch --parsable --array=0-2%2 " + array + ")",
		"sbatch --dependency=afterok:$jid --kill-on-invalid-dep=yes " + merge,
		"sbatch --dependency=afternotok:$jid --kill-on-invalid-dep=yes " + merge,
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("--dry-run output has no %q:\n%s", want, r.stdout)
		}
	}
	b, err := os.ReadFile(array)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"#SBATCH --job-name=tcforge-sweep\n", "#SBATCH --output=" + dir + "/logs/%A_%a.log\n", "#SBATCH --cpus-per-task=2\n",
		"#SBATCH --mem=2048M\n", "#SBATCH --time=90\n", "#SBATCH --partition=debug\n", "#SBATCH --account=proj\n",
		`--shard "$SLURM_ARRAY_TASK_ID/3" --out ` + dir + `/shards/"$SLURM_ARRAY_TASK_ID" --seed=3 `, " -- testdata/slurm.hcl\n",
		`--jobs "$SLURM_CPUS_PER_TASK" --memory 1024 --plugin-memory 1024`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("array.sbatch has no %q:\n%s", want, b)
		}
	}
	// A training array asks for the GPU given and runs each line's words.
	runs := filepath.Join(root, "runs.txt")
	if err := os.WriteFile(runs, []byte("--name a --instance \"adder n=8\" --device cuda\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r = tcforge(t, "slurm", "--dry-run", "--train", runs, "--gres", "gpu:1", "--dir", filepath.Join(root, "train"))
	b, _ = os.ReadFile(filepath.Join(root, "train", "array.sbatch"))
	for _, want := range []string{"#SBATCH --gres=gpu:1\n", "0) set -- --name a --instance 'adder n=8' --device cuda ;;\n",
		`/usr/bin/python3 -m tcforge_torch train --threads "$SLURM_CPUS_PER_TASK" --progress never "$@" --skip-done 1 || exit`} {
		if r.code != 0 || !strings.Contains(string(b), want) {
			t.Errorf("--train --gres gpu:1: exit %d, array.sbatch has no %q:\n%s%s", r.code, want, b, r.stderr)
		}
	}

	// Mistakes, refused before anything is written.
	if err := os.WriteFile(filepath.Join(root, "bad-runs.txt"), []byte("--name a\n--out $HOME\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{cfg}, 2, "--dir is required"},
		{[]string{"--dir", filepath.Join(root, "x")}, 2, "give pipeline FILEs (shards of tcforge run) or --train RUNS, one of the two"},
		{[]string{"--dir", dir, cfg}, 2, "already holds a sweep"},
		{[]string{"--dir", filepath.Join(root, "x"), "--shards", "0", cfg}, 2, "--shards must be at least 1"},
		{[]string{"--dir", filepath.Join(root, "x"), "--resume", cfg}, 2, "--resume and --status take the sweep from --dir"},
		{[]string{"--dir", filepath.Join(root, "x"), "--resume"}, 2, "holds no sweep"},
		{[]string{"--dir", filepath.Join(root, "x"), "--train", filepath.Join(root, "bad-runs.txt")}, 2, "bad-runs.txt:2: '$': a training run's line is arguments only"},
		{[]string{"--dir", filepath.Join(root, "x"), filepath.Join("testdata", "nonexistent.hcl")}, 1, "nonexistent.hcl"},
	} {
		r := tcforge(t, append([]string{"slurm", "--dry-run"}, tc.args...)...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("slurm %v: exit %d, stderr %q; want exit %d and %q", tc.args, r.code, r.stderr, tc.code, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "x")); err == nil {
		t.Errorf("a refused tcforge slurm created %s", filepath.Join(root, "x"))
	}
	if testing.Short() {
		return // the scripts' runs below: a few seconds of tcforge runs
	}

	task := func(i int) error {
		cmd := exec.Command("bash", array)
		cmd.Env = append(os.Environ(), fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", i), "SLURM_CPUS_PER_TASK=2")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("task %d: %w\n%s", i, err, out)
		}
		return nil
	}
	single := filepath.Join(root, "single")
	var wg sync.WaitGroup
	errs := make([]error, 3)
	wg.Go(func() { errs[0] = task(0) })
	wg.Go(func() { errs[1] = task(2) })
	wg.Go(func() {
		if r := tcforge(t, "run", "--log-level", "warn", "--progress", "never", "--seed", "3", "--out", single, cfg); r.code != 0 {
			errs[2] = fmt.Errorf("the single run: exit %d\n%s", r.code, r.stderr)
		}
	})
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Requests estimated from the single run: its points' times summed
	// per shard, its host's peak memory.
	r = tcforge(t, "slurm", "--dry-run", "--estimate-from", single, "--dir", filepath.Join(root, "est"), "--shards", "3", cfg)
	m := regexp.MustCompile(`\(each 1 CPU, (\d+) MiB, (\d+) min: estimated from .*: the longest shard (\d+) s of points on one CPU, ×2 / 1 CPUs \+ 5 min; host peak (\d+) MiB ×2 \+ 512\)`).FindStringSubmatch(r.stdout)
	if r.code != 0 || m == nil {
		t.Fatalf("--estimate-from: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var man struct {
		Peak int64 `json:"host_peak_rss"`
	}
	if b, err := os.ReadFile(filepath.Join(single, "tcforge-run.json")); err != nil || json.Unmarshal(b, &man) != nil || man.Peak == 0 {
		t.Fatalf("the single run's manifest: %v, peak %d", err, man.Peak)
	}
	wantMem := max(2*(man.Peak>>20)+512, 1024)
	if m[1] != fmt.Sprint(wantMem) || m[4] != fmt.Sprint(man.Peak>>20) {
		t.Errorf("--estimate-from: %s MiB from a peak of %s MiB, want %d from %d", m[1], m[4], wantMem, man.Peak>>20)
	}
	if m[2] != "6" && !(m[2] == "5" && m[3] == "0") { // a few seconds of points: ceil(2·s/60) + 5
		t.Errorf("--estimate-from: %s min for a longest shard of %s s", m[2], m[3])
	}
	if b, _ := os.ReadFile(filepath.Join(root, "est", "array.sbatch")); !strings.Contains(string(b), "#SBATCH --time="+m[2]+"\n") || !strings.Contains(string(b), "#SBATCH --mem="+m[1]+"M\n") {
		t.Errorf("--estimate-from's script:\n%s", b)
	}

	// Task 1 has not run: --resume would submit it alone.
	r = tcforge(t, "slurm", "--resume", "--dry-run", "--dir", dir)
	if r.code != 0 || !strings.Contains(r.stdout, "resuming 1 of 3 tasks: 1\n") || !strings.Contains(r.stdout, "--array=1%2 ") {
		t.Errorf("--resume --dry-run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = tcforge(t, "slurm", "--status", "--dir", dir)
	if r.code != 1 || !regexp.MustCompile(`(?m)^1 +- +not submitted +missing \(no tcforge-shard.gob\)$`).MatchString(r.stdout) ||
		!strings.Contains(r.stdout, "1 of 3 tasks did not finish (1)") {
		t.Errorf("--status with task 1 not run: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if err := task(1); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", merge).CombinedOutput()
	if err != nil {
		t.Fatalf("merge.sbatch: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "every task finished") {
		t.Errorf("merge.sbatch's status:\n%s", out)
	}
	sameReports(t, single, filepath.Join(dir, "out"))

}
