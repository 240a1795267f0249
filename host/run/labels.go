package run

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// InspectedModel is one mapper's model of an inspected layered circuit,
// verified like Run's: Err is its verification's error (nil: verified),
// whose *point.ModelError names the block where the model departs from
// its labels.
type InspectedModel struct {
	Layerer string
	Mapper  string
	Model   *model.Model
	Circuit *layered.Circuit
	Err     error
}

// InspectModels maps every layered circuit of ins with each mapper of the
// pipeline, validates each model and verifies it on the point's random
// inputs (Runner.Samples, else the pipeline's) against the layered
// circuit, as Run does, and returns the models (labels included): a model
// that fails the check is returned with its error, so that its labels can
// be read beside where it departs from them.
func (r *Runner) InspectModels(ctx context.Context, ins *Inspection) ([]InspectedModel, error) {
	p, pt := ins.Pipeline, ins.Point
	if len(p.Mappers) == 0 {
		return nil, fmt.Errorf("pipeline %q has no mapper", p.Name)
	}
	pl, diags := r.open(ctx, p)
	if diags.HasErrors() {
		r.report(diags)
		return nil, fmt.Errorf("pipeline %q: %w", p.Name, diags)
	}
	k := -1
	for i, q := range p.Points() {
		if q.String() == pt.String() {
			k = i
		}
	}
	if k < 0 {
		return nil, fmt.Errorf("pipeline %q has no point %s", p.Name, pt)
	}
	n := p.Samples
	if r.Samples > 0 {
		n = r.Samples
	}
	var out []InspectedModel
	for _, ly := range ins.Layered {
		l := ly.Circuit
		in := point.Samples(r.pointSeed(p, pt), n, l.NumInputs)
		want, err := bitvec.EvalSliced(in, l.NumInputs, l.Eval)
		if err != nil {
			return nil, fmt.Errorf("evaluating the layered circuit [%s]: %w", ly.Layerer, err)
		}
		for i, b := range p.Mappers {
			m, err := pl.mappers[i].Map(ctx, pl.passes[k].mappers[i], l)
			if err != nil {
				return nil, r.paramErr(b, pt, err)
			}
			if m == nil {
				return nil, fmt.Errorf("%s returned no model", mapperName(b, ""))
			}
			if err := m.Validate(); err != nil {
				return nil, fmt.Errorf("%s returned an invalid model: %w", mapperName(b, m.Arch), err)
			}
			_, err = point.CheckModel(ctx, m, l, in, want, point.ModelOptions{})
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if err != nil {
				err = fmt.Errorf("%s [%s]: %w", mapperName(b, m.Arch), ly.Layerer, err)
			}
			out = append(out, InspectedModel{Layerer: ly.Layerer, Mapper: b.Name, Model: m, Circuit: l, Err: err})
		}
	}
	return out, nil
}
