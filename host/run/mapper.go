package run

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/interrupt"
	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// ModelRow is the result of one mapper on one (matrix point × layerer):
// the model's figures and its verification by the host's own forward pass
// against the layered circuit.
type ModelRow struct {
	Mapper string // the mapper block's plugin name
	Arch   string // the model's architecture, e.g. "tokens-as-gates/softmax"
	Stats  model.Stats
	// Samples is the number of random inputs the model was checked on.
	Samples int
	// Verified: the float32 forward pass matched the layered circuit
	// bit for bit on every sample.
	Verified bool
	// MinMargin is the smallest distance of any readout from its decision
	// threshold over the samples (NaN before verification).
	MinMargin float64
	// Beta is the model's softmax inverse temperature (0 without softmax
	// attention); BetaMin the smallest β on the grid k·Beta/64 (BetaStep
	// apart) at which the same weights still compute every sample exactly
	// (0 without softmax), found from the probe's bound (BetaMethod
	// "probe") or by bisection ("bisection"). BetaBound is the probe's
	// bound: every β ≥ it is exact by the saturation argument of
	// docs/mappers.md (0 when the probe does not apply).
	Beta, BetaMin, BetaStep, BetaBound float64
	BetaMethod                         string
	// MaxInt bounds the integers the model's linear maps compute on bit
	// inputs: the largest Σ|weight| of a tensor row (model.MaxRowSum; the
	// mappers scale the circuit's weights, e.g. by κ for saturated SiLU
	// steps) and the layered circuit's largest |pre-activation|
	// (layered.Circuit.MaxPreActivation). Informative: a bound on values
	// says nothing of the rounding of SiLU, softmax or norms.
	MaxInt int64
	// Exact maps each float format whose pass ran on the samples ("fp32",
	// "fp64") to whether it reproduced every output bit; ExactIn lists the
	// exact ones, widest first ("fp64 fp32"), "none" if none.
	Exact   map[string]bool
	ExactIn string
	// Export is the exported config's path, if the model was exported.
	Export string
	Err    error

	MapTime, VerifyTime, SearchTime time.Duration
}

// OK reports whether the model was built and verified.
func (m ModelRow) OK() bool { return m.Err == nil && m.Verified }

// modelsOK reports whether every model of a row is OK.
func modelsOK(ms []ModelRow) bool {
	for _, m := range ms {
		if !m.OK() {
			return false
		}
	}
	return true
}

// ModelColumns are the per-model figures the reports add after a row's
// layered-circuit columns ("model_blocks": matrices often have a "blocks"
// variable of their own).
var ModelColumns = []string{"mapper", "arch", "tokens", "d_model", "model_blocks", "heads", "ffn_hidden",
	"params_nonzero", "params_dense", "min_margin", "beta", "beta_min", "model_verified", "exact_in"}

// Cells returns the ModelColumns values of m.
func (m ModelRow) Cells() []string {
	s := m.Stats
	f := func(x float64) string {
		if math.IsNaN(x) {
			return ""
		}
		return fmt.Sprintf("%.6g", x)
	}
	beta, betaMin := "", ""
	if m.Beta > 0 {
		beta = f(m.Beta)
		if m.Verified && m.BetaMin > 0 {
			betaMin = f(m.BetaMin)
		}
	}
	if m.Arch == "" {
		return []string{m.Mapper, "", "", "", "", "", "", "", "", "", "", "", "false", ""}
	}
	return []string{m.Mapper, m.Arch, fmt.Sprint(s.Tokens), fmt.Sprint(s.DModel), fmt.Sprint(s.Blocks), fmt.Sprint(s.Heads),
		fmt.Sprint(s.FFNHidden), fmt.Sprint(s.ParamsNonzero), fmt.Sprint(s.ParamsDense), f(m.MinMargin), beta, betaMin,
		fmt.Sprint(m.Verified), m.ExactIn}
}

// betaSteps is how many halvings the β search makes: the reported β_min
// is within β/2^betaSteps above the true threshold on the samples.
const betaSteps = 6

// runMappers maps the verified layered circuit l of layerer with every
// mapper of the pipeline and verifies each model on the inputs in.
// cp describes what the models compute, for their exports.
func (r *Runner) runMappers(ctx context.Context, p *config.Pipeline, pl *plugins, pt config.Point, passes []*sdk.Pass, layerer string, l *layered.Circuit, in []bitvec.Vec, cp *safetensors.Computes, log zerolog.Logger) []ModelRow {
	if len(p.Mappers) == 0 {
		return nil
	}
	out := make([]ModelRow, len(p.Mappers))
	want, err := interrupt.Do(ctx, func() ([]bitvec.Vec, error) { return bitvec.EvalSliced(in, l.NumInputs, l.Eval) })
	for i, b := range p.Mappers {
		out[i] = ModelRow{Mapper: b.Name, MinMargin: math.NaN()}
		if err != nil {
			out[i].Err = fmt.Errorf("evaluating the layered circuit: %w", err)
			continue
		}
		if ctx.Err() != nil {
			out[i].Err = ctx.Err()
			continue
		}
		mc := *cp
		mc.Mapper, mc.MapperParams = b.Name, blockParams(pl.mappers[i].Params, passes[i])
		r.runMapper(ctx, p, pl.mappers[i], passes[i], b, pt, layerer, l, in, want, &mc, &out[i], log)
	}
	return out
}

func (r *Runner) runMapper(ctx context.Context, p *config.Pipeline, mp *sdk.Mapper, pass *sdk.Pass, b *config.Block, pt config.Point, layerer string, l *layered.Circuit, in, want []bitvec.Vec, cp *safetensors.Computes, mr *ModelRow, log zerolog.Logger) {
	t0 := time.Now()
	m, err := mp.Map(ctx, pass, l)
	mr.MapTime = time.Since(t0)
	if err != nil {
		mr.Err = r.detail(p, &pt, layerer+"."+b.Name, fmt.Errorf("%s: %w", mapperName(b, ""), r.paramErr(b, pt, err)))
		return
	}
	if m == nil {
		mr.Err = fmt.Errorf("%s returned no model", mapperName(b, ""))
		return
	}
	mr.Arch = m.Arch
	if mr.Arch == "" {
		mr.Arch = b.Name
	}
	// Validating a model of hundreds of MB takes seconds: a signal does
	// not wait for it (nor for the figures).
	type figures struct {
		stats  model.Stats
		maxInt int64
	}
	fig, err := interrupt.Do(ctx, func() (figures, error) {
		if err := m.Validate(); err != nil {
			return figures{}, fmt.Errorf("%s returned an invalid model: %w", mapperName(b, mr.Arch), err)
		}
		return figures{m.Stats(), max(int64(math.Ceil(m.MaxRowSum())), l.MaxPreActivation())}, nil
	})
	if err != nil {
		mr.Err = err
		return
	}
	mr.Stats, mr.MaxInt = fig.stats, fig.maxInt
	if beta, ok := m.SoftmaxBeta(); ok {
		mr.Beta = beta
	}
	if need, limit := programBytes(mr.Stats), r.modelBytes(p); limit > 0 && need > limit {
		// Refused before the check starts, as --max-edges refuses a point.
		mr.Err = fmt.Errorf("%s: the model check would take about %d MiB (%d tokens, %d nonzero parameters), over its share of the host's memory bound, %d MiB (half of --memory, over the points checked at once); not checked", mapperName(b, mr.Arch), need>>20, mr.Stats.Tokens, mr.Stats.ParamsNonzero, limit>>20)
		return
	}
	if log.GetLevel() <= zerolog.DebugLevel && zerolog.GlobalLevel() <= zerolog.DebugLevel {
		ctx = forward.WithTrace(ctx, r.passLogger(ctx, log.With().Str("layerer", layerer).Str("mapper", b.Name).Str("arch", mr.Arch).Logger()))
	}
	t0 = time.Now()
	mr.Samples = len(in)
	maxBytes := r.modelBytes(p)
	mc, err := point.CheckModel(ctx, m, l, in, want, point.ModelOptions{ProbeBeta: mr.Beta > 0, MaxBytes: maxBytes})
	mr.VerifyTime = time.Since(t0)
	if mc != nil {
		mr.MinMargin = mc.MinMargin
		if mc.Decoder != nil {
			logDecoderMargin(log, b.Name, mc.Decoder)
		}
	}
	if err != nil {
		mr.Err = fmt.Errorf("%s: %w", mapperName(b, mr.Arch), memoryHint(err))
		return
	}
	mr.Verified = true
	// "exact in" lists the formats whose pass ran and reproduced every
	// bit (the host runs no fp16 or bf16 pass).
	mr.Exact, mr.ExactIn = mc.Exact, mc.ExactIn
	if m.IsDecoder() {
		r.decoderVerified(ctx, p, pt, layerer, b, m, l, in, want, cp, mr, log)
		return
	}
	prog := mc.Program
	if mr.Beta > 0 {
		t0 = time.Now()
		mr.BetaMin, mr.BetaStep, mr.BetaBound, mr.BetaMethod, err = betaMin(ctx, prog, mc.Beta, in, want, l.NumOutputs(), mr.Beta, maxBytes, log)
		mr.SearchTime = time.Since(t0)
		if err != nil {
			mr.Err = fmt.Errorf("%s: β search: %w", mapperName(b, mr.Arch), err)
			return
		}
	}
	if r.Export != "" {
		r.exportModel(ctx, p, pt, layerer, b, m, l, in, want, cp, mr, log)
		if mr.Err != nil {
			return
		}
	}
	log.Info().Str("layerer", layerer).Str("mapper", b.Name).Str("arch", mr.Arch).Int("tokens", mr.Stats.Tokens).
		Int("d_model", mr.Stats.DModel).Int("blocks", mr.Stats.Blocks).Int64("params_nonzero", mr.Stats.ParamsNonzero).
		Float64("min_margin", mr.MinMargin).Float64("beta", mr.Beta).Float64("beta_min", mr.BetaMin).Float64("beta_bound", mr.BetaBound).Str("beta_method", mr.BetaMethod).
		Dur("map_ms", mr.MapTime).Dur("verify_ms", mr.VerifyTime).Dur("search_ms", mr.SearchTime).Msg("model verified")
}

// exportModel writes verified model m of row mr (--export): safetensors
// and config, its labels, and its byte module where it has one; a failure
// is the row's error.
func (r *Runner) exportModel(ctx context.Context, p *config.Pipeline, pt config.Point, layerer string, b *config.Block, m *model.Model, l *layered.Circuit,
	in, want []bitvec.Vec, cp *safetensors.Computes, mr *ModelRow, log zerolog.Logger) {
	desc, err := description(m, l, in, want, cp, mr)
	if err != nil {
		mr.Err = err
		return
	}
	info, err := r.export(ctx, m, exportName(p, pt, layerer, mr.Arch), describeModel(p, pt, layerer, b), desc)
	if err != nil {
		mr.Err = err
		return
	}
	mr.Export = info.Config
	ev := log.Info()
	if info.Note != "" {
		ev = log.Warn().Str("note", info.Note)
	}
	ev.Str("file", info.Weights).Str("layout", info.Layout).Int64("bytes", info.Bytes).Msg("exported model")
	if r.Modules != nil && ByteInterface(mr.Arch, cp) {
		r.writeModule(ctx, info.Config, log)
	}
}

// passLogger returns the forward.WithTrace hook that logs each forward
// pass of a model check at debug level: what it computed, its time split
// by kernel, and the machine's floor for that work (forward.Floor,
// measured once a run) with the share of it each kind of kernel reached
// (forward.PassInfo.Fields).
func (r *Runner) passLogger(ctx context.Context, log zerolog.Logger) func(forward.PassInfo) {
	r.floorOnce.Do(func() {
		r.floor = forward.MeasureFloor(ctx, 100*time.Millisecond)
		r.Log.Debug().Fields(r.floor.Fields()).Msg("the machine's floor for the forward pass's kernels")
	})
	f := r.floor
	return func(pi forward.PassInfo) {
		log.Debug().Fields(pi.Fields(f)).Msg("forward pass")
	}
}

// modelBytes is the budget of one model check's forward-pass buffers
// (forward.Options.MaxBytes), and separately of its model and Program
// (programBytes): half the host's memory bound, shared by the points of
// pipeline p that may check models at once (Jobs, the pipeline's own
// jobs, its number of points). 0: no bound.
func (r *Runner) modelBytes(p *config.Pipeline) int64 {
	if r.MemoryLimit <= 0 {
		return 0
	}
	at := int64(max(1, r.Jobs))
	if p.Jobs > 0 {
		at = min(at, int64(p.Jobs))
	}
	at = max(1, min(at, p.NumPoints()))
	return r.MemoryLimit / 2 / at
}

// programBytes estimates the host memory a model of stats s takes to
// check beyond the forward pass's buffers (forward.Options.MaxBytes): the
// decoded model and its compiled Program, about 2 KiB a token and 32 bytes
// a nonzero parameter. Measured on tokens-as-gates softmax models of
// Keccak-f[1600] (2, 4 and 8 rounds over 1000 message bits: 65 k to
// 238 k tokens) the host's whole peak stays under this figure.
func programBytes(s model.Stats) int64 {
	if s.Generated > 0 { // a decoder: a KV cache per worker, and the weights
		return 4*int64(s.Tokens)*int64(s.DModel)*int64(s.Blocks)*2*8 + 32*s.ParamsNonzero
	}
	return 2048*int64(s.Tokens) + 32*s.ParamsNonzero
}

// mapperName names mapper block b in an error line: the plugin, the
// model's architecture where it says more (the variant:
// "tokens-as-gates/softmax"; "" before a model is built) and the block's
// place in its file, so that two variants of one mapper, or two blocks of
// one, give lines of their own: `mapper "tokens-as-gates"
// (tokens-as-gates/softmax, pipeline.hcl:12)`.
func mapperName(b *config.Block, arch string) string {
	var at []string
	if arch != "" && arch != b.Name {
		at = append(at, arch)
	}
	if f := b.DefRange.Filename; f != "" {
		at = append(at, fmt.Sprintf("%s:%d", f, b.DefRange.Start.Line))
	}
	if len(at) == 0 {
		return fmt.Sprintf("mapper %q", b.Name)
	}
	return fmt.Sprintf("mapper %q (%s)", b.Name, strings.Join(at, ", "))
}

// memoryHint says of a forward pass refused for memory what bounds it.
func memoryHint(err error) error {
	var me *forward.MemoryError
	if errors.As(err, &me) {
		return fmt.Errorf("%w (half the host's memory bound, --memory, shared by the --jobs points running at once); nothing was allocated", err)
	}
	return err
}

// betaMin finds the smallest inverse temperature, on the grid k·β/2^betaSteps
// the bisection uses, at which the model's weights still compute every
// sample exactly. If the verification pass's probe (bb) bounds it, the
// grid point at or above the bound — where the saturation argument of
// docs/mappers.md proves the pass unchanged — is confirmed by one pass,
// then the grid is walked down until a point fails (method "probe"; the
// same answer as the bisection when exactness is monotone in β, usually in
// two passes instead of six). Otherwise it bisects (method "bisection").
// bound is the probe's bound (0 if none).
func betaMin(ctx context.Context, prog *forward.Program, bb *forward.BetaBound, in, want []bitvec.Vec, nOut int, beta float64, maxBytes int64, log zerolog.Logger) (betaMin, step, bound float64, method string, err error) {
	n := 1 << betaSteps
	step = beta / float64(n)
	exact := func(k int) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		res, err := prog.RunContext(ctx, in, forward.Options{Beta: float64(k) * beta / float64(n), MaxBytes: maxBytes})
		if err != nil {
			return false, err
		}
		return point.FirstMismatch("", res.Outputs, want, nOut) == nil, nil
	}
	if bb != nil && bb.Supported && bb.Saturated && bb.Min > 0 && bb.Min < beta {
		bound = bb.Min
		k := min(n, int(math.Ceil(bb.Min/step*(1+1e-9))))
		ok := true
		if k < n { // k = n is the model's own β, already verified
			if ok, err = exact(k); err != nil {
				return 0, 0, bound, "", err
			}
		}
		if ok {
			for k > 1 {
				below, err := exact(k - 1)
				if err != nil {
					return 0, 0, bound, "", err
				}
				if !below {
					break
				}
				k--
			}
			return float64(k) * beta / float64(n), step, bound, "probe", nil
		}
		log.Warn().Float64("beta", float64(k)*step).Msg("not exact at the grid point above the probed β bound; bisecting")
	} else if bb != nil && !bb.Supported {
		log.Debug().Str("reason", bb.Reason).Msg("β probe does not apply; bisecting")
	}
	lo, step, err := betaSearch(ctx, prog, in, want, nOut, beta, maxBytes)
	return lo, step, bound, "bisection", err
}

// betaSearch bisects for the smallest inverse temperature at which the
// model's weights still compute every sample exactly, between 0 and the
// model's own β (which is known to). It returns that β and the search's
// resolution.
func betaSearch(ctx context.Context, prog *forward.Program, in, want []bitvec.Vec, nOut int, beta float64, maxBytes int64) (float64, float64, error) {
	lo, hi := 0.0, beta
	for range betaSteps {
		if err := ctx.Err(); err != nil {
			return 0, 0, err
		}
		mid := (lo + hi) / 2
		res, err := prog.RunContext(ctx, in, forward.Options{Beta: mid, MaxBytes: maxBytes})
		if err != nil {
			return 0, 0, err
		}
		if point.FirstMismatch("", res.Outputs, want, nOut) == nil {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, hi - lo, nil
}

// safeName turns s into a file-name-safe string.
func safeName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}
