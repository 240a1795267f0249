package registry_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/sdk"
)

// TestOpenInProcess: bundled plugins are found by name, external ones on
// the plugin path (overriding a bundled one), unknown names are a
// *NotFoundError listing what there is, and an invalid declaration is
// refused (sdk.Validate) before it can be called.
func TestOpenInProcess(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"tcforge-plugin-ext", "tcforge-plugin-toy", "not-a-plugin"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bad := toyPlugin()
	bad.Name = "bad"
	bad.Prepare = nil
	reg := registry.New(registry.Options{
		Builtins:  map[string]sdk.Plugin{"toy": toyPlugin(), "bad": bad},
		Dirs:      []string{dir},
		InProcess: true,
		Log:       zerolog.Nop(),
	})
	defer reg.Close()
	if got, want := reg.Names(), []string{"bad", "ext", "toy"}; !slices.Equal(got, want) {
		t.Errorf("Names() = %v, want %v", got, want)
	}
	if src, ok := reg.Lookup("toy"); !ok || src.Bundled || src.Path != filepath.Join(dir, "tcforge-plugin-toy") {
		t.Errorf("Lookup(toy) = %+v, %v; want the external executable, which overrides the bundled plugin", src, ok)
	}
	if src, ok := reg.Lookup("bad"); !ok || !src.Bundled {
		t.Errorf("Lookup(bad) = %+v, %v; want bundled", src, ok)
	}
	_, _, err := reg.Open(context.Background(), "nosuch")
	var nf *registry.NotFoundError
	if !errors.As(err, &nf) || !slices.Equal(nf.Bundled, []string{"bad", "toy"}) || nf.SearchPath != dir {
		t.Errorf("Open(nosuch) = %v, want a NotFoundError listing bad, toy and %s", err, dir)
	}
	pl, src, err := reg.Open(context.Background(), "bad")
	if err == nil || pl != nil || !strings.Contains(err.Error(), "no Prepare") {
		t.Errorf("Open(bad) = %v, %v, want the declaration refused", pl, err)
	}
	if !src.InProcess {
		t.Errorf("Open(bad) source %+v, want in-process", src)
	}
	if got := reg.Externals(); len(got) != 2 || got["ext"] != filepath.Join(dir, "tcforge-plugin-ext") {
		t.Errorf("Externals() = %v", got)
	}
}

// TestLockRefusesUnpinned: with a lock file, an external plugin it does
// not pin is refused with the reason before anything is started.
func TestLockRefusesUnpinned(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tcforge-plugin-ext")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(dir, "lock.hcl")
	if _, err := registry.WriteLock(lock, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	reg := registry.New(registry.Options{Dirs: []string{dir}, LockPath: lock, Log: zerolog.Nop()})
	defer reg.Close()
	_, _, err := reg.Open(context.Background(), "ext")
	if err == nil || !strings.Contains(err.Error(), `external plugin "ext" (`+exe+`) is not pinned in `+lock) {
		t.Errorf("Open(ext) = %v, want it refused as not pinned", err)
	}
}

// TestGoMemLimit checks the GOMEMLIMIT a plugin process is started with
// under a memory bound: 7/8 of it, unless the environment sets one.
func TestGoMemLimit(t *testing.T) {
	for _, tt := range []struct {
		env   []string
		limit int64
		want  []string
	}{
		{[]string{"A=1"}, 8 << 30, []string{"A=1", "GOMEMLIMIT=7516192768"}},
		{[]string{"GOMEMLIMIT=1GiB", "A=1"}, 8 << 30, []string{"GOMEMLIMIT=1GiB", "A=1"}},
		{nil, 1 << 20, []string{"GOMEMLIMIT=917504"}},
	} {
		if got := registry.GoMemLimit(slices.Clone(tt.env), tt.limit); !slices.Equal(got, tt.want) {
			t.Errorf("GoMemLimit(%q, %d) = %q, want %q", tt.env, tt.limit, got, tt.want)
		}
	}
}

// TestStartTimeout: a plugin process that never completes its start-up
// handshake is killed after Options.StartTimeout (here milliseconds) and
// reported as a *StartTimeoutError; the registry remembers the failure, so
// a second Open (the next pipeline using the plugin) reports it again
// without launching the process a second time.
func TestStartTimeout(t *testing.T) {
	t.Parallel()
	const timeout = 300 * time.Millisecond
	var mu sync.Mutex
	launched := 0
	// The process writes its ID to a file: go-plugin starts it on a
	// goroutine of its own, so the *exec.Cmd's Process is not the test's
	// to read.
	pidFile := filepath.Join(t.TempDir(), "pid")
	reg := registry.New(registry.Options{
		Builtins: map[string]sdk.Plugin{"mute": toyPlugin()},
		SelfCommand: func(...string) (*exec.Cmd, error) {
			mu.Lock()
			defer mu.Unlock()
			launched++
			// Never says a word: no handshake.
			return exec.Command("sh", "-c", `echo $$ > "$1"; exec sleep 60`, "sh", pidFile), nil
		},
		StartTimeout: timeout,
		Log:          zerolog.Nop(),
	})
	defer reg.Close()
	for i := range 2 {
		start := time.Now()
		_, _, err := reg.Open(context.Background(), "mute")
		took := time.Since(start)
		var st *registry.StartTimeoutError
		if !errors.As(err, &st) || st.Plugin != "mute" || st.Timeout != timeout {
			t.Fatalf("Open #%d = %v, want a *StartTimeoutError for mute after %v", i+1, err, timeout)
		}
		want := `plugin "mute" did not complete its start-up handshake within 300ms (--start-timeout)`
		if err.Error() != want {
			t.Errorf("Open #%d: %q, want %q", i+1, err, want)
		}
		// Not before the timeout; well before a second (the first Open)
		// or at once (the second: the failure remembered).
		if i == 0 && (took < timeout || took > 10*time.Second) {
			t.Errorf("Open #1 took %v, want about %v", took, timeout)
		}
		if i == 1 && took > time.Second {
			t.Errorf("Open #2 took %v, want the remembered failure at once", took)
		}
	}
	mu.Lock()
	n := launched
	mu.Unlock()
	if n != 1 {
		t.Errorf("the process was launched %d times, want once", n)
	}
	// The process was killed: gone (or a zombie, already signalled) soon.
	deadline := time.Now().Add(10 * time.Second)
	pid := 0
	for {
		b, err := os.ReadFile(pidFile)
		if _, serr := fmt.Sscan(string(b), &pid); err == nil && serr == nil {
			break
		}
		if time.Now().After(deadline) {
			return // killed before it could write it: not running either
		}
		time.Sleep(20 * time.Millisecond)
	}
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL) // the test's own leftover
			t.Fatalf("the plugin process %d is still running after the start timeout", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestStartDoesNotWait: Start begins the launches and returns while they
// are still under way (here, held inside SelfCommand), so a run checks its
// pipelines while its plugins start; an Open of a plugin being started
// waits for that one launch rather than making another; names repeated,
// unknown or called in process launch nothing.
func TestStartDoesNotWait(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 8)
	var mu sync.Mutex
	launched := 0
	opts := registry.Options{
		Builtins: map[string]sdk.Plugin{"mute": toyPlugin()},
		SelfCommand: func(...string) (*exec.Cmd, error) {
			mu.Lock()
			launched++
			mu.Unlock()
			entered <- struct{}{}
			<-release
			return exec.Command("sleep", "60"), nil // never says a word: no handshake
		},
		StartTimeout: 300 * time.Millisecond,
		Log:          zerolog.Nop(),
	}
	inProc := opts
	inProc.InProcess = true
	ip := registry.New(inProc)
	ip.Start(context.Background(), []string{"mute", "nosuch"})
	ip.Close()

	reg := registry.New(opts)
	defer reg.Close()
	started := make(chan struct{})
	go func() {
		reg.Start(context.Background(), []string{"mute", "nosuch", "mute"})
		close(started)
	}()
	<-entered // the launch is held in SelfCommand
	select {
	case <-started:
	case <-time.After(30 * time.Second):
		close(release)
		t.Fatal("Start did not return while its launch was under way")
	}
	opened := make(chan error, 1)
	go func() {
		_, _, err := reg.Open(context.Background(), "mute")
		opened <- err
	}()
	close(release)
	var st *registry.StartTimeoutError
	if err := <-opened; !errors.As(err, &st) {
		t.Errorf("Open during the start: %v, want the start's *StartTimeoutError", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if launched != 1 {
		t.Errorf("SelfCommand called %d times, want once (the in-process registry none, the other one launch of mute)", launched)
	}
}
