package report

import (
	"bytes"
	"cmp"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/zclconf/go-cty/cty"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/tcforge/tcforge/host/run"
)

func init() {
	// Liberation Sans is metric-compatible with Arial, which browsers have
	// (see svgFontFallback), so labels measured here fit where they are shown.
	plot.DefaultFont = font.Font{Typeface: "Liberation", Variant: "Sans"}
}

// Chart is one plot of a pipeline: a figure of the layered circuits
// (depth, width, …) against one swept matrix variable, actual values and
// expected ones, one series per layerer and combination of the other
// swept variables.
type Chart struct {
	Pipeline string
	Figure   string // "depth", "width" or another expected figure
	Var      string // the matrix variable on the x axis
	Series   []Series
	// Predicted: the dashed values come from predict blocks (misses are
	// deviations from an approximate law), not expect blocks.
	Predicted bool
	// Frontier marks a frontier chart (frontier.go): depth against the
	// size figures of several backends, one series per size figure.
	Frontier bool
}

// Name is the chart's file name without extension:
// "<pipeline>.<figure>-vs-<var>".
func (c Chart) Name() string {
	if c.Frontier {
		return c.Pipeline + ".frontier"
	}
	return c.Pipeline + "." + c.Figure + "-vs-" + c.Var
}

// Title is the chart's title: "keccak-arbitrary-input: depth vs blocks".
func (c Chart) Title() string {
	if c.Frontier {
		return c.Pipeline + ": depth vs " + strings.Join(frontierFigures, ", ")
	}
	return c.Pipeline + ": " + c.Figure + " vs " + c.Var
}

// Mismatches counts the points whose actual value differs from the expected one.
func (c Chart) Mismatches() int {
	n := 0
	for _, s := range c.Series {
		for _, p := range s.Points {
			if p.Mismatch() {
				n++
			}
		}
	}
	return n
}

// Series is one line of a chart.
type Series struct {
	Layerer string
	// Fixed are the other swept variables' values along the line, as
	// "log_w=1 rounds=2" ("" when no other variable is swept).
	Fixed  string
	Points []ChartPoint // by increasing X
}

// Label is the series' legend text: "reifier, log_w=1 rounds=2".
func (s Series) Label() string {
	if s.Fixed == "" {
		return s.Layerer
	}
	return s.Layerer + ", " + s.Fixed
}

// ChartPoint is one (x, actual, expected) point of a series.
type ChartPoint struct {
	X           float64
	Actual      int64
	Expected    int64
	HasExpected bool
	Label       string // frontier charts: the point's backend
}

// Mismatch reports whether the point has an expectation it does not meet.
func (p ChartPoint) Mismatch() bool { return p.HasExpected && p.Actual != p.Expected }

// figureValue is a layered-circuit figure of a row by name.
func figureValue(row run.Row, name string) (int64, bool) { return run.FigureValue(row.Stats, name) }

// numeric returns v as a float64 if it is a number.
func numeric(v cty.Value) (float64, bool) {
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() || v.Type() != cty.Number {
		return 0, false
	}
	f, _ := v.AsBigFloat().Float64()
	return f, true
}

// sweptVars returns the matrix variables that take at least two distinct
// values over the rows, split into numeric ones (possible x axes) and all.
func sweptVars(res *run.Result) (numericVars, all []string) {
	for _, v := range res.Vars {
		distinct := map[string]bool{}
		isNum := true
		for _, row := range res.Rows {
			val, ok := row.Point.Values[v]
			if !ok {
				continue
			}
			distinct[Value(val)] = true
			if _, ok := numeric(val); !ok {
				isNum = false
			}
		}
		if len(distinct) < 2 {
			continue
		}
		all = append(all, v)
		if isNum {
			numericVars = append(numericVars, v)
		}
	}
	return numericVars, all
}

// measured reports whether a row has figures: it was layered.
func measured(row run.Row) bool { return row.Stats.Depth > 0 || row.Verified }

// plotted reports whether a row is drawn in the plots: it was layered and
// has no error. A failed row is not data: it is named under the plots
// instead (NotPlotted).
func plotted(row run.Row) bool { return measured(row) && row.Err == nil }

// NotPlotted names the rows of a result left out of its plots because
// they failed: "rounds=2, reifier".
func NotPlotted(res *run.Result) []string {
	var out []string
	for _, row := range res.Rows {
		if !plotted(row) {
			where := row.Layerer
			if pt := row.Point.String(); pt != "" {
				where = pt + ", " + where
			}
			out = append(out, where)
		}
	}
	return out
}

// Charts returns the pipeline's charts: for each figure among depth, width
// and the other expected figures, one chart per swept numeric matrix
// variable. A pipeline without a swept numeric variable has one frontier
// chart if it builds several distinct layered circuits (frontier.go), else
// none.
func Charts(res *run.Result) []Chart {
	xs, swept := sweptVars(res)
	if len(xs) == 0 {
		if ch, ok := frontierChart(res); ok {
			return []Chart{ch}
		}
		return nil
	}
	figures := []string{"depth", "width"}
	for _, n := range append(append([]string(nil), res.ExpectNames...), res.PredictNames...) {
		if !slices.Contains(figures, n) {
			figures = append(figures, n)
		}
	}
	var out []Chart
	for _, fig := range figures {
		for _, x := range xs {
			// A chart without a plotted point would be empty axes.
			if ch := chart(res, fig, x, swept); len(ch.Series) > 0 {
				out = append(out, ch)
			}
		}
	}
	return out
}

func chart(res *run.Result, fig, x string, swept []string) Chart {
	ch := Chart{Pipeline: res.Pipeline.Name, Figure: fig, Var: x}
	index := map[string]int{}
	for _, row := range res.Rows {
		if !plotted(row) {
			continue
		}
		xv, ok := numeric(row.Point.Values[x])
		if !ok {
			continue
		}
		act, ok := figureValue(row, fig)
		if !ok {
			continue
		}
		var fixed []string
		for _, v := range swept {
			if v == x {
				continue
			}
			if val, ok := row.Point.Values[v]; ok {
				fixed = append(fixed, v+"="+Value(val))
			}
		}
		key := row.Layerer + "\x00" + strings.Join(fixed, " ")
		i, ok := index[key]
		if !ok {
			i = len(ch.Series)
			index[key] = i
			ch.Series = append(ch.Series, Series{Layerer: row.Layerer, Fixed: strings.Join(fixed, " ")})
		}
		pt := ChartPoint{X: xv, Actual: act}
		// A prediction, where there is one, is what the plot compares
		// with: its misses are the interesting deviations (an exact
		// expectation of the same figure is checked in the tables).
		if p, ok := row.Predict[fig]; ok {
			pt.Expected, pt.HasExpected = p, true
			ch.Predicted = true
		} else if e, ok := row.Expect[fig]; ok {
			pt.Expected, pt.HasExpected = e, true
		}
		ch.Series[i].Points = append(ch.Series[i].Points, pt)
	}
	for i := range ch.Series {
		pts := ch.Series[i].Points
		slices.SortStableFunc(pts, func(a, b ChartPoint) int { return cmp.Compare(a.X, b.X) })
	}
	ch.Series = mergeSeries(ch.Series)
	return ch
}

// mergeSeries merges series of one layerer whose points are all equal
// (lines that would hide each other), listing the values they differ in:
// "log_w=1,2 rounds=1".
func mergeSeries(in []Series) []Series {
	var out []Series
	var members [][]Series
	for _, s := range in {
		merged := false
		for i, o := range out {
			if o.Layerer == s.Layerer && equalPoints(o.Points, s.Points) {
				members[i] = append(members[i], s)
				merged = true
				break
			}
		}
		if !merged {
			out = append(out, s)
			members = append(members, []Series{s})
		}
	}
	for i, ms := range members {
		if len(ms) == 1 {
			continue
		}
		var names []string
		vals := map[string][]string{}
		for _, m := range ms {
			for _, kv := range strings.Fields(m.Fixed) {
				k, v, _ := strings.Cut(kv, "=")
				if _, ok := vals[k]; !ok {
					names = append(names, k)
				}
				if !slices.Contains(vals[k], v) {
					vals[k] = append(vals[k], v)
				}
			}
		}
		var fixed []string
		for _, k := range names {
			fixed = append(fixed, k+"="+strings.Join(vals[k], ","))
		}
		out[i].Fixed = strings.Join(fixed, " ")
	}
	return out
}

func equalPoints(a, b []ChartPoint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// seriesColors are Okabe–Ito's colour-blind-safe colours, then a few more.
var seriesColors = []color.RGBA{
	{0x00, 0x72, 0xB2, 0xff}, {0xE6, 0x9F, 0x00, 0xff}, {0x00, 0x9E, 0x73, 0xff}, {0xCC, 0x79, 0xA7, 0xff},
	{0x56, 0xB4, 0xE9, 0xff}, {0x88, 0x22, 0x55, 0xff}, {0x11, 0x77, 0x33, 0xff}, {0x33, 0x22, 0x88, 0xff},
	{0x99, 0x99, 0x33, 0xff}, {0x44, 0xAA, 0x99, 0xff}, {0x66, 0x66, 0x66, 0xff}, {0xAA, 0x44, 0x99, 0xff},
}

var mismatchColor = color.RGBA{0xD5, 0x00, 0x00, 0xff}

// figureLabel is the y-axis label of a figure.
func figureLabel(fig string) string {
	if f, ok := run.FigureNamed(fig); ok {
		return f.Label
	}
	return fig
}

// Plot renders the chart with gonum/plot: actual values as solid lines
// with filled dots, expected values as dashed lines with hollow dots, one
// colour per series, and a red ring around every point whose actual value
// differs from the expected one.
func (c Chart) Plot() (*plot.Plot, error) {
	if c.Frontier {
		return c.frontierPlot()
	}
	p := plot.New()
	p.Title.Text = c.Title()
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = c.Var
	p.Y.Label.Text = figureLabel(c.Figure)
	p.X.Label.TextStyle.Font.Size = vg.Points(12)
	p.Y.Label.TextStyle.Font.Size = vg.Points(12)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), vg.Points(-6)
	p.Legend.ThumbnailWidth = vg.Points(22)
	p.Legend.Padding = vg.Points(2.5)
	p.Title.Padding = vg.Points(8)
	p.Add(plotter.NewGrid())

	var xsAll []float64
	var mismatches plotter.XYs
	anyExpected := false
	for i, s := range c.Series {
		col := seriesColors[i%len(seriesColors)]
		var act, exp plotter.XYs
		for _, pt := range s.Points {
			xsAll = append(xsAll, pt.X)
			act = append(act, plotter.XY{X: pt.X, Y: float64(pt.Actual)})
			if pt.HasExpected {
				exp = append(exp, plotter.XY{X: pt.X, Y: float64(pt.Expected)})
			}
			if pt.Mismatch() {
				mismatches = append(mismatches, plotter.XY{X: pt.X, Y: float64(pt.Actual)})
			}
		}
		if len(exp) > 0 {
			anyExpected = true
			l, sc, err := plotter.NewLinePoints(exp)
			if err != nil {
				return nil, fmt.Errorf("plotting %s expected: %w", s.Label(), err)
			}
			l.Color, l.Width, l.Dashes = col, vg.Points(1.2), []vg.Length{vg.Points(5), vg.Points(3)}
			sc.Shape, sc.Color, sc.Radius = draw.RingGlyph{}, col, vg.Points(4.5)
			p.Add(l, sc)
		}
		l, sc, err := plotter.NewLinePoints(act)
		if err != nil {
			return nil, fmt.Errorf("plotting %s actual: %w", s.Label(), err)
		}
		l.Color, l.Width = col, vg.Points(1.8)
		sc.Shape, sc.Color, sc.Radius = draw.CircleGlyph{}, col, vg.Points(2.6)
		p.Add(l, sc)
		p.Legend.Add(s.Label(), l, sc)
	}
	if anyExpected {
		solid, _ := plotter.NewLine(plotter.XYs{{}})
		solid.Color, solid.Width = color.Black, vg.Points(1.8)
		dot, _ := plotter.NewScatter(plotter.XYs{{}})
		dot.Shape, dot.Color, dot.Radius = draw.CircleGlyph{}, color.Black, vg.Points(2.6)
		p.Legend.Add("actual", solid, dot)
		dashed, _ := plotter.NewLine(plotter.XYs{{}})
		dashed.Color, dashed.Width, dashed.Dashes = color.Black, vg.Points(1.2), []vg.Length{vg.Points(5), vg.Points(3)}
		ring, _ := plotter.NewScatter(plotter.XYs{{}})
		ring.Shape, ring.Color, ring.Radius = draw.RingGlyph{}, color.Black, vg.Points(4.5)
		label := "expected"
		if c.Predicted {
			label = "predicted"
		}
		p.Legend.Add(label, dashed, ring)
	}
	if len(mismatches) > 0 {
		sc, err := plotter.NewScatter(mismatches)
		if err != nil {
			return nil, fmt.Errorf("plotting mismatches: %w", err)
		}
		sc.Shape, sc.Color, sc.Radius = thickRing{}, mismatchColor, vg.Points(8)
		p.Add(sc)
		what := "expected"
		if c.Predicted {
			what = "predicted"
		}
		p.Legend.Add(fmt.Sprintf("actual ≠ %s (%d)", what, len(mismatches)), sc)
	}
	p.X.Tick.Marker = dataTicks(xsAll)
	p.Y.Tick.Marker = integerTicks{}
	// Room above the highest line for the legend (top left): the data
	// keeps the part of the height the legend's entries leave free.
	entries := len(c.Series)
	if anyExpected {
		entries += 2
	}
	if len(mismatches) > 0 {
		entries++
	}
	free := 1 - math.Min(0.7, float64(entries)*14/(chartHeight.Points()-70)) - 0.04
	if p.Y.Max <= p.Y.Min {
		p.Y.Min, p.Y.Max = p.Y.Min-1, p.Y.Max+1
	}
	p.Y.Min -= (p.Y.Max - p.Y.Min) * 0.04
	p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)/free
	if p.X.Max > p.X.Min {
		pad := (p.X.Max - p.X.Min) * 0.04
		p.X.Min, p.X.Max = p.X.Min-pad, p.X.Max+pad
	} else {
		p.X.Min, p.X.Max = p.X.Min-1, p.X.Max+1
	}
	return p, nil
}

// thickRing is a ring glyph drawn with a heavier stroke, for mismatches.
type thickRing struct{}

// DrawGlyph implements draw.GlyphDrawer.
func (thickRing) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	c.SetLineStyle(draw.LineStyle{Color: sty.Color, Width: vg.Points(1.8)})
	var p vg.Path
	p.Move(vg.Point{X: pt.X + sty.Radius, Y: pt.Y})
	p.Arc(pt, sty.Radius, 0, 2*math.Pi)
	p.Close()
	c.Stroke(p)
}

// dataTicks marks each distinct x value of the data when there are few
// (matrix values: 1, 2, 4), and uses the default ticks otherwise.
func dataTicks(xs []float64) plot.Ticker {
	distinct := map[float64]bool{}
	for _, x := range xs {
		distinct[x] = true
	}
	if len(distinct) == 0 || len(distinct) > 12 {
		return integerTicks{}
	}
	var ts plot.ConstantTicks
	for x := range distinct {
		ts = append(ts, plot.Tick{Value: x, Label: strconv.FormatFloat(x, 'g', -1, 64)})
	}
	slices.SortFunc(ts, func(a, b plot.Tick) int { return cmp.Compare(a.Value, b.Value) })
	return ts
}

// integerTicks marks whole numbers only, at steps of 1, 2 or 5 × 10^k
// chosen for about six labelled ticks, with unlabelled ticks halfway:
// figures and matrix variables are whole numbers.
type integerTicks struct{}

// Ticks implements plot.Ticker.
func (integerTicks) Ticks(min, max float64) []plot.Tick {
	if !(max > min) || math.IsInf(max-min, 0) {
		return nil
	}
	step := 1.0
	for k := 0; (max-min)/step > 7; k++ {
		step = []float64{2, 5, 10}[k%3] * math.Pow(10, float64(k/3))
	}
	var out []plot.Tick
	for v := math.Ceil(min/step) * step; v <= max; v += step {
		out = append(out, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', -1, 64)})
		if half := v + step/2; step >= 2 && half <= max && half == math.Trunc(half) {
			out = append(out, plot.Tick{Value: half})
		}
	}
	return out
}

// Chart sizes.
const (
	chartWidth  = 17 * vg.Centimeter
	chartHeight = 11 * vg.Centimeter
)

// SVG renders the chart as an SVG document.
func (c Chart) SVG() ([]byte, error) {
	return c.render("svg")
}

// PNG renders the chart as a PNG image.
func (c Chart) PNG() ([]byte, error) {
	return c.render("png")
}

func (c Chart) render(format string) ([]byte, error) {
	p, err := c.Plot()
	if err != nil {
		return nil, err
	}
	var wt io.WriterTo
	if format == "png" {
		// 150 dpi: labels stay sharp when the image is scaled down.
		cv := vgimg.NewWith(vgimg.UseWH(chartWidth, chartHeight), vgimg.UseDPI(150))
		p.Draw(draw.New(cv))
		wt = vgimg.PngCanvas{Canvas: cv}
	} else {
		wt, err = p.WriterTo(chartWidth, chartHeight, format)
		if err != nil {
			return nil, fmt.Errorf("rendering %s as %s: %w", c.Name(), format, err)
		}
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("rendering %s as %s: %w", c.Name(), format, err)
	}
	if format == "svg" {
		return svgFontFallback(buf.Bytes()), nil
	}
	return buf.Bytes(), nil
}

// svgFontFallback gives gonum/plot's font-family a fallback chain, so the
// SVG shows in a sans-serif font where Liberation Sans is not installed.
func svgFontFallback(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("font-family:Liberation Sans;"), []byte("font-family:'Liberation Sans',Arimo,Arial,Helvetica,sans-serif;"))
}

// WritePlots writes every chart of the result as DIR/plots/<name>.svg and,
// if png is set, .png too. It returns the charts and the files written
// (relative to dir), in order.
func WritePlots(dir string, res *run.Result, png bool) ([]Chart, []string, error) {
	charts := Charts(res)
	if len(charts) == 0 {
		return nil, nil, nil
	}
	if err := os.MkdirAll(filepath.Join(dir, "plots"), 0o755); err != nil {
		return nil, nil, fmt.Errorf("creating plot directory: %w", err)
	}
	var files []string
	for _, ch := range charts {
		formats := []string{"svg"}
		if png {
			formats = append(formats, "png")
		}
		for _, f := range formats {
			b, err := ch.render(f)
			if err != nil {
				return nil, nil, err
			}
			rel := filepath.Join("plots", ch.Name()+"."+f)
			if err := WriteFileAtomic(dir, rel, b); err != nil {
				return nil, nil, fmt.Errorf("writing plot: %w", err)
			}
			files = append(files, rel)
		}
	}
	return charts, files, nil
}
