package cli_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestModelErrorsLocated runs two variants of a mapper with one wrong
// weight (wrong-weight: block 0's FFN unit 1 reads its inputs with the
// opposite sign) on one point: the closing line counts the models apart
// from the circuits; each error line names the mapper, its variant and its
// block's line, and where the pass first departs from the labelled circuit
// values (block 0, the units writing the dimension, the value's label);
// `inspect --labels 0` prints both failed models' labels after their
// errors.
func TestModelErrorsLocated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := writeFile(t, dir, "p.hcl", `pipeline "p" {
  construction "keccak" {
    log_w  = 0
    rate   = 12
    rounds = 1
  }
  layerer "reifier" {}
  mapper "wrong-weight" { variant = "mlp" }
  mapper "wrong-weight" { variant = "residual" }
}
`)
	r := tcforge(t, "run", "--log-level", "error", "--progress", "never", "--out", filepath.Join(dir, "out"), cfg)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", r.code, r.stdout, r.stderr)
	}
	if want := "1 pipelines, 1 points, 1 rows: 1 circuits verified, 0 of 2 models verified (2 failed)"; !strings.Contains(r.stdout, want) {
		t.Errorf("the closing line does not say %q:\n%s", want, r.stdout)
	}
	for _, v := range []struct{ variant, line string }{{"mlp", "8"}, {"residual", "9"}} {
		re := regexp.MustCompile(`(?m)^  error \[reifier, wrong-weight\]: mapper "wrong-weight" \(no-attention/` + v.variant + `, ` + regexp.QuoteMeta(cfg) + `:` + v.line +
			`\): float32 model vs layered circuit: sample \d+, output bit \d+ .*; on sample \d+ the pass first departs from the labelled circuit values at block 0, ffn \d+.* \(writes dim \d+: L1 gate \d+ ".*"\): token 0, dim \d+ is .*, the circuit's value is \d \(value label \d+: L1 gate \d+ ".*"\); \d+ of \d+ labelled values wrong after block 0$`)
		if !re.MatchString(r.stdout) {
			t.Errorf("no located error line for the %s variant (%s) in:\n%s", v.variant, re, r.stdout)
		}
	}
	ins := tcforge(t, "inspect", "--log-level", "error", "--labels", "0", cfg)
	if ins.code != 0 {
		t.Fatalf("inspect --labels: exit %d\n%s%s", ins.code, ins.stdout, ins.stderr)
	}
	for _, want := range []string{
		`mapper "wrong-weight" on layerer "reifier": no-attention/mlp, 1 tokens, d_model `,
		`mapper "wrong-weight" on layerer "reifier": no-attention/residual, 1 tokens, d_model `,
		"(NOT verified)\n  error: mapper \"wrong-weight\" (no-attention/mlp, " + cfg + ":8) [reifier]: float32 model vs layered circuit: ",
		"BLOCK 0", "AFTER BLOCK 0",
		"2 of 2 models NOT verified",
	} {
		if !strings.Contains(ins.stdout, want) {
			t.Errorf("inspect --labels does not print %q:\n%s", want, ins.stdout)
		}
	}
}
