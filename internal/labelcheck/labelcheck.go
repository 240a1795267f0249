// Package labelcheck makes a model's labels ground truth: it decodes the
// residual stream at every block boundary through the labels (the host's
// own forward pass, reading every labelled dimension at every boundary
// with a forward.Watch) and compares every labelled value with the
// layered circuit's value at the matching level on the same input (Check);
// on a model that computes something else, it locates the first block
// whose output leaves the labelled values (Locate).
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

// watch returns the forward.Watch of m's labels: at each boundary the
// value labels (not Aux) that hold there, at their token (token −1, every
// token, is read at token 0), and their indexes into l.Values.
func watch(m *model.Model) (*forward.Watch, [][]int) {
	nb := len(m.Blocks)
	wt := &forward.Watch{Token: make([][]int32, nb+1), Dim: make([][]int32, nb+1)}
	idx := make([][]int, nb+1)
	for i, v := range m.Labels.Values {
		if v.Kind == model.Aux {
			continue
		}
		for b := v.From; b <= v.Until; b++ {
			wt.Token[b] = append(wt.Token[b], max(v.Token, 0))
			wt.Dim[b] = append(wt.Dim[b], v.Dim)
			idx[b] = append(idx[b], i)
		}
	}
	return wt, idx
}

// checkLevels checks m's labels against the model and the circuit's
// levels.
func checkLevels(m *model.Model, c *layered.Circuit) error {
	l := m.Labels
	if l == nil {
		return fmt.Errorf("labelcheck: the model (%s) has no labels", m.Arch)
	}
	if err := l.Validate(m); err != nil {
		return err
	}
	if len(l.Levels) != c.Depth()+1 {
		return fmt.Errorf("labelcheck: labels name %d levels, the circuit has %d", len(l.Levels), c.Depth()+1)
	}
	for L := range l.Levels {
		if int(l.Levels[L]) != c.LevelWidth(L) || int(l.Forms[L]) != c.NumForms(L) {
			return fmt.Errorf("labelcheck: level %d: labels say %d gates and %d forms, the circuit %d and %d", L, l.Levels[L], l.Forms[L], c.LevelWidth(L), c.NumForms(L))
		}
	}
	return nil
}

// circuitValues returns the gate values of every level of c on in and
// their forms.
func circuitValues(c *layered.Circuit, in bitvec.Vec) (gates, forms [][]int64) {
	gates = LevelValues(c, in)
	forms = make([][]int64, len(gates))
	for L := range gates {
		forms[L] = FormValues(c, L, gates[L])
	}
	return gates, forms
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
// every input (one float32 pass with a forward.Watch) and compares it with
// c's; it fails on the first value off by more than Tol, naming the label,
// boundary and sample.
func Check(ctx context.Context, m *model.Model, c *layered.Circuit, inputs []bitvec.Vec) (Report, error) {
	var rep Report
	if err := checkLevels(m, c); err != nil {
		return rep, err
	}
	for _, v := range m.Labels.Values {
		if v.Kind != model.Aux {
			rep.Labels++
		}
	}
	rep.Boundaries = len(m.Blocks) + 1
	wt, idx := watch(m)
	prog, err := forward.Compile(m)
	if err != nil {
		return rep, err
	}
	res, err := prog.RunContext(ctx, inputs, forward.Options{Watch: wt})
	if err != nil {
		return rep, fmt.Errorf("labelcheck: %w", err)
	}
	vals := m.Labels.Values
	for s, in := range inputs {
		gates, forms := circuitValues(c, in)
		for b := range idx {
			for k, i := range idx[b] {
				want := Expected(&vals[i], gates, forms)
				got := res.Watched[s][b][k]
				e := math.Abs(got - float64(want))
				rep.MaxErr = max(rep.MaxErr, e)
				rep.Compared++
				if !(e <= Tol) {
					return rep, fmt.Errorf("labelcheck: %s: boundary %d, sample %d: value label %d (token %d, dim %d, %s) decodes to %v, the circuit's value is %d",
						m.Arch, b, s, i, vals[i].Token, vals[i].Dim, vals[i].Describe(), got, want)
				}
			}
		}
	}
	return rep, nil
}
