package report

import (
	"strconv"
	"time"

	"github.com/tcforge/tcforge/host/run"
)

// comparison puts backends side by side in the terminal table: for a
// pipeline with several layerer blocks, every row also shows its compile
// time and its depth, width, gates, edges and compile time as ratios to
// the first layerer's row of the same point.
type comparison struct {
	base string             // the first layerer: the baseline
	rows map[string]run.Row // the baseline's row of each point
}

// newComparison returns nil for a pipeline with a single layerer.
func newComparison(res *run.Result) *comparison {
	if res.Pipeline == nil || len(res.Pipeline.Layerers) < 2 {
		return nil
	}
	c := &comparison{base: res.Pipeline.Layerers[0].Name, rows: map[string]run.Row{}}
	for _, row := range res.Rows {
		if row.Layerer == c.base {
			c.rows[row.Point.String()] = row
		}
	}
	return c
}

// ratioFigures are the figures shown as ratios, in column order: the
// layered circuit's ratio figures, then the layering time.
func ratioFigures() []string {
	var out []string
	for _, f := range run.Figures() {
		if f.Ratio {
			out = append(out, f.Name)
		}
	}
	return append(out, "time")
}

// Column names and the empty cell, in the terminal table and in the CSV.
const (
	tableTime, tableRatio, tableNone = "layer ms", "/", "-"
	csvTime, csvRatio, csvNone       = "layer_ms", "_vs_", ""
)

// head returns the comparison's column headers: timeCol, then
// <figure><sep><baseline> for each ratio figure.
func (c *comparison) head(timeCol, sep string) []string {
	if c == nil {
		return nil
	}
	h := []string{timeCol}
	for _, f := range ratioFigures() {
		h = append(h, f+sep+c.base)
	}
	return h
}

// cells returns row's comparison cells: none where there is no baseline
// figure to divide by (and for the baseline's own rows).
func (c *comparison) cells(row run.Row, none string) []string {
	if c == nil {
		return nil
	}
	out := []string{strconv.FormatFloat(ms(row.LayerTime), 'f', 1, 64)}
	b, ok := c.rows[row.Point.String()]
	for _, f := range ratioFigures() {
		if !ok || row.Layerer == c.base || row.Err != nil || b.Err != nil {
			out = append(out, none)
			continue
		}
		num, den := ms(row.LayerTime), ms(b.LayerTime)
		if fig, ok := run.FigureNamed(f); ok {
			num, den = float64(fig.Value(row.Stats)), float64(fig.Value(b.Stats))
		}
		if den == 0 {
			out = append(out, none)
			continue
		}
		out = append(out, strconv.FormatFloat(num/den, 'f', 2, 64))
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// measuredFigure is row's figure name, for a row that has no expectation of it
// (another layerer's is checked): "-" if the figure is unknown or the row
// failed.
func measuredFigure(row run.Row, name string) string {
	if row.Err != nil {
		return "-"
	}
	if f, ok := run.FigureNamed(name); ok {
		return f.Cell(row.Stats)
	}
	return "-"
}
