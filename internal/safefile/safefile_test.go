//go:build unix

package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs f and fails if it has not returned within d: what a FIFO
// opened for reading does without O_NONBLOCK (waits for a writer).
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still waiting after %v", d)
	}
}

// TestReadFileRefuses: inputs that are not regular files, or too large,
// are refused on the opened descriptor at once, with what they are.
func TestReadFileRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big")
	if err := os.WriteFile(big, make([]byte, 4097), 0o644); err != nil {
		t.Fatal(err)
	}
	ok := filepath.Join(dir, "ok")
	if err := os.WriteFile(ok, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, want string
	}{
		{fifo, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", "is a device, not a regular file"},
		{dir, "is a directory, not a file"},
		{big, "holds 4097 bytes, over the limit of 4096"},
		{filepath.Join(dir, "missing"), "no such file or directory"},
	}
	for _, tt := range tests {
		within(t, 5*time.Second, func() {
			_, err := ReadFile(tt.path, 4096)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadFile(%s): %v, want %q", tt.path, err, tt.want)
			}
		})
	}
	b, err := ReadFile(ok, 5)
	if err != nil || string(b) != "hello" {
		t.Errorf("ReadFile(ok): %q, %v", b, err)
	}
}

// TestDirConfined: writes, reads and removals below a Dir follow no link
// planted there, and nothing outside it changes.
func TestDirConfined(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(base, "out")
	d, err := OpenDir(root, true)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	// Planted: a directory link out, a file link to the victim, a FIFO.
	must(t, os.Symlink(outside, filepath.Join(root, "plots")))
	must(t, os.Symlink(victim, filepath.Join(root, "p.csv")))
	must(t, syscall.Mkfifo(filepath.Join(root, "fifo.json"), 0o644))

	if err := d.WriteFile("plots/victim", []byte("x")); err == nil || !strings.Contains(err.Error(), "not followed") {
		t.Errorf("write through a directory link: %v", err)
	}
	if _, err := d.Remove("plots/victim"); err == nil {
		t.Error("removed through a directory link")
	}
	if _, err := d.ReadFile("plots/victim", 0); err == nil {
		t.Error("read through a directory link")
	}
	if _, err := d.ReadFile("p.csv", 0); err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Errorf("read of a file link: %v", err)
	}
	within(t, 5*time.Second, func() {
		if _, err := d.ReadFile("fifo.json", 0); err == nil || !strings.Contains(err.Error(), "FIFO") {
			t.Errorf("read of a FIFO: %v", err)
		}
	})
	for _, rel := range []string{"../outside/victim", "/etc/passwd", "a/../../x", ""} {
		if err := d.WriteFile(rel, []byte("x")); err == nil {
			t.Errorf("wrote %q", rel)
		}
		if _, err := d.Remove(rel); err == nil {
			t.Errorf("removed %q", rel)
		}
	}
	// A file link is replaced, not written through.
	if err := d.WriteFile("p.csv", []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(root, "p.csv")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("p.csv after the write: %v, %v", fi, err)
	}
	// Subdirectories are made; a removal takes the link itself, not what
	// it names.
	if err := d.WriteFile("logs/a/b.log", []byte("log")); err != nil {
		t.Fatal(err)
	}
	if b, err := d.ReadFile("logs/a/b.log", 10); err != nil || string(b) != "log" {
		t.Errorf("read back: %q, %v", b, err)
	}
	if removed, err := d.Remove("plots"); err != nil || !removed {
		t.Errorf("removing the planted link: %v, %v", removed, err)
	}
	if _, err := d.Remove("logs"); err == nil {
		t.Error("removed a directory")
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "precious" {
		t.Errorf("the file outside changed: %q, %v", b, err)
	}
	names, err := d.List(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.Contains(n, TempInfix) {
			t.Errorf("temporary file left: %s", n)
		}
	}
}

// TestAbortKeepsOld: a write aborted (or cut short) leaves the old file
// whole and no temporary file.
func TestAbortKeepsOld(t *testing.T) {
	root := t.TempDir()
	d, err := OpenDir(root, false)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	must(t, d.WriteFile("m.json", []byte("old")))
	f, err := d.Create("m.json")
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Abort()
	f.Abort()
	if err := f.Commit(); err == nil {
		t.Error("commit after abort")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "m.json")); string(b) != "old" {
		t.Errorf("m.json = %q", b)
	}
	names, _ := d.List("")
	if len(names) != 1 {
		t.Errorf("files: %v", names)
	}
	if n, ok := IsTemp(".m.json" + TempInfix + "x1"); !ok || n != "m.json" {
		t.Errorf("IsTemp: %q %v", n, ok)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatal(err)
	}
}
