package run

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/internal/tokencheck"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// checkDecoder verifies decoder m (tokens as time) on the inputs: greedy
// generation in float32 and in float64 (forward.Generate), every generated
// token — the working and the digest — against the circuit's own values
// (internal/tokencheck), and the digest against the layered circuit's
// outputs want.
func (r *Runner) checkDecoder(ctx context.Context, p *config.Pipeline, pt config.Point, layerer string, b *config.Block, m *model.Model,
	l *layered.Circuit, in, want []bitvec.Vec, cp *safetensors.Computes, mr *ModelRow, log zerolog.Logger) {
	t0 := time.Now()
	mr.Samples = len(in)
	res, err := tokencheck.Check(ctx, m, l, in, false)
	mr.VerifyTime = time.Since(t0)
	if res != nil {
		mr.MinMargin = res.MinMargin
		ev := log.Debug()
		if res.MinMargin < 0.25 {
			ev = log.Warn() // a quarter of a bit's ±1 from the argmax turning
		}
		ev.Str("mapper", b.Name).Float64("min_margin", res.MinMargin).Int("sample", res.WorstSample).Stringer("at", res.Worst).
			Msg("the decoder's smallest logit margin (1: every bit of every token at exactly 0 or 1)")
	}
	if err != nil {
		mr.Err = fmt.Errorf("mapper %q: float32 generation: %w", b.Name, err)
		return
	}
	if err := point.Mismatch("float32 decoder vs layered circuit", in, l.NumInputs, res.Outputs, want, l.NumOutputs()); err != nil {
		mr.Err = fmt.Errorf("mapper %q: %w", b.Name, err)
		return
	}
	mr.Verified = true
	_, err64 := tokencheck.Check(ctx, m, l, in, true)
	if ctx.Err() != nil {
		mr.Err = ctx.Err()
		return
	}
	mr.Exact = map[string]bool{"fp32": true, "fp64": err64 == nil}
	mr.ExactIn = exactIn(mr.Exact)
	if r.Export != "" {
		r.exportModel(ctx, p, pt, layerer, b, m, l, in, want, cp, mr, log)
	}
	log.Info().Str("layerer", layerer).Str("mapper", b.Name).Str("arch", mr.Arch).Int("positions", mr.Stats.Tokens).
		Int("generated", mr.Stats.Generated).Int("d_model", mr.Stats.DModel).Int("blocks", mr.Stats.Blocks).
		Int64("params_nonzero", mr.Stats.ParamsNonzero).Float64("min_margin", mr.MinMargin).
		Dur("map_ms", mr.MapTime).Dur("verify_ms", mr.VerifyTime).Msg("decoder verified, every generated token")
}
