package run_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/internal/safetensors"
)

// TestExportDescribes runs a toy Keccak point (padded by the model) and a
// SHA-256 point of 4 rounds with --export and checks that every exported
// config says what it computes (construction, resolved parameters, bit
// ranges, bit order, who pads, layerer, mapper) and in which formats a
// pass reproduced every bit: "exact in" equals the row's, fp16 and bf16
// "not checked", and a stock model names its encoder's hyper-parameters.
func TestExportDescribes(t *testing.T) {
	reg := registry.New(registry.Options{Builtins: builtin.Plugins(), InProcess: true, Log: zerolog.Nop()})
	defer reg.Close()
	src := `
pipeline "k" {
  construction "keccak" {
    log_w  = 1
    rate   = 32
    rounds = 2
    padding = "sha3"
  }
  layerer "fusion" {}
  mapper "tokens-as-states" { tokens = 2 }
  mapper "no-attention" { variant = "mlp" }
}
pipeline "s" {
  construction "sha2" {
    preset = "sha256"
    rounds = 4
  }
  layerer "fusion" {}
  mapper "no-attention" { variant = "mlp" }
}
`
	f, diags := config.Parse("export.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	dir := t.TempDir()
	r := &run.Runner{Registry: reg, Log: zerolog.Nop(), Jobs: 1, Samples: 16, Export: dir}
	for _, tc := range []struct {
		p                *config.Pipeline
		order, padding   string
		inBits, outBits  int
		param            string
		paramValue       any
		stockLayers, ffn bool
	}{
		{f.Pipelines[0], "lsb-first", "model", 28, 32, "rate", float64(32), true, true},
		{f.Pipelines[1], "msb-first", "model", 440, 256, "rounds", float64(4), false, false},
	} {
		res, err := r.Run(context.Background(), tc.p)
		if err != nil || !res.OK() {
			t.Fatalf("%s: %v", tc.p.Name, err)
		}
		for _, m := range res.Rows[0].Models {
			if m.ExactIn != "fp64 fp32" {
				t.Errorf("%s %s: exact in %q, want \"fp64 fp32\"", tc.p.Name, m.Arch, m.ExactIn)
			}
			raw, err := os.ReadFile(m.Export)
			if err != nil {
				t.Fatal(err)
			}
			var c struct {
				safetensors.Config
				Computes struct {
					safetensors.Computes
					Params map[string]any `json:"params"`
				} `json:"computes"`
			}
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatal(err)
			}
			cp := c.Computes
			name := filepath.Base(m.Export)
			if cp.Construction != tc.p.Construction.Name || cp.BitOrder != tc.order || cp.Padding != tc.padding ||
				cp.Layerer != "fusion" || cp.Mapper != m.Mapper || cp.Params[tc.param] != tc.paramValue {
				t.Errorf("%s: computes %+v", name, cp)
			}
			if len(cp.Inputs) != 1 || cp.Inputs[0].Bits != tc.inBits || len(cp.Outputs) != 1 || cp.Outputs[0].Bits != tc.outBits {
				t.Errorf("%s: inputs %v outputs %v, want %d and %d bits", name, cp.Inputs, cp.Outputs, tc.inBits, tc.outBits)
			}
			want := map[string]string{"fp64": "exact", "fp32": "exact", "fp16": "not checked", "bf16": "not checked"}
			if !reflect.DeepEqual(c.Precision, want) || !reflect.DeepEqual(c.ExactIn, []string{"fp64", "fp32"}) || c.Samples != 16 {
				t.Errorf("%s: precision %v exact_in %v samples %d, want %v", name, c.Precision, c.ExactIn, c.Samples, want)
			}
			if stock := m.Mapper == "tokens-as-states"; stock != (c.Stock != nil) {
				t.Errorf("%s: stock %+v", name, c.Stock)
			} else if stock && (c.Stock.Layers != m.Stats.Blocks || c.Stock.FFN != m.Stats.FFNHidden || c.Stock.FFN != c.Blocks[0].Layer.FFN || c.Stock.Heads < 1) {
				t.Errorf("%s: stock %+v, model %d blocks, FFN %d", name, c.Stock, m.Stats.Blocks, m.Stats.FFNHidden)
			}
		}
	}
}
