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
		if err := report.WriteFileAtomic(path, []byte(content)); err != nil {
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
	if err := report.WriteFileAtomic(filepath.Join(dir, "d.csv"), []byte("x")); err == nil {
		t.Error("no error renaming over a directory")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		for _, e := range entries {
			t.Errorf("left in the directory: %s", e.Name())
		}
	}
}
