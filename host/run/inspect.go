package run

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Inspection is one pipeline point built and layered: the logic circuit
// and the layered circuit of each layerer asked for. Every circuit in it
// was validated and verified, like the circuits behind a Row.
type Inspection struct {
	Pipeline *config.Pipeline
	Point    config.Point
	Logic    *circuit.Circuit
	Layered  []Layered
}

// Layered is one layerer's circuit at an inspected point.
type Layered struct {
	Layerer string
	Circuit *layered.Circuit
}

// Inspect builds the construction's logic circuit at pt, verifies it
// against the construction's reference, and layers it with each named
// layerer (every layerer of the pipeline when names is empty), validating
// each layered circuit and verifying it against the logic circuit. Unlike
// Run it keeps the circuits, for per-level tables and drawings.
func (r *Runner) Inspect(ctx context.Context, p *config.Pipeline, pt config.Point, names ...string) (*Inspection, error) {
	idx, err := layererIndexes(p, names)
	if err != nil {
		return nil, err
	}
	pl, diags := r.open(ctx, p)
	if diags.HasErrors() {
		r.report(diags)
		return nil, fmt.Errorf("pipeline %q: %w", p.Name, diags)
	}
	nSamples := p.Samples
	if r.Samples > 0 {
		nSamples = r.Samples
	}
	k := slices.IndexFunc(p.Points(), func(q config.Point) bool { return q.String() == pt.String() })
	if k < 0 {
		return nil, fmt.Errorf("pipeline %q has no point %s", p.Name, pt)
	}
	passes := pl.passes[k]
	lg, err := point.Build(ctx, pl.construction, passes.construction, r.pointSeed(p, pt), nSamples, false)
	if err != nil {
		return nil, r.paramErr(p.Construction, pt, err)
	}
	out := &Inspection{Pipeline: p, Point: pt, Logic: lg.Circuit}
	for _, i := range idx {
		b := p.Layerers[i]
		ly, err := point.Layer(ctx, pl.layerers[i], passes.layerers[i], lg, false)
		if err != nil {
			return nil, r.paramErr(b, pt, err)
		}
		out.Layered = append(out.Layered, Layered{Layerer: b.Name, Circuit: ly.Circuit})
	}
	return out, nil
}

// layererIndexes returns the positions in p.Layerers of the named
// layerers, or of all of them when names is empty.
func layererIndexes(p *config.Pipeline, names []string) ([]int, error) {
	if len(names) == 0 {
		idx := make([]int, len(p.Layerers))
		for i := range idx {
			idx[i] = i
		}
		return idx, nil
	}
	var idx []int
	for _, n := range names {
		found := false
		for i, b := range p.Layerers {
			if b.Name == n {
				idx = append(idx, i)
				found = true
				break
			}
		}
		if !found {
			have := make([]string, len(p.Layerers))
			for i, b := range p.Layerers {
				have[i] = b.Name
			}
			return nil, fmt.Errorf("pipeline %q has no layerer %q (it has %s)", p.Name, n, strings.Join(have, ", "))
		}
	}
	return idx, nil
}

// ErrNoPoint is returned (wrapped) by SelectPoint when no point, or more
// than one, matches.
var ErrNoPoint = errors.New("no single matching point")

// SelectPoint returns the one point of p whose variables have the given
// values (compared as written in a config: 1, 2.5, "sha3", true). Variables
// not named may take any value, so an empty want selects the point of a
// pipeline with a single point.
func SelectPoint(p *config.Pipeline, want map[string]string) (config.Point, error) {
	vars := p.Vars()
	for k := range want {
		if !containsName(vars, k) {
			return config.Point{}, fmt.Errorf("pipeline %q has no matrix variable %q (it has %s): %w", p.Name, k, namesOrNone(vars), ErrNoPoint)
		}
	}
	var match []config.Point
	for _, pt := range p.Points() {
		ok := true
		for k, v := range want {
			if got, set := pt.Values[k]; !set || formatPlain(got) != strings.Trim(v, `"`) {
				ok = false
				break
			}
		}
		if ok {
			match = append(match, pt)
		}
	}
	switch len(match) {
	case 1:
		return match[0], nil
	case 0:
		return config.Point{}, fmt.Errorf("pipeline %q has no point %s: %w", p.Name, formatWant(want), ErrNoPoint)
	}
	var pts []string
	for i, pt := range match {
		if i == 8 {
			pts = append(pts, "…")
			break
		}
		pts = append(pts, pt.String())
	}
	return config.Point{}, fmt.Errorf("%d points of pipeline %q match %s; choose one with more variables: %s: %w",
		len(match), p.Name, formatWant(want), strings.Join(pts, "; "), ErrNoPoint)
}

func formatWant(want map[string]string) string {
	if len(want) == 0 {
		return "(no variables given)"
	}
	keys := slices.Sorted(maps.Keys(want))
	for i, k := range keys {
		keys[i] = k + "=" + want[k]
	}
	return strings.Join(keys, ",")
}

// formatPlain formats a matrix value without quotes: 1, 2.5, sha3, true.
func formatPlain(v cty.Value) string {
	if v == cty.NilVal || v.IsNull() || !v.IsKnown() {
		return ""
	}
	switch v.Type() {
	case cty.Number:
		bf := v.AsBigFloat()
		if bf.IsInt() {
			return bf.Text('f', 0)
		}
		return bf.Text('g', -1)
	case cty.String:
		return v.AsString()
	case cty.Bool:
		if v.True() {
			return "true"
		}
		return "false"
	}
	return v.GoString()
}

func containsName(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func namesOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
