package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"os"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/sdk/layered"
)

// JSONReport is the content of DIR/<pipeline>.json: the CSV's rows with
// typed values, plus the expectations' formulas and the level widths.
type JSONReport struct {
	Pipeline     string        `json:"pipeline"`
	Source       string        `json:"source,omitempty"` // the pipeline file
	Vars         []string      `json:"vars"`
	ExpectNames  []string      `json:"expect_names"`
	Expectations []Expectation `json:"expectations"`
	OK           bool          `json:"ok"`
	// Complete is false when the run was interrupted: Rows then hold
	// only the points that finished, Stopped says why and NotRun lists
	// the points that did not.
	Complete bool             `json:"complete"`
	Stopped  string           `json:"stopped,omitempty"`
	NotRun   []map[string]any `json:"not_run,omitempty"`
	Rows     []JSONRow        `json:"rows"`
}

// JSONRow is one (matrix point × layerer) row with typed values: matrix
// values are JSON numbers, strings or booleans.
type JSONRow struct {
	Point   map[string]any `json:"point"`
	Layerer string         `json:"layerer"`
	layered.Stats
	LogicNodes int              `json:"logic_nodes"`
	LogicDepth int              `json:"logic_depth"`
	Verified   bool             `json:"verified"`
	Expect     map[string]int64 `json:"expect,omitempty"`
	Actual     map[string]int64 `json:"actual,omitempty"`
	Predict    map[string]int64 `json:"predict,omitempty"`
	ExpectOK   bool             `json:"expect_ok"`
	OK         bool             `json:"ok"`
	// Error is what went wrong ("" when the row is fine); a failed row's
	// figures are not data.
	Error     string  `json:"error"`
	BuildSec  float64 `json:"build_seconds"`
	LayerSec  float64 `json:"layer_seconds"`
	VerifySec float64 `json:"verify_seconds"`
	// Models are the row's mapped models, one per mapper block.
	Models []JSONModel `json:"models,omitempty"`
	// Plugins are the plugins that produced the row: construction,
	// layerer, mappers, each with its version and source ("bundled", or
	// an external executable's path and SHA-256).
	Plugins []run.PluginInfo `json:"plugins"`
}

// Expectation is one figure of an expect block with its formula as
// written in the pipeline file.
type Expectation struct {
	Layerer string `json:"layerer"`
	Figure  string `json:"figure"`
	Formula string `json:"formula"`
	// At is the formula's location, file:line,column.
	At string `json:"at"`
	// Predict marks a predict block's formula: shown, never a failure.
	Predict bool `json:"predict,omitempty"`
}

// Kind is "expect" or "predict".
func (e Expectation) Kind() string {
	if e.Predict {
		return "predict"
	}
	return "expect"
}

// Expectations returns the pipeline's expectations in file order, each
// with its formula's source text (read from the pipeline file; empty if
// the file cannot be read any more).
func Expectations(res *run.Result) []Expectation {
	srcs := map[string][]byte{}
	var out []Expectation
	for _, e := range res.Pipeline.Expects {
		for _, n := range e.Names {
			a := e.Attrs[n]
			rng := a.Expr.Range()
			out = append(out, Expectation{Layerer: e.Layerer, Figure: n, Formula: sourceText(srcs, rng), At: rng.String(), Predict: e.Predict})
		}
	}
	return out
}

// sourceText returns the text of rng, reading its file once per map.
func sourceText(cache map[string][]byte, rng hcl.Range) string {
	src, ok := cache[rng.Filename]
	if !ok {
		src, _ = os.ReadFile(rng.Filename)
		cache[rng.Filename] = src
	}
	if rng.Start.Byte < 0 || rng.End.Byte > len(src) || rng.Start.Byte > rng.End.Byte {
		return ""
	}
	// Collapse line breaks of a multi-line formula.
	return strings.Join(strings.Fields(string(src[rng.Start.Byte:rng.End.Byte])), " ")
}

// MatrixValue converts a matrix value to a JSON-encodable Go value:
// int64 or float64, string or bool (nil for null).
func MatrixValue(v cty.Value) any {
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() {
		return nil
	}
	switch v.Type() {
	case cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInt() {
			if i, acc := bf.Int64(); acc == big.Exact {
				return i
			}
		}
		f, _ := bf.Float64()
		return f
	case cty.String:
		return v.AsString()
	case cty.Bool:
		return v.True()
	}
	return v.GoString()
}

// JSON returns the result as a JSONReport.
func JSON(res *run.Result) JSONReport {
	out := JSONReport{
		Pipeline:     res.Pipeline.Name,
		Source:       res.Pipeline.DefRange.Filename,
		Vars:         append([]string{}, res.Vars...),
		ExpectNames:  append([]string{}, res.ExpectNames...),
		Expectations: Expectations(res),
		OK:           res.OK() && res.Complete,
		Complete:     res.Complete,
		Rows:         []JSONRow{},
	}
	if !res.Complete {
		out.Stopped = res.Stopped
		if out.Stopped == "" {
			out.Stopped = "stopped"
		}
		for _, pt := range Missing(res) {
			out.NotRun = append(out.NotRun, jsonPoint(res, pt))
		}
	}
	if out.Expectations == nil {
		out.Expectations = []Expectation{}
	}
	for _, row := range res.Rows {
		pt := jsonPoint(res, row.Point)
		s := row.Stats
		s.Widths = append([]int{}, s.Widths...) // [] rather than null for a failed row
		jr := JSONRow{
			Point: pt, Layerer: row.Layerer, Stats: s,
			LogicNodes: row.Logic.Nodes, LogicDepth: row.Logic.Depth,
			Verified: row.Verified, Expect: row.Expect, Actual: row.Actual, Predict: row.Predict,
			ExpectOK: row.ExpectOK && row.Err == nil, OK: row.OK(),
			BuildSec: row.BuildTime.Seconds(), LayerSec: row.LayerTime.Seconds(), VerifySec: row.VerifyTime.Seconds(),
		}
		if row.Err != nil {
			jr.Error = row.Err.Error()
		}
		jr.Models = jsonModels(row)
		jr.Plugins = res.RowPlugins(row)
		if jr.Plugins == nil {
			jr.Plugins = []run.PluginInfo{}
		}
		out.Rows = append(out.Rows, jr)
	}
	return out
}

// jsonPoint is a point's matrix values for JSON.
func jsonPoint(res *run.Result, p config.Point) map[string]any {
	pt := map[string]any{}
	for _, v := range res.Vars {
		if val, ok := p.Values[v]; ok {
			pt[v] = MatrixValue(val)
		}
	}
	return pt
}

// WriteJSON writes the result as an indented JSONReport.
func WriteJSON(w io.Writer, res *run.Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(JSON(res)); err != nil {
		return fmt.Errorf("encoding %s as JSON: %w", res.Pipeline.Name, err)
	}
	return nil
}
