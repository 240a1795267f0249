package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/tcforge/tcforge/host/run"
)

// frontierFigures are the size figures a frontier chart sets depth against.
var frontierFigures = []string{"width", "gates", "nonzeros"}

// frontierChart is the chart of a pipeline that sweeps no numeric matrix
// variable but builds several distinct layered circuits (backends and
// their options over one construction): depth against width, gates and
// nonzeros, one series per size figure, every point labelled with its
// backend (see backendLabel). Rows with the same label (a layerer whose
// options do not change between points) are drawn once. It returns false
// if there are fewer than two backends to compare.
func frontierChart(res *run.Result) (Chart, bool) {
	ch := Chart{Pipeline: res.Pipeline.Name, Figure: "depth", Var: "size", Frontier: true}
	var labels []string
	var rows []run.Row
	for _, row := range res.Rows {
		if !measured(row) {
			continue
		}
		l := backendLabel(res, row)
		if slices.Contains(labels, l) {
			continue
		}
		labels = append(labels, l)
		rows = append(rows, row)
	}
	if len(labels) < 2 {
		return ch, false
	}
	for _, fig := range frontierFigures {
		s := Series{Layerer: fig}
		for i, row := range rows {
			v, ok := figureValue(row, fig)
			if !ok || v <= 0 {
				continue
			}
			s.Points = append(s.Points, ChartPoint{X: float64(v), Actual: int64(row.Stats.Depth), Label: labels[i]})
		}
		ch.Series = append(ch.Series, s)
	}
	return ch, true
}

// backendLabel names the layered circuit of a row: its layerer and the
// values of the matrix variables its block's attributes read, as
// "fusion objective=depth".
func backendLabel(res *run.Result, row run.Row) string {
	var parts []string
	for _, b := range res.Pipeline.Layerers {
		if b.Name != row.Layerer {
			continue
		}
		names := make([]string, 0, len(b.Attrs))
		for n := range b.Attrs {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			for _, tr := range b.Attrs[n].Expr.Variables() {
				if tr.RootName() != "matrix" || len(tr) < 2 {
					continue
				}
				if a, ok := tr[1].(hcl.TraverseAttr); ok {
					if v, ok := row.Point.Values[a.Name]; ok {
						parts = append(parts, n+"="+Value(v))
					}
				}
			}
		}
	}
	return strings.TrimSpace(row.Layerer + " " + strings.Join(parts, " "))
}

// frontierPlot renders a frontier chart: depth (y) against each size
// figure (x, logarithmic), the points of one figure joined in order of
// depth. A backend's points share its depth, so its label is written once,
// beside its leftmost point.
func (c Chart) frontierPlot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = c.Title()
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.Title.Padding = vg.Points(8)
	p.X.Label.Text = strings.Join(frontierFigures, ", ") + " (log scale)"
	p.Y.Label.Text = figureLabel("depth")
	p.X.Label.TextStyle.Font.Size = vg.Points(12)
	p.Y.Label.TextStyle.Font.Size = vg.Points(12)
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, decadeTicks{}
	p.Y.Tick.Marker = integerTicks{}
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-8), vg.Points(8)
	p.Legend.TextStyle.Font.Size = vg.Points(10)
	p.Add(plotter.NewGrid())
	lo, hi := math.Inf(1), math.Inf(-1)
	ymax := 0.0
	var labelled plotter.XYLabels // the first series' points and labels, by depth
	for i, s := range c.Series {
		if len(s.Points) == 0 {
			continue
		}
		col := seriesColors[i%len(seriesColors)]
		pts := slices.Clone(s.Points)
		slices.SortStableFunc(pts, func(a, b ChartPoint) int { return int(a.Actual - b.Actual) })
		xys := make(plotter.XYs, len(pts))
		lab := plotter.XYLabels{XYs: make(plotter.XYs, len(pts)), Labels: make([]string, len(pts))}
		for k, pt := range pts {
			xys[k] = plotter.XY{X: pt.X, Y: float64(pt.Actual)}
			lab.XYs[k] = xys[k]
			lab.Labels[k] = pt.Label
			lo, hi = math.Min(lo, pt.X), math.Max(hi, pt.X)
			ymax = math.Max(ymax, float64(pt.Actual))
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("plotting %s: %w", s.Layerer, err)
		}
		l.Color, l.Width, l.Dashes = col, vg.Points(1), []vg.Length{vg.Points(3), vg.Points(3)}
		sc.Shape, sc.Color, sc.Radius = draw.CircleGlyph{}, col, vg.Points(3)
		p.Add(l, sc)
		p.Legend.Add(s.Layerer, l, sc)
		if i == 0 {
			labelled = lab
		}
	}
	// A label goes above its point, or below it when the next deeper
	// point's label would be on the same line (depths closer than a
	// thirtieth of the axis: 25 and 26 of 171).
	span := ymax*1.15 + 1
	below := labelBelow(labelled.XYs, span/30)
	for _, side := range []bool{false, true} {
		var lab plotter.XYLabels
		for k, xy := range labelled.XYs {
			if below[k] == side {
				lab.XYs = append(lab.XYs, xy)
				lab.Labels = append(lab.Labels, labelled.Labels[k])
			}
		}
		if len(lab.XYs) == 0 {
			continue
		}
		labels, err := plotter.NewLabels(lab)
		if err != nil {
			return nil, fmt.Errorf("labelling: %w", err)
		}
		for k := range labels.TextStyle {
			labels.TextStyle[k].Font.Typeface, labels.TextStyle[k].Font.Variant = plot.DefaultFont.Typeface, plot.DefaultFont.Variant
			labels.TextStyle[k].Font.Size = vg.Points(9)
		}
		labels.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(3)}
		if side {
			labels.Offset.Y = vg.Points(-12)
		}
		p.Add(labels)
	}
	if hi > 0 {
		p.X.Min, p.X.Max = lo/1.5, hi*1.5
	}
	p.Y.Min, p.Y.Max = 0, ymax*1.15+1
	return p, nil
}

// labelBelow returns, for points sorted by depth (Y), which labels go
// below their point: those whose next point is less than gap deeper, so
// that the two labels are not written over each other.
func labelBelow(xys plotter.XYs, gap float64) []bool {
	below := make([]bool, len(xys))
	for k := 0; k+1 < len(xys); k++ {
		below[k] = xys[k+1].Y-xys[k].Y < gap
	}
	return below
}

// decadeTicks marks the powers of ten of a logarithmic axis, labelled
// 10k, 100k, 1M …, with unlabelled ticks at 2…9 times each.
type decadeTicks struct{}

// Ticks implements plot.Ticker.
func (decadeTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for d := math.Pow(10, math.Floor(math.Log10(min))); d <= max; d *= 10 {
		for k := 1.0; k < 10; k++ {
			if v := k * d; v >= min && v <= max {
				t := plot.Tick{Value: v}
				if k == 1 {
					t.Label = siLabel(v)
				}
				out = append(out, t)
			}
		}
	}
	return out
}

// siLabel writes a power of ten as 1, 10, 100, 1k … 100M.
func siLabel(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%gG", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%gk", v/1e3)
	}
	return fmt.Sprintf("%g", v)
}
