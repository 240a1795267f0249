package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// sweepScripts are the batch scripts of a sweep, in its directory.
type sweepScripts struct{ array, merge string }

// writeScripts writes DIR/array.sbatch (a task) and DIR/merge.sbatch (the
// merge and report jobs).
func (sw *sweep) writeScripts() (sweepScripts, error) {
	s := sweepScripts{array: filepath.Join(sw.dir, "array.sbatch"), merge: filepath.Join(sw.dir, "merge.sbatch")}
	// #SBATCH lines are not shell: their values cannot be quoted.
	for _, p := range []string{sw.dir, sw.Chdir} {
		if strings.ContainsAny(p, " \t\n'\"\\$`") {
			return s, fmt.Errorf("%q: a path with blanks, quotes or $ cannot go into an #SBATCH line; use another directory", p)
		}
	}
	r := sw.Request
	for _, v := range append([]string{r.Name, r.Partition, r.Gres}, r.Extra...) {
		if strings.ContainsAny(v, "\n\r") {
			return s, fmt.Errorf("%q: an #SBATCH option is one line", v)
		}
	}
	head := func(b *bytes.Buffer, name, output string, gres bool) {
		fmt.Fprintf(b, "#SBATCH --job-name=%s\n#SBATCH --output=%s\n#SBATCH --chdir=%s\n", name, output, sw.Chdir)
		fmt.Fprintf(b, "#SBATCH --cpus-per-task=%d\n#SBATCH --mem=%dM\n#SBATCH --time=%d\n", r.CPUs, r.MemMiB, r.Minutes)
		if r.Partition != "" {
			fmt.Fprintf(b, "#SBATCH --partition=%s\n", r.Partition)
		}
		if gres && r.Gres != "" {
			fmt.Fprintf(b, "#SBATCH --gres=%s\n", r.Gres)
		}
		for _, x := range r.Extra {
			fmt.Fprintf(b, "#SBATCH %s\n", x)
		}
	}
	bin := shellQuote(sw.Tcforge)
	var a, m bytes.Buffer
	a.WriteString("#!/bin/bash\n")
	m.WriteString("#!/bin/bash\n")
	switch sw.Kind {
	case "run":
		fmt.Fprintf(&a, "# Written by tcforge slurm (docs/clusters.md): task I of the array runs shard I/%d of\n", sw.Tasks)
		fmt.Fprintf(&a, "# %s into %s/shards/I. tcforge slurm submits it with\n", strings.Join(sw.Files, " "), sw.dir)
		a.WriteString("# sbatch --array=…; --resume, with the tasks that did not finish. On SIGTERM (the\n" +
			"# time limit, scancel) tcforge run writes the finished points and the shard's file,\n" +
			"# marked incomplete, before Slurm's KillWait ends, and exits 143.\n")
		head(&a, r.Name, filepath.Join(sw.dir, "logs", "%A_%a.log"), true)
		half := max(r.MemMiB/2, 1)
		fmt.Fprintf(&a, "exec %s run --progress never --jobs \"$SLURM_CPUS_PER_TASK\" --memory %d --plugin-memory %d \\\n", bin, half, half)
		fmt.Fprintf(&a, "  --shard \"$SLURM_ARRAY_TASK_ID/%d\" --out %s\"$SLURM_ARRAY_TASK_ID\"", sw.Tasks, shellQuote(filepath.Join(sw.dir, "shards")+"/"))
		for _, x := range sw.RunArgs {
			fmt.Fprintf(&a, " %s", shellQuote(x))
		}
		a.WriteString(" --")
		for _, f := range sw.Files {
			fmt.Fprintf(&a, " %s", shellQuote(f))
		}
		a.WriteString("\n")

		m.WriteString("# Written by tcforge slurm (docs/clusters.md): the merge job (afterok: every task\n" +
			"# succeeded) and the report job (afternotok: a task failed, timed out or was\n" +
			"# cancelled) both run it: every task's state, then tcforge merge, which names the\n" +
			"# shards that stopped or are missing (tcforge slurm --resume runs them again).\n")
		head(&m, r.Name+"-merge", filepath.Join(sw.dir, "logs", "merge_%j.log"), false)
		fmt.Fprintf(&m, "%s slurm --status --dir %s\n", bin, shellQuote(sw.dir))
		fmt.Fprintf(&m, "exec %s merge --out %s", bin, shellQuote(filepath.Join(sw.dir, "out")))
		for i := range sw.Tasks {
			fmt.Fprintf(&m, " %s", shellQuote(sw.shardDir(i)))
		}
		m.WriteString("\n")
	case "train":
		fmt.Fprintf(&a, "# Written by tcforge slurm --train (docs/clusters.md): task I of the array runs training\n")
		a.WriteString("# run I with python3 -m tcforge_torch train … --skip-done 1 (a run whose JSON says it is\n" +
			"# done is not run again), then marks it done for tcforge slurm --resume.\n")
		head(&a, r.Name, filepath.Join(sw.dir, "logs", "%A_%a.log"), true)
		a.WriteString("case $SLURM_ARRAY_TASK_ID in\n")
		for i, line := range sw.Runs {
			words, err := shellWords(line)
			if err != nil {
				return s, fmt.Errorf("run %d: %w", i, err)
			}
			fmt.Fprintf(&a, "%d) set --", i)
			for _, w := range words {
				fmt.Fprintf(&a, " %s", shellQuote(w))
			}
			a.WriteString(" ;;\n")
		}
		a.WriteString("*) echo \"no training run $SLURM_ARRAY_TASK_ID\" >&2; exit 2 ;;\nesac\n")
		fmt.Fprintf(&a, "%s -m tcforge_torch train --threads \"$SLURM_CPUS_PER_TASK\" --progress never \"$@\" --skip-done 1 || exit\n", shellQuote(sw.Python))
		fmt.Fprintf(&a, "mkdir -p %s && touch %s\"$SLURM_ARRAY_TASK_ID\"\n", shellQuote(filepath.Join(sw.dir, "done")), shellQuote(filepath.Join(sw.dir, "done")+"/"))

		m.WriteString("# Written by tcforge slurm --train (docs/clusters.md): the merge job (afterok) and\n" +
			"# the report job (afternotok) both print every run's state.\n")
		head(&m, r.Name+"-merge", filepath.Join(sw.dir, "logs", "merge_%j.log"), false)
		fmt.Fprintf(&m, "exec %s slurm --status --dir %s\n", bin, shellQuote(sw.dir))
	default:
		return s, fmt.Errorf("sweep kind %q: want run or train", sw.Kind)
	}
	for _, f := range []struct {
		path string
		b    *bytes.Buffer
	}{{s.array, &a}, {s.merge, &m}} {
		if err := writeAtomic(f.path, f.b.Bytes(), 0o755); err != nil {
			return s, err
		}
	}
	return s, nil
}

// arraySpec writes task indices as sbatch's --array list, ranges joined
// ("0-3,5,7-9"), with "%K" for a throttle K > 0.
func arraySpec(tasks []int, throttle int) string {
	var b strings.Builder
	for i := 0; i < len(tasks); {
		j := i
		for j+1 < len(tasks) && tasks[j+1] == tasks[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(tasks[i]))
		if j > i {
			fmt.Fprintf(&b, "-%d", tasks[j])
		}
		i = j + 1
	}
	if throttle > 0 {
		fmt.Fprintf(&b, "%%%d", throttle)
	}
	return b.String()
}

// parseArraySpec reads Slurm's task list ("0-3,5", "4-7%2") back into
// indices.
func parseArraySpec(s string) ([]int, error) {
	s, _, _ = strings.Cut(s, "%")
	var out []int
	for _, part := range strings.Split(s, ",") {
		a, b, isRange := strings.Cut(part, "-")
		lo, err := strconv.Atoi(a)
		if err != nil {
			return nil, fmt.Errorf("task list %q: %w", s, err)
		}
		hi := lo
		if isRange {
			if hi, err = strconv.Atoi(b); err != nil {
				return nil, fmt.Errorf("task list %q: %w", s, err)
			}
		}
		for i := lo; i <= hi; i++ {
			out = append(out, i)
		}
	}
	return out, nil
}

// shellQuote quotes s for a POSIX shell (as is when it needs nothing).
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWords splits a line of arguments as a POSIX shell would (blanks,
// 'single' and "double" quotes, backslashes), and refuses what would be
// more than arguments: $, `, ;, |, &, <, >, ( and ) outside single
// quotes.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\\':
			if i+1 == len(line) {
				return nil, errors.New("a line ends in a backslash")
			}
			i++
			w.WriteByte(line[i])
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("an unclosed ' quote")
			}
			w.WriteString(line[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			i++
			for ; i < len(line) && line[i] != '"'; i++ {
				switch line[i] {
				case '\\':
					if i+1 < len(line) && strings.IndexByte("\"\\$`", line[i+1]) >= 0 {
						i++
					}
				case '$', '`':
					return nil, fmt.Errorf("%q inside double quotes: a training run's line is arguments only", line[i])
				}
				w.WriteByte(line[i])
			}
			if i == len(line) {
				return nil, errors.New("an unclosed \" quote")
			}
		case strings.IndexByte("$`;|&<>()", c) >= 0:
			return nil, fmt.Errorf("%q: a training run's line is arguments only (quote it to pass it)", c)
		default:
			w.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// slurmCmd runs a Slurm client command and returns its standard output;
// an error carries its standard error.
func slurmCmd(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if errors.Is(err, exec.ErrNotFound) {
			return "", fmt.Errorf("%s: not found: is this a Slurm login node? (scripts/slurm/start.sh starts one on this machine)", name)
		}
		return "", fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	return out.String(), nil
}

// sbatch submits with --parsable and returns the job id.
func sbatch(ctx context.Context, args ...string) (string, error) {
	out, err := slurmCmd(ctx, "sbatch", append([]string{"--parsable"}, args...)...)
	if err != nil {
		return "", err
	}
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";") // "ID;cluster" on a federation
	if _, err := strconv.Atoi(id); err != nil {
		return "", fmt.Errorf("sbatch answered %q, not a job id", out)
	}
	return id, nil
}

// queued returns which of the job ids (array or not) still have a job in
// the queue, pending or running.
func queued(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return nil, nil // nothing submitted (--dry-run)
	}
	out, err := slurmCmd(ctx, "squeue", "-h", "-o", "%F %i")
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range ids {
		if id != "" {
			want[id] = true
		}
	}
	var active []string
	seen := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && want[f[0]] && !seen[f[1]] {
			seen[f[1]] = true
			active = append(active, f[1])
		}
	}
	return active, nil
}

// taskStates returns Slurm's state of every task of the arrays,
// "ARRAY_I" → "TIMEOUT", "FAILED (exit 143)", "PENDING (Resources)": from
// scontrol while the controller remembers the jobs (MinJobAge), else
// from sacct where accounting is on. The error says what could not be
// found.
func taskStates(ctx context.Context, arrays []string) (map[string]string, error) {
	states := map[string]string{}
	var errs []error
	for _, a := range arrays {
		out, err := slurmCmd(ctx, "scontrol", "-o", "show", "job", a)
		if err == nil {
			for _, line := range strings.Split(out, "\n") {
				f := fieldsOf(line)
				tasks, perr := parseArraySpec(f["ArrayTaskId"])
				if f["ArrayJobId"] != a || perr != nil {
					continue
				}
				st := describeState(f["JobState"], f["ExitCode"], f["Reason"])
				for _, t := range tasks {
					states[fmt.Sprintf("%s_%d", a, t)] = st
				}
			}
			continue
		}
		out, aerr := slurmCmd(ctx, "sacct", "-n", "-P", "-X", "-j", a, "--format=JobID,State,ExitCode")
		if aerr != nil {
			errs = append(errs, fmt.Errorf("job %s: %w; %w", a, err, aerr))
			continue
		}
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Split(line, "|")
			if len(f) == 3 {
				states[f[0]] = describeState(f[1], f[2], "")
			}
		}
	}
	return states, errors.Join(errs...)
}

// fieldsOf splits scontrol's one-line KEY=VALUE output.
func fieldsOf(line string) map[string]string {
	m := map[string]string{}
	for _, kv := range strings.Fields(line) {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

// describeState writes a job state with its exit status or signal
// (ExitCode "143:0", "0:15") and, while pending, its reason.
func describeState(state, exit, reason string) string {
	state, _, _ = strings.Cut(state, " ") // sacct: "CANCELLED by 0"
	s := state
	code, sig, _ := strings.Cut(exit, ":")
	if code != "" && code != "0" {
		s += " (exit " + code + ")"
	} else if sig != "" && sig != "0" {
		s += " (signal " + sig + ")"
	}
	if state == "PENDING" && reason != "" && reason != "None" {
		s += " (" + strings.ReplaceAll(reason, "_", " ") + ")" // scontrol's blanks are _
	}
	return s
}
