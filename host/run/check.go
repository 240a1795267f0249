package run

// The check: opening a pipeline's plugins and preparing every point
// before anything runs (Check, and Run's first phase).

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/sdk"
)

// plugins are one pipeline's opened plugins.
type plugins struct {
	construction *sdk.Construction
	layerers     []*sdk.Layerer
	mappers      []*sdk.Mapper
	// checked says, by plugin name, whether the artifacts a plugin
	// returns were validated on decoding (it runs in its own process), so
	// that the host does not validate them a second time.
	checked map[string]bool
	// broken says why a plugin that exists could not be started (it
	// crashed, speaks another protocol, is not pinned…): the pipeline's
	// rows fail with it, and the other pipelines still run.
	broken error
	// passes are the prepared calls of every point (by point index): each
	// block was decoded and its plugin's Prepare ran before any point.
	passes []pointPasses
	// infos are the plugins' provenance, for the result.
	infos []PluginInfo
}

// pointPasses are one point's prepared calls, one a block.
type pointPasses struct {
	construction *sdk.Pass
	layerers     []*sdk.Pass
	mappers      []*sdk.Pass
	// edges is the construction's estimate of its logic circuit's edges
	// at the point, −1 if it was not estimated (see checkSize).
	edges int64
}

// Check opens every plugin a pipeline names, decodes every block at every
// point against the plugins' schemas and runs each plugin's Prepare on it,
// so that config mistakes and impossible values are reported, located,
// before anything runs.
func (r *Runner) Check(ctx context.Context, p *config.Pipeline) hcl.Diagnostics {
	pl, diags := r.open(ctx, p)
	if pl != nil && !diags.HasErrors() && r.Export != "" {
		diags = append(diags, sameMappers(p, pl)...)
	}
	if pl != nil && !diags.HasErrors() {
		r.checkedMu.Lock()
		if r.checked == nil {
			r.checked = map[*config.Pipeline]*plugins{}
		}
		r.checked[p] = pl
		r.checkedMu.Unlock()
	}
	return diags
}

// opened returns what Check opened for p, if it did (once), or opens p.
func (r *Runner) opened(ctx context.Context, p *config.Pipeline) (*plugins, hcl.Diagnostics) {
	r.checkedMu.Lock()
	pl, ok := r.checked[p]
	delete(r.checked, p)
	r.checkedMu.Unlock()
	if ok {
		r.reopen(ctx, p, pl)
		return pl, nil
	}
	return r.open(ctx, p)
}

// reopen gives pl the plugin values of processes that are running now:
// a plugin whose process has exited since Check opened it (killed over
// --plugin-memory, crashed or timed out in an earlier pipeline) is started
// again by the registry, so one pipeline's dead plugin does not fail the
// pipelines after it. (Within a pipeline, the points after such a failure
// fail fast instead of starting it again at each point.) A plugin that
// cannot be started again breaks the pipeline, as at Check.
func (r *Runner) reopen(ctx context.Context, p *config.Pipeline, pl *plugins) {
	if pl.broken != nil {
		return
	}
	get := func(b *config.Block, kind sdk.Kind) sdk.Plugin {
		v, _, err := r.Registry.Open(ctx, b.Name)
		if err == nil && v.Describe().Kind != kind {
			err = fmt.Errorf("it is now a %s, not a %s", v.Describe().Kind, kind)
		}
		if err != nil {
			if pl.broken == nil {
				pl.broken = fmt.Errorf("%s plugin %q failed to start again: %w", kind, b.Name, err)
			}
			return nil
		}
		return v
	}
	if v := get(p.Construction, sdk.KindConstruction); v != nil {
		pl.construction = v.(*sdk.Construction)
	}
	for i, b := range p.Layerers {
		if v := get(b, sdk.KindLayerer); v != nil {
			pl.layerers[i] = v.(*sdk.Layerer)
		}
	}
	for i, b := range p.Mappers {
		if v := get(b, sdk.KindMapper); v != nil {
			pl.mappers[i] = v.(*sdk.Mapper)
		}
	}
}

func (r *Runner) open(ctx context.Context, p *config.Pipeline) (*plugins, hcl.Diagnostics) {
	var diags hcl.Diagnostics
	out := plugins{checked: map[string]bool{}}
	openAs := func(b *config.Block, kind sdk.Kind) sdk.Plugin {
		pl, src, err := r.Registry.Open(ctx, b.Name)
		if err == nil {
			out.checked[b.Name] = !src.InProcess
		}
		if !slices.ContainsFunc(out.infos, func(pi PluginInfo) bool { return pi.Kind == kind && pi.Name == b.Name }) {
			out.infos = append(out.infos, pluginInfo(kind, b.Name, pl, src))
		}
		var nf *registry.NotFoundError
		switch {
		case errors.As(err, &nf):
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("Cannot load %s plugin %q", kind, b.Name), Detail: err.Error(), Subject: b.LabelRange.Ptr()})
			return nil
		case err != nil:
			if out.broken == nil {
				out.broken = fmt.Errorf("%s plugin %q failed to start: %w", kind, b.Name, err)
			}
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagWarning, Summary: fmt.Sprintf("The %s plugin %q failed to start; pipeline %q will fail", kind, b.Name, p.Name), Detail: err.Error(), Subject: b.LabelRange.Ptr()})
			return nil
		}
		if d := pl.Describe(); d.Kind != kind {
			diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("Plugin %q is a %s, not a %s", b.Name, d.Kind, kind), Subject: b.LabelRange.Ptr()})
			return nil
		}
		return pl
	}
	if pl := openAs(p.Construction, sdk.KindConstruction); pl != nil {
		out.construction = pl.(*sdk.Construction)
	}
	for _, b := range p.Layerers {
		if pl := openAs(b, sdk.KindLayerer); pl != nil {
			out.layerers = append(out.layerers, pl.(*sdk.Layerer))
		}
	}
	for _, b := range p.Mappers {
		if pl := openAs(b, sdk.KindMapper); pl != nil {
			out.mappers = append(out.mappers, pl.(*sdk.Mapper))
		}
	}
	for _, e := range p.Expects {
		for _, name := range e.Names {
			if _, ok := FigureNamed(name); !ok {
				var names []string
				for _, f := range Figures() {
					names = append(names, f.Name)
				}
				a := e.Attrs[name]
				diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: fmt.Sprintf("Unknown figure %q", name),
					Detail: fmt.Sprintf("An expect block compares figures of the layered circuit: %v.", names), Subject: a.NameRange.Ptr()})
			}
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	if out.broken != nil {
		return &out, diags
	}
	// Each block's values are decoded at every point, but the plugins
	// are asked about each distinct set of values once: a sweep costs
	// plugin calls in proportion to its distinct parameter sets.
	out.passes, diags = r.prepareAll(ctx, p, &out, diags)
	return &out, diags
}

// slot is one block's values at one point, decoded (diags: the decoding's)
// and, unless the decoding failed, the prepare task of its distinct
// values.
type slot struct {
	diags hcl.Diagnostics
	task  *prepareTask
	owner bool // the first slot of task: it reports the task's diagnostics
}

// prepareTask prepares one distinct set of values of one block: the
// plugin's Prepare (sdk.NewPass) and, for a construction, its size check.
type prepareTask struct {
	b     *config.Block
	pl    sdk.Plugin
	pt    config.Point // the first point with these values
	vals  map[string]any
	size  bool // a construction: check its size once prepared
	pass  *sdk.Pass
	edges int64 // the size check's estimate of the edges, −1 if none
	diags hcl.Diagnostics
}

// run prepares t: the plugin's Prepare on its values (sdk.NewPass), so
// that impossible parameters are rejected, located at t's first point,
// before anything is built; then, for a construction, the size check
// (checkSize). The pass is the one every point with these values gets (a
// pass is not changed once prepared).
func (t *prepareTask) run(ctx context.Context, r *Runner) {
	pass, err := sdk.NewPass(ctx, t.pl, t.vals)
	if err != nil {
		if pe, ok := sdk.AsParamError(err); ok {
			t.diags = hcl.Diagnostics{t.b.ParamDiag(t.pt, pe)}
			return
		}
		t.diags = hcl.Diagnostics{{Severity: hcl.DiagError,
			Summary: fmt.Sprintf("The %s %q cannot check its parameters", t.b.Kind, t.b.Name),
			Detail:  err.Error(), Subject: t.b.DefRange.Ptr()}}
		return
	}
	pass.Log = &r.Log
	t.pass = pass
	if t.size {
		t.edges, t.diags = r.checkSize(ctx, t.b, t.pl.(*sdk.Construction), pass, t.pt)
	}
}

// prepareAll decodes every block of p at every point against its plugin's
// schema and prepares each distinct set of values once (prepare tasks
// run on 2 × Jobs goroutines, a point's tasks together: a check mostly
// waits for plugin answers), then returns the points' passes and diags
// with the diagnostics appended in point and block order, as a check of
// one point after another gives them. A set of values Prepare refused is
// reported once, at its first point.
func (r *Runner) prepareAll(ctx context.Context, p *config.Pipeline, pl *plugins, diags hcl.Diagnostics) ([]pointPasses, hcl.Diagnostics) {
	points := p.Points()
	slots := make([][]slot, len(points))
	owned := make([][]*prepareTask, len(points))
	tasks := map[string]*prepareTask{}
	maxWeight, by := mapperMaxWeight(p, pl)
	defaulted := map[*config.Block]bool{} // layerers whose max_weight the mapper's bound set
	decode := func(i int, b *config.Block, v sdk.Plugin, size bool) slot {
		pt := points[i]
		vals, d := b.Decode(pt, v.Describe().Params)
		if d.HasErrors() {
			return slot{diags: d}
		}
		if v.Describe().Kind == sdk.KindLayerer && maxWeight > 0 && declares(v, sdk.MaxWeightParam) {
			if _, set := vals[sdk.MaxWeightParam]; !set {
				vals[sdk.MaxWeightParam] = maxWeight
				defaulted[b] = true
			}
		}
		key := paramsKey(b, vals)
		if t, ok := tasks[key]; ok {
			return slot{diags: d, task: t}
		}
		t := &prepareTask{b: b, pl: v, pt: pt, vals: vals, size: size, edges: -1}
		tasks[key] = t
		owned[i] = append(owned[i], t)
		return slot{diags: d, task: t, owner: true}
	}
	for i := range points {
		slots[i] = append(slots[i], decode(i, p.Construction, pl.construction, true))
		for k, b := range p.Layerers {
			slots[i] = append(slots[i], decode(i, b, pl.layerers[k], false))
		}
		for k, b := range p.Mappers {
			slots[i] = append(slots[i], decode(i, b, pl.mappers[k], false))
		}
	}
	for _, b := range p.Layerers {
		if defaulted[b] {
			r.Log.Info().Str("pipeline", p.Name).Str("layerer", b.Name).Int64(sdk.MaxWeightParam, maxWeight).
				Msgf("%s = %d in layerer %q, whose block leaves it unset: the bound mapper %q needs to map modular additions exactly", sdk.MaxWeightParam, maxWeight, b.Name, by)
		}
	}
	var mu sync.Mutex // for Checking
	eachIndex(len(points), 2*max(r.Jobs, 1), func(i int) bool {
		for _, t := range owned[i] {
			t.run(ctx, r)
		}
		if r.Checking != nil {
			mu.Lock()
			r.Checking(p, points[i])
			mu.Unlock()
		}
		return true
	})
	passes := make([]pointPasses, len(points))
	for i := range points {
		pp := pointPasses{edges: -1}
		for j, sl := range slots[i] {
			diags = append(diags, sl.diags...)
			var pass *sdk.Pass
			if sl.task != nil {
				pass = sl.task.pass
				if sl.owner {
					diags = append(diags, sl.task.diags...)
				}
			}
			switch {
			case j == 0:
				pp.construction = pass
				if sl.task != nil {
					pp.edges = sl.task.edges
				}
			case j <= len(p.Layerers):
				pp.layerers = append(pp.layerers, pass)
			default:
				pp.mappers = append(pp.mappers, pass)
			}
		}
		passes[i] = pp
	}
	return passes, diags
}

// mapperMaxWeight returns the least MaxWeight of p's mappers and the
// mapper's name (0: none declares one): the max_weight p's layerers get
// where their blocks leave it unset (sdk.Mapper.MaxWeight).
func mapperMaxWeight(p *config.Pipeline, pl *plugins) (int64, string) {
	var mw int64
	var by string
	for i, m := range pl.mappers {
		if w := m.MaxWeight; w > 0 && (mw == 0 || w < mw) {
			mw, by = w, p.Mappers[i].Name
		}
	}
	return mw, by
}

// declares reports whether plugin v declares parameter name.
func declares(v sdk.Plugin, name string) bool {
	return slices.ContainsFunc(v.Describe().Params, func(p sdk.Param) bool { return p.Name == name })
}

// paramsKey identifies block b with the decoded values vals.
func paramsKey(b *config.Block, vals map[string]any) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%p", b)
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		fmt.Fprintf(&sb, "\x00%s=%#v", k, vals[k])
	}
	return sb.String()
}

// checkSize refuses a point whose estimated logic circuit exceeds
// MaxEdges, before anything is built. It returns the estimate's edges (−1
// if there is none: no limit, or no Estimate), which Run orders the
// points by.
func (r *Runner) checkSize(ctx context.Context, b *config.Block, c *sdk.Construction, pass *sdk.Pass, pt config.Point) (int64, hcl.Diagnostics) {
	if r.MaxEdges <= 0 || c.Estimate == nil {
		return -1, nil
	}
	size, err := c.Estimate(ctx, pass)
	if pe, ok := sdk.AsParamError(err); ok {
		// An estimate past int64 (sdk.CheckedSize), at the parameter.
		return -1, hcl.Diagnostics{b.ParamDiag(pt, pe)}
	}
	if err != nil {
		return -1, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("The construction %q cannot estimate its size", b.Name), Detail: err.Error(), Subject: b.DefRange.Ptr()}}
	}
	if size.Edges <= r.MaxEdges {
		return size.Edges, nil
	}
	at := ""
	if s := pt.String(); s != "" {
		at = " at matrix point " + s
	}
	return size.Edges, hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Point too large",
		Detail: fmt.Sprintf("The %s %q estimates its logic circuit%s at %d nodes and %d edges, over the limit of %d edges (--max-edges); layering multiplies that several times over. Raise the limit to run it anyway.",
			b.Kind, b.Name, at, size.Nodes, size.Edges, r.MaxEdges),
		Subject: b.DefRange.Ptr()}}
}
