package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tcforge/tcforge/sdk/sdktest"
)

// pluginChild returns the process ID of host pid's plugin process serving
// plugin name (its command line ends in "plugin serve NAME"), or 0.
func pluginChild(t *testing.T, pid int, name string) int {
	t.Helper()
	for _, c := range children(t, pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) > 0 && args[len(args)-1] == name {
			return c
		}
	}
	return 0
}

// waitBounded waits for cmd for at most d; past it, it kills the host and
// its children (the test's own leftovers) and fails.
func waitBounded(t *testing.T, cmd *exec.Cmd, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		return time.Since(start)
	case <-time.After(d):
		for _, c := range children(t, cmd.Process.Pid) {
			syscall.Kill(c, syscall.SIGKILL)
		}
		cmd.Process.Kill()
		<-done
		t.Fatalf("the host did not end within %v", d)
		return 0
	}
}

// TestFrozenPlugin: a plugin process frozen by SIGSTOP (it answers
// nothing, not even go-plugin's shutdown request) neither hangs the host
// when --timeout fires nor stops SIGTERM from ending it; no process is
// left either way. Before the fix both waited forever on the shutdown RPC.
func TestFrozenPlugin(t *testing.T) {
	t.Parallel() // its own host process and children, its own temp dirs; 7 s mostly waiting
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the plugin processes")
	}
	tests := []struct {
		name   string
		flags  []string
		signal bool // SIGTERM the host once the plugin is frozen
		code   int
		errs   string // in the stuck rows' error cells
	}{
		{"timeout", []string{"--timeout", "3s"}, false, 1, `plugin "hangs": Layer did not answer within 3s; the plugin process was killed`},
		{"sigterm", nil, true, 143, "not run: terminated (SIGTERM)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			mark := filepath.Join(dir, "stuck-now")
			cfg := writeFile(t, dir, "p.hcl", strings.Replace(smallPipeline("stuck", "hangs"), `layerer "hangs" {}`, `layerer "hangs" { mark = "`+mark+`" }`, 1))
			out := filepath.Join(dir, "out")
			args := append(append([]string{"run", "--log-level", "warn", "--jobs", "1", "--progress", "never"}, tt.flags...), "--out", out, cfg)
			cmd := exec.Command(os.Args[0], args...)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, mark)
			frozen := pluginChild(t, cmd.Process.Pid, "hangs")
			if frozen == 0 {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatal("no hangs plugin process found")
			}
			plugins := children(t, cmd.Process.Pid)
			if err := syscall.Kill(frozen, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			if tt.signal {
				cmd.Process.Signal(syscall.SIGTERM)
			}
			waitBounded(t, cmd, 60*time.Second)
			took := time.Since(t0)
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, stderr.String())
			}
			for _, pid := range plugins {
				if alive(pid) {
					syscall.Kill(pid, syscall.SIGKILL)
					t.Errorf("plugin process %d outlived the host", pid)
				}
			}
			rows := sdktest.Table(t, filepath.Join(out, "stuck.csv"))
			if len(rows) != 2 || !strings.Contains(rows[0]["error"], tt.errs) {
				t.Errorf("stuck.csv: %v, want the first row's error to say %q", rows, tt.errs)
			}
			var m manifest
			readJSON(t, filepath.Join(out, "tcforge-run.json"), &m)
			if m.Status == "running" {
				t.Errorf("manifest left at %q", m.Status)
			}
			t.Logf("host ended %v after the plugin was frozen (exit %d)", took.Round(10*time.Millisecond), cmd.ProcessState.ExitCode())
		})
	}
}
