package run

import (
	"strconv"

	"github.com/tcforge/tcforge/sdk/layered"
)

// Figure is one named figure of a layered circuit. Figures is the one
// table of them: expect and predict blocks, the table, CSV, JSON and
// Markdown reports, the comparisons and the plots all read it.
type Figure struct {
	Name  string // as in expect blocks, CSV columns and JSON keys
	Label string // the plots' axis label
	// Shown figures have a column in every pipeline's table and CSV;
	// the others only where an expect block names them.
	Shown bool
	// Ratio figures are compared between layerers (depth_vs_reifier …).
	Ratio bool
	Value func(layered.Stats) int
}

// Figures returns the figures of a layered circuit, in report order.
func Figures() []Figure {
	return []Figure{
		{"depth", "depth (gate levels)", true, true, func(s layered.Stats) int { return s.Depth }},
		{"width", "width (gates in the widest level)", true, true, func(s layered.Stats) int { return s.Width }},
		{"gates", "gates (copies included)", true, true, func(s layered.Stats) int { return s.Gates }},
		{"copies", "copies", true, false, func(s layered.Stats) int { return s.Copies }},
		{"edges", "edges", true, true, func(s layered.Stats) int { return s.Edges }},
		{"forms", "forms (most linear forms on one level)", true, false, func(s layered.Stats) int { return s.Forms }},
		{"nonzeros", "nonzeros (gate←form and form←gate entries)", true, false, func(s layered.Stats) int { return s.Nonzeros }},
		{"max_fanin", "max fan-in", false, false, func(s layered.Stats) int { return s.MaxFanIn }},
		{"max_weight", "max |weight|", false, false, func(s layered.Stats) int { return s.MaxWeight }},
	}
}

// FigureNamed returns the figure called name.
func FigureNamed(name string) (Figure, bool) {
	for _, f := range Figures() {
		if f.Name == name {
			return f, true
		}
	}
	return Figure{}, false
}

// FigureValue returns the named figure of a layered circuit's stats.
func FigureValue(s layered.Stats, name string) (int64, bool) {
	f, ok := FigureNamed(name)
	if !ok {
		return 0, false
	}
	return int64(f.Value(s)), true
}

// Cell formats the figure of s for a table or CSV cell.
func (f Figure) Cell(s layered.Stats) string { return strconv.Itoa(f.Value(s)) }
