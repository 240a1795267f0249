package report

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/sdk/model"
)

// hasModels reports whether the pipeline maps its circuits to models: its
// CSV then has one row per (point × layerer × mapper), the model columns
// (run.ModelColumns) after the layered ones.
func hasModels(res *run.Result) bool { return len(res.Pipeline.Mappers) > 0 }

// withModels expands one row's record into one record per mapper block,
// each followed by that mapper's model columns (blank where the layered
// circuit was not mapped).
func withModels(res *run.Result, row run.Row, rec []string) [][]string {
	if !hasModels(res) {
		return [][]string{rec}
	}
	out := make([][]string, 0, len(res.Pipeline.Mappers))
	for i, b := range res.Pipeline.Mappers {
		mr := run.ModelRow{Mapper: b.Name, MinMargin: math.NaN()}
		if i < len(row.Models) {
			mr = row.Models[i]
		}
		out = append(out, append(append([]string(nil), rec...), mr.Cells()...))
	}
	return out
}

// JSONModel is one model of a JSON row.
type JSONModel struct {
	Mapper string `json:"mapper"`
	Arch   string `json:"arch,omitempty"`
	model.Stats
	Samples   int      `json:"samples"`
	MinMargin *float64 `json:"min_margin,omitempty"`
	Beta      float64  `json:"beta,omitempty"`
	BetaMin   float64  `json:"beta_min,omitempty"`
	BetaStep  float64  `json:"beta_step,omitempty"`
	// BetaBound is the one-pass probe's bound on β (docs/mappers.md);
	// BetaMethod says how BetaMin was found: "probe" or "bisection".
	BetaBound  float64 `json:"beta_bound,omitempty"`
	BetaMethod string  `json:"beta_method,omitempty"`
	Verified   bool    `json:"model_verified"`
	MaxInt     int64   `json:"max_int,omitempty"`
	ExactIn    string  `json:"exact_in,omitempty"`
	Export     string  `json:"export,omitempty"`
	Error      string  `json:"error,omitempty"`
	MapSec     float64 `json:"map_seconds"`
	VerifySec  float64 `json:"verify_seconds"`
	SearchSec  float64 `json:"beta_search_seconds,omitempty"`
}

// jsonModels converts a row's models.
func jsonModels(row run.Row) []JSONModel {
	var out []JSONModel
	for _, m := range row.Models {
		j := JSONModel{Mapper: m.Mapper, Arch: m.Arch, Stats: m.Stats,
			Samples: m.Samples, Beta: m.Beta, BetaMin: m.BetaMin, BetaStep: m.BetaStep, BetaBound: m.BetaBound, BetaMethod: m.BetaMethod, Verified: m.Verified, Export: m.Export,
			MaxInt: m.MaxInt, ExactIn: m.ExactIn,
			MapSec: m.MapTime.Seconds(), VerifySec: m.VerifyTime.Seconds(), SearchSec: m.SearchTime.Seconds()}
		if !math.IsNaN(m.MinMargin) && !math.IsInf(m.MinMargin, 0) {
			v := m.MinMargin
			j.MinMargin = &v
		}
		if m.Err != nil {
			j.Error = m.Err.Error()
		}
		out = append(out, j)
	}
	return out
}

// writeModelTable prints the models of a pipeline's rows under its table.
func writeModelTable(w io.Writer, res *run.Result) error {
	if !hasModels(res) {
		return nil
	}
	fmt.Fprintf(w, "\n  models (forward passes in float32 and float64 vs the layered circuit; exact in: the formats whose pass gave every bit, fp16 and bf16 not checked)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := append(append([]string(nil), res.Vars...), "layerer", "arch", "tokens", "d_model", "blocks", "heads", "ffn",
		"params nz", "params dense", "samples", "min margin", "β", "β min", "verified", "exact in")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, row := range res.Rows {
		for _, m := range row.Models {
			var cells []string
			for _, v := range res.Vars {
				cells = append(cells, Value(row.Point.Values[v]))
			}
			s := m.Stats
			beta, betaMin, margin := "-", "-", "-"
			if m.Beta > 0 {
				beta = fmt.Sprintf("%.4g", m.Beta)
				if m.Verified {
					betaMin = fmt.Sprintf("%.4g", m.BetaMin)
				}
			}
			if !math.IsNaN(m.MinMargin) {
				margin = fmt.Sprintf("%.4g", m.MinMargin)
			}
			arch := m.Arch
			if arch == "" {
				arch = m.Mapper
			}
			cells = append(cells, row.Layerer, arch, itoa(s.Tokens), itoa(s.DModel), itoa(s.Blocks), itoa(s.Heads), itoa(s.FFNHidden),
				fmt.Sprint(s.ParamsNonzero), fmt.Sprint(s.ParamsDense), itoa(m.Samples), margin, beta, betaMin, fmt.Sprint(m.Verified), dash(m.ExactIn))
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, row := range res.Rows {
		for _, m := range row.Models {
			if m.Err != nil {
				where := row.Layerer + ", " + m.Mapper
				if pt := row.Point.String(); pt != "" {
					where = pt + ", " + where
				}
				fmt.Fprintf(w, "  error [%s]: %v\n", where, m.Err)
			}
		}
	}
	return nil
}

// dash returns s, or "-" if it is empty.
func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
