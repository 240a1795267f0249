// Package report writes a run's results: the CSV contract that later tooling
// reads and the terminal table in the paper's layout.
package report

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/host/run"
)

// Header returns the CSV header: the matrix variables, layerer, depth,
// width, gates, copies, edges, verified, expect_<n>/actual_<n> for each
// expectation, expect_ok; then, for a pipeline with several layerers,
// layer_ms and the ratios to the first layerer (depth_vs_<first>,
// width_vs_…, gates_vs_…, edges_vs_…, time_vs_…; empty in the first
// layerer's rows); then, for a pipeline with mappers, the model columns
// run.ModelColumns (one row per point × layerer × mapper); then plugins:
// the plugins that produced the row (construction, layerer, mappers), each
// "name version source" where source is "bundled" or an external
// executable's path and "sha256:<hex>", joined by "; "; last, error:
// empty when the row is fine, else what went wrong (a failed row's
// figures are empty, not 0: failed rows are not data). An incomplete
// result (an interrupted run) ends with one row per point that did not
// run, its error "not run: <why>".
func Header(res *run.Result) []string {
	h := append([]string(nil), res.Vars...)
	h = append(h, "layerer")
	for _, f := range run.Figures() {
		if f.Shown {
			h = append(h, f.Name)
		}
	}
	h = append(h, "verified")
	for _, n := range res.ExpectNames {
		h = append(h, "expect_"+n, "actual_"+n)
	}
	h = append(h, "expect_ok")
	h = append(h, newComparison(res).head(csvTime, csvRatio)...)
	if hasModels(res) {
		h = append(h, run.ModelColumns...)
	}
	return append(h, "plugins", "error")
}

// Value formats a matrix value for a table cell.
func Value(v cty.Value) string {
	if v == cty.NilVal || v.IsNull() {
		return ""
	}
	switch v.Type() {
	case cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInt() {
			i, _ := bf.Int64()
			return strconv.FormatInt(i, 10)
		}
		return bf.Text('g', -1)
	case cty.String:
		return v.AsString()
	case cty.Bool:
		return strconv.FormatBool(v.True())
	}
	return v.GoString()
}

// Records returns the CSV rows (without the header).
func Records(res *run.Result) [][]string {
	var out [][]string
	cmp := newComparison(res)
	for _, row := range res.Rows {
		rec := make([]string, 0, len(res.Vars)+8+2*len(res.ExpectNames))
		for _, v := range res.Vars {
			rec = append(rec, Value(row.Point.Values[v]))
		}
		rec = append(rec, row.Layerer)
		figures := measured(row)
		for _, f := range run.Figures() {
			if !f.Shown {
				continue
			}
			if figures {
				rec = append(rec, f.Cell(row.Stats))
			} else {
				rec = append(rec, "")
			}
		}
		rec = append(rec, strconv.FormatBool(row.Verified && figures))
		for _, n := range res.ExpectNames {
			e, ok := row.Expect[n]
			if !ok {
				rec = append(rec, "", "")
				continue
			}
			rec = append(rec, strconv.FormatInt(e, 10), strconv.FormatInt(row.Actual[n], 10))
		}
		rec = append(rec, strconv.FormatBool(row.ExpectOK && row.Err == nil))
		rec = append(rec, cmp.cells(row, csvNone)...)
		for i, r := range withModels(res, row, rec) {
			msg := ""
			switch {
			case row.Err != nil:
				msg = oneLine(row.Err.Error())
			case i < len(row.Models) && row.Models[i].Err != nil:
				msg = oneLine(row.Models[i].Err.Error())
			}
			out = append(out, append(r, res.PluginsCell(row), msg))
		}
	}
	// The points an interrupted run did not finish: named, not data.
	width := len(Header(res))
	for _, pt := range Missing(res) {
		for _, b := range res.Pipeline.Layerers {
			rec := make([]string, 0, width)
			for _, v := range res.Vars {
				rec = append(rec, Value(pt.Values[v]))
			}
			rec = append(rec, b.Name)
			for _, f := range run.Figures() {
				if f.Shown {
					rec = append(rec, "")
				}
			}
			rec = append(rec, "false") // verified
			for range res.ExpectNames {
				rec = append(rec, "", "")
			}
			rec = append(rec, "false") // expect_ok
			for len(rec) < width-2 {
				rec = append(rec, "")
			}
			out = append(out, append(rec, res.PluginsCell(run.Row{Layerer: b.Name}), notRun(res)))
		}
	}
	return out
}

// oneLine joins the lines of an error message.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func itoa(i int) string { return strconv.Itoa(i) }

// WriteCSV writes the result as CSV.
func WriteCSV(w io.Writer, res *run.Result) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Header(res)); err != nil {
		return err
	}
	if err := cw.WriteAll(Records(res)); err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// WriteFiles writes DIR/<pipeline>.csv atomically, creating dir.
func WriteFiles(dir string, res *run.Result) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating output directory: %w", err)
	}
	path := filepath.Join(dir, res.Pipeline.Name+".csv")
	var buf bytes.Buffer
	if err := WriteCSV(&buf, res); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, WriteFileAtomic(dir, res.Pipeline.Name+".csv", buf.Bytes())
}

// WriteTable prints the result in the paper's layout: the matrix
// variables, then Exp./Actual pairs for each expectation, then the other
// figures and the verdict.
func WriteTable(w io.Writer, res *run.Result) error {
	if res.Complete {
		fmt.Fprintf(w, "\npipeline %q\n", res.Pipeline.Name)
	} else {
		fmt.Fprintf(w, "\npipeline %q — %s; the rows below are those points\n", res.Pipeline.Name, "i"+incomplete(res)[1:])
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var head []string
	head = append(head, res.Vars...)
	head = append(head, "layerer")
	for _, n := range res.ExpectNames {
		head = append(head, "Exp. "+n, "Actual "+n)
	}
	for _, n := range res.PredictNames {
		head = append(head, "Pred. "+n)
	}
	for _, f := range run.Figures() {
		if f.Shown && !slices.Contains(res.ExpectNames, f.Name) {
			head = append(head, f.Name)
		}
	}
	cmp := newComparison(res)
	head = append(head, cmp.head(tableTime, tableRatio)...)
	head = append(head, "verified", "ok")
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, row := range res.Rows {
		var cells []string
		for _, v := range res.Vars {
			cells = append(cells, Value(row.Point.Values[v]))
		}
		cells = append(cells, row.Layerer)
		for _, n := range res.ExpectNames {
			if e, ok := row.Expect[n]; ok {
				cells = append(cells, strconv.FormatInt(e, 10), strconv.FormatInt(row.Actual[n], 10))
			} else {
				cells = append(cells, "-", measuredFigure(row, n))
			}
		}
		for _, n := range res.PredictNames {
			cells = append(cells, predictCell(row, n))
		}
		for _, f := range run.Figures() {
			if f.Shown && !slices.Contains(res.ExpectNames, f.Name) {
				cells = append(cells, f.Cell(row.Stats))
			}
		}
		verdict := "ok"
		if !row.OK() {
			verdict = "FAIL"
		}
		cells = append(cells, cmp.cells(row, tableNone)...)
		cells = append(cells, strconv.FormatBool(row.Verified), verdict)
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, row := range res.Rows {
		if row.Err != nil {
			where := row.Layerer
			if pt := row.Point.String(); pt != "" {
				where = pt + ", " + where
			}
			fmt.Fprintf(w, "  error [%s]: %v\n", where, row.Err)
		}
	}
	if n := len(Missing(res)); n > 0 {
		fmt.Fprintf(w, "  %d points %s\n", n, notRun(res))
	}
	if err := writeModelTable(w, res); err != nil {
		return err
	}
	return writeShapes(w, res)
}

// predictCell shows a predicted figure and, if the measured one differs,
// the difference: "80 (−1)".
func predictCell(row run.Row, name string) string {
	p, ok := row.Predict[name]
	if !ok {
		return "-"
	}
	act, ok := run.FigureValue(row.Stats, name)
	if !ok || act == p {
		return strconv.FormatInt(p, 10)
	}
	if d := act - p; d < 0 {
		return fmt.Sprintf("%d (−%d)", p, -d)
	}
	return fmt.Sprintf("%d (+%d)", p, act-p)
}
