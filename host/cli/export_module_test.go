package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportModuleFlags runs `tcforge run --export` on a stock model with
// a byte interface where its byte module cannot be written: with
// --export-python naming no interpreter the run exits 0, exports the
// model and says why in one warning line; with --export-python none it
// says nothing. (python/module_test.go checks the files a real
// interpreter writes.)
func TestExportModuleFlags(t *testing.T) {
	t.Parallel()
	cfg := filepath.Join(t.TempDir(), "toy.hcl")
	if err := os.WriteFile(cfg, []byte(`pipeline "toy" {
  samples = 4
  construction "keccak" {
    log_w  = 1
    rate   = 32
    rounds = 2
  }
  layerer "fusion" {}
  mapper "tokens-as-states" {
    tokens = 2
    assign = "interleave"
  }
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		python string
		warn   string // "" for none
	}{
		{filepath.Join(t.TempDir(), "no-python"), "no byte modules (.pt, .onnx) with --export: no Python interpreter"},
		{"none", ""},
	} {
		t.Run(filepath.Base(tc.python), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "models")
			r := tcforge(t, "run", "--log-level", "warn", "--export", dir, "--export-python", tc.python, cfg)
			if r.code != 0 {
				t.Fatalf("exit %d:\n%s", r.code, r.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "toy.fusion.tokens-as-states-stock.safetensors")); err != nil {
				t.Errorf("the model was not exported: %v", err)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "*.pt")); len(m) != 0 {
				t.Errorf("wrote %q", m)
			}
			n := strings.Count(r.stderr, "byte module")
			switch {
			case tc.warn == "" && n != 0:
				t.Errorf("--export-python none: the run spoke of byte modules:\n%s", r.stderr)
			case tc.warn != "" && (n != 1 || !strings.Contains(r.stderr, tc.warn)):
				t.Errorf("want one line %q, got:\n%s", tc.warn, r.stderr)
			}
		})
	}
}
