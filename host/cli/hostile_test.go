package cli_test

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	pymod "github.com/tcforge/tcforge/python"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// Issue 34 ("hard to break, part three"): what a hostile or careless user
// can leave in the directories and files a run reads and writes. Each
// test plants the real thing (symbolic links, FIFOs, a manifest) and runs
// the host on it.

// TestPlantedManifest: a tcforge-run.json planted in --out that lists
// files outside it (a path climbing out, an absolute path, a path through
// a symbolic link to a directory outside) and files of the user's makes
// the run delete none of them; the run goes on and writes its own
// manifest. (Before, ClearOwned removed every file the manifest listed
// for the run's pipelines.)
func TestPlantedManifest(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	out := filepath.Join(base, "out")
	for _, d := range []string{outside, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	keep := map[string]string{
		filepath.Join(outside, "victim"):          "precious",
		filepath.Join(outside, "p.json"):          "precious too",
		filepath.Join(out, "notes.txt"):           "the user's notes",
		filepath.Join(out, "p.md.bak"):            "the user's backup",
		filepath.Join(outside, "p.x.reifier.svg"): "an old drawing",
	}
	for p, s := range keep {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(out, "circuits")); err != nil {
		t.Fatal(err)
	}
	planted := `{"tool": "tcforge", "status": "ok", "pipelines": [{"name": "p", "files": [
		"../outside/victim", "` + filepath.Join(outside, "victim") + `", "circuits/p.x.reifier.svg",
		"notes.txt", "p.md.bak", "plots/../../outside/p.json", "logs/../../outside/victim"]}]}`
	writeFile(t, out, "tcforge-run.json", planted)
	cfg := writeFile(t, base, "p.hcl", smallPipeline("p", "reifier"))
	r := tcforge(t, "run", "--log-level", "warn", "--progress", "never", "--out", out, cfg)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for p, s := range keep {
		if b, err := os.ReadFile(p); err != nil || string(b) != s {
			t.Errorf("%s: %q, %v; want it untouched", p, b, err)
		}
	}
	var m manifest
	readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
	if m.Status != "ok" || len(m.Pipelines) != 1 || m.Pipelines[0].Rows != 2 {
		t.Errorf("manifest: %+v", m)
	}
	for _, f := range m.Files {
		if strings.Contains(f, "..") || filepath.IsAbs(f) {
			t.Errorf("the run's manifest lists %s", f)
		}
	}
}

// host runs the tcforge command line as a real process (the test binary)
// with env added, for at most limit (then it fails: it hung), and returns
// its exit status and combined output.
func host(t *testing.T, limit time.Duration, env []string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env...)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitBounded(t, cmd, limit)
	return cmd.ProcessState.ExitCode(), b.String()
}

// TestInputsNotRegular: a FIFO, a device or a link in place of an input
// the host reads whole — a pipeline file, the plugin lock file, the
// manifest or run lock of --out, a shard file — is refused at once with
// one clear line (or, for the manifest, replaced), never waited on or
// read without end. Before, a FIFO hung the host and /dev/zero grew it
// until it died.
func TestInputsNotRegular(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("p", "reifier"))
	ext := writeFile(t, dir, "p-ext.hcl", smallPipeline("q", "ext"))
	plugins := filepath.Join(dir, "plugins")
	os.Mkdir(plugins, 0o755)
	writeFile(t, plugins, "tcforge-plugin-ext", "#!/bin/sh\nexit 1\n")
	os.Chmod(filepath.Join(plugins, "tcforge-plugin-ext"), 0o755)
	outside := writeFile(t, dir, "outside.txt", "precious")
	tests := []struct {
		name  string
		args  []string
		plant func(out string)
		code  int
		want  string
	}{
		{"FIFO as pipeline file", []string{"run", fifo}, nil, 1, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero as pipeline file", []string{"run", "/dev/zero"}, nil, 1, "/dev/zero is a device, not a regular file"},
		{"FIFO as lock file", []string{"run", "--plugin-dir", plugins, "--lock", fifo, ext}, nil, 1, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero as lock file", []string{"run", "--plugin-dir", plugins, "--lock", "/dev/zero", ext}, nil, 1, "/dev/zero is a device, not a regular file"},
		{"FIFO as manifest", []string{"run", cfg}, func(out string) {
			syscall.Mkfifo(filepath.Join(out, "tcforge-run.json"), 0o644)
		}, 0, ""},
		{"link out as run lock", []string{"run", cfg}, func(out string) {
			os.Symlink(outside, filepath.Join(out, ".tcforge-run.lock"))
		}, 2, "the run lock"},
		{"FIFO as run lock", []string{"run", cfg}, func(out string) {
			syscall.Mkfifo(filepath.Join(out, ".tcforge-run.lock"), 0o644)
		}, 2, "is not a regular file; remove it"},
		{"FIFO as shard file", []string{"merge"}, func(out string) {
			os.MkdirAll(filepath.Join(out, "s0"), 0o755)
			syscall.Mkfifo(filepath.Join(out, "s0", "tcforge-shard.gob"), 0o644)
		}, 2, "is a named pipe (FIFO), not a regular file"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(dir, fmt.Sprint("out", i))
			os.Mkdir(out, 0o755)
			args := append([]string{tt.args[0], "--log-level", "warn", "--progress", "never", "--out", out}, tt.args[1:]...)
			if tt.plant != nil {
				tt.plant(out)
			}
			if tt.args[0] == "merge" {
				args = []string{"merge", "--log-level", "warn", "--out", filepath.Join(out, "merged"), filepath.Join(out, "s0")}
			}
			code, output := host(t, 30*time.Second, nil, args...)
			if code != tt.code || !strings.Contains(output, tt.want) {
				t.Errorf("exit %d, want %d and %q:\n%s", code, tt.code, tt.want, output)
			}
			if b, _ := os.ReadFile(outside); string(b) != "precious" {
				t.Errorf("%s: %q", outside, b)
			}
			if tt.code == 0 {
				var m manifest
				readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
				if m.Status != "ok" {
					t.Errorf("manifest %+v", m)
				}
			}
		})
	}
}

// mappedPipeline is a two-point toy Keccak pipeline with a tokens-as-gates
// mapper block (hard attention: architecture tokens-as-gates/hard) for
// each of mappers (the blocks' bodies), and a matrix variable tag.
func mappedPipeline(name string, tags []string, mappers ...string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "pipeline %q {\n  matrix {\n    tag = [", name)
	for i, t := range tags {
		if i > 0 {
			sb.WriteString(", ")
		}
		fmt.Fprintf(&sb, "%q", t)
	}
	sb.WriteString("]\n  }\n  construction \"keccak\" {\n    log_w  = 0\n    rate   = 12\n    rounds = 1\n  }\n  layerer \"reifier\" {}\n")
	for _, m := range mappers {
		fmt.Fprintf(&sb, "  mapper \"tokens-as-gates\" {%s}\n", m)
	}
	sb.WriteString("}\n")
	return sb.String()
}

// TestExportConfined: --export writes each model's .safetensors, .json
// and .labels.json whole (a temporary file renamed over the name): links
// planted at those names are replaced, never written through, and a
// byte module or labels an earlier export of the name left (which would
// describe another model) are removed. Before, os.Create and
// os.WriteFile wrote through the links into the files they named.
func TestExportConfined(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ex := filepath.Join(dir, "ex")
	os.Mkdir(ex, 0o755)
	cfg := writeFile(t, dir, "p.hcl", mappedPipeline("p", []string{"a"}, ""))
	name := "p.tag-a.reifier.tokens-as-gates-hard"
	victims := map[string]string{}
	for _, suffix := range []string{".json", ".safetensors", ".labels.json"} {
		v := writeFile(t, dir, "victim"+suffix, "precious "+suffix)
		victims[v] = "precious " + suffix
		if err := os.Symlink(v, filepath.Join(ex, name+suffix)); err != nil {
			t.Fatal(err)
		}
	}
	// An earlier model's byte module as tcforge_torch writes it (a
	// TorchScript zip with its provenance, an ONNX model it produced) goes;
	// a user's own file of that name would stay (python's TestStaleModules).
	var pt bytes.Buffer
	zw := zip.NewWriter(&pt)
	if w, err := zw.Create("archive/extra/tcforge.json"); err != nil {
		t.Fatal(err)
	} else {
		w.Write([]byte(`{"format": "tcforge-byte-module"}`))
	}
	zw.Close()
	onnx := append([]byte{0x08, 0x07, 0x12, byte(len("tcforge_torch"))}, "tcforge_torch"...)
	stale := []string{writeFile(t, ex, name+".pt", pt.String()), writeFile(t, ex, name+".onnx", string(onnx))}
	for _, s := range stale {
		if own, err := pymod.WrittenHere(s); !own || err != nil {
			t.Fatalf("%s: not what tcforge_torch writes (%v)", s, err)
		}
	}
	code, output := host(t, 60*time.Second, nil, "run", "--log-level", "warn", "--progress", "never", "--export", ex, "--export-python", "none", cfg)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, output)
	}
	for v, s := range victims {
		if b, _ := os.ReadFile(v); string(b) != s {
			t.Errorf("%s written through a link: %.40q", v, b)
		}
	}
	for _, suffix := range []string{".json", ".safetensors", ".labels.json"} {
		fi, err := os.Lstat(filepath.Join(ex, name+suffix))
		if err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s%s: %v, %v; want a regular file", name, suffix, fi, err)
		}
	}
	for _, s := range stale {
		if _, err := os.Stat(s); !os.IsNotExist(err) {
			t.Errorf("the stale %s is still there", s)
		}
	}
	var c struct {
		Weights string `json:"weights"`
	}
	readJSON(t, filepath.Join(ex, name+".json"), &c)
	if c.Weights != name+".safetensors" {
		t.Errorf("config names weights %q", c.Weights)
	}
	ents, _ := os.ReadDir(ex)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestExportNameCollisions: models that --export would write under one
// name are refused at the check, located, before anything runs (matrix
// values that differ only in characters a file name cannot hold, a
// pipeline named like another's point, two mapper blocks with the same
// values); two mappers that return one architecture with other values
// fail the later model's row, the earlier's files intact. Values that
// differ before their last '/' (the name took filepath.Base of them) get
// names of their own. Before, each of these overwrote a model silently.
func TestExportNameCollisions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	tests := []struct {
		name, src string
		code      int
		want      []string
		files     int // exported configs
	}{
		{"values", mappedPipeline("p", []string{"a/b", "a_b"}, ""), 1,
			[]string{"Error: Export names collide", "p.hcl:1:1", `pipeline "p" at tag=a_b on layerer "reifier" and of pipeline "p" at tag=a/b`, "p.tag-a_b.reifier.<architecture>.json"}, 0},
		{"pipeline like a point", mappedPipeline("p", []string{"x"}, "") + strings.Replace(mappedPipeline("p.tag-x", []string{"y"}, ""), "matrix {\n    tag = [\"y\"]\n  }\n", "", 1), 1,
			[]string{"Error: Export names collide", "p.hcl:13:1", "p.tag-x.reifier.<architecture>.json"}, 0},
		{"same mapper twice", mappedPipeline("p", []string{"x"}, "", ` attention = "hard" `), 1,
			[]string{"Error: Mapper block repeats another", "p.hcl:12:3", `has the values of the one at ` + filepath.Join(dir, "same mapper twice", "p.hcl") + ":11"}, 0},
		{"one architecture, other values", mappedPipeline("p", []string{"x"}, "", " beta = 2 "), 1,
			[]string{"which pipeline \"p\" at tag=x, layerer \"reifier\", mapper \"tokens-as-gates\" (" + filepath.Join(dir, "one architecture, other values", "p.hcl") + ":11) wrote in this run: not exported"}, 1},
		{"values with slashes", mappedPipeline("p", []string{"x/b", "y/b"}, ""), 0, nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := filepath.Join(dir, tt.name)
			os.Mkdir(sub, 0o755)
			cfg := writeFile(t, sub, "p.hcl", tt.src)
			ex := filepath.Join(sub, "ex")
			code, output := host(t, 60*time.Second, nil, "run", "--log-level", "warn", "--progress", "never", "--export", ex, "--export-python", "none", "--out", filepath.Join(sub, "out"), cfg)
			if code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, output)
			}
			for _, w := range tt.want {
				if !strings.Contains(output, w) {
					t.Errorf("output lacks %q:\n%s", w, output)
				}
			}
			configs, _ := filepath.Glob(filepath.Join(ex, "*.reifier.*-hard.json"))
			if len(configs) != tt.files {
				t.Errorf("%d exported configs, want %d: %q", len(configs), tt.files, configs)
			}
			if tt.files == 0 {
				if _, err := os.Stat(filepath.Join(sub, "out")); !os.IsNotExist(err) {
					t.Errorf("a refused run wrote --out")
				}
			}
		})
	}
}

// script writes an executable shell script into dir and returns its path.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := writeFile(t, dir, name, "#!/bin/sh\n"+body)
	if err := os.Chmod(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLockSwapMidStart: the plugin lock pins an external plugin; while
// runs start it, another process swaps its executable (an atomic rename)
// between the pinned script and another, over and over. Every run either
// ran the pinned script or refused the other one, naming the SHA-256 it
// found; the other never ran. Before, the lock was checked on the path
// and the path was then executed: the swapped-in file ran in 6 of 25 runs
// (4 of 25 on this machine). 12 runs (4 with -short, 50 with
// TCFORGE_HEAVY).
func TestLockSwapMidStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	stage := filepath.Join(dir, "stage")
	os.Mkdir(plugins, 0o755)
	os.Mkdir(stage, 0o755)
	mark := filepath.Join(dir, "the-other-one-ran")
	good := script(t, stage, "good", "exec "+os.Args[0]+" plugin serve reifier\n")
	evil := script(t, stage, "evil", "touch "+mark+"\nexec "+os.Args[0]+" plugin serve reifier\n")
	exe := filepath.Join(plugins, "tcforge-plugin-reifier")
	copyTo := func(src, dst string) {
		b, _ := os.ReadFile(src)
		os.WriteFile(dst, b, 0o755)
	}
	copyTo(good, exe)
	lock := filepath.Join(dir, "tcforge.lock.hcl")
	if r := tcforge(t, "plugins", "lock", "--plugin-dir", plugins, "--lock", lock); r.code != 0 {
		t.Fatalf("plugins lock: exit %d\n%s", r.code, r.stderr)
	}
	sum, _ := os.ReadFile(good)
	goodSum := fmt.Sprintf("%x", sha256.Sum256(sum))
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("p", "reifier"))

	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		defer func() { swapped <- n }()
		for i := 0; ; i++ {
			select {
			case <-stop:
				copyTo(good, exe)
				return
			default:
			}
			src := good
			if i%2 == 1 {
				src = evil
			}
			tmp := filepath.Join(plugins, ".swap")
			copyTo(src, tmp)
			os.Rename(tmp, exe)
			n++
		}
	}()
	runs, refused := 12, 0
	switch {
	case sdktest.IsHeavy():
		runs = 50
	case testing.Short():
		runs = 4
	}
	for i := range runs {
		out := filepath.Join(dir, fmt.Sprint("out", i))
		r := tcforge(t, "run", "--log-level", "error", "--progress", "never", "--plugin-dir", plugins, "--lock", lock, "--out", out, cfg)
		switch {
		case r.code == 0:
			for _, row := range sdktest.Table(t, filepath.Join(out, "p.csv")) {
				if !strings.Contains(row["plugins"], "sha256:"+goodSum) {
					t.Errorf("run %d: a row ran %q, want the pinned %s", i, row["plugins"], goodSum)
				}
			}
		case r.code == 1 && strings.Contains(r.stdout+r.stderr, "refusing to run it"):
			refused++
		default:
			t.Errorf("run %d: exit %d\n%s%s", i, r.code, r.stdout, r.stderr)
		}
	}
	close(stop)
	n := <-swapped
	if _, err := os.Stat(mark); err == nil {
		t.Fatal("the swapped-in executable ran")
	}
	t.Logf("%d runs, %d swaps during them: %d ran the pinned script, %d refused the other", runs, n, runs-refused, refused)
}

// TestLongTempDir: with a $TMPDIR of 130 characters the plugins start
// (their sockets go to a short private directory of their own, removed
// with them) and the run verifies every row. Before, each plugin failed
// with "exited during startup: exit status 0": its socket's path was over
// the 108 bytes a Unix socket's may have.
func TestLongTempDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := filepath.Join(dir, strings.Repeat("t", 60), strings.Repeat("m", 60))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("p", "reifier"))
	out := filepath.Join(dir, "out")
	cmd := exec.Command(os.Args[0], "run", "--log-level", "warn", "--progress", "never", "--out", out, cfg)
	cmd.Env = append(os.Environ(), "TMPDIR="+long)
	var b bytes.Buffer
	cmd.Stdout, cmd.Stderr = &b, &b
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitBounded(t, cmd, 60*time.Second)
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("TMPDIR of %d bytes: exit %d\n%s", len(long), code, b.String())
	}
	rows := sdktest.Table(t, filepath.Join(out, "p.csv"))
	if len(rows) != 2 || rows[0]["verified"] != "true" || rows[1]["verified"] != "true" {
		t.Errorf("rows: %v", rows)
	}
	left, _ := filepath.Glob(fmt.Sprintf("/tmp/tcforge-blobs-%d-*", cmd.Process.Pid))
	more, _ := filepath.Glob(filepath.Join(long, "tcforge-blobs-*"))
	if len(left)+len(more) > 0 {
		t.Errorf("directories left: %q %q", left, more)
	}
}

// TestPluginChildrenKilled: an external plugin executable that starts a
// child of its own (a script that leaves a sleeper running) leaves no
// process behind when the run ends: the plugin's process group is killed.
// Before, the host killed the plugin process alone and the sleeper lived
// on.
func TestPluginChildrenKilled(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the process")
	}
	dir := t.TempDir()
	plugins := filepath.Join(dir, "plugins")
	os.Mkdir(plugins, 0o755)
	pidFile := filepath.Join(dir, "sleeper.pid")
	script(t, plugins, "tcforge-plugin-reifier", "sleep 300 </dev/null >/dev/null 2>&1 &\necho $! > "+pidFile+"\nexec "+os.Args[0]+" plugin serve reifier\n")
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("p", "reifier"))
	r := tcforge(t, "run", "--log-level", "error", "--progress", "never", "--plugin-dir", plugins, "--lock", filepath.Join(dir, "none.hcl"), cfg)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	for deadline := time.Now().Add(5 * time.Second); alive(pid) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if alive(pid) {
		syscall.Kill(pid, syscall.SIGKILL)
		t.Errorf("the plugin's child %d outlived the run", pid)
	}
}

// TestModelsCountedApart: when every model of a run fails its check, the
// closing line, report.html and the Markdown say so beside the verified
// circuits. Before, the line read "2 rows: 2 verified": it counted the
// circuits only.
func TestModelsCountedApart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", strings.Replace(smallPipeline("p", "reifier"), "layerer \"reifier\" {}\n", "layerer \"reifier\" {}\n  mapper \"lying-map\" {}\n", 1))
	out := filepath.Join(dir, "out")
	r := tcforge(t, "run", "--log-level", "error", "--progress", "never", "--out", out, cfg)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	want := "1 pipelines, 2 points, 2 rows: 2 circuits verified, 0 of 2 models verified (2 failed), 0/0 met their expectations, 1 failed pipelines"
	if !strings.Contains(r.stdout, want) {
		t.Errorf("the closing line is not %q:\n%s", want, r.stdout)
	}
	for _, f := range []string{"report.html", "p.md"} {
		b, _ := os.ReadFile(filepath.Join(out, f))
		if !strings.Contains(string(b), "2 circuits verified, 0 of 2 models verified (2 failed)") {
			t.Errorf("%s does not count the models apart", f)
		}
	}
}

// TestManifestProcesses: the manifest records the run's plugin
// processes: the bundled plugins that shared one, and a plugin started
// again after its process crashed, with how the crashed one ended.
func TestManifestProcesses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	died := `layerer "diesonce" { died = "` + filepath.Join(dir, "died") + `" }`
	cfg := writeFile(t, dir, "p.hcl", strings.Replace(smallPipeline("first", "reifier"), "layerer \"reifier\" {}\n", "layerer \"reifier\" {}\n  "+died+"\n", 1)+
		strings.Replace(smallPipeline("second", "diesonce"), `layerer "diesonce" {}`, died, 1))
	out := filepath.Join(dir, "out")
	r := tcforge(t, "run", "--log-level", "error", "--progress", "never", "--out", out, cfg)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (the crash fails the first pipeline)\n%s%s", r.code, r.stdout, r.stderr)
	}
	var m struct {
		Processes []struct {
			Plugins []string
			Shared  bool
			PID     int
			Restart bool
			Ended   string
		} `json:"plugin_processes"`
	}
	readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
	var got []string
	for _, p := range m.Processes {
		if p.PID <= 0 {
			t.Errorf("process %+v without a pid", p)
		}
		got = append(got, fmt.Sprintf("%s shared=%v restart=%v ended=%q", strings.Join(p.Plugins, ","), p.Shared, p.Restart, p.Ended))
	}
	slices.Sort(got)
	want := []string{
		`diesonce shared=false restart=false ended="exit status 3"`,
		`diesonce shared=false restart=true ended=""`,
		`keccak,reifier shared=true restart=false ended=""`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("plugin_processes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
