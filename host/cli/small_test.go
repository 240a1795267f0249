package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSmallMistakes: the smaller mistakes of issue 27 are refused at
// once, saying what is wrong, and nothing is written: an --export that
// cannot be written (checked before any mapping work), --point given
// twice, a pipeline name too long for its files, a plugin file that is
// not executable, a Bristol file that is a FIFO (the check hung until
// --timeout), a round count whose size estimate overflows (it wrapped and
// the plugin panicked in Build).
func TestSmallMistakes(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("p", "reifier"))
	afile := writeFile(t, dir, "afile", "")
	long := strings.Repeat("n", 300)
	longCfg := writeFile(t, dir, "long.hcl", smallPipeline(long, "reifier"))
	plugDir := filepath.Join(dir, "plugins")
	os.Mkdir(plugDir, 0o755)
	writeFile(t, plugDir, "tcforge-plugin-mine", "#!/bin/sh\n") // 0644: not executable
	mineCfg := writeFile(t, dir, "mine.hcl", smallPipeline("m", "mine"))
	fifo := filepath.Join(dir, "netlist.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	fifoCfg := writeFile(t, dir, "fifo.hcl", "pipeline \"f\" {\n  construction \"bristol\" {\n    file = \""+fifo+"\"\n  }\n  layerer \"reifier\" {}\n}\n")
	ovCfg := writeFile(t, dir, "ov.hcl", "pipeline \"o\" {\n  construction \"keccak\" {\n    preset = \"sha3-256\"\n    rounds = 720575940379280\n  }\n  layerer \"reifier\" {}\n}\n")
	out := filepath.Join(dir, "out")
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"export a file", []string{"run", "--export", afile, "--out", out, cfg}, 2, []string{"Error: --export " + afile + ": is a file, not a directory", "Usage:"}},
		{"export under a file", []string{"run", "--export", filepath.Join(afile, "m"), "--out", out, cfg}, 2, []string{"--export " + filepath.Join(afile, "m") + ": " + afile + " is a file, not a directory"}},
		{"point twice", []string{"inspect", "--point", "rounds=1", "--point", "rounds=2", cfg}, 2, []string{`invalid argument "rounds=2" for "--point" flag: given twice ("rounds=1", then "rounds=2"): give it once`}},
		{"long pipeline name", []string{"run", "--out", out, longCfg}, 1, []string{`Invalid pipeline name "nnnnnnnnnn`, "at most 100 characters"}},
		{"plugin not executable", []string{"run", "--plugin-dir", plugDir, "--out", out, mineCfg}, 1, []string{`no plugin named "mine"`, filepath.Join(plugDir, "tcforge-plugin-mine") + " exists but is not an executable file (chmod +x it)"}},
		{"FIFO as Bristol file", []string{"run", "--out", out, fifoCfg}, 1, []string{`Invalid value for parameter "file"`, fifo + " is a named pipe (FIFO), not a regular file"}},
		{"overflowing estimate", []string{"run", "--out", out, ovCfg}, 1, []string{`Invalid value for parameter "rounds"`, "ov.hcl:4:14", "overflows a 64-bit count"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t0 := time.Now()
			r := tcforge(t, tt.args...)
			if r.code != tt.code {
				t.Fatalf("exit %d, want %d\n%s%s", r.code, tt.code, r.stdout, r.stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "panic:") || strings.Contains(r.stderr, "goroutine ") {
				t.Errorf("stderr:\n%s", r.stderr)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("a refused run wrote %s", out)
			}
			if d := time.Since(t0); d > 20*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestUnwritableTempDir: with $TMPDIR unusable, every plugin fails to
// start with one line saying so and what to do (before, go-plugin's
// "plugin init error" and "exited during startup: exit status 0").
func TestUnwritableTempDir(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("p", "reifier"))
	cmd := exec.Command(os.Args[0], "run", "--log-level", "warn", "--progress", "never", cfg)
	cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(dir, "missing"))
	b, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf("exit %d, want 1\n%s", code, b)
	}
	want := "the temporary directory " + filepath.Join(dir, "missing") + " takes no files (no such file or directory): plugin processes make their sockets there; set TMPDIR to a writable directory"
	if !strings.Contains(string(b), want) || strings.Contains(string(b), "plugin init error") {
		t.Errorf("output lacks %q:\n%s", want, b)
	}
}

// TestOutLocked: a run into an --out directory another run is writing to
// is refused before it writes anything there (before, both ran and the
// last overwrote the other's manifest); the lock goes with its holder.
func TestOutLocked(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", smallPipeline("p", "reifier"))
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	// Another run's lock, held by a real process.
	holder := exec.Command("flock", filepath.Join(out, ".tcforge-run.lock"), "sleep", "60")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // flock and its sleep, killed together
	if err := holder.Start(); err != nil {
		t.Skipf("flock(1): %v", err)
	}
	release := func() {
		syscall.Kill(-holder.Process.Pid, syscall.SIGKILL)
		holder.Wait()
	}
	defer release()
	lockPath := filepath.Join(out, ".tcforge-run.lock")
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		f, err := os.Open(lockPath)
		if err == nil {
			busy := unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) != nil
			f.Close()
			if busy {
				break
			}
		}
		if time.Since(start) > 10*time.Second {
			t.Fatal("flock(1) never took the lock")
		}
	}
	r := tcforge(t, "run", "--log-level", "warn", "--out", out, cfg)
	if r.code != 2 || !strings.Contains(r.stderr, "Error: --out "+out+" is in use by another tcforge run") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if ents, _ := os.ReadDir(out); len(ents) != 1 {
		t.Errorf("the refused run wrote into %s: %v", out, ents)
	}
	release()
	if r := tcforge(t, "run", "--log-level", "warn", "--out", out, cfg); r.code != 0 {
		t.Fatalf("after the holder ended: exit %d\n%s", r.code, r.stderr)
	}
}
