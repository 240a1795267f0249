package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
