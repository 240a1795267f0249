package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/report"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

const mapperSrc = `
pipeline "mapped" {
  matrix {
    blocks = [1, 2]
  }
  construction "keccak" {
    blocks = matrix.blocks
  }
  layerer "reifier" {}
  mapper "no-attention" {}
  mapper "tokens-as-gates" { attention = "softmax" }
}
`

// mappedResult has two points; the second point's softmax model failed.
func mappedResult(t *testing.T) *run.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "m.hcl")
	if err := os.WriteFile(path, []byte(mapperSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	files, _, diags := config.ParseFiles(path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := files[0].Pipelines[0]
	res := &run.Result{Pipeline: p, Vars: p.Vars(), Complete: true}
	for i, pt := range p.Points() {
		row := run.Row{Point: pt, Layerer: "reifier", Verified: true, ExpectOK: true, Stats: layered.Stats{Depth: 10 * (i + 1), Width: 550}}
		row.Models = []run.ModelRow{
			{Mapper: "no-attention", Arch: "no-attention/mlp", Verified: true, Samples: 64, MinMargin: 0.5,
				Stats: model.Stats{Tokens: 1, DModel: 551, Blocks: 10, FFNHidden: 1101, ParamsNonzero: 20366, ParamsDense: 3340162}},
			{Mapper: "tokens-as-gates", Arch: "tokens-as-gates/softmax", Verified: i == 0, Samples: 64, MinMargin: 0.5, Beta: 11.5, BetaMin: 8.25,
				Stats: model.Stats{Tokens: 1111, DModel: 1115, Blocks: 10, Heads: 2, FFNHidden: 4, ParamsNonzero: 18510, ParamsDense: 4999660}},
		}
		if i == 1 {
			row.Models[1].Err = errors.New("float32 model vs layered circuit: sample 3, output bit 0 is 0, want 1")
			row.Models[1].MinMargin = math.NaN()
		}
		res.Rows = append(res.Rows, row)
	}
	return res
}

func TestCSVWithModels(t *testing.T) {
	res := mappedResult(t)
	var buf bytes.Buffer
	if err := report.WriteCSV(&buf, res); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"blocks", "layerer", "depth", "width", "gates", "copies", "edges", "forms", "nonzeros", "verified", "expect_ok",
			"mapper", "arch", "tokens", "d_model", "model_blocks", "heads", "ffn_hidden", "params_nonzero", "params_dense", "min_margin", "beta", "beta_min", "model_verified", "exact_in", "plugins", "error"},
		{"1", "reifier", "10", "550", "0", "0", "0", "0", "0", "true", "true", "no-attention", "no-attention/mlp", "1", "551", "10", "0", "1101", "20366", "3340162", "0.5", "", "", "true", "", "", ""},
		{"1", "reifier", "10", "550", "0", "0", "0", "0", "0", "true", "true", "tokens-as-gates", "tokens-as-gates/softmax", "1111", "1115", "10", "2", "4", "18510", "4999660", "0.5", "11.5", "8.25", "true", "", "", ""},
		{"2", "reifier", "20", "550", "0", "0", "0", "0", "0", "true", "true", "no-attention", "no-attention/mlp", "1", "551", "10", "0", "1101", "20366", "3340162", "0.5", "", "", "true", "", "", ""},
		{"2", "reifier", "20", "550", "0", "0", "0", "0", "0", "true", "true", "tokens-as-gates", "tokens-as-gates/softmax", "1111", "1115", "10", "2", "4", "18510", "4999660", "", "11.5", "", "false", "", "", "float32 model vs layered circuit: sample 3, output bit 0 is 0, want 1"},
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d:\n%v", len(recs), len(want), recs)
	}
	for i := range want {
		if strings.Join(recs[i], ",") != strings.Join(want[i], ",") {
			t.Errorf("record %d:\n got %v\nwant %v", i, recs[i], want[i])
		}
	}
	if res.OK() {
		t.Error("a result with a failed model is OK")
	}
}

func TestTableAndJSONWithModels(t *testing.T) {
	res := mappedResult(t)
	var buf bytes.Buffer
	if err := report.WriteTable(&buf, res); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, s := range []string{"models (forward passes in float32", "tokens-as-gates/softmax", "11.5", "8.25",
		"error [blocks=2, reifier, tokens-as-gates]: float32 model vs layered circuit"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	buf.Reset()
	if err := report.WriteJSON(&buf, res); err != nil {
		t.Fatal(err)
	}
	var j report.JSONReport
	if err := json.Unmarshal(buf.Bytes(), &j); err != nil {
		t.Fatal(err)
	}
	m := j.Rows[1].Models[1]
	if m.Arch != "tokens-as-gates/softmax" || m.Verified || m.MinMargin != nil || !strings.Contains(m.Error, "sample 3") || m.Beta != 11.5 {
		t.Errorf("JSON model %+v", m)
	}
	if m := j.Rows[0].Models[0]; m.MinMargin == nil || *m.MinMargin != 0.5 || m.Tokens != 1 || m.DModel != 551 {
		t.Errorf("JSON model %+v", m)
	}
}
