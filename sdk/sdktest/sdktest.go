// Package sdktest holds helpers for testing plugins in-process, in the
// spirit of net/http/httptest and analysistest, with the host's own checks:
//
//   - constructions: build one from Go values, check it against its own
//     reference (CheckReference; Replay for a run's seed), known answers
//     (CheckVectors) and an independent oracle (CheckOracle), check the
//     refusals of Prepare (CheckRefused);
//   - layerers: CheckLayerer calls one as the host does and checks the
//     layered circuit against the logic circuit (CheckLayered checks a
//     layered circuit built otherwise);
//   - mappers: CheckMapper calls one as the host does and CheckModel
//     checks a model with the host's forward passes — float32 bit for bit
//     against the layered circuit, float64, margins, the labels — naming,
//     when a pass differs, the first block and unit where it departs from
//     the labelled circuit values (TryModel returns it); Forward, Stream
//     and CheckExport look inside;
//   - Run, a table of points each built, layered, mapped and checked in
//     one call, with the figures each must have.
//
// A plugin outside this module tests itself with sdk/... imports only.
// Each helper fails the test with a message naming what differs: for
// outputs, the number of wrong bits, the input, output and wanted output
// in hex, and the seed; random inputs are seeded, so a failure reproduces.
package sdktest

import (
	"context"
	"encoding/csv"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Pass checks values against plugin pl's schema, runs its Prepare and
// returns the Pass its funcs are called with, as the host does before every
// call (sdk.NewPass).
func Pass(t testing.TB, pl sdk.Plugin, values map[string]any) *sdk.Pass {
	t.Helper()
	pass, err := sdk.NewPass(context.Background(), pl, values)
	if err != nil {
		t.Fatalf("%s %v: %v", pl.Describe().Name, values, err)
	}
	return pass
}

// Build builds construction c with the given parameter values and
// validates the circuit.
func Build(t testing.TB, c *sdk.Construction, values map[string]any) *circuit.Circuit {
	t.Helper()
	circ, err := c.Build(context.Background(), Pass(t, c, values))
	if err != nil {
		t.Fatalf("%s %v: %v", c.Name, values, err)
	}
	if err := circ.Validate(); err != nil {
		t.Fatalf("%s %v: %v", c.Name, values, err)
	}
	return circ
}

// CheckEstimate builds construction c with the given values and checks
// that c.Estimate predicts its nodes and edges to within one part in
// within (e.g. 50: 2 %), as the host's size guard relies on.
func CheckEstimate(t testing.TB, c *sdk.Construction, values map[string]any, within int64) {
	t.Helper()
	circ := Build(t, c, values)
	e, err := c.Estimate(context.Background(), Pass(t, c, values))
	if err != nil {
		t.Fatalf("%s %v: Estimate: %v", c.Name, values, err)
	}
	built := sdk.SizeOf(circ)
	for _, f := range []struct {
		name      string
		got, want int64
	}{{"nodes", e.Nodes, built.Nodes}, {"edges", e.Edges, built.Edges}} {
		if d := f.got - f.want; d*within > f.want || -d*within > f.want {
			t.Errorf("%s %v: estimated %d %s, built %d", c.Name, values, f.got, f.name, f.want)
		}
	}
}

// CheckReference builds construction c with the given values and checks
// its circuit against c.Reference on n random inputs: the host's own point
// pipeline (validation, the comparison, the mismatch report), in process,
// on inputs drawn from seed 1. It returns the circuit. A run draws each
// point's inputs from a seed of its own, which its mismatch report prints;
// Replay checks those inputs.
func CheckReference(t testing.TB, c *sdk.Construction, values map[string]any, n int) *circuit.Circuit {
	t.Helper()
	return Replay(t, c, values, 1, n)
}

// Replay is CheckReference on the n inputs a run drew from seed: the seed
// and the number of samples a host's mismatch report gives ("seed 0x…, 64
// samples"), so that a failure seen in a run reproduces in a unit test.
func Replay(t testing.TB, c *sdk.Construction, values map[string]any, seed uint64, n int) *circuit.Circuit {
	t.Helper()
	lg, err := point.Build(context.Background(), c, Pass(t, c, values), seed, n, false)
	if err != nil {
		t.Fatalf("%s %v: %v", c.Name, values, err)
	}
	return lg.Circuit
}

// Vector is a known answer: an input and the output it must give, each as
// hex of the bits packed most significant first (bitvec.PackMSB: a
// whole-byte message and a digest as a standard prints them). Bits is the
// input's length when it is not a whole number of bytes (0: 4·len(In)).
type Vector struct {
	In, Want string
	Bits     int
}

// CheckVectors builds construction c with the given values and checks that
// both the circuit and c.Reference give each vector's output.
func CheckVectors(t testing.TB, c *sdk.Construction, values map[string]any, vectors []Vector) {
	t.Helper()
	circ := Build(t, c, values)
	nIn, nOut := len(circ.Inputs), len(circ.Outputs)
	in := make([]bitvec.Vec, len(vectors))
	want := make([]bitvec.Vec, len(vectors))
	for k, v := range vectors {
		bits := v.Bits
		if bits == 0 {
			bits = 4 * len(v.In)
		}
		if bits != nIn || 4*len(v.Want) < nOut {
			t.Fatalf("%s %v: vector %d has %d input bits and %d output hex digits, the circuit %d inputs and %d outputs", c.Name, values, k, bits, len(v.Want), nIn, nOut)
		}
		in[k] = bitvec.FromPackedMSB(unhex(t, v.In), nIn)
		want[k] = bitvec.FromPackedMSB(unhex(t, v.Want), nOut)
	}
	check(t, c, values, circ, "vector", in, want)
}

// CheckOracle builds construction c with the given values and checks both
// the circuit and c.Reference against oracle, an independent computation
// (the standard library's hash, a reference written apart from the
// builder), on n random inputs drawn from seed 1: oracle gets an input
// vector of len(circuit inputs) bits and returns the output vector.
func CheckOracle(t testing.TB, c *sdk.Construction, values map[string]any, n int, oracle func(in bitvec.Vec) bitvec.Vec) *circuit.Circuit {
	t.Helper()
	circ := Build(t, c, values)
	in := point.Samples(1, n, len(circ.Inputs))
	want := make([]bitvec.Vec, n)
	for k := range in {
		want[k] = oracle(in[k])
	}
	check(t, c, values, circ, "oracle", in, want)
	return circ
}

// check compares the circuit's and the reference's outputs on in with want.
func check(t testing.TB, c *sdk.Construction, values map[string]any, circ *circuit.Circuit, what string, in, want []bitvec.Vec) {
	t.Helper()
	got, err := bitvec.EvalSliced(in, len(circ.Inputs), circ.Eval)
	if err != nil {
		t.Fatal(err)
	}
	if err := point.Mismatch("circuit vs "+what, in, len(circ.Inputs), got, want, len(circ.Outputs)); err != nil {
		t.Errorf("%s %v: %v", c.Name, values, err)
	}
	ref, err := c.Reference(context.Background(), Pass(t, c, values), in)
	if err != nil {
		t.Fatalf("%s %v: Reference: %v", c.Name, values, err)
	}
	if err := point.Mismatch("reference vs "+what, in, len(circ.Inputs), ref, want, len(circ.Outputs)); err != nil {
		t.Errorf("%s %v: %v", c.Name, values, err)
	}
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	if len(s)%2 == 1 {
		s += "0"
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatalf("vector %q: %v", s, err)
	}
	return b
}

// CheckRefused checks that plugin pl's Prepare (or its schema) refuses
// values, blaming parameter param with a message containing msg: the
// refusals a user meets before anything is built.
func CheckRefused(t testing.TB, pl sdk.Plugin, values map[string]any, param, msg string) {
	t.Helper()
	_, err := sdk.NewPass(context.Background(), pl, values)
	if err == nil {
		t.Errorf("%s %v: accepted, want parameter %q refused (%q)", pl.Describe().Name, values, param, msg)
		return
	}
	pe, ok := sdk.AsParamError(err)
	if !ok || pe.Param != param || !strings.Contains(pe.Msg, msg) {
		t.Errorf("%s %v: refused with %v, want parameter %q blamed with %q", pl.Describe().Name, values, err, param, msg)
	}
}

// CheckLayered validates l and checks that it computes what c computes on
// n random inputs, as the host checks every layered circuit.
func CheckLayered(t testing.TB, c *circuit.Circuit, l *layered.Circuit, n int) {
	t.Helper()
	in := point.Samples(3, n, len(c.Inputs))
	want, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
	if err != nil {
		t.Fatal(err)
	}
	if err := point.Check(l, &point.Logic{Circuit: c, Seed: 3, In: in, Out: want}); err != nil {
		t.Fatal(err)
	}
}

// Bits parses a bit string such as "1100 01" (see bitvec.Parse).
func Bits(t testing.TB, s string) (bitvec.Vec, int) {
	t.Helper()
	v, n, err := bitvec.Parse(s)
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
func AllInputs(n int) []bitvec.Vec {
	in := make([]bitvec.Vec, 1<<n)
	for x := range in {
		in[x] = bitvec.NewVec(n)
		for i := range n {
			in[x].Set(i, uint(x>>i&1))
		}
	}
	return in
}
