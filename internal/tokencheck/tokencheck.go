// Package tokencheck verifies a decoder model (model.Decoder) token by
// token: it runs the host's greedy generation (forward.Generate) on the
// prompts of random inputs and compares every generated token — the
// working as well as the digest — with the value the model's definitions
// give on the layered circuit's own evaluation of the same input.
package tokencheck

import (
	"context"
	"fmt"
	"math"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/labelcheck"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Prompt returns the prompt tokens of input in for decoder d.
func Prompt(d *model.Decoder, in bitvec.Vec) []int32 {
	p := make([]int32, d.Prompt)
	for j := range p {
		for b := range 8 {
			if i := d.PromptBits[8*j+b]; i >= 0 && in.Get(int(i)) == 1 {
				p[j] |= 1 << b
			}
		}
	}
	return p
}

// Expected returns the tokens decoder d must generate on input in: the
// working from its definitions over c's values, the digest from c's
// outputs. A definition that is not 0 or 1 is an error.
func Expected(d *model.Decoder, c *layered.Circuit, in bitvec.Vec) ([]int32, error) {
	vals := labelcheck.LevelValues(c, in)
	flat := make([]int64, 0, c.NumInputs+c.NumGates())
	for _, lv := range vals {
		flat = append(flat, lv...)
	}
	out := make([]int32, d.Generated())
	for t := range d.Working {
		for b := range 8 {
			i := 8*t + b
			cst, src, coef := d.WorkBit(i)
			v := int64(cst)
			for e, s := range src {
				v += int64(coef[e]) * flat[s]
			}
			if v != 0 && v != 1 {
				return nil, fmt.Errorf("decoder working token %d (%s) bit %d is %d on this input, not 0 or 1", t, name(d, t), b, v)
			}
			out[t] |= int32(v) << b
		}
	}
	last := vals[len(vals)-1]
	for j := range d.Digest {
		for b := range 8 {
			if o := d.DigestBits[8*j+b]; o >= 0 && last[o] == 1 {
				out[d.Working+j] |= 1 << b
			}
		}
	}
	return out, nil
}

func name(d *model.Decoder, t int) string {
	if t < len(d.Names) {
		return d.Names[t]
	}
	return fmt.Sprintf("token %d", t)
}

// Result is a check's outcome.
type Result struct {
	// Outputs are the digest bits each sample generated (output o of
	// sample s), as a pass's outputs are.
	Outputs []bitvec.Vec
	// MinMargin is the generation's smallest logit gap (forward.Generation),
	// at generated token Worst of sample WorstSample.
	MinMargin   float64
	WorstSample int
	Worst       Where
	// Tokens is the number of generated tokens compared.
	Tokens int
}

// Where places generated token Token of a decoder: its position, step and
// name.
type Where struct {
	Token, Position int
	Step            int32
	Name            string
}

// At returns where generated token t is.
func At(d *model.Decoder, t int) Where {
	w := Where{Token: t, Position: d.Prompt + t, Name: name(d, t)}
	if t >= 0 && t < len(d.Step) {
		w.Step = d.Step[t]
	}
	return w
}

func (w Where) String() string {
	return fmt.Sprintf("generated token %d (position %d, step %d, %s)", w.Token, w.Position, w.Step, w.Name)
}

// Mismatch is the first generated token that differs from its expected
// value.
type Mismatch struct {
	Sample, Token, Position int
	Step                    int32
	Name                    string
	Got, Want               int32
	Margin                  float64
}

func (e *Mismatch) Error() string {
	return fmt.Sprintf("sample %d, generated token %d (position %d, step %d, %s) is 0x%02x, want 0x%02x (bits %08b differ); the logit margin there is %.3g",
		e.Sample, e.Token, e.Position, e.Step, e.Name, e.Got, e.Want, e.Got^e.Want, e.Margin)
}

// Check generates on every input (float32, or float64 with fp64) and
// compares every token. On a mismatch it returns the result so far and a
// *Mismatch.
func Check(ctx context.Context, m *model.Model, c *layered.Circuit, inputs []bitvec.Vec, fp64 bool) (*Result, error) {
	d := m.Decoder
	if d == nil {
		return nil, fmt.Errorf("tokencheck: model %q is not a decoder", m.Arch)
	}
	if err := d.CheckCircuit(c.NumInputs, c.NumGates(), c.NumOutputs()); err != nil {
		return nil, err
	}
	prompts := make([][]int32, len(inputs))
	want := make([][]int32, len(inputs))
	for s, in := range inputs {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		prompts[s] = Prompt(d, in)
		w, err := Expected(d, c, in)
		if err != nil {
			return nil, fmt.Errorf("sample %d: %w", s, err)
		}
		want[s] = w
	}
	gen, err := forward.Generate(ctx, m, prompts, forward.GenerateOptions{Float64: fp64})
	if err != nil {
		return nil, err
	}
	res := &Result{MinMargin: gen.MinMargin, Outputs: make([]bitvec.Vec, len(inputs)), WorstSample: gen.WorstSample, Worst: At(d, gen.WorstToken)}
	nOut := c.NumOutputs()
	for s := range inputs {
		res.Tokens += len(gen.Tokens[s])
		out := bitvec.NewVec(nOut)
		for j := range d.Digest {
			if d.Working+j >= len(gen.Tokens[s]) {
				break
			}
			tk := gen.Tokens[s][d.Working+j]
			for b := range 8 {
				if o := d.DigestBits[8*j+b]; o >= 0 && tk>>b&1 == 1 {
					out.Set(int(o), 1)
				}
			}
		}
		res.Outputs[s] = out
	}
	if math.IsNaN(res.MinMargin) {
		return res, fmt.Errorf("a logit is NaN (sample %d, generated token %d)", gen.WorstSample, gen.WorstToken)
	}
	for s := range inputs {
		for t, w := range want[s] {
			if t >= len(gen.Tokens[s]) || gen.Tokens[s][t] != w {
				got := int32(-1)
				if t < len(gen.Tokens[s]) {
					got = gen.Tokens[s][t]
				}
				return res, &Mismatch{Sample: s, Token: t, Position: d.Prompt + t, Step: d.Step[t], Name: name(d, t), Got: got, Want: w, Margin: gen.MinMargin}
			}
		}
	}
	return res, nil
}
