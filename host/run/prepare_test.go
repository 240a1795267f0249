package run_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// impossible are values of every bundled plugin that no schema bound rules
// out but that its Prepare refuses (or that its schema refuses), each in a
// pipeline whose other points are fine: by plugin name, the pipeline, the
// parameter blamed and part of the reason.
var impossible = map[string][]struct{ src, param, reason string }{
	"keccak": {
		{`construction "keccak" { log_w = 1, rounds = 1, rate = matrix.rate * 25 }` + "\nlayerer \"reifier\" {}", "rate", "25w"},
	},
	"md": {
		{`construction "md" { log_w = 1, rounds = 1, block_bits = 4, chain_bits = matrix.rate * 1000 }` + "\nlayerer \"reifier\" {}", "chain_bits", "larger than the Keccak-p state"},
	},
	"merkle": {
		{`construction "merkle" { log_w = 1, rounds = 1, block_bits = 4, leaves = 2 - matrix.rate }` + "\nlayerer \"reifier\" {}", "leaves", "at least one leaf"},
		{`construction "merkle" { log_w = 1, rounds = 1, block_bits = 4, digest_bits = matrix.rate * 1000 }` + "\nlayerer \"reifier\" {}", "digest_bits", "larger than the Keccak-p state"},
	},
	"bristol": {
		{`construction "bristol" { file = matrix.rate == 1 ? "../../plugins/bristol/testdata/adder4.txt" : "no-such-netlist.txt" }` + "\nlayerer \"reifier\" {}", "file", "no-such-netlist.txt"},
		{`construction "bristol" { file = matrix.rate == 1 ? "../../plugins/bristol/testdata/adder4.txt" : "../../plugins/bristol/testdata/bad/cycle.txt" }` + "\nlayerer \"reifier\" {}", "file", "cycle.txt:7: "},
		{`construction "bristol" { file = "../../plugins/bristol/testdata/adder4.txt", max_arity = matrix.rate }` + "\nlayerer \"reifier\" {}", "max_arity", "must be at least 2"},
	},
	"md5": {
		{`construction "md5" { steps = 63 + matrix.rate }` + "\nlayerer \"reifier\" {}", "steps", "at most 64"},
		{`construction "md5" { blocks = 1023 + matrix.rate }` + "\nlayerer \"reifier\" {}", "blocks", "at most 1024 blocks"},
	},
	"sha1": {
		{`construction "sha1" { steps = 79 + matrix.rate }` + "\nlayerer \"reifier\" {}", "steps", "at most 80"},
		{`construction "sha1" { blocks = 1, message_bits = matrix.rate == 2 ? 8 : null }` + "\nlayerer \"reifier\" {}", "message_bits", "not both"},
	},
	"ascon": {
		{`construction "ascon" { rounds = 11 + matrix.rate }` + "\nlayerer \"reifier\" {}", "rounds", "at most 12"},
		{`construction "ascon" { output_bits = 255 + matrix.rate }` + "\nlayerer \"reifier\" {}", "output_bits", "256 bits"},
	},
	"blake2s": {
		{`construction "blake2s" { rounds = 9 + matrix.rate }` + "\nlayerer \"reifier\" {}", "rounds", "at most 10"},
		{`construction "blake2s" { message_bits = 7 + matrix.rate }` + "\nlayerer \"reifier\" {}", "message_bits", "not a whole number of bytes"},
	},
	"blake3": {
		{`construction "blake3" { rounds = 6 + matrix.rate }` + "\nlayerer \"reifier\" {}", "rounds", "at most 7"},
		{`construction "blake3" { blocks = 1023 + matrix.rate }` + "\nlayerer \"reifier\" {}", "blocks", "at most 1024 blocks"},
	},
	"sha2": {
		{`construction "sha2" { preset = "sha256", rounds = 63 + matrix.rate }` + "\nlayerer \"reifier\" {}", "rounds", "at most 64 rounds"},
		{`construction "sha2" { preset = "sha256", rounds = matrix.rate - 1 }` + "\nlayerer \"reifier\" {}", "rounds", "must be at least 1"},
		{`construction "sha2" { preset = "sha512", rounds = 79 + matrix.rate }` + "\nlayerer \"reifier\" {}", "rounds", "at most 80"},
		{`construction "sha2" { mode = "compress", blocks = matrix.rate }` + "\nlayerer \"reifier\" {}", "blocks", "does not apply"},
	},
	"reifier": {
		{`construction "keccak" { log_w = 1, rounds = 1, rate = 25 }` + "\nlayerer \"reifier\" { mode = matrix.rate }", "mode", ""},
		{`construction "keccak" { log_w = 1, rounds = 1, rate = 25 }` + "\nlayerer \"reifier\" { max_weight = 3 - matrix.rate }", "max_weight", "must be at least 2"},
	},
	"fusion": {
		{`construction "keccak" { log_w = 1, rounds = 1, rate = 25 }` + "\nlayerer \"fusion\" { objective = matrix.rate == 1 ? \"depth\" : \"fast\" }", "objective", "must be one of"},
		{`construction "keccak" { log_w = 1, rounds = 1, rate = 25 }` + "\nlayerer \"fusion\" { max_weight = 3 - matrix.rate }", "max_weight", "must be at least 2"},
		{`construction "keccak" { log_w = 1, rounds = 1, rate = 25 }` + "\nlayerer \"fusion\" { max_width = matrix.rate - 2 }", "max_width", "must be at least 0"},
	},
	"tokens-as-states": {
		{`construction "keccak" { log_w = 1, rounds = 1, rate = 25 }` + "\nlayerer \"fusion\" {}\nmapper \"tokens-as-states\" { assign = matrix.rate == 1 ? \"chunks\" : \"diagonal\" }", "assign", "must be one of"},
	},
	"no-attention": {
		{`construction "keccak" { log_w = 1, rounds = 1, rate = 25 }` + "\nlayerer \"reifier\" {}\nmapper \"no-attention\" { variant = matrix.rate == 1 ? \"mlp\" : \"attention\" }", "variant", "must be one of"},
	},
	"decoder": {
		{`construction "keccak" { log_w = 1, rounds = 1, rate = 25 }` + "\nlayerer \"reifier\" {}\nmapper \"decoder\" { levels_per_step = 64 + matrix.rate }", "levels_per_step", "at most 64"},
		{`construction "keccak" { log_w = 1, rounds = 1, rate = 25 }` + "\nlayerer \"reifier\" {}\nmapper \"decoder\" { bit_order = matrix.rate == 1 ? \"auto\" : \"both\" }", "bit_order", "must be one of"},
		{`construction "keccak" { log_w = 1, rounds = 1, rate = 25 }` + "\nlayerer \"reifier\" {}\nmapper \"decoder\" { max_d_model = 17 - matrix.rate }", "max_d_model", "must be at least 16"},
	},
	"tokens-as-gates": {
		{`construction "keccak" { log_w = 1, rounds = 1, rate = 25 }` + "\nlayerer \"reifier\" {}\nmapper \"tokens-as-gates\" { beta = 1 - matrix.rate }", "beta", "must be ≥ 0"},
	},
}

// spy wraps pl so that every call of its funcs but Prepare adds to calls.
func spy(pl sdk.Plugin, calls *atomic.Int64) sdk.Plugin {
	switch v := pl.(type) {
	case *sdk.Construction:
		c := *v
		c.Build = func(ctx context.Context, p *sdk.Pass) (*circuit.Circuit, error) { calls.Add(1); return v.Build(ctx, p) }
		c.Reference = func(ctx context.Context, p *sdk.Pass, in []bitvec.Vec) ([]bitvec.Vec, error) {
			calls.Add(1)
			return v.Reference(ctx, p, in)
		}
		c.Estimate = nil // the size guard is off in this test
		return &c
	case *sdk.Layerer:
		l := *v
		l.Layer = func(ctx context.Context, p *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
			calls.Add(1)
			return v.Layer(ctx, p, c)
		}
		return &l
	case *sdk.Mapper:
		m := *v
		m.Map = func(ctx context.Context, p *sdk.Pass, c *layered.Circuit) (*model.Model, error) {
			calls.Add(1)
			return v.Map(ctx, p, c)
		}
		return &m
	}
	panic(fmt.Sprintf("unknown plugin %T", pl))
}

// TestImpossibleValuesRefusedBeforeAnyCall: for every bundled plugin, a
// pipeline with one impossible point among possible ones is refused by Run
// with a located diagnostic blaming the parameter, and no plugin func but
// Prepare is called, for any point.
func TestImpossibleValuesRefusedBeforeAnyCall(t *testing.T) {
	var calls atomic.Int64
	builtins := builtin.Plugins()
	spied := map[string]sdk.Plugin{}
	for name, pl := range builtins {
		spied[name] = spy(pl, &calls)
		if _, ok := impossible[name]; !ok {
			t.Errorf("bundled plugin %q has no impossible values in this test", name)
		}
	}
	reg := registry.New(registry.Options{Builtins: spied, InProcess: true, Log: zerolog.Nop()})
	defer reg.Close()
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range impossible {
			if !yield(n) {
				return
			}
		}
	}) {
		for i, tc := range impossible[name] {
			block := strings.NewReplacer(", ", "\n", "{ ", "{\n", " }", "\n}").Replace(tc.src)
			src := fmt.Sprintf("pipeline \"p\" {\n  matrix {\n    rate = [1, 2]\n  }\n%s\n}\n", block)
			f, diags := config.Parse(fmt.Sprintf("%s-%d.hcl", name, i), []byte(src))
			if diags.HasErrors() {
				t.Fatalf("%s: %v", name, diags)
			}
			var reported hcl.Diagnostics
			r := &run.Runner{Registry: reg, Log: zerolog.Nop(), Jobs: 1, Diagnostics: func(d hcl.Diagnostics) { reported = append(reported, d...) }}
			res, err := r.Run(context.Background(), f.Pipelines[0])
			if err == nil || len(res.Rows) != 0 {
				t.Errorf("%s: Run returned %d rows and error %v, want a refusal", name, len(res.Rows), err)
				continue
			}
			if !reported.HasErrors() {
				t.Errorf("%s: no diagnostic reported", name)
				continue
			}
			d := reported[0]
			if d.Subject == nil || d.Subject.Start.Line < 5 {
				t.Errorf("%s: diagnostic %v is not located at the block", name, d)
			}
			if text := d.Summary + " " + d.Detail; !strings.Contains(text, `"`+tc.param+`"`) || !strings.Contains(text, tc.reason) {
				t.Errorf("%s: diagnostic %q, want it to blame %q with %q", name, text, tc.param, tc.reason)
			}
		}
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d plugin calls before the refusal, want none", n)
	}
	// The same plugins do run the possible points of such a pipeline.
	f, diags := config.Parse("ok.hcl", []byte("pipeline \"p\" {\nconstruction \"md\" {\nlog_w = 1\nrounds = 1\nblock_bits = 4\nchain_bits = 8\n}\nlayerer \"reifier\" {}\n}\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	r := &run.Runner{Registry: reg, Log: zerolog.Nop(), Jobs: 1, Samples: 16}
	res, err := r.Run(context.Background(), f.Pipelines[0])
	if err != nil || !res.OK() || calls.Load() == 0 {
		t.Fatalf("a possible point: %v, %d calls", err, calls.Load())
	}
	if row := res.Rows[0]; row.Stats.Depth != 11 || !row.Verified {
		t.Errorf("md chain_bits 8 on Keccak-p[50, 1]: depth %d verified %v, want 11 true", row.Stats.Depth, row.Verified)
	}
}
