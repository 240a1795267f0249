package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/bristol"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestBristolConfig runs configs/bristol.hcl (a hand-written and a
// tcforge-written Bristol Fashion file, both backends) and checks every
// row: verified against the netlist evaluator and at its expected figures.
func TestBristolConfig(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	r := tcforge(t, "run", "--log-level", "warn", "--out", out, "../../configs/bristol.hcl")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	want := map[string]map[string]string{ // pipeline/max_arity/layerer → depth, width
		"bristol-hand/2/reifier":     {"depth": "12", "width": "12"},
		"bristol-hand/16/fusion":     {"depth": "5", "width": "13"},
		"bristol-tcforge/2/reifier":  {"depth": "30", "width": "475"},
		"bristol-tcforge/16/reifier": {"depth": "18", "width": "575"},
		"bristol-tcforge/16/fusion":  {"depth": "5", "width": "319"},
	}
	seen := 0
	for _, p := range []string{"bristol-hand", "bristol-tcforge"} {
		rows := sdktest.Table(t, filepath.Join(out, p+".csv"))
		if len(rows) != 4 {
			t.Errorf("%s: %d rows, want 4", p, len(rows))
		}
		for _, row := range rows {
			if row["verified"] != "true" || row["expect_ok"] != "true" {
				t.Errorf("%s %v: verified=%s expect_ok=%s", p, row, row["verified"], row["expect_ok"])
			}
			if w, ok := want[p+"/"+row["max_arity"]+"/"+row["layerer"]]; ok {
				seen++
				if row["depth"] != w["depth"] || row["width"] != w["width"] {
					t.Errorf("%s max_arity=%s %s: depth %s, width %s; want %s, %s", p, row["max_arity"], row["layerer"], row["depth"], row["width"], w["depth"], w["width"])
				}
			}
		}
	}
	if seen != len(want) {
		t.Errorf("found %d of the %d checked rows", seen, len(want))
	}
}

// TestBristolBadFile: a malformed Bristol Fashion file is refused before
// anything runs, as a diagnostic at the file attribute naming the file
// and line; nothing is written.
func TestBristolBadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "circuits"), 0o755); err != nil {
		t.Fatal(err)
	}
	bad := "3 5\n1 2\n1 1\n\n2 1 0 1 2 AND\n1 1 2 3 NOT\n2 1 2 3 4 XOR\n"
	if err := os.WriteFile(filepath.Join(dir, "circuits", "bad.txt"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "bad.hcl")
	src := "pipeline \"p\" {\n  construction \"bristol\" {\n    file = \"circuits/bad.txt\"\n  }\n  layerer \"reifier\" {}\n}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	r := tcforge(t, "run", "--out", out, cfg)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.code, r.stderr)
	}
	for _, w := range []string{"bad.hcl:3:12", filepath.Join(dir, "circuits", "bad.txt") + `:6: unknown gate "NOT"`} {
		if !strings.Contains(r.stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a bad config wrote %s", out)
	}
}

// TestInspectBristol exports the paper's Keccak figure circuit with
// inspect --bristol and imports the file back through a pipeline.
func TestInspectBristol(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "keccak.txt")
	r := tcforge(t, "inspect", "--log-level", "warn", "--pipeline", "fig-keccak-circuit", "--point", "log_w=0", "--bristol", file, figures)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	nl, err := bristol.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// 17 message bits in, 17 digest bits out; one round of Keccak-f[25]:
	// χ's 25 ANDs, of which the 17 output bits need 17.
	if st := nl.Stats(); nl.NumInputs() != 17 || nl.NumOutputs() != 17 || st.ANDs != 17 || st.ANDDepth != 1 {
		t.Errorf("%d inputs, %d outputs, %d ANDs, AND depth %d; want 17, 17, 17, 1", nl.NumInputs(), nl.NumOutputs(), st.ANDs, st.ANDDepth)
	}
	cfg := filepath.Join(dir, "import.hcl")
	src := "pipeline \"back\" {\n  construction \"bristol\" {\n    file = \"keccak.txt\"\n  }\n  layerer \"reifier\" {}\n  layerer \"fusion\" {}\n}\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r = tcforge(t, "run", "--log-level", "warn", cfg)
	if r.code != 0 || !strings.Contains(r.stdout, "2 verified") {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
