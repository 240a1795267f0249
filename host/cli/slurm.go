package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/python"
)

// SweepFile is the record `tcforge slurm` keeps in its --dir: what the
// sweep runs, the requests, and every job it submitted, for --resume and
// --status.
const SweepFile = "tcforge-slurm.json"

// sweep is the content of DIR/tcforge-slurm.json.
type sweep struct {
	Version int `json:"version"`
	// Kind is "run" (shards of tcforge run, then tcforge merge) or
	// "train" (one python3 -m tcforge_torch train run a task).
	Kind string `json:"kind"`
	// Files are run's pipeline files, as given (relative to Chdir).
	Files []string `json:"files,omitempty"`
	// Runs are train's runs: each task's arguments to tcforge_torch
	// train, one shell line each, as given in the --train file.
	Runs []string `json:"runs,omitempty"`
	// Tasks is N: the array's tasks are 0 … N−1.
	Tasks int `json:"tasks"`
	// Tcforge is the binary the jobs run, Python the interpreter of the
	// training runs, Chdir the directory they run in (where tcforge slurm
	// was run).
	Tcforge string   `json:"tcforge"`
	Python  string   `json:"python,omitempty"`
	Chdir   string   `json:"chdir"`
	RunArgs []string `json:"run_args,omitempty"`
	Request request  `json:"request"`
	// Submissions are the arrays submitted, the first and each --resume.
	Submissions []submission `json:"submissions"`

	dir string // the sweep's directory (not written)
}

// request is what every task asks the scheduler for.
type request struct {
	Name      string   `json:"name"`
	Minutes   int      `json:"minutes"`
	MemMiB    int64    `json:"mem_mib"`
	CPUs      int      `json:"cpus"`
	Gres      string   `json:"gres,omitempty"`
	Partition string   `json:"partition,omitempty"`
	Throttle  int      `json:"throttle,omitempty"`
	Extra     []string `json:"sbatch,omitempty"`
	// From says where Minutes and MemMiB came from: "given", "default",
	// or the earlier run they were estimated from.
	From string `json:"from"`
}

// submission is one sbatch of the array and its two dependent jobs.
type submission struct {
	Array  string    `json:"array"`
	Tasks  []int     `json:"tasks"`
	Merge  string    `json:"merge"`  // afterok: every task succeeded
	Report string    `json:"report"` // afternotok: a task failed, timed out or was cancelled
	At     time.Time `json:"at"`
}

// slurmFlags are tcforge slurm's flags.
type slurmFlags struct {
	dir, tcforge, train, python, partition, gres, estimate string
	shards, throttle, cpus                                 int
	mem                                                    int64
	limit                                                  time.Duration
	runArgs, sbatch                                        []string
	dryRun, resume, status                                 bool
}

func newSlurmCmd(env *Env) *cobra.Command {
	f := &slurmFlags{}
	cmd := &cobra.Command{
		Use:   "slurm [flags] FILE...",
		Short: "Run a sweep as a Slurm job array: shards of tcforge run (or training runs), then a merge job",
		Long: "Write and submit (sbatch) a Slurm job array into --dir: task I runs tcforge run --shard I/N --out DIR/shards/I on\n" +
			"the pipeline FILEs; a merge job (afterok: every task succeeded) writes DIR/out with tcforge merge, and a report\n" +
			"job (afternotok: a task failed, hit its time limit or was cancelled) prints every shard's state and merges\n" +
			"what finished, naming the shards to run again. A task stopped by SIGTERM (its time limit, scancel) writes its\n" +
			"finished points, marked incomplete, within Slurm's KillWait. --resume submits only the shards that did not\n" +
			"finish, and a new merge. With --train RUNS, task I runs line I of RUNS as python3 -m tcforge_torch train\n" +
			"(--skip-done 1: a run whose JSON says it is done is not run again). --dry-run writes the scripts and the\n" +
			"record (DIR/" + SweepFile + ") and submits nothing. See docs/clusters.md.",
		Example: "  tcforge slurm --dir /scratch/sweep --shards 16 --throttle 8 --time 2h --mem 8192 --cpus 4 configs/mappers.hcl\n" +
			"  tcforge slurm --status --dir /scratch/sweep\n" +
			"  tcforge slurm --resume --dir /scratch/sweep\n" +
			"  tcforge slurm --train runs.txt --gres gpu:1 --dir /scratch/learn",
		PreRunE: func(cmd *cobra.Command, args []string) error { return f.check(cmd, args) },
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			switch {
			case f.status:
				return slurmStatus(ctx, env.Stdout, f.dir)
			case f.resume:
				return slurmResume(ctx, env.Stdout, f.dir, f.dryRun)
			}
			sw, err := f.newSweep(cmd, args)
			if err != nil {
				return err
			}
			return sw.submit(ctx, env.Stdout, nil, f.dryRun)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "the sweep's directory, on a file system every node sees: scripts, "+SweepFile+", shards/I, logs/, out/ (required)")
	fl.IntVar(&f.shards, "shards", 8, "N, the array's tasks: shard I of N each")
	fl.IntVar(&f.throttle, "throttle", 0, "at most this many tasks at once (sbatch --array=…%K; 0: as many as the scheduler gives)")
	fl.DurationVar(&f.limit, "time", 0, "each task's time limit, rounded up to minutes (default: estimated with --estimate-from, else 1h)")
	fl.Int64Var(&f.mem, "mem", 0, "each task's memory in MiB, shared by tcforge (--memory) and its plugins (--plugin-memory) (default: estimated with --estimate-from, else 4096)")
	fl.IntVar(&f.cpus, "cpus", 1, "CPUs per task (sbatch --cpus-per-task; tcforge run --jobs)")
	fl.StringVar(&f.estimate, "estimate-from", "", "an earlier run's --out (or merged sweep's out/) to estimate --time and --mem from: its points' times, summed per shard, and its peak memory")
	fl.StringVar(&f.partition, "partition", "", "the Slurm partition (sbatch --partition)")
	fl.StringVar(&f.gres, "gres", "", "generic resources per task, e.g. gpu:1 (sbatch --gres)")
	fl.StringArrayVar(&f.sbatch, "sbatch", nil, "one more sbatch option for every job, e.g. --sbatch=--account=proj (repeatable)")
	fl.StringArrayVar(&f.runArgs, "run-arg", nil, "one more argument to every tcforge run, e.g. --run-arg=--samples=64 (repeatable)")
	fl.StringVar(&f.tcforge, "tcforge", "", "the tcforge binary the jobs run, on a file system every node sees (default: this one)")
	fl.StringVar(&f.train, "train", "", "a file of training runs, one a line: the arguments of python3 -m tcforge_torch train (# comments, blank lines skipped); task I runs line I")
	fl.StringVar(&f.python, "python", python.DefaultPython, "with --train, the Python interpreter (with PyTorch; PYTHONPATH as when submitting)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "write the scripts and "+SweepFile+", print the sbatch commands, submit nothing")
	fl.BoolVar(&f.resume, "resume", false, "submit again only the tasks of the sweep in --dir that did not finish, and a new merge")
	fl.BoolVar(&f.status, "status", false, "print the state of every task of the sweep in --dir: Slurm's and its shard's (exit 1 if some did not finish)")
	return cmd
}

// check validates the flags before anything is written.
func (f *slurmFlags) check(cmd *cobra.Command, args []string) error {
	if f.dir == "" {
		return usagef("--dir is required: the sweep's directory, on a file system every node sees")
	}
	if f.resume || f.status {
		if len(args) > 0 || f.train != "" {
			return usagef("--resume and --status take the sweep from --dir %s, not FILEs or --train", f.dir)
		}
		if f.resume && f.status {
			return usagef("--resume or --status, not both")
		}
		return nil
	}
	if (len(args) == 0) == (f.train == "") {
		return usagef("give pipeline FILEs (shards of tcforge run) or --train RUNS, one of the two")
	}
	for _, err := range []error{
		atLeast("shards", int64(f.shards), 1, ""),
		atLeast("throttle", int64(f.throttle), 0, " (0: no throttle)"),
		atLeast("cpus", int64(f.cpus), 1, ""),
		atLeast("mem", f.mem, 0, " (MiB; 0: estimated or 4096)"),
	} {
		if err != nil {
			return err
		}
	}
	if f.limit < 0 {
		return usagef("--time must be a positive duration, got %s", f.limit)
	}
	if f.train != "" && cmd.Flags().Changed("shards") {
		return usagef("--shards is for pipeline FILEs; with --train the array has one task a run")
	}
	if _, err := os.Stat(filepath.Join(f.dir, SweepFile)); err == nil {
		return usagef("%s already holds a sweep (%s): tcforge slurm --resume --dir %s, or another --dir", f.dir, SweepFile, f.dir)
	}
	return checkOutDir("--dir", f.dir)
}

// newSweep builds the record of a new sweep from the flags and FILEs.
func (f *slurmFlags) newSweep(cmd *cobra.Command, args []string) (*sweep, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(f.dir)
	if err != nil {
		return nil, err
	}
	bin := f.tcforge
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("finding this tcforge binary for the jobs: %w (give --tcforge)", err)
		}
	}
	if bin, err = filepath.Abs(bin); err != nil {
		return nil, err
	}
	sw := &sweep{Version: 1, Tcforge: bin, Chdir: cwd, RunArgs: f.runArgs, dir: dir,
		Request: request{Name: "tcforge-" + filepath.Base(dir), CPUs: f.cpus, Gres: f.gres, Partition: f.partition, Throttle: f.throttle, Extra: f.sbatch}}
	if f.train != "" {
		sw.Kind, sw.Python = "train", f.python
		if sw.Runs, err = readRuns(f.train); err != nil {
			return nil, err
		}
		sw.Tasks = len(sw.Runs)
	} else {
		sw.Kind, sw.Files, sw.Tasks = "run", args, f.shards
		// A mistake in a file fails here, not in every task.
		_, srcs, diags := config.ParseFiles(args...)
		if diags.HasErrors() {
			_ = config.WriteDiagnostics(cmd.ErrOrStderr(), srcs, diags, false)
			return nil, exitStatus{1}
		}
	}
	minutes, mem, from := 60, int64(4096), "default"
	if f.estimate != "" {
		if sw.Kind != "run" {
			return nil, usagef("--estimate-from is for pipeline FILEs")
		}
		est, err := estimateShards(f.estimate, sw.Files, sw.Tasks, f.cpus)
		if err != nil {
			return nil, err
		}
		minutes, mem, from = est.minutes, est.memMiB, fmt.Sprintf("estimated from %s: %s", f.estimate, est.why)
	}
	if f.limit > 0 || f.mem > 0 {
		from = "given"
		if f.estimate != "" {
			from = "given, and estimated from " + f.estimate
		}
	}
	if f.limit > 0 {
		minutes = int((f.limit + time.Minute - 1) / time.Minute)
	}
	if f.mem > 0 {
		mem = f.mem
	}
	sw.Request.Minutes, sw.Request.MemMiB, sw.Request.From = minutes, mem, from
	return sw, nil
}

// readRuns reads --train's file: one run a line, # comments and blank
// lines skipped.
func readRuns(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var runs []string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, err := shellWords(line); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		runs = append(runs, line)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("%s: no training run (one a line: the arguments of python3 -m tcforge_torch train)", path)
	}
	return runs, nil
}

// loadSweep reads DIR/tcforge-slurm.json.
func loadSweep(dir string) (*sweep, error) {
	b, err := os.ReadFile(filepath.Join(dir, SweepFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s holds no sweep (no %s): start one with tcforge slurm --dir %s FILE…", dir, SweepFile, dir)
	}
	if err != nil {
		return nil, err
	}
	sw := &sweep{}
	if err := json.Unmarshal(b, sw); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SweepFile), err)
	}
	if sw.Version != 1 {
		return nil, fmt.Errorf("%s: version %d, this tcforge reads 1", filepath.Join(dir, SweepFile), sw.Version)
	}
	if sw.dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	return sw, nil
}

// save writes DIR/tcforge-slurm.json atomically.
func (sw *sweep) save() error {
	b, err := json.MarshalIndent(sw, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(sw.dir, SweepFile), append(b, '\n'), 0o644)
}

// writeAtomic writes a file through a temporary file and a rename.
func writeAtomic(path string, data []byte, perm fs.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, perm); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// submit writes the scripts and submits the array of tasks (all with
// nil), the merge job (afterok) and the report job (afternotok). With
// dryRun it prints the sbatch commands instead.
func (sw *sweep) submit(ctx context.Context, w io.Writer, tasks []int, dryRun bool) error {
	if tasks == nil {
		for i := range sw.Tasks {
			tasks = append(tasks, i)
		}
	}
	for _, d := range []string{sw.dir, filepath.Join(sw.dir, "logs"), filepath.Join(sw.dir, "shards")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	scripts, err := sw.writeScripts()
	if err != nil {
		return err
	}
	array := arraySpec(tasks, sw.Request.Throttle)
	if dryRun {
		if err := sw.save(); err != nil {
			return err
		}
		fmt.Fprintf(w, "wrote %s and %s (%s); submit with:\n", scripts.array, scripts.merge, sw.requestLine())
		fmt.Fprintf(w, "  jid=$(sbatch --parsable --array=%s %s)\n", array, shellQuote(scripts.array))
		fmt.Fprintf(w, "  sbatch --dependency=afterok:$jid --kill-on-invalid-dep=yes %s\n", shellQuote(scripts.merge))
		fmt.Fprintf(w, "  sbatch --dependency=afternotok:$jid --kill-on-invalid-dep=yes %s\n", shellQuote(scripts.merge))
		fmt.Fprintf(w, "or: tcforge slurm --resume --dir %s\n", shellQuote(sw.dir))
		return nil
	}
	sub := submission{Tasks: tasks, At: time.Now().UTC().Round(time.Second)}
	if sub.Array, err = sbatch(ctx, "--array="+array, scripts.array); err != nil {
		return err
	}
	// Recorded at once: a failure below leaves the array known to --status.
	sw.Submissions = append(sw.Submissions, sub)
	if err := sw.save(); err != nil {
		return err
	}
	last := &sw.Submissions[len(sw.Submissions)-1]
	if last.Merge, err = sbatch(ctx, "--dependency=afterok:"+sub.Array, "--kill-on-invalid-dep=yes", scripts.merge); err != nil {
		return err
	}
	if last.Report, err = sbatch(ctx, "--dependency=afternotok:"+sub.Array, "--kill-on-invalid-dep=yes", "--job-name="+sw.Request.Name+"-report", scripts.merge); err != nil {
		return err
	}
	if err := sw.save(); err != nil {
		return err
	}
	what := fmt.Sprintf("shards I/%d of %s into %s", sw.Tasks, strings.Join(sw.Files, " "), filepath.Join(sw.dir, "shards", "I"))
	then := "tcforge merge into " + filepath.Join(sw.dir, "out")
	if sw.Kind == "train" {
		what = fmt.Sprintf("training run I of %d (in %s)", len(sw.Runs), filepath.Join(sw.dir, SweepFile))
		then = "the runs' states"
	}
	fmt.Fprintf(w, "submitted array job %s: tasks %s (%s), %s; logs %s\n", sub.Array, array, sw.requestLine(), what, filepath.Join(sw.dir, "logs", sub.Array+"_I.log"))
	fmt.Fprintf(w, "merge job %s (afterok: every task succeeded): %s\n", last.Merge, then)
	fmt.Fprintf(w, "report job %s (afternotok: a task failed, timed out or was cancelled): every task's state and what to run again\n", last.Report)
	fmt.Fprintf(w, "follow: squeue -j %s,%s,%s; tcforge slurm --status --dir %s\n", sub.Array, last.Merge, last.Report, shellQuote(sw.dir))
	return nil
}

// requestLine says what each task asks for, and where that came from.
func (sw *sweep) requestLine() string {
	r := sw.Request
	s := fmt.Sprintf("each %d CPU, %d MiB, %d min", r.CPUs, r.MemMiB, r.Minutes)
	if r.Gres != "" {
		s += ", " + r.Gres
	}
	return s + ": " + r.From
}

// slurmResume submits again the tasks of the sweep in dir that did not
// finish, after checking that none of its jobs is still queued.
func slurmResume(ctx context.Context, w io.Writer, dir string, dryRun bool) error {
	sw, err := loadSweep(dir)
	if err != nil {
		return err
	}
	var ids []string
	for _, s := range sw.Submissions {
		ids = append(ids, s.Array, s.Merge, s.Report)
	}
	if active, err := queued(ctx, ids); err != nil {
		return err
	} else if len(active) > 0 {
		return fmt.Errorf("jobs of this sweep are still queued or running (%s): wait, or scancel them, then resume", strings.Join(active, ", "))
	}
	var todo []int
	for i := range sw.Tasks {
		if st := sw.taskState(i); !st.done {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		fmt.Fprintf(w, "nothing to resume: every task of %s finished (tcforge slurm --status --dir %s)\n", sw.dir, shellQuote(sw.dir))
		return nil
	}
	fmt.Fprintf(w, "resuming %d of %d tasks: %s\n", len(todo), sw.Tasks, arraySpec(todo, 0))
	return sw.submit(ctx, w, todo, dryRun)
}

// taskResult is what a task left behind.
type taskResult struct {
	done bool   // finished: its shard complete (failed points included), or its run done
	text string // "complete: 12 rows", "stopped: terminated (SIGTERM), 3 rows", "missing"
}

// taskState reads what task i left: its shard file, or its run's mark.
func (sw *sweep) taskState(i int) taskResult {
	if sw.Kind == "train" {
		if _, err := os.Stat(sw.doneMark(i)); err == nil {
			return taskResult{true, "done"}
		}
		return taskResult{false, "not done"}
	}
	m, err := readShard(sw.shardDir(i))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return taskResult{false, "missing (no " + ShardFile + ")"}
	case err != nil:
		return taskResult{false, "unreadable: " + err.Error()}
	}
	rows, failed := 0, 0
	for _, p := range m.Pipelines {
		for _, r := range p.Rows {
			rows++
			if r.Err != nil || !r.Verified || !r.ExpectOK {
				failed++
			}
		}
	}
	text := fmt.Sprintf("%d rows", rows)
	if failed > 0 {
		text += fmt.Sprintf(", %d failed", failed)
	}
	if m.Stopped != "" {
		return taskResult{false, "stopped: " + m.Stopped + ", " + text}
	}
	return taskResult{true, "complete: " + text}
}

func (sw *sweep) shardDir(i int) string { return filepath.Join(sw.dir, "shards", fmt.Sprint(i)) }
func (sw *sweep) doneMark(i int) string { return filepath.Join(sw.dir, "done", fmt.Sprint(i)) }

// slurmStatus prints every task's Slurm state and what it left.
func slurmStatus(ctx context.Context, w io.Writer, dir string) error {
	sw, err := loadSweep(dir)
	if err != nil {
		return err
	}
	// The last submission of each task, and Slurm's word on it.
	lastArray := make([]string, sw.Tasks)
	var arrays []string
	for _, s := range sw.Submissions {
		for _, t := range s.Tasks {
			if t < sw.Tasks {
				lastArray[t] = s.Array
			}
		}
		arrays = append(arrays, s.Array)
	}
	states, serr := taskStates(ctx, arrays)
	what := strings.Join(sw.Files, " ")
	if sw.Kind == "train" {
		what = fmt.Sprintf("%d training runs", len(sw.Runs))
	}
	times := fmt.Sprintf("submitted %d times", len(sw.Submissions))
	switch len(sw.Submissions) {
	case 0:
		times = "not submitted"
	case 1:
		times = "submitted once"
	}
	fmt.Fprintf(w, "sweep %s: %d tasks of %s; %s\n", sw.dir, sw.Tasks, what, times)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "task\tjob\tslurm\tresult")
	var todo, active []int
	for i := range sw.Tasks {
		job, state := "-", "not submitted"
		if a := lastArray[i]; a != "" {
			job = fmt.Sprintf("%s_%d", a, i)
			state = "unknown"
			if st, ok := states[job]; ok {
				state = st
			}
		}
		res := sw.taskState(i)
		switch {
		case res.done:
		case queuedState(state):
			active = append(active, i)
			res.text = "not finished yet"
		default:
			todo = append(todo, i)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", i, job, state, res.text)
	}
	tw.Flush()
	if serr != nil {
		fmt.Fprintf(w, "(Slurm's states: %v)\n", serr)
	}
	if len(active) > 0 {
		fmt.Fprintf(w, "%d of %d tasks queued or running (%s)\n", len(active), sw.Tasks, arraySpec(active, 0))
	}
	if len(todo) > 0 {
		fmt.Fprintf(w, "%d of %d tasks did not finish (%s): tcforge slurm --resume --dir %s\n", len(todo), sw.Tasks, arraySpec(todo, 0), shellQuote(sw.dir))
	}
	if len(todo)+len(active) > 0 {
		return exitStatus{1}
	}
	fmt.Fprintf(w, "every task finished\n")
	return nil
}

// queuedState reports whether a task in Slurm state st (describeState's)
// may still run: pending, running, being configured or completed,
// suspended, requeued.
func queuedState(st string) bool {
	for _, s := range []string{"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING", "STAGE_OUT"} {
		if st == s || strings.HasPrefix(st, s+" ") {
			return true
		}
	}
	return false
}
