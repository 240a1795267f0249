// Package run executes pipelines: for every matrix point it builds the
// construction's logic circuit, verifies it against the construction's
// reference, layers it with each layerer, verifies every layered circuit
// against the logic circuit, and evaluates the pipeline's expectations.
// Nothing a plugin returns is trusted before it is validated and verified.
package run

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"
	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Row is the result of one (matrix point × layerer).
type Row struct {
	Point    config.Point
	Layerer  string
	Stats    layered.Stats
	Logic    circuit.Stats
	Verified bool
	Expect   map[string]int64 // expected figures, by name
	Actual   map[string]int64 // the same figures measured
	ExpectOK bool             // every expectation met (true when there are none)
	Predict  map[string]int64 // predicted figures (predict blocks), by name
	Err      error            // what went wrong, if anything
	// Models holds one entry per mapper block, in order, when the layered
	// circuit verified and the pipeline has mappers (see mapper.go).
	Models []ModelRow

	BuildTime, LayerTime, VerifyTime time.Duration
}

// OK reports whether the row verified and met its expectations.
func (r Row) OK() bool { return r.Err == nil && r.Verified && r.ExpectOK && modelsOK(r.Models) }

// Result is one pipeline's rows.
type Result struct {
	Pipeline    *config.Pipeline
	Vars        []string // matrix variable names, in order
	ExpectNames []string // union of expectation names, in order
	// PredictNames are the figures of predict blocks, in order.
	PredictNames []string
	Rows         []Row
	// Complete is false when the run was interrupted before every point
	// finished; Rows then hold the points that did.
	Complete bool
	// Stopped says why an incomplete run stopped ("interrupted"): the
	// context's cancellation cause, which the caller may reword.
	Stopped string
	// Plugins are the plugins of the pipeline's blocks (construction,
	// layerers, mappers, in file order, each once): name, version and
	// source. RowPlugins gives a row's.
	Plugins []PluginInfo
}

// OK reports whether every row is OK and there is at least one.
func (r *Result) OK() bool {
	if len(r.Rows) == 0 {
		return false
	}
	for _, row := range r.Rows {
		if !row.OK() {
			return false
		}
	}
	return true
}

// Runner runs pipelines against a plugin registry.
type Runner struct {
	Registry *registry.Registry
	Log      zerolog.Logger
	// Samples overrides each pipeline's sample count when > 0.
	Samples int
	// Seed makes the random verification inputs reproducible.
	Seed uint64
	// Diagnostics receives located problems found while running (a
	// parameter a plugin rejected, say); they also fail the row.
	Diagnostics func(hcl.Diagnostics)
	// Progress, if set, is called before each point of a pipeline is run
	// (done false) and after it (done true), for progress display.
	Progress func(p *config.Pipeline, pt config.Point, done bool)
	// Checking, if set, is called as Check reaches each point of a
	// pipeline, for progress display during a long check.
	Checking func(p *config.Pipeline, pt config.Point)
	// MaxEdges refuses points whose construction estimates a logic
	// circuit of more edges (0: no limit).
	MaxEdges int64
	// Jobs is how many points of a pipeline run at once (at least 1).
	Jobs int
	// MemoryLimit is the memory bound, in bytes, the host holds itself to
	// (0: none; see modelBytes): a model check's forward passes stream
	// their samples through a few at a time to stay within their share of
	// it, or are refused before they start.
	MemoryLimit int64
	// Export, if set, is the directory mapped models are written to
	// (safetensors + JSON config, see safetensors.Export); ExportDenseLimit is
	// the largest dense model in bytes written dense (0: always CSR).
	Export           string
	ExportDenseLimit int64
	// Modules, if set, writes each exported model's runnable files beside
	// it: the byte module (bytes in, digest out; TorchScript and ONNX) of
	// a stock model with a byte interface (ByteInterface). Its errors are
	// logged, never the run's.
	Modules ModuleWriter
	// Shard, if set, says which points of a pipeline this run runs (the
	// others are left out of the result, which is then Complete when every
	// point of the shard finished); see tcforge run --shard.
	Shard func(p *config.Pipeline, pt config.Point) bool
	// SaveDetail, if set, saves the full text behind a failed row's
	// error (a plugin's crash report and goroutine dump, go-plugin's
	// explanation of a failed start): the row's error is then one line
	// naming the plugin, the cause and the file (a *DetailedError).
	SaveDetail DetailSaver
	// reportMu serialises Diagnostics calls from concurrent points.
	reportMu sync.Mutex
	// checked holds what Check opened and prepared for a pipeline, so
	// that Run does not ask the plugins the same questions again.
	checkedMu sync.Mutex
	checked   map[*config.Pipeline]*plugins
	// floor is the machine's rate for the forward pass's kernels, measured
	// once a run for the debug log's passes (passLogger).
	floorOnce sync.Once
	floor     forward.Floor
}

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
}

// Check opens every plugin a pipeline names, decodes every block at every
// point against the plugins' schemas and runs each plugin's Prepare on it,
// so that config mistakes and impossible values are reported, located,
// before anything runs.
func (r *Runner) Check(ctx context.Context, p *config.Pipeline) hcl.Diagnostics {
	pl, diags := r.open(ctx, p)
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
		t.diags = r.checkSize(ctx, t.b, t.pl.(*sdk.Construction), pass, t.pt)
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
	decode := func(i int, b *config.Block, v sdk.Plugin, size bool) slot {
		pt := points[i]
		vals, d := b.Decode(pt, v.Describe().Params)
		if d.HasErrors() {
			return slot{diags: d}
		}
		key := paramsKey(b, vals)
		if t, ok := tasks[key]; ok {
			return slot{diags: d, task: t}
		}
		t := &prepareTask{b: b, pl: v, pt: pt, vals: vals, size: size && r.MaxEdges > 0 && pl.construction.Estimate != nil}
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
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex // for Checking
	for range min(2*max(r.Jobs, 1), len(points)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(points) {
					return
				}
				for _, t := range owned[i] {
					t.run(ctx, r)
				}
				if r.Checking != nil {
					mu.Lock()
					r.Checking(p, points[i])
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	passes := make([]pointPasses, len(points))
	for i := range points {
		var pp pointPasses
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
// MaxEdges, before anything is built.
func (r *Runner) checkSize(ctx context.Context, b *config.Block, c *sdk.Construction, pass *sdk.Pass, pt config.Point) hcl.Diagnostics {
	if r.MaxEdges <= 0 || c.Estimate == nil {
		return nil
	}
	size, err := c.Estimate(ctx, pass)
	if pe, ok := sdk.AsParamError(err); ok {
		// An estimate past int64 (sdk.CheckedSize), at the parameter.
		return hcl.Diagnostics{b.ParamDiag(pt, pe)}
	}
	if err != nil {
		return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: fmt.Sprintf("The construction %q cannot estimate its size", b.Name), Detail: err.Error(), Subject: b.DefRange.Ptr()}}
	}
	if size.Edges <= r.MaxEdges {
		return nil
	}
	at := ""
	if s := pt.String(); s != "" {
		at = " at matrix point " + s
	}
	return hcl.Diagnostics{{Severity: hcl.DiagError, Summary: "Point too large",
		Detail: fmt.Sprintf("The %s %q estimates its logic circuit%s at %d nodes and %d edges, over the limit of %d edges (--max-edges); layering multiplies that several times over. Raise the limit to run it anyway.",
			b.Kind, b.Name, at, size.Nodes, size.Edges, r.MaxEdges),
		Subject: b.DefRange.Ptr()}}
}

// Run runs every point of the pipeline. It returns the rows even when some
// fail; the error is for a pipeline that could not start at all.
func (r *Runner) Run(ctx context.Context, p *config.Pipeline) (*Result, error) {
	res := &Result{Pipeline: p, Vars: p.Vars()}
	seen := map[string]bool{}
	seenPred := map[string]bool{}
	for _, e := range p.Expects {
		for _, n := range e.Names {
			switch {
			case e.Predict && !seenPred[n]:
				seenPred[n] = true
				res.PredictNames = append(res.PredictNames, n)
			case !e.Predict && !seen[n]:
				seen[n] = true
				res.ExpectNames = append(res.ExpectNames, n)
			}
		}
	}
	pl, diags := r.opened(ctx, p)
	if diags.HasErrors() {
		r.report(diags)
		return res, fmt.Errorf("pipeline %q: %w", p.Name, diags)
	}
	res.Plugins = pl.infos
	if pl.broken != nil {
		pl.broken = r.detail(p, nil, "", pl.broken)
	}
	samplesN := p.Samples
	if r.Samples > 0 {
		samplesN = r.Samples
	}
	points := p.Points()
	todo := make([]int, 0, len(points))
	for i, pt := range points {
		if r.Shard == nil || r.Shard(p, pt) {
			todo = append(todo, i)
		}
	}
	// Points run on up to Jobs goroutines (at most the pipeline's own
	// jobs, if it sets them) against the same plugin
	// processes; rows are kept in point order. A point cut short by
	// cancellation is dropped, so the rows returned are all complete.
	perPoint := make([][]Row, len(points))
	finished := make([]bool, len(points))
	var next atomic.Int64
	var wg sync.WaitGroup
	jobs := max(r.Jobs, 1)
	if p.Jobs > 0 {
		jobs = min(jobs, p.Jobs)
	}
	for range min(jobs, len(todo)) {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(todo) || ctx.Err() != nil {
					return
				}
				i := todo[k]
				pt := points[i]
				log := r.Log.With().Str("pipeline", p.Name).Str("point", pt.String()).Logger()
				if r.Progress != nil {
					r.Progress(p, pt, false)
				}
				rows := r.runPoint(ctx, p, pl, i, samplesN, log)
				if ctx.Err() != nil {
					return
				}
				if r.Progress != nil {
					r.Progress(p, pt, true)
				}
				for _, row := range rows {
					ev := log.Info()
					if !row.OK() {
						ev = log.Error()
						if row.Err != nil {
							ev = ev.Err(row.Err)
						}
					}
					ev.Str("layerer", row.Layerer).Int("depth", row.Stats.Depth).Int("width", row.Stats.Width).
						Bool("verified", row.Verified).Bool("expect_ok", row.ExpectOK).
						Dur("build_ms", row.BuildTime).Dur("layer_ms", row.LayerTime).Dur("verify_ms", row.VerifyTime).
						Msgf("point %d/%d", i+1, len(points))
				}
				perPoint[i], finished[i] = rows, true
			}
		})
	}
	wg.Wait()
	done := 0
	for i := range points {
		if finished[i] {
			res.Rows = append(res.Rows, perPoint[i]...)
			done++
		}
	}
	res.Complete = done == len(todo)
	if err := ctx.Err(); err != nil {
		res.Stopped = context.Cause(ctx).Error()
		return res, fmt.Errorf("pipeline %q interrupted after %d of %d points: %w", p.Name, done, len(todo), err)
	}
	return res, nil
}

func (r *Runner) report(d hcl.Diagnostics) {
	r.reportMu.Lock()
	defer r.reportMu.Unlock()
	if len(d) > 0 && r.Diagnostics != nil {
		r.Diagnostics(d)
	}
}

// pointSeed derives a reproducible seed per pipeline and point.
func (r *Runner) pointSeed(p *config.Pipeline, pt config.Point) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d/%s/%s", r.Seed, p.Name, pt.String())
	return h.Sum64()
}

func (r *Runner) runPoint(ctx context.Context, p *config.Pipeline, pl *plugins, i int, nSamples int, log zerolog.Logger) []Row {
	pt := p.Points()[i]
	rows := make([]Row, len(p.Layerers))
	for i, b := range p.Layerers {
		rows[i] = Row{Point: pt, Layerer: b.Name}
	}
	fail := func(err error) []Row {
		for i := range rows {
			if rows[i].Err == nil {
				rows[i].Err = err
			}
		}
		return rows
	}
	if pl.broken != nil {
		return fail(pl.broken)
	}
	passes := pl.passes[i]
	lg, err := point.Build(ctx, pl.construction, passes.construction, r.pointSeed(p, pt), nSamples, pl.checked[p.Construction.Name])
	if err != nil {
		return fail(r.detail(p, &pt, "", r.paramErr(p.Construction, pt, err)))
	}
	logic := lg.Circuit.Stats()
	log.Debug().Int("nodes", logic.Nodes).Int("inputs", logic.Inputs).Int("outputs", logic.Outputs).Dur("took", lg.BuildTime).Msg("built logic circuit")

	scope := constructionScope(pl.construction.Params, passes.construction.Params, lg.Circuit.Attrs)
	for i, b := range p.Layerers {
		row := &rows[i]
		row.Logic = logic
		row.BuildTime = lg.BuildTime
		ly, err := point.Layer(ctx, pl.layerers[i], passes.layerers[i], lg, pl.checked[b.Name])
		row.LayerTime = ly.LayerTime
		row.VerifyTime = lg.VerifyTime + ly.VerifyTime
		if ly.Circuit == nil {
			row.Err = r.detail(p, &pt, b.Name, r.paramErr(b, pt, err))
			continue
		}
		l := ly.Circuit
		row.Stats = l.Stats()
		row.Err = err
		row.Verified = err == nil
		row.ExpectOK = true
		for _, e := range p.Expects {
			if e.Layerer != b.Name {
				continue
			}
			exp, diags := e.Eval(pt, scope)
			if diags.HasErrors() {
				r.report(diags)
				row.ExpectOK = false
				if row.Err == nil {
					row.Err = diags
				}
				continue
			}
			if e.Predict {
				if row.Predict == nil {
					row.Predict = map[string]int64{}
				}
				for name, v := range exp {
					row.Predict[name] = v // shown, never a failure
				}
				continue
			}
			if row.Expect == nil {
				row.Expect, row.Actual = map[string]int64{}, map[string]int64{}
			}
			for name, v := range exp {
				act, _ := FigureValue(row.Stats, name)
				row.Expect[name], row.Actual[name] = v, act
				if act != v {
					row.ExpectOK = false
				}
			}
		}
		if row.Verified {
			cp := *computes(p.Construction.Name, scope, lg.Circuit)
			cp.Layerer, cp.LayerParams = b.Name, blockParams(pl.layerers[i].Params, passes.layerers[i])
			row.Models = r.runMappers(ctx, p, pl, pt, passes.mappers, b.Name, l, lg.In, &cp, log)
		}
	}
	return rows
}

// paramErr turns a plugin's *sdk.ParamError into a located diagnostic.
func (r *Runner) paramErr(b *config.Block, pt config.Point, err error) error {
	if pe, ok := sdk.AsParamError(err); ok {
		d := b.ParamDiag(pt, pe)
		r.report(hcl.Diagnostics{d})
		return fmt.Errorf("%s: %s", d.Subject, pe.Error())
	}
	return err
}

// constructionScope is construction.* in expect expressions: the decoded
// parameters with the schema's defaults, overridden by the circuit's
// resolved attributes.
func constructionScope(schema []sdk.Param, p sdk.Params, attrs map[string]int64) map[string]cty.Value {
	out := map[string]cty.Value{}
	for _, d := range schema {
		var v cty.Value
		switch d.Type {
		case sdk.Int:
			if !p.Has(d.Name) && d.Default == nil {
				continue
			}
			v = cty.NumberIntVal(int64(p.Int(d.Name)))
		case sdk.Number:
			if !p.Has(d.Name) && d.Default == nil {
				continue
			}
			v = cty.NumberFloatVal(p.Float(d.Name))
		case sdk.String, sdk.Path:
			v = cty.StringVal(p.String(d.Name))
		case sdk.Bool:
			v = cty.BoolVal(p.Bool(d.Name))
		default:
			continue
		}
		out[d.Name] = v
	}
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		out[k] = cty.NumberIntVal(attrs[k])
	}
	return out
}
