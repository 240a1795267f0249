package sdktest

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// CheckLayerer layers the logic circuit c with layerer ly at the given
// parameter values, as the host calls it (sdk.NewPass, then Layer), and
// checks the layered circuit as a run does: valid, with c's inputs and
// outputs, computing what c computes on n random inputs (bit for bit;
// n = 0: 64). It returns the layered circuit.
func CheckLayerer(t testing.TB, ly *sdk.Layerer, values map[string]any, c *circuit.Circuit, n int) *layered.Circuit {
	t.Helper()
	if n == 0 {
		n = 64
	}
	in := point.Samples(3, n, len(c.Inputs))
	want, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
	if err != nil {
		t.Fatal(err)
	}
	lg := &point.Logic{Circuit: c, Seed: 3, In: in, Out: want}
	out, err := point.Layer(context.Background(), ly, Pass(t, ly, values), lg, false)
	if err != nil {
		t.Fatalf("%s %v: %v", ly.Name, values, err)
	}
	return out.Circuit
}

// Case is one row of a Run table: a point of a construction, layered by a
// layerer and mapped by a mapper, each plugin with its parameter values,
// and what the row wants of the figures.
type Case struct {
	// Name names the subtest (default: the plugins' names).
	Name string
	// Construction and Values build the logic circuit, checked against
	// the construction's reference on Samples inputs (0: 64); Circuit,
	// if set, is the logic circuit instead.
	Construction *sdk.Construction
	Values       map[string]any
	Circuit      *circuit.Circuit
	// Layerer and LayererValues layer it (CheckLayerer); Layered, if
	// set, is the layered circuit instead (and the logic circuit is not
	// built).
	Layerer       *sdk.Layerer
	LayererValues map[string]any
	Layered       *layered.Circuit
	// Mapper and MapperValues, if set, map the layered circuit
	// (CheckMapper) with Model's options.
	Mapper       *sdk.Mapper
	MapperValues map[string]any
	Model        ModelOptions
	Samples      int
	// Want are the figures the row must have (zero: not checked).
	Want Want
	// Check, if set, checks the row's results further.
	Check func(t *testing.T, r *Result)
}

// Want are figures a Run row must have; a zero field is not checked.
type Want struct {
	// Depth and Width of the layered circuit.
	Depth, Width int
	// Blocks, DModel and Tokens of the model (model.Stats).
	Blocks, DModel, Tokens int
}

// Result is what a Run row built and checked.
type Result struct {
	Logic   *circuit.Circuit // nil when the case gave Layered
	Layered *layered.Circuit
	Model   *ModelCheck // nil without a mapper
}

// Run runs each case as a subtest, in the spirit of analysistest.Run: it
// builds the case's point with the host's own checks at every step — the
// logic circuit against the construction's reference (CheckReference),
// the layered circuit against the logic circuit (CheckLayerer), the model
// against the layered circuit in float32 and float64 with its labels
// (CheckMapper) — then checks the figures the case wants, and calls its
// Check. A plugin author's test of a new layerer or mapper is a table of
// the points it should handle.
func Run(t *testing.T, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(caseName(tc), func(t *testing.T) {
			r := &Result{Logic: tc.Circuit, Layered: tc.Layered}
			n := tc.Samples
			if n == 0 {
				n = 64
			}
			if r.Layered == nil {
				if r.Logic == nil {
					if tc.Construction == nil {
						t.Fatal("sdktest.Run: a case needs a construction, a circuit or a layered circuit")
					}
					r.Logic = CheckReference(t, tc.Construction, tc.Values, n)
				}
				if tc.Layerer == nil {
					t.Fatal("sdktest.Run: a case without a layered circuit needs a layerer")
				}
				r.Layered = CheckLayerer(t, tc.Layerer, tc.LayererValues, r.Logic, n)
			}
			w := tc.Want
			if ls := r.Layered.Stats(); w.Depth != 0 && ls.Depth != w.Depth || w.Width != 0 && ls.Width != w.Width {
				t.Errorf("layered circuit: depth %d, width %d; want %d, %d (0: any)", ls.Depth, ls.Width, w.Depth, w.Width)
			}
			if tc.Mapper != nil {
				opt := tc.Model
				if opt.In == nil && opt.Samples == 0 {
					opt.Samples = n
				}
				r.Model = CheckMapper(t, tc.Mapper, tc.MapperValues, r.Layered, opt)
				s := r.Model.Model.Stats()
				if w.Blocks != 0 && s.Blocks != w.Blocks || w.DModel != 0 && s.DModel != w.DModel || w.Tokens != 0 && s.Tokens != w.Tokens {
					t.Errorf("model: %d blocks, d_model %d, %d tokens; want %d, %d, %d (0: any)", s.Blocks, s.DModel, s.Tokens, w.Blocks, w.DModel, w.Tokens)
				}
			} else if w.Blocks != 0 || w.DModel != 0 || w.Tokens != 0 {
				t.Error("sdktest.Run: the case wants model figures but has no mapper")
			}
			if tc.Check != nil {
				tc.Check(t, r)
			}
		})
	}
}

// caseName is a case's subtest name.
func caseName(tc Case) string {
	if tc.Name != "" {
		return tc.Name
	}
	var parts []string
	for _, pl := range []sdk.Plugin{tc.Construction, tc.Layerer, tc.Mapper} {
		if pl != nil && !isNil(pl) {
			parts = append(parts, pl.Describe().Name)
		}
	}
	if len(parts) == 0 {
		return "case"
	}
	out := parts[0]
	for _, p := range parts[1:] {
		out += "/" + p
	}
	return out
}

// isNil reports whether pl is a typed nil pointer.
func isNil(pl sdk.Plugin) bool {
	switch p := pl.(type) {
	case *sdk.Construction:
		return p == nil
	case *sdk.Layerer:
		return p == nil
	case *sdk.Mapper:
		return p == nil
	}
	return false
}
