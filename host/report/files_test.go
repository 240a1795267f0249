package report_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tcforge/tcforge/host/report"
)

// TestWriteFileAtomic: the file is replaced whole, with mode 0644, and no
// temporary file stays, also when the write fails.
func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.csv")
	for _, content := range []string{"old,run\n", "new\n"} {
		if err := report.WriteFileAtomic(dir, "p.csv", []byte(content)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != content {
			t.Fatalf("read %q, %v; want %q", b, err, content)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	// Renaming over a directory fails: the temporary file is removed.
	if err := os.Mkdir(filepath.Join(dir, "d.csv"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteFileAtomic(dir, "d.csv", []byte("x")); err == nil {
		t.Error("no error renaming over a directory")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		for _, e := range entries {
			t.Errorf("left in the directory: %s", e.Name())
		}
	}
}

// TestClearOwned: the earlier run's files of the named pipelines go, with
// the temporary files a killed run left beside them (a plot that never
// got its name too); other pipelines' files, "a.b"'s included, stay.
func TestClearOwned(t *testing.T) {
	dir := t.TempDir()
	files := map[string]bool{ // file → removed
		"a.csv":                                true,
		".a.csv.tmp-123":                       true,
		"a.json":                               true,
		"report.html":                          true,
		".report.html.tmp-9":                   true,
		"tcforge-run.json":                     true,
		".tcforge-run.json.tmp-7":              true,
		"plots/a.width-vs-rounds.svg":          true,
		"plots/.a.width-vs-rounds.png.tmp-456": true, // killed before its rename
		"b.csv":                                false,
		".b.csv.tmp-1":                         false,
		"a.b.csv":                              false,
		"plots/a.b.width-vs-rounds.svg":        false,
		"plots/.a.b.width-vs-rounds.png.tmp-2": false,
	}
	if err := os.Mkdir(filepath.Join(dir, "plots"), 0o755); err != nil {
		t.Fatal(err)
	}
	for f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := report.ClearOwned(dir, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for f, gone := range files {
		_, err := os.Stat(filepath.Join(dir, f))
		if gone != os.IsNotExist(err) {
			t.Errorf("%s: removed %v, want %v", f, os.IsNotExist(err), gone)
		}
		if gone {
			n++
		}
	}
	if len(removed) != n {
		t.Errorf("ClearOwned returned %d files, removed %d: %q", len(removed), n, removed)
	}
}
