package cli_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// k8sSchema is the OpenAPI v3 schema of a batch/v1 Job, Kubernetes
// 1.31.4's (testdata/k8s-job-v1.31.schema.json: the schemas a Job reaches
// in api/openapi-spec/v3/apis__batch__v1_openapi.json, descriptions
// removed). kubectl --dry-run=client cannot stand in: it asks a server
// for the schema (Debian 12's kubernetes-client is 1.20, older than
// Indexed Jobs, and CI has no cluster).
type k8sSchema map[string]map[string]any

func loadK8sSchema(t *testing.T) k8sSchema {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "k8s-job-v1.31.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct{ Schemas k8sSchema }
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Components.Schemas
}

// validate checks v against schema s strictly (a property the schema
// does not name is an error, as kubectl --validate=strict has it) and
// returns every mismatch with its path.
func (sc k8sSchema) validate(s map[string]any, v any, at string) []string {
	if ref, ok := s["$ref"].(string); ok {
		return sc.validate(sc[strings.TrimPrefix(ref, "#/components/schemas/")], v, at)
	}
	var errs []string
	if all, ok := s["allOf"].([]any); ok {
		for _, x := range all {
			errs = append(errs, sc.validate(x.(map[string]any), v, at)...)
		}
	}
	if one, ok := s["oneOf"].([]any); ok {
		n := 0
		for _, x := range one {
			if len(sc.validate(x.(map[string]any), v, at)) == 0 {
				n++
			}
		}
		if n != 1 {
			errs = append(errs, fmt.Sprintf("%s: %v matches %d of oneOf's %d schemas", at, v, n, len(one)))
		}
	}
	typ, _ := s["type"].(string)
	switch x := v.(type) {
	case map[string]any:
		if typ != "" && typ != "object" {
			return append(errs, fmt.Sprintf("%s: an object, want %s", at, typ))
		}
		props, _ := s["properties"].(map[string]any)
		addl, _ := s["additionalProperties"].(map[string]any)
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range x {
				if !yield(k) {
					return
				}
			}
		}) {
			switch p, ok := props[k].(map[string]any); {
			case ok:
				errs = append(errs, sc.validate(p, x[k], at+"."+k)...)
			case addl != nil:
				errs = append(errs, sc.validate(addl, x[k], at+"."+k)...)
			case typ == "object" || props != nil:
				errs = append(errs, fmt.Sprintf("%s: unknown field %q", at, k))
			}
		}
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := x[r.(string)]; !ok {
				errs = append(errs, fmt.Sprintf("%s: missing required field %q", at, r))
			}
		}
	case []any:
		if typ != "" && typ != "array" {
			return append(errs, fmt.Sprintf("%s: an array, want %s", at, typ))
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range x {
				errs = append(errs, sc.validate(items, e, fmt.Sprintf("%s[%d]", at, i))...)
			}
		}
	case string:
		if typ != "" && typ != "string" {
			errs = append(errs, fmt.Sprintf("%s: a string, want %s", at, typ))
		}
	case float64:
		if typ == "integer" && x != float64(int64(x)) || typ != "" && typ != "integer" && typ != "number" {
			errs = append(errs, fmt.Sprintf("%s: %v, want %s", at, x, typ))
		}
	case bool:
		if typ != "" && typ != "boolean" {
			errs = append(errs, fmt.Sprintf("%s: a boolean, want %s", at, typ))
		}
	}
	return errs
}

// TestKubernetesJob: tcforge kubernetes writes an Indexed Job and a merge
// Job that Kubernetes 1.31's schema accepts (and the check refuses a
// Job with an unknown or mistyped field); their pods' commands, run here
// by /bin/sh with JOB_COMPLETION_INDEX = 0 … N−1 and tcforge on PATH,
// merge into what one tcforge run writes.
func TestKubernetesJob(t *testing.T) {
	t.Parallel()
	schema := loadK8sSchema(t)
	job := schema["io.k8s.api.batch.v1.Job"]
	root := t.TempDir()
	mount := filepath.Join(root, "volume")
	cfg := filepath.Join("testdata", "slurm.hcl")
	const n = 3
	r := tcforge(t, append([]string{"kubernetes", "--dir", filepath.Join(root, "k8s"), "--image", "ghcr.io/example/tcforge:v1", "--claim", "results",
		"--mount", mount, "--shards", fmt.Sprint(n), "--parallelism", "2", "--cpus", "2", "--mem", "2048", "--time", "90m", "--run-arg=--seed=3", cfg}, raceRunArgs()...)...)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "kubectl wait --for=condition=complete --timeout=-1s job/tcforge-slurm") {
		t.Errorf("stdout:\n%s", r.stdout)
	}
	read := func(name string) map[string]any {
		b, err := os.ReadFile(filepath.Join(root, "k8s", name))
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	indexed, merge := read("job.json"), read("merge-job.json")
	for name, v := range map[string]map[string]any{"job.json": indexed, "merge-job.json": merge} {
		if errs := schema.validate(job, v, "Job"); len(errs) > 0 {
			t.Errorf("%s against the Job schema:\n%s", name, strings.Join(errs, "\n"))
		}
	}
	spec := indexed["spec"].(map[string]any)
	if spec["completionMode"] != "Indexed" || spec["completions"] != float64(n) || spec["parallelism"] != 2.0 {
		t.Errorf("job.json spec: %v", spec)
	}
	podSpec := spec["template"].(map[string]any)["spec"].(map[string]any)
	if podSpec["activeDeadlineSeconds"] != 5400.0 || podSpec["terminationGracePeriodSeconds"] != 30.0 {
		t.Errorf("pod spec: %v", podSpec)
	}
	// The check can fail: an unknown field, a mistyped one.
	bad := map[string]any{"apiVersion": "batch/v1", "kind": "Job", "spec": map[string]any{"completions": "3", "completionIndex": 1,
		"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"image": "x"}}}}}}
	errs := strings.Join(schema.validate(job, bad, "Job"), "\n")
	for _, want := range []string{`Job.spec.completions: a string, want integer`, `Job.spec: unknown field "completionIndex"`, `Job.spec.template.spec.containers[0]: missing required field "name"`} {
		if !strings.Contains(errs, want) {
			t.Errorf("the schema check of a bad Job: no %q in\n%s", want, errs)
		}
	}

	if testing.Short() {
		return // the pods' runs below: a few seconds of tcforge runs
	}

	// The pods' commands, as their shell runs them.
	bin := filepath.Join(root, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(os.Args[0], filepath.Join(bin, "tcforge")); err != nil {
		t.Fatal(err)
	}
	script := func(v map[string]any) string {
		c := v["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
		cmd := c["command"].([]any)
		if len(cmd) != 3 || cmd[0] != "/bin/sh" || cmd[1] != "-c" {
			t.Fatalf("command %v", cmd)
		}
		return cmd[2].(string)
	}
	pod := func(script string, env ...string) error {
		cmd := exec.Command("/bin/sh", "-c", script)
		cmd.Env = append(append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH")), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %w\n%s", env, err, out)
		}
		return nil
	}
	single := filepath.Join(root, "single")
	var wg sync.WaitGroup
	errc := make([]error, n+1)
	for i := range n {
		wg.Go(func() { errc[i] = pod(script(indexed), fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i)) })
	}
	wg.Go(func() {
		if r := tcforge(t, "run", "--log-level", "warn", "--progress", "never", "--seed", "3", "--out", single, cfg); r.code != 0 {
			errc[n] = fmt.Errorf("the single run: exit %d\n%s", r.code, r.stderr)
		}
	})
	wg.Wait()
	for _, err := range errc {
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := pod(script(merge)); err != nil {
		t.Fatal(err)
	}
	sameReports(t, single, filepath.Join(mount, "out"))
}
