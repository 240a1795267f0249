package run

import (
	"context"
	"errors"
	"math/big"

	"github.com/rs/zerolog"

	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// computes describes what the models of one point's logic circuit c
// compute (safetensors.Describe), from the construction's resolved
// parameters and attributes (scope).
func computes(name string, scope map[string]cty.Value, c *circuit.Circuit) *safetensors.Computes {
	return safetensors.Describe(name, plainValues(scope), c)
}

// blockParams returns a plugin block's resolved parameters at one point.
func blockParams(schema []sdk.Param, pass *sdk.Pass) map[string]any {
	if pass == nil {
		return nil
	}
	return plainValues(constructionScope(schema, pass.Params, nil))
}

// plainValues converts cty numbers, strings and bools to int64, float64,
// string and bool.
func plainValues(vs map[string]cty.Value) map[string]any {
	out := make(map[string]any, len(vs))
	for k, v := range vs {
		if v.IsNull() || !v.IsKnown() {
			continue
		}
		switch v.Type() {
		case cty.Number:
			bf := v.AsBigFloat()
			if i, acc := bf.Int64(); acc == big.Exact {
				out[k] = i
			} else {
				f, _ := bf.Float64()
				out[k] = f
			}
		case cty.String:
			out[k] = v.AsString()
		case cty.Bool:
			out[k] = v.True()
		}
	}
	return out
}

// ModuleWriter writes an exported model's byte module beside its config
// (python.ModuleWriter: TorchScript and ONNX through tcforge_torch) and
// returns the files written. An error wrapping an error whose
// Unavailable method returns true (no interpreter or no PyTorch) has been
// logged by the writer already.
type ModuleWriter interface {
	WriteModule(ctx context.Context, config string) ([]string, error)
}

// ByteInterface reports whether a model of architecture arch computing cp
// gets a byte module: a stock model (tokens-as-states, every block a
// torch.nn.TransformerEncoderLayer) whose construction reads and writes
// whole bytes in a bit order (docs/export.md, "The byte module").
func ByteInterface(arch string, cp *safetensors.Computes) bool {
	if arch != "tokens-as-states/stock" || cp == nil || (cp.BitOrder != "lsb-first" && cp.BitOrder != "msb-first") {
		return false
	}
	for _, rs := range [][]safetensors.BitRange{cp.Inputs, cp.Outputs} {
		n := 0
		for _, r := range rs {
			n += r.Bits
		}
		if n == 0 || n%8 != 0 {
			return false
		}
	}
	return true
}

// unavailable is an error that says the module writer cannot run at all
// (python.ErrUnavailable's wrapper).
type unavailable interface{ Unavailable() bool }

// writeModule writes config's byte module with r.Modules, logging the
// files or, as a warning, why not; it never fails the model.
func (r *Runner) writeModule(ctx context.Context, config string, log zerolog.Logger) {
	files, err := r.Modules.WriteModule(ctx, config)
	var u unavailable
	switch {
	case errors.As(err, &u) && u.Unavailable():
		// The writer said why, once.
	case err != nil:
		log.Warn().Err(err).Msg("byte module not written (the model is exported)")
	default:
		log.Info().Strs("files", files).Msg("wrote the byte module")
	}
}
