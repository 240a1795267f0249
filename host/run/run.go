// Package run executes pipelines: for every matrix point it builds the
// construction's logic circuit, verifies it against the construction's
// reference, layers it with each layerer, verifies every layered circuit
// against the logic circuit, and evaluates the pipeline's expectations.
// Nothing a plugin returns is trusted before it is validated and verified.
package run

import (
	"cmp"
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
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
	// exported holds the export names taken so far in this run, and by
	// what (claimExport).
	exportMu sync.Mutex
	exported map[string]string
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
	// jobs, if it sets them) against the same plugin processes, largest
	// first (by the construction's estimate, where the check made one),
	// so that the last points of a pipeline, run while the cores empty,
	// are its smallest; rows are kept in point order. A point cut short
	// by cancellation is dropped, so the rows returned are all complete.
	if len(pl.passes) == len(points) { // none if a plugin could not start
		slices.SortStableFunc(todo, func(a, b int) int { return cmp.Compare(pl.passes[b].edges, pl.passes[a].edges) })
	}
	perPoint := make([][]Row, len(points))
	finished := make([]bool, len(points))
	jobs := max(r.Jobs, 1)
	if p.Jobs > 0 {
		jobs = min(jobs, p.Jobs)
	}
	eachIndex(len(todo), jobs, func(k int) bool {
		if ctx.Err() != nil {
			return false
		}
		i := todo[k]
		pt := points[i]
		log := r.Log.With().Str("pipeline", p.Name).Str("point", pt.String()).Logger()
		if r.Progress != nil {
			r.Progress(p, pt, false)
		}
		rows := r.runPoint(ctx, p, pl, i, samplesN, log)
		if ctx.Err() != nil {
			return false
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
		return true
	})
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

// eachIndex calls f(0), …, f(n−1) on up to workers goroutines, each
// taking the next index when done with its last, and returns when all
// have returned; a goroutine whose f returns false takes no more.
func eachIndex(n, workers int, f func(i int) bool) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || !f(i) {
					return
				}
			}
		})
	}
	wg.Wait()
}
