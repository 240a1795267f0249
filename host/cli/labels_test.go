package cli_test

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestInspectLabels prints block 1's labels of the toy Keccak (w = 2, two
// rounds) models of configs/transformers.hcl, filtered to χ of slice 1:
// every model's table has its unit and residual rows, each containing the
// filter, as many as the count line says; a block past the last is refused.
func TestInspectLabels(t *testing.T) {
	const filter = "round 1/chi z=1"
	args := []string{"inspect", "--log-level", "warn", "--pipeline", "transformers-keccak", "--point", "log_w=1", "--layerer", "fusion", "--labels", "1", "--label-filter", filter, "../../configs/transformers.hcl"}
	r := tcforge(t, args...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	models := strings.Split(r.stdout, "\nmapper ")[1:]
	if len(models) != 2 || !strings.HasPrefix(models[0], `"tokens-as-states" on layerer "fusion": tokens-as-states/stock`) ||
		!strings.HasPrefix(models[1], `"no-attention" on layerer "fusion": no-attention/residual`) {
		t.Fatalf("want the tokens-as-states and no-attention models, got:\n%s", r.stdout)
	}
	count := regexp.MustCompile(`(?m)^(\d+) labels containing "` + regexp.QuoteMeta(filter) + `"$`)
	for _, m := range models {
		rows := 0
		residual := 0
		after := false
		for _, line := range strings.Split(m, "\n") {
			switch {
			case strings.HasPrefix(line, "AFTER BLOCK 1"):
				after = true
			case strings.HasPrefix(line, " ") && strings.TrimSpace(line) != "":
				rows++
				if !strings.Contains(line, filter) {
					t.Errorf("row %q lacks %q", line, filter)
				}
				if after {
					residual++
				}
			}
		}
		c := count.FindStringSubmatch(m)
		if c == nil {
			t.Fatalf("no count line in:\n%s", m)
		}
		if n, _ := strconv.Atoi(c[1]); n != rows || residual == 0 {
			t.Errorf("count line says %s, the table has %d rows (%d residual)", c[1], rows, residual)
		}
	}
	bad := tcforge(t, append(args[:len(args)-5:len(args)-5], "--labels", "99", "../../configs/transformers.hcl")...)
	if bad.code == 0 || !strings.Contains(bad.stderr, "not 99") {
		t.Errorf("--labels 99: exit %d, stderr %q; want a refusal naming the block", bad.code, bad.stderr)
	}
}

// TestExportLabels: `tcforge run --export DIR` writes NAME.labels.json
// beside every model's NAME.json, a label table of that model's shape.
// -short writes no byte module (--export-python none: no PyTorch process;
// python's TestExportWritesModules checks the modules --export writes).
func TestExportLabels(t *testing.T) {
	dir := t.TempDir()
	args := []string{"run", "--log-level", "warn", "--out", filepath.Join(dir, "out"), "--export", dir}
	if testing.Short() {
		args = append(args, "--export-python", "none")
	}
	r := tcforge(t, append(args, "testdata/labels.hcl")...)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	configs, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	models := 0
	for _, c := range configs {
		if strings.HasSuffix(c, ".labels.json") {
			continue
		}
		models++
		var cfg struct {
			Tokens int `json:"tokens"`
			DModel int `json:"d_model"`
			Blocks []any
		}
		var lab struct {
			Format string `json:"format"`
			Config string `json:"config"`
			Tokens int    `json:"tokens"`
			DModel int    `json:"d_model"`
			Blocks int    `json:"blocks"`
			Values []any  `json:"values"`
		}
		readJSON(t, c, &cfg)
		readJSON(t, strings.TrimSuffix(c, ".json")+".labels.json", &lab)
		if lab.Format != "tcforge-labels" || lab.Config != filepath.Base(c) || lab.Tokens != cfg.Tokens || lab.DModel != cfg.DModel ||
			lab.Blocks != len(cfg.Blocks) || len(lab.Values) == 0 {
			t.Errorf("%s: labels %s of %d×%d, %d blocks, %d values; the model is %d×%d, %d blocks", c, lab.Format, lab.Tokens, lab.DModel, lab.Blocks, len(lab.Values), cfg.Tokens, cfg.DModel, len(cfg.Blocks))
		}
	}
	if models != 3 {
		t.Errorf("%d models exported, want 3: %v", models, configs)
	}
}
