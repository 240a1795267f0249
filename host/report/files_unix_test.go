//go:build unix

package report_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tcforge/tcforge/host/report"
)

// TestClearOwnedPlanted: a manifest planted in the directory (or left by
// anyone) removes nothing but files this tool writes for the named
// pipelines, in their places: not a file outside the directory, named
// by a path that climbs out, by an absolute path or through a symbolic
// link to a directory outside; not another name or kind of file; not a
// directory. Links planted as the tool's own files are removed
// themselves, never what they name.
func TestClearOwnedPlanted(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	dir := filepath.Join(base, "out")
	for _, d := range []string{outside, dir, filepath.Join(outside, "plots"), filepath.Join(dir, "logs", "a.keep")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	precious := map[string]string{}
	for _, f := range []string{"victim", "a.csv", "plots/a.width-vs-rounds.svg", "a.json"} {
		p := filepath.Join(outside, f)
		precious[p] = "precious " + f
		if err := os.WriteFile(p, []byte(precious[p]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mine := filepath.Join(dir, "notes.txt")
	precious[mine] = "the user's"
	if err := os.WriteFile(mine, []byte(precious[mine]), 0o644); err != nil {
		t.Fatal(err)
	}
	// Planted: circuits/ and plots/ as links out, a.csv as a link to a
	// file outside.
	for link, target := range map[string]string{
		"circuits": outside,
		"plots":    filepath.Join(outside, "plots"),
		"a.csv":    filepath.Join(outside, "a.csv"),
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	planted := `{"tool": "tcforge", "status": "ok", "pipelines": [{"name": "a", "files": [
		"../outside/victim", "` + filepath.Join(outside, "victim") + `", "circuits/victim",
		"circuits/a.p.reifier.svg", "plots/a.width-vs-rounds.svg", "notes.txt", "logs/a.keep",
		"logs/../../outside/victim", "a.json/../../outside/a.json"]}]}`
	if err := os.WriteFile(filepath.Join(dir, report.ManifestFile), []byte(planted), 0o644); err != nil {
		t.Fatal(err)
	}
	removed, err := report.ClearOwned(dir, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range precious {
		if b, err := os.ReadFile(p); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want it untouched", p, b, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "logs", "a.keep")); err != nil || !fi.IsDir() {
		t.Errorf("the directory logs/a.keep: %v", err)
	}
	// The link named a.csv is the tool's name: the link itself goes.
	if _, err := os.Lstat(filepath.Join(dir, "a.csv")); !os.IsNotExist(err) {
		t.Errorf("the link a.csv: %v", err)
	}
	want := []string{"a.csv", report.ManifestFile}
	if !slices.Equal(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
}

// TestReadManifestRefuses: a FIFO, a device or a link in place of the
// manifest is refused at once, not waited on or read without end.
func TestReadManifestRefuses(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		plant      func(path string) error
	}{
		{"fifo", "named pipe (FIFO)", func(p string) error { return syscall.Mkfifo(p, 0o644) }},
		{"zero", "symbolic link", func(p string) error { return os.Symlink("/dev/zero", p) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tt.plant(filepath.Join(dir, report.ManifestFile)); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { _, err := report.ReadManifest(dir); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("ReadManifest: %v, want %q", err, tt.want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("ReadManifest still reading after 10 s")
			}
		})
	}
}
