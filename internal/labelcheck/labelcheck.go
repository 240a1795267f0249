// Package labelcheck makes a model's labels ground truth: it decodes the
// residual stream at every block boundary through the labels (the host's
// own forward pass, run on the model cut after each block with a readout
// on every labelled dimension) and compares every labelled value with the
// layered circuit's value at the matching level on the same input.
package labelcheck

import (
	"context"
	"fmt"
	"math"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Tol is how far a decoded value may be from the circuit's: the mappers'
// values are integers, exact or within a fraction of their readout margin ½.
const Tol = 0.25

// Report sums up a check.
type Report struct {
	// Labels is the number of value labels naming a circuit value;
	// Compared the number of (sample, boundary, label) values compared.
	Labels, Compared int
	// Boundaries is the number of block boundaries decoded (blocks + 1).
	Boundaries int
	// MaxErr is the largest |decoded − circuit value| seen.
	MaxErr float64
}

// Decode returns the residual stream of m at boundary b (after b blocks;
// 0: the embedding) at the dimensions of labels for every input: out[s][i]
// is x[labels[i].Token][labels[i].Dim] of sample s (token −1 reads token 0).
func Decode(m *model.Model, b int, labels []model.ValueLabel, inputs []bitvec.Vec) ([][]float64, error) {
	if b < 0 || b > len(m.Blocks) {
		return nil, fmt.Errorf("labelcheck: boundary %d outside 0…%d", b, len(m.Blocks))
	}
	if len(labels) == 0 {
		return make([][]float64, len(inputs)), nil
	}
	cut := *m
	cut.Labels = nil
	cut.Blocks = m.Blocks[:b]
	cut.Readout = model.Readout{}
	for _, v := range labels {
		cut.Readout.Token = append(cut.Readout.Token, max(v.Token, 0))
		cut.Readout.Dim = append(cut.Readout.Dim, v.Dim)
		cut.Readout.Threshold = append(cut.Readout.Threshold, 0)
	}
	res, err := forward.Forward(&cut, inputs, forward.Options{KeepValues: true})
	if err != nil {
		return nil, fmt.Errorf("labelcheck: boundary %d: %w", b, err)
	}
	return res.Values, nil
}

// LevelValues returns the value of every gate of every level of c on input
// in: out[L][j] is gate j of level L (level 0: the inputs).
func LevelValues(c *layered.Circuit, in bitvec.Vec) [][]int64 {
	D := c.Depth()
	out := make([][]int64, D+1)
	out[0] = make([]int64, c.NumInputs)
	for i := range out[0] {
		out[0][i] = int64(in.Get(i))
	}
	for L := 1; L <= D; L++ {
		src := FormValues(c, L-1, out[L-1])
		lo, hi := int(c.LevelStart[L-1]), int(c.LevelStart[L])
		out[L] = make([]int64, hi-lo)
		for g := lo; g < hi; g++ {
			s, w := c.Row(g)
			var sum int64
			for k, j := range s {
				sum += int64(w[k]) * src[j]
			}
			if sum >= int64(c.Threshold[g]) {
				out[L][g-lo] = 1
			}
		}
	}
	return out
}

// FormValues returns the forms of level L given its gate values (a
// circuit without forms, or the last level: the gates themselves).
func FormValues(c *layered.Circuit, L int, gates []int64) []int64 {
	if !c.HasForms() || L >= c.Depth() {
		return gates
	}
	out := make([]int64, c.NumForms(L))
	f0 := int(c.FormStart[L])
	for f := range out {
		k, src, coef := c.Form(f0 + f)
		v := int64(k)
		for e, s := range src {
			v += int64(coef[e]) * gates[s]
		}
		out[f] = v
	}
	return out
}

// Expected returns the circuit value label v names, given the gate values
// of every level and their forms (forms[L], from FormValues).
func Expected(v *model.ValueLabel, gates, forms [][]int64) int64 {
	switch v.Kind {
	case model.Gate:
		return gates[v.Level][v.Index]
	case model.Form:
		return forms[v.Level][v.Index]
	case model.Partial:
		s := int64(v.Const)
		for k, j := range v.Src {
			s += int64(v.Coef[k]) * gates[v.Level][j]
		}
		return s
	}
	return 0
}

// Check decodes every labelled circuit value of m at every boundary on
// every input and compares it with c's; it fails on the first value off
// by more than Tol, naming the label, boundary and sample.
func Check(ctx context.Context, m *model.Model, c *layered.Circuit, inputs []bitvec.Vec) (Report, error) {
	var rep Report
	l := m.Labels
	if l == nil {
		return rep, fmt.Errorf("labelcheck: the model (%s) has no labels", m.Arch)
	}
	if err := l.Validate(m); err != nil {
		return rep, err
	}
	if len(l.Levels) != c.Depth()+1 {
		return rep, fmt.Errorf("labelcheck: labels name %d levels, the circuit has %d", len(l.Levels), c.Depth()+1)
	}
	for L := range l.Levels {
		if int(l.Levels[L]) != c.LevelWidth(L) || int(l.Forms[L]) != c.NumForms(L) {
			return rep, fmt.Errorf("labelcheck: level %d: labels say %d gates and %d forms, the circuit %d and %d", L, l.Levels[L], l.Forms[L], c.LevelWidth(L), c.NumForms(L))
		}
	}
	gates := make([][][]int64, len(inputs))
	forms := make([][][]int64, len(inputs))
	for s, in := range inputs {
		gates[s] = LevelValues(c, in)
		forms[s] = make([][]int64, len(gates[s]))
		for L := range gates[s] {
			forms[s][L] = FormValues(c, L, gates[s][L])
		}
	}
	for _, v := range l.Values {
		if v.Kind != model.Aux {
			rep.Labels++
		}
	}
	rep.Boundaries = len(m.Blocks) + 1
	for b := 0; b <= len(m.Blocks); b++ {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		var at []model.ValueLabel
		var idx []int
		for i, v := range l.Values {
			if v.Kind != model.Aux && v.From <= int32(b) && int32(b) <= v.Until {
				at = append(at, v)
				idx = append(idx, i)
			}
		}
		got, err := Decode(m, b, at, inputs)
		if err != nil {
			return rep, err
		}
		for s := range inputs {
			for k := range at {
				want := Expected(&at[k], gates[s], forms[s])
				e := math.Abs(got[s][k] - float64(want))
				rep.MaxErr = max(rep.MaxErr, e)
				rep.Compared++
				if !(e <= Tol) {
					return rep, fmt.Errorf("labelcheck: %s: boundary %d, sample %d: value label %d (token %d, dim %d, %s) decodes to %v, the circuit's value is %d",
						m.Arch, b, s, idx[k], at[k].Token, at[k].Dim, at[k].Describe(), got[s][k], want)
				}
			}
		}
	}
	return rep, nil
}
