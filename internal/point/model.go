package point

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/interrupt"
	"github.com/tcforge/tcforge/internal/labelcheck"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/internal/tokencheck"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// ModelOptions tune CheckModel's passes.
type ModelOptions struct {
	// ProbeBeta derives ModelCheck.Beta in the float32 pass
	// (forward.Options.ProbeBeta).
	ProbeBeta bool
	// MaxBytes bounds each pass's buffers (forward.Options.MaxBytes).
	MaxBytes int64
	// KeepValues keeps the float32 pass's readout values in
	// ModelCheck.Values.
	KeepValues bool
}

// ModelCheck is the outcome of CheckModel: the float32 pass that decides
// whether the model is verified, and which formats are exact.
type ModelCheck struct {
	// Program is the compiled model (nil for a decoder, and when the
	// model did not compile), for further passes (a β search).
	Program *forward.Program
	// Outputs and Values are the float32 pass's output bits and (with
	// ModelOptions.KeepValues) readout values, per sample.
	Outputs []bitvec.Vec
	Values  [][]float64
	// MinMargin is the float32 pass's smallest distance of a readout
	// from its threshold (a decoder: its smallest logit gap), at output
	// WorstOutput of sample WorstSample.
	MinMargin                float64
	WorstSample, WorstOutput int
	// Beta is the probe's β bound (ModelOptions.ProbeBeta).
	Beta *forward.BetaBound
	// Decoder is a decoder's token-by-token check in float32
	// (internal/tokencheck); nil for an encoder.
	Decoder *tokencheck.Result
	// Exact maps each format whose pass ran on every sample ("fp32",
	// "fp64") to whether it reproduced every output bit; ExactIn lists
	// the exact ones widest first ("fp64 fp32"), "none" if none. Set
	// once the model is verified (float32 exact).
	Exact   map[string]bool
	ExactIn string
}

// ModelError is a model whose float32 pass differs from its layered
// circuit: the first sample and output bit that differ (Mismatch), and
// where the pass on that sample first leaves the circuit values the
// model's labels name (Departure; nil with Why saying why none is named).
type ModelError struct {
	Mismatch  *MismatchError
	Departure *labelcheck.Departure
	Why       string
}

// Error implements error: the mismatch, then the departure ("first
// departs from the labelled circuit values at block 3, ffn 17 (…): token
// 0, dim 5 is 0.0039, the circuit's value is 1 (value label 41: …)").
func (e *ModelError) Error() string {
	var b strings.Builder
	b.WriteString(e.Mismatch.Error())
	if e.Departure != nil {
		fmt.Fprintf(&b, "; on sample %d the pass first departs from the labelled circuit values at %s", e.Mismatch.Sample, e.Departure)
	} else if e.Why != "" {
		fmt.Fprintf(&b, "; %s", e.Why)
	}
	return b.String()
}

// Unwrap returns the mismatch.
func (e *ModelError) Unwrap() error { return e.Mismatch }

// CheckModel verifies model m against layered circuit l on inputs in,
// whose outputs by l are want, as a run verifies every model: the input
// and output counts, then a float32 pass (a decoder: greedy generation,
// every token checked, internal/tokencheck) bit for bit against want —
// a difference is a *ModelError locating the first block and unit where
// the pass departs from the labelled circuit values — then a float64
// pass, for ModelCheck.Exact. It returns what it ran (nil if nothing did)
// with the error.
func CheckModel(ctx context.Context, m *model.Model, l *layered.Circuit, in, want []bitvec.Vec, opt ModelOptions) (*ModelCheck, error) {
	if m.NumInputs() != l.NumInputs || m.NumOutputs() != l.NumOutputs() {
		return nil, fmt.Errorf("the model reads %d inputs and %d outputs, the layered circuit has %d and %d",
			m.NumInputs(), m.NumOutputs(), l.NumInputs, l.NumOutputs())
	}
	if m.IsDecoder() {
		return checkDecoder(ctx, m, l, in, want)
	}
	prog, err := interrupt.Do(ctx, func() (*forward.Program, error) { return forward.Compile(m) })
	if err != nil {
		return nil, err
	}
	res, err := prog.RunContext(ctx, in, forward.Options{ProbeBeta: opt.ProbeBeta, MaxBytes: opt.MaxBytes, KeepValues: opt.KeepValues})
	if err != nil {
		return nil, fmt.Errorf("forward pass: %w", err)
	}
	mc := &ModelCheck{Program: prog, Outputs: res.Outputs, Values: res.Values, MinMargin: res.MinMargin,
		WorstSample: res.WorstSample, WorstOutput: res.WorstOutput, Beta: res.Beta}
	if err := Mismatch("float32 model vs layered circuit", in, l.NumInputs, res.Outputs, want, l.NumOutputs()); err != nil {
		return mc, locate(ctx, prog, l, in, err)
	}
	res64, err := prog.RunContext(ctx, in, forward.Options{Float64: true, MaxBytes: opt.MaxBytes})
	if err != nil {
		return mc, fmt.Errorf("float64 pass: %w", err)
	}
	mc.setExact(FirstMismatch("", res64.Outputs, want, l.NumOutputs()) == nil)
	return mc, nil
}

// locate turns the float32 pass's mismatch err into a *ModelError with
// the departure on its first wrong sample.
func locate(ctx context.Context, prog *forward.Program, l *layered.Circuit, in []bitvec.Vec, err error) error {
	var me *MismatchError
	if !errors.As(err, &me) {
		return err
	}
	e := &ModelError{Mismatch: me}
	m := prog.Model()
	switch {
	case m.Labels == nil:
		e.Why = "the model has no labels to locate the difference by"
	default:
		d, lerr := labelcheck.Locate(ctx, prog, l, in[me.Sample], false)
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case lerr != nil:
			e.Why = fmt.Sprintf("locating it by the labels failed: %v", lerr)
		case d == nil:
			e.Why = fmt.Sprintf("on sample %d every labelled value is the circuit's at every block boundary: the readout or an unlabelled dimension departs", me.Sample)
		default:
			e.Departure = d
		}
	}
	return e
}

// checkDecoder is CheckModel for a decoder: tokencheck in float32 and
// float64.
func checkDecoder(ctx context.Context, m *model.Model, l *layered.Circuit, in, want []bitvec.Vec) (*ModelCheck, error) {
	res, err := tokencheck.Check(ctx, m, l, in, false)
	var mc *ModelCheck
	if res != nil {
		mc = &ModelCheck{Outputs: res.Outputs, MinMargin: res.MinMargin, WorstSample: res.WorstSample, WorstOutput: -1, Decoder: res}
	}
	if err != nil {
		return mc, fmt.Errorf("float32 generation: %w", err)
	}
	if err := Mismatch("float32 decoder vs layered circuit", in, l.NumInputs, res.Outputs, want, l.NumOutputs()); err != nil {
		return mc, err
	}
	_, err64 := tokencheck.Check(ctx, m, l, in, true)
	if err := ctx.Err(); err != nil {
		return mc, err
	}
	mc.setExact(err64 == nil)
	return mc, nil
}

// setExact records a verified model's formats: float32 exact, float64 as
// given.
func (mc *ModelCheck) setExact(fp64 bool) {
	mc.Exact = map[string]bool{"fp32": true, "fp64": fp64}
	mc.ExactIn = ExactIn(mc.Exact)
}

// ExactIn lists the formats of exact that are true, widest first
// (safetensors.Formats), "none" if none.
func ExactIn(exact map[string]bool) string {
	var out []string
	for _, f := range safetensors.Formats {
		if exact[f] {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, " ")
}
