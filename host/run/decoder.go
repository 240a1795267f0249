package run

import (
	"context"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/internal/tokencheck"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// logDecoderMargin logs a decoder's smallest logit margin, as a warning
// under a quarter (of a bit's ±1 from the argmax turning).
func logDecoderMargin(log zerolog.Logger, mapper string, res *tokencheck.Result) {
	ev := log.Debug()
	if res.MinMargin < 0.25 {
		ev = log.Warn()
	}
	ev.Str("mapper", mapper).Float64("min_margin", res.MinMargin).Int("sample", res.WorstSample).Stringer("at", res.Worst).
		Msg("the decoder's smallest logit margin (1: every bit of every token at exactly 0 or 1)")
}

// decoderVerified finishes the row of decoder m (tokens as time), which
// point.CheckModel verified: greedy generation in float32 and float64,
// every generated token — the working and the digest — against the
// circuit's own values (internal/tokencheck), and the digest against the
// layered circuit's outputs want. It exports the model (--export) and
// logs it.
func (r *Runner) decoderVerified(ctx context.Context, p *config.Pipeline, pt config.Point, layerer string, b *config.Block, m *model.Model,
	l *layered.Circuit, in, want []bitvec.Vec, cp *safetensors.Computes, mr *ModelRow, log zerolog.Logger) {
	if r.Export != "" {
		r.exportModel(ctx, p, pt, layerer, b, m, l, in, want, cp, mr, log)
	}
	log.Info().Str("layerer", layerer).Str("mapper", b.Name).Str("arch", mr.Arch).Int("positions", mr.Stats.Tokens).
		Int("generated", mr.Stats.Generated).Int("d_model", mr.Stats.DModel).Int("blocks", mr.Stats.Blocks).
		Int64("params_nonzero", mr.Stats.ParamsNonzero).Float64("min_margin", mr.MinMargin).
		Dur("map_ms", mr.MapTime).Dur("verify_ms", mr.VerifyTime).Msg("decoder verified, every generated token")
}
