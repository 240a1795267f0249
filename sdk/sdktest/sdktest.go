// Package sdktest holds helpers for testing plugins in-process, in the
// spirit of net/http/httptest: build a construction from Go values, check
// it against its own reference, check a layered circuit against the logic
// circuit it came from, read tables of expected figures. Each helper fails
// the test with a message naming what differs; random inputs are seeded,
// so a failure reproduces.
package sdktest

import (
	"context"
	"encoding/csv"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bits"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Params checks values against a parameter schema and returns them; Go
// ints are accepted where the schema says Int.
func Params(t testing.TB, schema []sdk.Param, values map[string]any) sdk.Params {
	t.Helper()
	vals := make(map[string]any, len(values))
	for k, x := range values {
		if n, ok := x.(int); ok {
			x = int64(n)
		}
		vals[k] = x
	}
	p, err := sdk.NewParams(schema, vals)
	if err != nil {
		t.Fatalf("%v: %v", values, err)
	}
	return p
}

// Build builds construction c with the given parameter values and
// validates the circuit.
func Build(t testing.TB, c *sdk.Construction, values map[string]any) *circuit.Circuit {
	t.Helper()
	circ, err := c.Build(context.Background(), Params(t, c.Params, values))
	if err != nil {
		t.Fatalf("%s %v: %v", c.Name, values, err)
	}
	if err := circ.Validate(); err != nil {
		t.Fatalf("%s %v: %v", c.Name, values, err)
	}
	return circ
}

// CheckReference builds construction c with the given values and checks
// its circuit against c.Reference on n random inputs, as the host does for
// every point of a run. It returns the circuit.
func CheckReference(t testing.TB, c *sdk.Construction, values map[string]any, n int) *circuit.Circuit {
	t.Helper()
	circ := Build(t, c, values)
	in := bits.Random(rand.New(rand.NewPCG(1, 2)), n, len(circ.Inputs))
	want, err := c.Reference(context.Background(), Params(t, c.Params, values), in)
	if err != nil {
		t.Fatalf("%s %v: reference: %v", c.Name, values, err)
	}
	if len(want) != n {
		t.Fatalf("%s %v: reference returned %d outputs for %d inputs", c.Name, values, len(want), n)
	}
	got, err := bits.EvalSliced(in, len(circ.Inputs), circ.Eval)
	if err != nil {
		t.Fatal(err)
	}
	for s := range in {
		if !bits.Equal(got[s], want[s], len(circ.Outputs)) {
			t.Fatalf("%s %v: input %s: circuit %s, reference %s", c.Name, values,
				in[s].Text(len(circ.Inputs)), got[s].Text(len(circ.Outputs)), want[s].Text(len(circ.Outputs)))
		}
	}
	return circ
}

// CheckLayered validates l and checks that it computes what c computes on
// n random inputs. l may carry linear forms (see layered.Circuit).
func CheckLayered(t testing.TB, c *circuit.Circuit, l *layered.Circuit, n int) {
	t.Helper()
	if err := l.Validate(); err != nil {
		t.Fatal(err)
	}
	if l.NumInputs != len(c.Inputs) || l.NumOutputs() != len(c.Outputs) {
		t.Fatalf("layered circuit has %d inputs and %d outputs, the logic circuit %d and %d",
			l.NumInputs, l.NumOutputs(), len(c.Inputs), len(c.Outputs))
	}
	in := bits.Random(rand.New(rand.NewPCG(3, 4)), n, len(c.Inputs))
	want, err := bits.EvalSliced(in, len(c.Inputs), c.Eval)
	if err != nil {
		t.Fatal(err)
	}
	got, err := bits.EvalSliced(in, len(c.Inputs), l.Evaluator())
	if err != nil {
		t.Fatal(err)
	}
	for s := range in {
		if !bits.Equal(got[s], want[s], len(c.Outputs)) {
			t.Fatalf("input %s: layered circuit %s, logic circuit %s",
				in[s].Text(len(c.Inputs)), got[s].Text(len(c.Outputs)), want[s].Text(len(c.Outputs)))
		}
	}
}

// Bits parses a bit string such as "1100 01" (see bits.Parse).
func Bits(t testing.TB, s string) (bits.Vec, int) {
	t.Helper()
	v, n, err := bits.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return v, n
}

// Table reads a CSV file with a header row and returns its rows as maps
// from column name.
func Table(t testing.TB, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s: no header row", path)
	}
	rows := make([]map[string]string, 0, len(recs)-1)
	for _, rec := range recs[1:] {
		row := make(map[string]string, len(rec))
		for i, name := range recs[0] {
			row[name] = rec[i]
		}
		rows = append(rows, row)
	}
	return rows
}

// IntTable is Table for a file of integers.
func IntTable(t testing.TB, path string) []map[string]int {
	t.Helper()
	var rows []map[string]int
	for line, rec := range Table(t, path) {
		row := make(map[string]int, len(rec))
		for name, cell := range rec {
			n, err := strconv.Atoi(cell)
			if err != nil {
				t.Fatalf("%s:%d: column %s: %v", path, line+2, name, err)
			}
			row[name] = n
		}
		rows = append(rows, row)
	}
	return rows
}

// ThreeGates is the hand-built layered circuit the mapper tests check
// activations on, over inputs a, b:
//
//	level 1: g0 = [a + b ≥ 2] (AND), g1 = [−a + b ≥ 1] (b AND NOT a)
//	level 2: g2 = [g0 + g1 ≥ 1] (OR), which is b.
func ThreeGates() *layered.Circuit {
	lb := layered.NewBuilder(2, nil)
	tag := lb.Tag("hand")
	lb.Gate(layered.KindGate, 2, []int32{0, 1}, []int32{1, 1}, tag)
	lb.Gate(layered.KindGate, 1, []int32{0, 1}, []int32{-1, 1}, tag)
	lb.Level()
	lb.Gate(layered.KindGate, 1, []int32{0, 1}, []int32{1, 1}, tag)
	lb.Level()
	return lb.Circuit(nil)
}

// AllInputs returns the 2ⁿ assignments of n bits in counting order: bit i
// of assignment x is bit i of x.
func AllInputs(n int) []bits.Vec {
	in := make([]bits.Vec, 1<<n)
	for x := range in {
		in[x] = bits.NewVec(n)
		for i := range n {
			in[x].Set(i, uint(x>>i&1))
		}
	}
	return in
}
