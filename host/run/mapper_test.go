package run

import (
	"context"
	"github.com/rs/zerolog"
	"github.com/tcforge/tcforge/internal/forward"
	"math"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// setEntries rebuilds tensor name of m with f applied to every entry
// (f returns the new value; 0 drops it) plus the extra entries.
func setEntries(t *testing.T, m *model.Model, name string, f func(r, c int, v float32) float32, extra ...[3]float64) {
	t.Helper()
	old := m.Tensor(name)
	b := model.NewBuilder(name, old.Rows, old.Cols)
	for r := 0; r < old.Rows; r++ {
		cols, vals := old.Row(r)
		for k, c := range cols {
			b.Add(r, int(c), float64(f(r, int(c), vals[k])))
		}
	}
	for _, e := range extra {
		b.Add(int(e[0]), int(e[1]), e[2])
	}
	nt, err := b.Tensor()
	if err != nil {
		t.Fatal(err)
	}
	*old = nt
}

// TestCorruptedModelsAreCaught flips the sign of one circuit edge (g0 → g2)
// in each mapper's weights and checks that the host's verification, which
// runs its own forward pass against the layered circuit, rejects it while
// accepting the untouched model, and names where the pass departs from
// the labelled circuit values: block 1, the units writing g2's dimension
// and g2's label.
func TestCorruptedModelsAreCaught(t *testing.T) {
	ctx := context.Background()
	l := sdktest.ThreeGates()
	in := sdktest.AllInputs(2)
	want, err := bitvec.EvalSliced(in, 2, l.Eval)
	if err != nil {
		t.Fatal(err)
	}
	flipColumn := func(tensor string, col int) func(*testing.T, *model.Model) {
		return func(t *testing.T, m *model.Model) {
			setEntries(t, m, tensor, func(r, c int, v float32) float32 {
				if c == col {
					return -v
				}
				return v
			})
		}
	}
	// In tokens-as-gates an edge's sign is its head: move (g2 = token 4, g0 = token 2)
	// from the + head's K to the − head's.
	moveToNegativeHead := func(t *testing.T, m *model.Model) {
		setEntries(t, m, "attn.head0.k", func(r, c int, v float32) float32 {
			if r == 4 && c == 2 {
				return 0
			}
			return v
		})
		setEntries(t, m, "attn.head1.k", func(r, c int, v float32) float32 { return v }, [3]float64{4, 2, 1})
	}
	// plugin maps l with mapper mp at key = value, as a run does (labels
	// included).
	plugin := func(mp *sdk.Mapper, key, value string) func() (*model.Model, error) {
		return func() (*model.Model, error) {
			return mp.Map(ctx, sdktest.Pass(t, mp, map[string]any{key: value}), l)
		}
	}
	for _, tc := range []struct {
		name    string
		mapper  func() (*model.Model, error)
		corrupt func(*testing.T, *model.Model)
		where   string // where the error says the pass departs from the labels
	}{
		// mlp: slot 1 holds g0; both step units of g2 read it.
		{"no-attention/mlp", plugin(noattention.Plugin, "variant", "mlp"), flipColumn("blocks.1.ffn.gate", 1),
			`block 1, ffn 1 or ffn 2 (writes dim 1: L2 gate 0 "hand"): token 0, dim 1 is 0, the circuit's value is 1 (value label 5: L2 gate 0 "hand")`},
		// residual: level 1 puts g0 in slot 0.
		{"no-attention/residual", plugin(noattention.Plugin, "variant", "residual"), flipColumn("blocks.1.ffn.gate", 0),
			`block 1, ffn 0 or ffn 2 or ffn 3 (writes dim 0: L2 gate 0 "hand"): token 0, dim 0 is `},
		{"tokens-as-gates/hard", plugin(tokensasgates.Plugin, "attention", "hard"), moveToNegativeHead,
			`block 1, ffn 0 (step: SiLU(κ(ACC − THR) + A), to VAL) or ffn 1 (step: SiLU(κ(ACC − THR) − A), to VAL) or ffn 2 (clears VAL (its stale value)): token 4, dim 5 is 0, the circuit's value is 1 (value label`},
		{"tokens-as-gates/softmax", plugin(tokensasgates.Plugin, "attention", "softmax"), moveToNegativeHead,
			`block 1, ffn 0 (step: SiLU(κ(ACC − THR) + A), to VAL) or ffn 1 (step: SiLU(κ(ACC − THR) − A), to VAL) or ffn 2 (clears VAL (its stale value)): token 4, dim 7 is 0, the circuit's value is 1 (value label`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.mapper()
			if err != nil {
				t.Fatal(err)
			}
			res, err := point.CheckModel(context.Background(), m, l, in, want, point.ModelOptions{})
			if err != nil {
				t.Fatalf("the untouched model fails verification: %v", err)
			}
			if math.Abs(res.MinMargin-0.5) > 1e-3 {
				t.Errorf("min margin %v, want ≈ 0.5", res.MinMargin)
			}
			tc.corrupt(t, m)
			if err := m.Validate(); err != nil {
				t.Fatalf("the corrupted model is invalid (should be well-formed and wrong): %v", err)
			}
			_, err = point.CheckModel(context.Background(), m, l, in, want, point.ModelOptions{})
			if err == nil || !strings.Contains(err.Error(), "float32 model vs layered circuit: sample 3, output bit 0 is 0, want 1") {
				t.Errorf("verification of the corrupted model: %v, want a mismatch on sample 3 (a = b = 1)", err)
			}
			if !strings.Contains(err.Error(), "on sample 3 the pass first departs from the labelled circuit values at "+tc.where) {
				t.Errorf("verification of the corrupted model: %v, want it located at %s", err, tc.where)
			}
		})
	}
}

func TestVerifyModelRejectsShape(t *testing.T) {
	l := sdktest.ThreeGates()
	m, err := tokensasgates.Map(context.Background(), l, tokensasgates.Options{Mode: model.Hard})
	if err != nil {
		t.Fatal(err)
	}
	m.Readout.Token = append(m.Readout.Token, 0)
	m.Readout.Dim = append(m.Readout.Dim, 0)
	m.Readout.Threshold = append(m.Readout.Threshold, 0.5)
	if _, err := point.CheckModel(context.Background(), m, l, nil, nil, point.ModelOptions{}); err == nil || !strings.Contains(err.Error(), "2 outputs") {
		t.Errorf("a model with an extra output: %v", err)
	}
}

func TestBetaSearch(t *testing.T) {
	l := sdktest.ThreeGates()
	m, err := tokensasgates.Map(context.Background(), l, tokensasgates.Options{Mode: model.Softmax, Beta: 8})
	if err != nil {
		t.Fatal(err)
	}
	in := sdktest.AllInputs(2)
	want, _ := bitvec.EvalSliced(in, 2, l.Eval)
	mc, err := point.CheckModel(context.Background(), m, l, in, want, point.ModelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	prog := mc.Program
	bmin, step, err := betaSearch(context.Background(), prog, in, want, 1, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	if step != 8.0/64 || bmin <= 0 || bmin > 8 {
		t.Fatalf("β min %v, step %v", bmin, step)
	}
	// Exact at β_min, wrong just below.
	for _, c := range []struct {
		beta  float64
		exact bool
	}{{bmin, true}, {bmin - step, false}} {
		res, err := prog.Run(in, forward.Options{Beta: c.beta})
		if err != nil {
			t.Fatal(err)
		}
		if got := point.FirstMismatch("", res.Outputs, want, 1) == nil; got != c.exact {
			t.Errorf("β = %v: exact %v, want %v", c.beta, got, c.exact)
		}
	}
}

func TestBetaMinProbe(t *testing.T) {
	l := sdktest.ThreeGates()
	m, err := tokensasgates.Map(context.Background(), l, tokensasgates.Options{Mode: model.Softmax, Beta: 8})
	if err != nil {
		t.Fatal(err)
	}
	in := sdktest.AllInputs(2)
	want, _ := bitvec.EvalSliced(in, 2, l.Eval)
	mc, err := point.CheckModel(context.Background(), m, l, in, want, point.ModelOptions{ProbeBeta: true})
	if err != nil {
		t.Fatal(err)
	}
	prog := mc.Program
	got, step, bound, method, err := betaMin(context.Background(), prog, mc.Beta, in, want, 1, 8, 0, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	bis, bstep, err := betaSearch(context.Background(), prog, in, want, 1, 8, 0)
	if err != nil {
		t.Fatal(err)
	}
	// The same grid point as the bisection, found from the bound.
	if method != "probe" || got != bis || step != bstep || bound < got || bound >= 8 {
		t.Fatalf("β min %v (%s, step %v, bound %v), bisection %v (step %v)", got, method, step, bound, bis, bstep)
	}
	// Exact at the bound; a little below it, the probe reports a unit out
	// of its exact region.
	at, err := prog.Run(in, forward.Options{Beta: bound * (1 + 1e-6)})
	if err != nil {
		t.Fatal(err)
	}
	if err := point.FirstMismatch("", at.Outputs, want, 1); err != nil {
		t.Errorf("at the bound %v: %v", bound, err)
	}
	below, err := prog.Run(in, forward.Options{Beta: bound - 0.01, ProbeBeta: true})
	if err != nil {
		t.Fatal(err)
	}
	if below.Beta.Saturated && point.FirstMismatch("", below.Outputs, want, 1) == nil {
		t.Errorf("β = %v below the bound: exact and reported saturated", bound-0.01)
	}
}
