package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tcforge/tcforge/host/config"
)

// kubeFlags are tcforge kubernetes's flags.
type kubeFlags struct {
	dir, image, claim, mount, name string
	shards, parallelism, cpus      int
	mem                            int64
	limit, grace                   time.Duration
	runArgs                        []string
}

func newKubernetesCmd(env *Env) *cobra.Command {
	f := &kubeFlags{}
	cmd := &cobra.Command{
		Use:   "kubernetes [flags] FILE...",
		Short: "Write a sweep as a Kubernetes Indexed Job (shards of tcforge run) and its merge Job; applies nothing",
		Long: "Write DIR/job.json, an Indexed Job whose pod I runs tcforge run --shard I/N --out MOUNT/shards/I on the\n" +
			"pipeline FILEs (JOB_COMPLETION_INDEX), and DIR/merge-job.json, a Job that runs tcforge merge into MOUNT/out,\n" +
			"both on the ReadWriteMany volume --claim, and print the kubectl commands that run them. The image must hold\n" +
			"the tcforge binary on PATH, /bin/sh, and the FILEs at the same paths (relative to its working directory).\n" +
			"A pod past --time gets SIGTERM, then SIGKILL after --grace: tcforge run writes its finished points, its\n" +
			"shard marked incomplete, in between. Generated and checked against Kubernetes 1.31's Job schema; not run\n" +
			"on a cluster here. See docs/clusters.md.",
		Example: "  tcforge kubernetes --dir k8s --image ghcr.io/example/tcforge:v1 --claim tcforge-results --shards 16 configs/mappers.hcl",
		PreRunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usagef("missing FILE: the pipeline files the pods run")
			case f.dir == "" || f.image == "" || f.claim == "":
				return usagef("--dir, --image and --claim are required")
			case !path.IsAbs(f.mount):
				return usagef("--mount %q: want an absolute path in the pod", f.mount)
			}
			for _, err := range []error{
				atLeast("shards", int64(f.shards), 1, ""),
				atLeast("parallelism", int64(f.parallelism), 0, " (0: every shard at once)"),
				atLeast("cpus", int64(f.cpus), 1, ""),
				atLeast("mem", f.mem, 1, " (MiB)"),
			} {
				if err != nil {
					return err
				}
			}
			if f.limit < time.Second || f.grace < time.Second {
				return usagef("--time and --grace must be at least a second")
			}
			return checkOutDir("--dir", f.dir)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, srcs, diags := config.ParseFiles(args...); diags.HasErrors() {
				_ = config.WriteDiagnostics(cmd.ErrOrStderr(), srcs, diags, false)
				return exitStatus{1}
			}
			if f.name == "" {
				f.name = "tcforge-" + strings.TrimSuffix(filepath.Base(args[0]), filepath.Ext(args[0]))
			}
			job, merge := kubeJobs(f, args)
			if err := os.MkdirAll(f.dir, 0o755); err != nil {
				return err
			}
			for _, x := range []struct {
				file string
				obj  any
			}{{"job.json", job}, {"merge-job.json", merge}} {
				b, err := json.MarshalIndent(x.obj, "", "  ")
				if err != nil {
					return err
				}
				if err := writeAtomic(filepath.Join(f.dir, x.file), append(b, '\n'), 0o644); err != nil {
					return err
				}
			}
			j, m := filepath.Join(f.dir, "job.json"), filepath.Join(f.dir, "merge-job.json")
			fmt.Fprintf(env.Stdout, "wrote %s (%d pods, %d at once, each %d CPU, %d MiB, %s) and %s; run with:\n", j, f.shards, f.parallel(), f.cpus, f.mem, f.limit, m)
			fmt.Fprintf(env.Stdout, "  kubectl apply -f %s\n  kubectl wait --for=condition=complete --timeout=-1s job/%s\n  kubectl apply -f %s\n", shellQuote(j), f.name, shellQuote(m))
			fmt.Fprintf(env.Stdout, "a failed index: kubectl get job %s -o jsonpath='{.status.failedIndexes}'\n", f.name)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.dir, "dir", "", "where to write job.json and merge-job.json (required)")
	fl.StringVar(&f.image, "image", "", "the container image: tcforge on PATH, /bin/sh, the pipeline files (required)")
	fl.StringVar(&f.claim, "claim", "", "a ReadWriteMany PersistentVolumeClaim every pod mounts at --mount (required)")
	fl.StringVar(&f.mount, "mount", "/results", "where the pods mount --claim: shards in MOUNT/shards/I, the merge in MOUNT/out")
	fl.StringVar(&f.name, "name", "", "the Job's name; the merge Job's adds -merge (default tcforge-<first FILE's name>)")
	fl.IntVar(&f.shards, "shards", 8, "N, the Job's completions: shard I of N each")
	fl.IntVar(&f.parallelism, "parallelism", 0, "at most this many pods at once (0: every shard at once)")
	fl.IntVar(&f.cpus, "cpus", 1, "CPUs per pod (requests and limits; tcforge run --jobs)")
	fl.Int64Var(&f.mem, "mem", 4096, "memory per pod in MiB (requests and limits), shared by tcforge (--memory) and its plugins (--plugin-memory)")
	fl.DurationVar(&f.limit, "time", time.Hour, "each pod's time limit (activeDeadlineSeconds): then SIGTERM, and SIGKILL after --grace")
	fl.DurationVar(&f.grace, "grace", 30*time.Second, "between SIGTERM and SIGKILL (terminationGracePeriodSeconds)")
	fl.StringArrayVar(&f.runArgs, "run-arg", nil, "one more argument to every tcforge run (repeatable)")
	return cmd
}

func (f *kubeFlags) parallel() int {
	if f.parallelism == 0 || f.parallelism > f.shards {
		return f.shards
	}
	return f.parallelism
}

// obj is a JSON object whose keys keep their order.
type obj []kv

type kv struct {
	k string
	v any
}

// MarshalJSON writes the keys in order.
func (o obj) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteByte('{')
	for i, x := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(x.k)
		v, err := json.Marshal(x.v)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return []byte(b.String()), nil
}

// kubeJobs returns the Indexed Job of the shards and the merge Job.
func kubeJobs(f *kubeFlags, files []string) (job, merge obj) {
	half := max(f.mem/2, 1)
	shards := path.Join(f.mount, "shards")
	run := []string{"exec tcforge run --progress never --jobs", fmt.Sprint(f.cpus), "--memory", fmt.Sprint(half), "--plugin-memory", fmt.Sprint(half),
		fmt.Sprintf(`--shard "$JOB_COMPLETION_INDEX/%d"`, f.shards), "--out", shellQuote(shards+"/") + `"$JOB_COMPLETION_INDEX"`}
	for _, a := range f.runArgs {
		run = append(run, shellQuote(a))
	}
	run = append(run, "--")
	for _, p := range files {
		run = append(run, shellQuote(p))
	}
	mergeCmd := []string{"exec tcforge merge --out", shellQuote(path.Join(f.mount, "out"))}
	for i := range f.shards {
		mergeCmd = append(mergeCmd, shellQuote(path.Join(shards, fmt.Sprint(i))))
	}
	res := obj{{"requests", obj{{"cpu", fmt.Sprint(f.cpus)}, {"memory", fmt.Sprintf("%dMi", f.mem)}}},
		{"limits", obj{{"cpu", fmt.Sprint(f.cpus)}, {"memory", fmt.Sprintf("%dMi", f.mem)}}}}
	pod := func(script string) obj {
		return obj{{"spec", obj{
			{"restartPolicy", "Never"},
			{"activeDeadlineSeconds", int64(f.limit / time.Second)},
			{"terminationGracePeriodSeconds", int64(f.grace / time.Second)},
			{"containers", []obj{{
				{"name", "tcforge"},
				{"image", f.image},
				{"command", []string{"/bin/sh", "-c", script}},
				{"resources", res},
				{"volumeMounts", []obj{{{"name", "results"}, {"mountPath", f.mount}}}},
			}}},
			{"volumes", []obj{{{"name", "results"}, {"persistentVolumeClaim", obj{{"claimName", f.claim}}}}}},
		}}}
	}
	labels := obj{{"app.kubernetes.io/name", "tcforge"}, {"tcforge.dev/sweep", f.name}}
	job = obj{
		{"apiVersion", "batch/v1"}, {"kind", "Job"},
		{"metadata", obj{{"name", f.name}, {"labels", labels}}},
		{"spec", obj{
			{"completionMode", "Indexed"},
			{"completions", f.shards},
			{"parallelism", f.parallel()},
			// A failed or stopped shard fails its index only; the others
			// run on, and status.failedIndexes names it.
			{"backoffLimitPerIndex", 0},
			{"template", pod(strings.Join(run, " "))},
		}},
	}
	merge = obj{
		{"apiVersion", "batch/v1"}, {"kind", "Job"},
		{"metadata", obj{{"name", f.name + "-merge"}, {"labels", labels}}},
		{"spec", obj{{"backoffLimit", 0}, {"template", pod(strings.Join(mergeCmd, " "))}}},
	}
	return job, merge
}
