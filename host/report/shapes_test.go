package report_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/host/report"
	"github.com/tcforge/tcforge/host/run"
)

func TestReferenceParams(t *testing.T) {
	// The published counts: GPT-2 small 124M, XL 1.5B, Llama-2-7B 6.74B,
	// Llama-2-13B 13.0B.
	want := map[string]int64{"GPT-2 small": 124439808, "GPT-2 XL": 1557611200, "Llama-2-7B": 6738415616, "Llama-2-13B": 13015864320}
	for _, r := range report.References() {
		if got := r.Params(); got != want[r.Name] {
			t.Errorf("%s: %d parameters, want %d", r.Name, got, want[r.Name])
		}
	}
}

func TestShapes(t *testing.T) {
	res := mappedResult(t)
	rows := report.Shapes(res)
	// Three verified-or-not models without an error, then four references.
	if len(rows) != 7 {
		t.Fatalf("%d rows, want 7: %+v", len(rows), rows)
	}
	if r := rows[1]; r.Model != "blocks=1, reifier, tokens-as-gates/softmax" || r.Tokens != "1111" || r.DModel != "1115" ||
		r.Heads != "2" || r.FFN != "4" || r.ParamsDense != "4999660" || r.ParamsNonzero != "18510" || r.Reference {
		t.Errorf("row 1: %+v", r)
	}
	if r := rows[4]; !r.Reference || r.Model != "GPT-2 XL (reference shape)" || r.Blocks != "48" || r.DModel != "1600" ||
		r.Heads != "25" || r.FFN != "6400" || r.ParamsDense != "1557611200" {
		t.Errorf("row 4: %+v", r)
	}
	var b bytes.Buffer
	if err := report.WriteTable(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i, j := strings.Index(out, "models (forward pass"), strings.Index(out, "shapes beside well-known transformers")
	if i < 0 || j < i || !strings.Contains(out[j:], "Llama-2-7B (reference shape)") || !strings.Contains(out[j:], "6738415616") {
		t.Errorf("the shape comparison is not printed after the models table:\n%s", out)
	}
}

func TestShapesHTML(t *testing.T) {
	dir := t.TempDir()
	if _, err := report.WriteHTML(dir, []*report.Section{{Result: mappedResult(t)}}, "ok"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, s := range []string{"Shapes beside well-known transformers", "blocks=2, reifier, no-attention/mlp", `<tr class="reference"><td>GPT-2 small (reference shape)</td>`, "124439808",
		`<svg xmlns="http://www.w3.org/2000/svg" class="frontier"`, "params dense against blocks", "<title>Llama-2-13B (reference shape): 40 blocks, params dense 13015864320</title>"} {
		if !strings.Contains(page, s) {
			t.Errorf("report.html lacks %q", s)
		}
	}
}

// TestAllShapes puts the verified models of two pipelines in one
// comparison (numbered, named after their pipelines, then the references)
// and report.html shows it and its plot above the sections; one pipeline
// alone gets none.
func TestAllShapes(t *testing.T) {
	a, b := mappedResult(t), mappedResult(t)
	pb := *b.Pipeline
	pb.Name = "other"
	b.Pipeline = &pb
	rows := report.AllShapes([]*run.Result{a, b})
	// Each pipeline: 2 mlp models and the first point's softmax model
	// verified (the second's failed); then four references.
	if len(rows) != 10 {
		t.Fatalf("%d rows, want 10: %+v", len(rows), rows)
	}
	if r := rows[3]; r.Model != "other: blocks=1, reifier, no-attention/mlp" || r.Verified != "true" || r.Reference {
		t.Errorf("row 3: %+v", r)
	}
	if r := rows[9]; !r.Reference || r.Model != "Llama-2-13B (reference shape)" {
		t.Errorf("row 9: %+v", r)
	}
	if report.AllShapes([]*run.Result{a}) != nil {
		t.Error("one pipeline: want no combined comparison")
	}
	var out bytes.Buffer
	if err := report.WriteAllShapes(&out, []*run.Result{a, b}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	i, j := strings.Index(text, "other: blocks=1, reifier, no-attention/mlp"), strings.Index(text, "Llama-2-13B (reference shape)")
	if !strings.HasPrefix(text, "\nfrontier: ") || i < 0 || j < i || !strings.Contains(text[j:], "13015864320") || strings.Count(text, "\n") != 13 {
		t.Errorf("the run's frontier table (header, 10 rows) is not printed as expected:\n%s", text)
	}
	out.Reset()
	if err := report.WriteAllShapes(&out, []*run.Result{a}); err != nil || out.Len() != 0 {
		t.Errorf("one pipeline: printed %q (%v), want nothing", out.String(), err)
	}
	dir := t.TempDir()
	if _, err := report.WriteHTML(dir, []*report.Section{{Result: a}, {Result: b}}, "ok"); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`<section id="frontier">`, "<td>other: blocks=1, reifier, no-attention/mlp</td>", `<td class="num">6</td>`, "<title>other: blocks=2, reifier, no-attention/mlp: 10 blocks, FFN width 1101</title>"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("report.html lacks %q", s)
		}
	}
}
