package sdktest_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// exampleT stands in for a test's *testing.T in the examples: it prints
// what would fail the test.
type exampleT struct{ testing.TB }

func (exampleT) Helper()                           {}
func (exampleT) Errorf(format string, args ...any) { fmt.Printf("FAIL: "+format+"\n", args...) }
func (t exampleT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	panic("the test would stop here")
}
func (t exampleT) Fatal(args ...any) { t.Fatalf("%s", fmt.Sprint(args...)) }

// A mapper's test maps a layered circuit as the host does and checks the
// model with the host's own passes: float32 bit for bit, float64, the
// margins and the labels.
func ExampleCheckMapper() {
	t := exampleT{} // in a test: the test's t
	l := sdktest.ThreeGates()
	mc := sdktest.CheckMapper(t, noattention.Plugin, map[string]any{"variant": "mlp"}, l,
		sdktest.ModelOptions{In: sdktest.AllInputs(2), ExactIn: "fp64 fp32", MinMargin: 0.5})
	fmt.Println(mc.Model.Arch, "exact in", mc.ExactIn, "margin", mc.MinMargin, "labelled values compared", mc.Labels)
	// Output:
	// no-attention/mlp exact in fp64 fp32 margin 0.5 labelled values compared 20
}

// A wrong model's error names the first block and unit where the pass
// departs from the circuit values its labels name, and the label: here
// one weight of FFN unit 3 in block 0 has the wrong sign.
func ExampleTryModel() {
	t := exampleT{}
	l := sdktest.ThreeGates()
	m := sdktest.Map(t, noattention.Plugin, map[string]any{"variant": "mlp"}, l)
	cols, vals := m.Tensor("blocks.0.ffn.gate").Row(3)
	for k, c := range cols {
		if c == 1 { // input a
			vals[k] = -vals[k]
		}
	}
	err := sdktest.TryModel(m, l, sdktest.AllInputs(2))
	var me *sdktest.ModelError
	if errors.As(err, &me) {
		fmt.Println(me.Departure)
	}
	// Output:
	// block 0, ffn 3 or ffn 4 (writes dim 2: L1 gate 1 "hand"): token 0, dim 2 is 1, the circuit's value is 0 (value label 4: L1 gate 1 "hand"); 1 of 2 labelled values wrong after block 0
}

// A layerer's test layers a logic circuit as the host does and checks the
// layered circuit against it: Keccak-f[50] at two rounds, whose depth in
// the paper's mode is its law 2 + blocks·(2 + 6·rounds).
func ExampleCheckLayerer() {
	t := exampleT{}
	c := sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": 1, "rate": 25, "rounds": 2})
	l := sdktest.CheckLayerer(t, reifier.Plugin, map[string]any{"mode": "paper"}, c, 64)
	fmt.Println("depth", l.Depth(), "gates", l.NumGates())
	// Output:
	// depth 16 gates 1975
}

// Stream reads the residual stream at a block boundary: here the two
// gates of level 1 after block 0 of the MLP (dimensions 1 and 2).
func ExampleStream() {
	t := exampleT{}
	l := sdktest.ThreeGates()
	m := sdktest.Map(t, noattention.Plugin, map[string]any{"variant": "mlp"}, l)
	for x, v := range sdktest.Stream(t, m, sdktest.AllInputs(2), 1, []int32{0, 0}, []int32{1, 2}) {
		fmt.Printf("a=%d b=%d: a AND b = %v, b AND NOT a = %v\n", x&1, x>>1, v[0], v[1])
	}
	// Output:
	// a=0 b=0: a AND b = 0, b AND NOT a = 0
	// a=1 b=0: a AND b = 0, b AND NOT a = 0
	// a=0 b=1: a AND b = 0, b AND NOT a = 1
	// a=1 b=1: a AND b = 1, b AND NOT a = 0
}

// Run is a mapper's or layerer's whole test in one table: each case is
// built, layered and mapped with the host's checks at every step, and
// checked against the figures it wants.
// (TestRun runs this table.)
func ExampleRun() {
	testMapper := func(t *testing.T) {
		sdktest.Run(t, []sdktest.Case{
			{Construction: keccak.Plugin, Values: map[string]any{"log_w": 1, "rate": 25, "rounds": 2},
				Layerer: reifier.Plugin, LayererValues: map[string]any{"mode": "paper"},
				Mapper: noattention.Plugin, MapperValues: map[string]any{"variant": "mlp"},
				Want: sdktest.Want{Depth: 16, Blocks: 16, Tokens: 1}},
		})
	}
	exampleRun = testMapper // func TestMapper(t *testing.T) in a _test.go file
}

// exampleRun is ExampleRun's test, which TestRun runs.
var exampleRun func(t *testing.T)
