package run

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/rs/zerolog"

	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/internal/tokencheck"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
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
// torch.nn.TransformerEncoderLayer) or a decoder (tokens as time) whose
// construction reads and writes whole bytes in a bit order
// (docs/export.md, "The byte module").
func ByteInterface(arch string, cp *safetensors.Computes) bool {
	if (arch != "tokens-as-states/stock" && arch != "decoder/stock") || cp == nil || (cp.BitOrder != "lsb-first" && cp.BitOrder != "msb-first") {
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

// description is what an export of model m of row mr adds to its config
// (safetensors.Description): what it computes, the formats it was checked
// in, and test vectors from the verification inputs in with the layered
// circuit l's outputs want — for a decoder also each vector's prompt and
// the tokens it must generate (tokencheck).
func description(m *model.Model, l *layered.Circuit, in, want []bitvec.Vec, cp *safetensors.Computes, mr *ModelRow) (*safetensors.Description, error) {
	d := &safetensors.Description{Computes: cp, Exact: mr.Exact, Samples: mr.Samples, Inputs: in, Outputs: want, NumIn: l.NumInputs, NumOut: l.NumOutputs()}
	if m.Decoder == nil {
		return d, nil
	}
	for _, x := range in[:min(len(in), safetensors.MaxTestVectors)] {
		tok, err := tokencheck.Expected(m.Decoder, l, x)
		if err != nil {
			return nil, fmt.Errorf("export: a test vector's tokens: %w", err)
		}
		d.Prompts, d.Tokens = append(d.Prompts, tokencheck.Prompt(m.Decoder, x)), append(d.Tokens, tok)
	}
	return d, nil
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
