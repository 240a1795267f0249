package sdktest_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// toyKeccak is Keccak-f[25] at two rounds, unpadded.
var toyKeccak = map[string]any{"log_w": int64(0), "rate": int64(12), "rounds": int64(2), "padding": "none"}

// TestRun is the table runner on the bundled plugins: every mapper over
// both layerers of a toy Keccak, with the figures each row must have.
func TestRun(t *testing.T) {
	var cases []sdktest.Case
	for _, ly := range []struct {
		name  string
		depth int
	}{{"reifier", 15}, {"fusion", 0}} {
		layerer := reifier.Plugin
		if ly.name == "fusion" {
			layerer = fusion.Plugin
		}
		for _, mp := range []struct {
			name   string
			values map[string]any
			want   sdktest.Want
		}{
			{"mlp", map[string]any{"variant": "mlp"}, sdktest.Want{Tokens: 1}},
			{"residual", map[string]any{"variant": "residual"}, sdktest.Want{Tokens: 1}},
			{"softmax", map[string]any{"attention": "softmax"}, sdktest.Want{}},
			{"states", map[string]any{"tokens": int64(4)}, sdktest.Want{Tokens: 4}},
		} {
			mapper := noattention.Plugin
			switch mp.name {
			case "softmax":
				mapper = tokensasgates.Plugin
			case "states":
				mapper = tokensasstates.Plugin
			}
			w := mp.want
			w.Depth = ly.depth
			cases = append(cases, sdktest.Case{Name: ly.name + "/" + mp.name, Construction: keccak.Plugin, Values: toyKeccak,
				Layerer: layerer, Mapper: mapper, MapperValues: mp.values, Want: w, Samples: 32,
				Check: func(t *testing.T, r *sdktest.Result) {
					if r.Model.ExactIn != "fp64 fp32" || r.Model.Labels == 0 || r.Model.LabelMaxErr >= 0.05 {
						t.Errorf("exact in %q, %d labelled values compared (largest difference %v)", r.Model.ExactIn, r.Model.Labels, r.Model.LabelMaxErr)
					}
					if got := r.Model.Model.Stats().Blocks; got < r.Layered.Depth()/2 {
						t.Errorf("%d blocks for depth %d", got, r.Layered.Depth())
					}
				}})
		}
	}
	sdktest.Run(t, cases)
	ExampleRun()
	t.Run("ExampleRun", exampleRun)
}

// wrongWeight is the no-attention MLP of sdktest.ThreeGates with block 0's
// FFN unit 3 reading input a with +1024 instead of −1024: g1 = b AND NOT a
// comes out 1 for a = 1, b = 0 (input 1).
func wrongWeight(t *testing.T) *model.Model {
	m := sdktest.Map(t, noattention.Plugin, map[string]any{"variant": "mlp"}, sdktest.ThreeGates())
	cols, vals := m.Tensor("blocks.0.ffn.gate").Row(3)
	for k, c := range cols {
		if c == 1 {
			vals[k] = -vals[k]
		}
	}
	return m
}

// TestWrongWeightLocated: a model with one wrong weight fails CheckModel
// with the block, the units writing the dimension and the label where the
// pass departs from the circuit; TryModel gives the same as a
// *sdktest.ModelError.
func TestWrongWeightLocated(t *testing.T) {
	l := sdktest.ThreeGates()
	in := sdktest.AllInputs(2)
	sdktest.CheckMapper(t, noattention.Plugin, map[string]any{"variant": "mlp"}, l, sdktest.ModelOptions{In: in, ExactIn: "fp64 fp32", MinMargin: 0.5})
	const where = `on sample 1 the pass first departs from the labelled circuit values at block 0, ffn 3 or ffn 4 (writes dim 2: L1 gate 1 "hand"): token 0, dim 2 is 1, the circuit's value is 0 (value label 4: L1 gate 1 "hand")`
	msg := failure(t, func(tb testing.TB) { sdktest.CheckModel(tb, wrongWeight(t), l, sdktest.ModelOptions{In: in}) })
	if !strings.Contains(msg, "float32 model vs layered circuit: sample 1, output bit 0 is 1, want 0") || !strings.Contains(msg, where) {
		t.Errorf("CheckModel on a wrong weight: %q, want the mismatch and %q", msg, where)
	}
	err := sdktest.TryModel(wrongWeight(t), l, in)
	var me *sdktest.ModelError
	if !errors.As(err, &me) || me.Departure == nil || me.Departure.Block() != 0 || me.Departure.Units[0].Index != 3 ||
		me.Departure.Value.Name != "hand" || me.Mismatch.Sample != 1 {
		t.Errorf("TryModel: %v, want a *ModelError at block 0, unit 3, label \"hand\", sample 1", err)
	}
}

// TestModelOptions: what a check wants beyond the run's is checked — the
// formats, the margin and the labels.
func TestModelOptions(t *testing.T) {
	l := sdktest.ThreeGates()
	in := sdktest.AllInputs(2)
	m := sdktest.Map(t, tokensasgates.Plugin, map[string]any{"attention": "softmax"}, l)
	if msg := failure(t, func(tb testing.TB) { sdktest.CheckModel(tb, m, l, sdktest.ModelOptions{In: in, MinMargin: 0.6}) }); !strings.Contains(msg, "want at least 0.6") {
		t.Errorf("a margin above the model's: %q", msg)
	}
	if msg := failure(t, func(tb testing.TB) { sdktest.CheckModel(tb, m, l, sdktest.ModelOptions{In: in, ExactIn: "fp32"}) }); !strings.Contains(msg, `exact in "fp64 fp32", want "fp32"`) {
		t.Errorf("formats other than the model's: %q", msg)
	}
	// A label naming another gate: the pass is right, the label lies.
	for i, v := range m.Labels.Values {
		if v.Kind == model.Gate && v.Level == 1 {
			m.Labels.Values[i].Index = 1 - v.Index
			break
		}
	}
	if msg := failure(t, func(tb testing.TB) { sdktest.CheckModel(tb, m, l, sdktest.ModelOptions{In: in}) }); !strings.Contains(msg, "labels: labelcheck: ") || !strings.Contains(msg, "decodes to") {
		t.Errorf("a lying label: %q", msg)
	}
	sdktest.CheckModel(t, m, l, sdktest.ModelOptions{In: in, Labels: -1}) // labels not checked
}

// TestForwardStream: Forward's readout and Stream's residual values of the
// hard tokens-as-gates model of sdktest.ThreeGates (tokens a, b, g0, g1,
// g2; VAL is dimension 5): after block 0 the level-1 gates hold a AND b
// and b AND NOT a, the readout g2 = b, margin ½.
func TestForwardStream(t *testing.T) {
	l := sdktest.ThreeGates()
	in := sdktest.AllInputs(2)
	m := sdktest.Map(t, tokensasgates.Plugin, map[string]any{"attention": "hard"}, l)
	const VAL = 5
	got := sdktest.Stream(t, m, in, 1, []int32{2, 3}, []int32{VAL, VAL})
	res := sdktest.Forward(t, m, in, sdktest.PassOptions{})
	for s := range in {
		a, b := float64(s&1), float64(s>>1)
		if math.Abs(got[s][0]-a*b) > 1e-9 || math.Abs(got[s][1]-b*(1-a)) > 1e-9 {
			t.Errorf("a=%v b=%v: g0, g1 after block 0 = %v, want %v, %v", a, b, got[s], a*b, b*(1-a))
		}
		if res.Outputs[s].Get(0) != uint(s>>1) {
			t.Errorf("a=%v b=%v: output %d", a, b, res.Outputs[s].Get(0))
		}
	}
	if res.MinMargin != 0.5 {
		t.Errorf("min margin %v, want 0.5", res.MinMargin)
	}
	sdktest.CheckExport(t, m, in)
}

// TestCheckLayerer: a bundled layerer through the host's call and check.
func TestCheckLayerer(t *testing.T) {
	c := sdktest.Build(t, keccak.Plugin, toyKeccak)
	l := sdktest.CheckLayerer(t, reifier.Plugin, nil, c, 16)
	if l.Depth() != 15 {
		t.Errorf("depth %d, want 15", l.Depth())
	}
	if msg := failure(t, func(tb testing.TB) { sdktest.CheckLayerer(tb, reifier.Plugin, map[string]any{"mode": "nope"}, c, 16) }); !strings.Contains(msg, `"mode"`) {
		t.Errorf("a bad parameter: %q", msg)
	}
}
