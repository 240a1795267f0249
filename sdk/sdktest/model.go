package sdktest

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/labelcheck"
	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// ModelOptions say what CheckModel and CheckMapper check a model on and
// what they want of it beyond what a run wants (every output bit of the
// float32 pass).
type ModelOptions struct {
	// In are the inputs the model is checked on; nil: Samples inputs
	// drawn from Seed, as a run draws a point's (default 64 from seed 1).
	In      []bitvec.Vec
	Samples int
	Seed    uint64
	// ExactIn, if set, are the formats the model must be exact in, as a
	// run reports them: "fp64 fp32" asks the float64 pass for every bit
	// as well.
	ExactIn string
	// MinMargin, if > 0, is the least distance from its threshold wanted
	// of every readout of the float32 pass (a decoder: of every logit
	// gap).
	MinMargin float64
	// Labels is the number of inputs (the first) on which every value
	// the model's labels name is compared, at every block boundary, with
	// the circuit's (within ¼; docs/labels.md): 0 means 4, −1 none. A
	// model without labels, and a decoder (whose every generated token
	// is checked instead), skip it.
	Labels int
}

// ModelCheck is what CheckModel checked: the model, its inputs and the
// layered circuit's outputs on them, and the float32 pass's results.
type ModelCheck struct {
	Model    *model.Model
	In, Want []bitvec.Vec
	// Outputs and Values are the float32 pass's output bits and readout
	// values per sample (a decoder: the digest bits, no values).
	Outputs []bitvec.Vec
	Values  [][]float64
	// MinMargin is the float32 pass's smallest distance of a readout
	// from its threshold (a decoder: its smallest logit gap).
	MinMargin float64
	// Exact maps "fp32" and "fp64" to whether that pass gave every bit;
	// ExactIn lists the exact ones, widest first ("fp64 fp32"), as a run's
	// exact_in column.
	Exact   map[string]bool
	ExactIn string
	// Labels is the number of labelled values compared (over the
	// boundaries and the inputs checked), LabelMaxErr the largest
	// difference from the circuit's value.
	Labels      int
	LabelMaxErr float64
}

// CheckModel checks model m against the layered circuit l it was mapped
// from, as a run checks every model, with the host's own forward passes:
// its shape, a float32 pass bit for bit against l on the inputs (a
// decoder: greedy generation, every generated token against the circuit's
// values), a float64 pass for ExactIn, and the labels (ModelOptions). A
// model that differs fails the test with the run's error, which names the
// first block and unit where the pass departs from the circuit values the
// labels name.
func CheckModel(t testing.TB, m *model.Model, l *layered.Circuit, opt ModelOptions) *ModelCheck {
	t.Helper()
	if err := m.Validate(); err != nil {
		t.Fatalf("%s: invalid model: %v", m.Arch, err)
	}
	in := opt.In
	if in == nil {
		n, seed := opt.Samples, opt.Seed
		if n == 0 {
			n = 64
		}
		if seed == 0 {
			seed = 1
		}
		in = point.Samples(seed, n, l.NumInputs)
	}
	want, err := bitvec.EvalSliced(in, l.NumInputs, l.Eval)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	pc, err := point.CheckModel(ctx, m, l, in, want, point.ModelOptions{KeepValues: true})
	if err != nil {
		t.Fatalf("%s: %v", m.Arch, err)
	}
	mc := &ModelCheck{Model: m, In: in, Want: want, Outputs: pc.Outputs, Values: pc.Values, MinMargin: pc.MinMargin, Exact: pc.Exact, ExactIn: pc.ExactIn}
	if opt.ExactIn != "" && !sameFormats(mc.ExactIn, opt.ExactIn) {
		t.Errorf("%s: exact in %q, want %q", m.Arch, mc.ExactIn, opt.ExactIn)
	}
	if opt.MinMargin > 0 && !(mc.MinMargin >= opt.MinMargin) {
		t.Errorf("%s: min margin %v at sample %d, output %d; want at least %v", m.Arch, mc.MinMargin, pc.WorstSample, pc.WorstOutput, opt.MinMargin)
	}
	if k := labelInputs(opt.Labels, len(in)); k > 0 && m.Labels != nil && !m.IsDecoder() {
		rep, err := labelcheck.Check(ctx, m, l, in[:k])
		if err != nil {
			t.Fatalf("%s: labels: %v", m.Arch, err)
		}
		mc.Labels, mc.LabelMaxErr = rep.Compared, rep.MaxErr
	}
	return mc
}

// labelInputs is the number of inputs of n the labels are checked on.
func labelInputs(opt, n int) int {
	switch {
	case opt < 0:
		return 0
	case opt == 0:
		return min(4, n)
	}
	return min(opt, n)
}

// sameFormats reports whether two format lists name the same formats.
func sameFormats(a, b string) bool {
	fa, fb := strings.Fields(a), strings.Fields(b)
	if len(fa) != len(fb) {
		return false
	}
	for _, f := range fa {
		if !strings.Contains(" "+b+" ", " "+f+" ") {
			return false
		}
	}
	return true
}

// CheckMapper maps the layered circuit l with mapper mp at the given
// parameter values, as the host calls it (sdk.NewPass, then Map), and
// checks the model (CheckModel).
func CheckMapper(t testing.TB, mp *sdk.Mapper, values map[string]any, l *layered.Circuit, opt ModelOptions) *ModelCheck {
	t.Helper()
	return CheckModel(t, Map(t, mp, values, l), l, opt)
}

// Map maps the layered circuit l with mapper mp at the given parameter
// values, as the host calls it, and validates the model, without checking
// what it computes (CheckMapper does).
func Map(t testing.TB, mp *sdk.Mapper, values map[string]any, l *layered.Circuit) *model.Model {
	t.Helper()
	m, err := mp.Map(context.Background(), Pass(t, mp, values), l)
	if err != nil {
		t.Fatalf("%s %v: %v", mp.Name, values, err)
	}
	if m == nil {
		t.Fatalf("%s %v: no model", mp.Name, values)
	}
	if err := m.Validate(); err != nil {
		t.Fatalf("%s %v: invalid model: %v", mp.Name, values, err)
	}
	return m
}

// PassOptions choose a forward pass of Forward.
type PassOptions struct {
	// Float64 runs the pass in float64 (default float32, the pass a run
	// verifies every model with).
	Float64 bool
	// Beta, if > 0, replaces the inverse temperature of every softmax
	// attention sublayer (the weights stay), as a run's β_min search does.
	Beta float64
}

// PassResult is one forward pass over a list of inputs.
type PassResult struct {
	// Outputs[s] are the output bits of sample s, Values[s] its readout
	// values.
	Outputs []bitvec.Vec
	Values  [][]float64
	// MinMargin is the smallest distance of a readout from its threshold,
	// at output WorstOutput of sample WorstSample.
	MinMargin                float64
	WorstSample, WorstOutput int
}

// Forward runs the host's forward pass of model m (an encoder; a decoder
// is checked by CheckModel) on the inputs.
func Forward(t testing.TB, m *model.Model, in []bitvec.Vec, opt PassOptions) *PassResult {
	t.Helper()
	res, err := forward.Forward(m, in, forward.Options{Float64: opt.Float64, Beta: opt.Beta, KeepValues: true})
	if err != nil {
		t.Fatalf("%s: forward pass: %v", m.Arch, err)
	}
	return &PassResult{Outputs: res.Outputs, Values: res.Values, MinMargin: res.MinMargin, WorstSample: res.WorstSample, WorstOutput: res.WorstOutput}
}

// Stream reads the residual stream of model m at block boundary b (0:
// after the embedding; b: after b blocks, as model.Labels counts them) in
// a float64 pass of the inputs: out[s][k] is dimension dims[k] of token
// tokens[k] on input s. A test reads what a mapper's blocks write with it;
// to read between a block's attention and its FFN, cut the FFN off a copy
// of the model.
func Stream(t testing.TB, m *model.Model, in []bitvec.Vec, b int, tokens, dims []int32) [][]float64 {
	t.Helper()
	if b < 0 || b > len(m.Blocks) {
		t.Fatalf("%s: boundary %d outside 0…%d", m.Arch, b, len(m.Blocks))
	}
	wt := &forward.Watch{Token: make([][]int32, b+1), Dim: make([][]int32, b+1)}
	wt.Token[b], wt.Dim[b] = tokens, dims
	res, err := forward.Forward(m, in, forward.Options{Float64: true, Watch: wt})
	if err != nil {
		t.Fatalf("%s: forward pass: %v", m.Arch, err)
	}
	out := make([][]float64, len(in))
	for s := range in {
		out[s] = res.Watched[s][b]
	}
	return out
}

// CheckExport writes model m as a run's --export does — safetensors and
// a JSON config, CSR and dense — reads each back as the host's loader
// does and checks that the model read computes the float32 readout values
// of m on the inputs, bit for bit.
func CheckExport(t testing.TB, m *model.Model, in []bitvec.Vec) {
	t.Helper()
	want := Forward(t, m, in, PassOptions{})
	for _, limit := range []int64{0, 1 << 40} {
		dir := t.TempDir()
		info, err := safetensors.Export(m, dir, "model", limit)
		if err != nil {
			t.Fatalf("%s: export: %v", m.Arch, err)
		}
		back, err := safetensors.Import(filepath.Join(dir, "model.json"))
		if err != nil {
			t.Fatalf("%s: reading the %s export back: %v", m.Arch, info.Layout, err)
		}
		got := Forward(t, back, in, PassOptions{})
		if !reflect.DeepEqual(got.Values, want.Values) {
			t.Errorf("%s: the %s export read back computes other values", m.Arch, info.Layout)
		}
	}
}

// ModelError is a model check's error where the float32 pass differs
// from the circuit: its Mismatch (the first sample and output bit that
// differ) and its Departure (the first block, its units writing the
// dimension and the label where the pass leaves the labelled circuit
// values; nil with Why saying why). errors.As finds it in TryModel's error.
type ModelError = point.ModelError

// TryModel is CheckModel that returns the run's error instead of failing
// the test, for a test that wants a model to fail (and where): with
// errors.As, a *ModelError gives the first sample and bit that differ
// and where the pass departs from the labelled circuit values.
func TryModel(m *model.Model, l *layered.Circuit, in []bitvec.Vec) error {
	if err := m.Validate(); err != nil {
		return fmt.Errorf("invalid model: %w", err)
	}
	want, err := bitvec.EvalSliced(in, l.NumInputs, l.Eval)
	if err != nil {
		return err
	}
	_, err = point.CheckModel(context.Background(), m, l, in, want, point.ModelOptions{})
	var me *point.ModelError
	if errors.As(err, &me) {
		return me
	}
	return err
}
