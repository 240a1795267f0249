package sdktest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// parity is a small construction: the parity of n bits, with a reference
// that can be told to lie about one input.
func parity(lie bool) *sdk.Construction {
	return &sdk.Construction{
		Name:    "parity",
		Params:  []sdk.Param{{Name: "n", Type: sdk.Int, Default: 8, Min: sdk.Bound(1)}},
		Prepare: func(context.Context, *sdk.Pass) (any, error) { return nil, nil },
		Build: func(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
			p := pass.Params
			b := circuit.NewBuilder()
			b.Output("digest", []circuit.Node{b.Xor(b.Input("msg", p.Int("n"))...)})
			return b.Circuit(), nil
		},
		Reference: func(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
			p := pass.Params
			out := make([]bitvec.Vec, len(inputs))
			for k, v := range inputs {
				var x uint
				for i := range p.Int("n") {
					x ^= v.Get(i)
				}
				if lie && v.Get(0) == 1 && v.Get(1) == 1 {
					x ^= 1
				}
				out[k] = bitvec.NewVec(1)
				out[k].Set(0, x)
			}
			return out, nil
		},
	}
}

// xor2 is the layered parity of two bits: [a + b ≥ 1] − [a + b ≥ 2],
// or with wrongTheta the AND in place of the XOR.
func xor2(wrongTheta bool) *layered.Circuit {
	b := layered.NewBuilder(2, []circuit.Range{{Name: "msg", Start: 0, Len: 2}})
	tag := b.Tag("xor")
	b.Gate(layered.KindGate, 1, []int32{0, 1}, []int32{1, 1}, tag)
	b.Gate(layered.KindGate, 2, []int32{0, 1}, []int32{1, 1}, tag)
	b.Level()
	theta := int32(1)
	if wrongTheta {
		theta = 2
	}
	b.Gate(layered.KindGate, theta, []int32{0, 1}, []int32{1, -2}, tag)
	b.Level()
	return b.Circuit([]circuit.Range{{Name: "digest", Start: 0, Len: 1}})
}

// xor2Forms is xor2 with forms: level 0's one form a + b, read by both
// counters; level 1's one form, their alternating sum (or with wrongSign
// their sum), read by the output gate.
func xor2Forms(wrongSign bool) *layered.Circuit {
	b := layered.NewBuilder(2, []circuit.Range{{Name: "msg", Start: 0, Len: 2}})
	tag := b.Tag("xor")
	s := b.Form(0, []int32{0, 1}, []int32{1, 1})
	b.Gate(layered.KindGate, 1, []int32{s}, []int32{1}, tag)
	b.Gate(layered.KindGate, 2, []int32{s}, []int32{1}, tag)
	b.Level()
	sign := int32(-1)
	if wrongSign {
		sign = 1
	}
	x := b.Form(0, []int32{0, 1}, []int32{1, sign})
	b.Gate(layered.KindGate, 1, []int32{x}, []int32{1}, tag)
	b.Level()
	return b.Circuit([]circuit.Range{{Name: "digest", Start: 0, Len: 1}})
}

// recorder is a testing.TB that records Fatalf instead of stopping the test.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	panic(r)
}
func (r *recorder) Fatal(args ...any) { r.Fatalf("%s", fmt.Sprint(args...)) }

// Errorf records the first error and lets the helper go on.
func (r *recorder) Errorf(format string, args ...any) {
	if r.msg == "" {
		r.msg = fmt.Sprintf(format, args...)
	}
}

// failure runs f against a recorder and returns what it failed with.
func failure(t *testing.T, f func(tb testing.TB)) (msg string) {
	r := &recorder{TB: t}
	defer func() {
		if p := recover(); p != nil && p != any(r) {
			panic(p)
		}
		msg = r.msg
	}()
	f(r)
	return ""
}

func TestCheckReference(t *testing.T) {
	c := sdktest.CheckReference(t, parity(false), map[string]any{"n": 5}, 100)
	if len(c.Inputs) != 5 || len(c.Outputs) != 1 {
		t.Fatalf("circuit has %d inputs, %d outputs", len(c.Inputs), len(c.Outputs))
	}
	msg := failure(t, func(tb testing.TB) { sdktest.CheckReference(tb, parity(true), map[string]any{"n": 5}, 100) })
	if !strings.Contains(msg, "parity map[n:5]: ") || !strings.Contains(msg, "logic circuit vs construction reference: sample ") {
		t.Errorf("a lying reference: got %q", msg)
	}
	msg = failure(t, func(tb testing.TB) { sdktest.Build(tb, parity(false), map[string]any{"n": 0}) })
	if !strings.Contains(msg, "at least 1") {
		t.Errorf("n = 0: got %q", msg)
	}
}

func TestCheckLayered(t *testing.T) {
	c := sdktest.Build(t, parity(false), map[string]any{"n": 2})
	sdktest.CheckLayered(t, c, xor2(false), 100)
	msg := failure(t, func(tb testing.TB) { sdktest.CheckLayered(tb, c, xor2(true), 100) })
	if !strings.Contains(msg, "layered circuit vs logic circuit: sample 0, output bit 0 is 0, want 1") {
		t.Errorf("a wrong layered circuit: got %q", msg)
	}
	// Circuits with linear forms, right and wrong.
	sdktest.CheckLayered(t, c, xor2Forms(false), 100)
	msg = failure(t, func(tb testing.TB) { sdktest.CheckLayered(tb, c, xor2Forms(true), 100) })
	if !strings.Contains(msg, "layered circuit vs logic circuit: sample ") || !strings.Contains(msg, "output bit 0 is 1, want 0") {
		t.Errorf("a wrong circuit with forms: got %q", msg)
	}
}

func TestIntTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.csv")
	os.WriteFile(path, []byte("log_w,depth\n1,10\n2,18\n"), 0o644)
	rows := sdktest.IntTable(t, path)
	if len(rows) != 2 || rows[1]["log_w"] != 2 || rows[1]["depth"] != 18 {
		t.Errorf("rows %v", rows)
	}
	os.WriteFile(path, []byte("log_w,depth\n1,ten\n"), 0o644)
	if msg := failure(t, func(tb testing.TB) { sdktest.IntTable(tb, path) }); !strings.Contains(msg, "t.csv:2: column depth") {
		t.Errorf("a bad cell: got %q", msg)
	}
}

// TestThreeGates: the fixture computes b on every input, and AllInputs
// enumerates in counting order.
func TestThreeGates(t *testing.T) {
	in := sdktest.AllInputs(2)
	if len(in) != 4 || in[1].Text(2) != "10" || in[2].Text(2) != "01" {
		t.Fatalf("AllInputs(2) = %v", in)
	}
	l := sdktest.ThreeGates()
	out, err := bitvec.EvalSliced(in, 2, l.Evaluator())
	if err != nil {
		t.Fatal(err)
	}
	for x, o := range out {
		if o.Get(0) != uint(x>>1) {
			t.Errorf("input %s: %d, want b = %d", in[x].Text(2), o.Get(0), x>>1)
		}
	}
	if l.Depth() != 2 || l.NumGates() != 3 {
		t.Errorf("depth %d, %d gates", l.Depth(), l.NumGates())
	}
}

func TestCheckVectors(t *testing.T) {
	// 1010 has even parity, 1110 odd; one output bit, written as a hex digit.
	sdktest.CheckVectors(t, parity(false), map[string]any{"n": 4}, []sdktest.Vector{{In: "a", Want: "0"}, {In: "e", Want: "8"}})
	msg := failure(t, func(tb testing.TB) {
		sdktest.CheckVectors(tb, parity(false), map[string]any{"n": 4}, []sdktest.Vector{{In: "a", Want: "8"}})
	})
	for _, want := range []string{"circuit vs vector: sample 0, output bit 0 is 0, want 1", "1 of 1 output bits wrong", "input 0xa0", "output 0x00, want 0x80"} {
		if !strings.Contains(msg, want) {
			t.Errorf("a wrong vector: got %q, want it to contain %q", msg, want)
		}
	}
}

func TestCheckOracle(t *testing.T) {
	odd := func(in bitvec.Vec) bitvec.Vec {
		out := bitvec.NewVec(1)
		for i := range 6 {
			out.Set(0, out.Get(0)^in.Get(i))
		}
		return out
	}
	sdktest.CheckOracle(t, parity(false), map[string]any{"n": 6}, 50, odd)
	msg := failure(t, func(tb testing.TB) {
		sdktest.CheckOracle(tb, parity(true), map[string]any{"n": 6}, 50, odd)
	})
	if !strings.Contains(msg, "reference vs oracle: sample ") || !strings.Contains(msg, "samples wrong") {
		t.Errorf("a lying reference: got %q", msg)
	}
}

func TestCheckRefused(t *testing.T) {
	sdktest.CheckRefused(t, parity(false), map[string]any{"n": 0}, "n", "at least 1")
	for _, tc := range []struct {
		values     map[string]any
		param, msg string
	}{
		{map[string]any{"n": 3}, "n", "at least 1"},   // accepted
		{map[string]any{"n": 0}, "m", "at least 1"},   // another parameter blamed
		{map[string]any{"n": 0}, "n", "at most 1000"}, // another message
	} {
		if msg := failure(t, func(tb testing.TB) { sdktest.CheckRefused(tb, parity(false), tc.values, tc.param, tc.msg) }); msg == "" {
			t.Errorf("%v, %s, %q: passed", tc.values, tc.param, tc.msg)
		}
	}
}

// TestReplay: the seed and sample count a mismatch report prints replay
// the failure.
func TestReplay(t *testing.T) {
	msg := failure(t, func(tb testing.TB) { sdktest.Replay(tb, parity(true), map[string]any{"n": 5}, 0xbeef, 40) })
	if !strings.Contains(msg, "seed 0xbeef, 40 samples") || !strings.Contains(msg, "input 0x") || !strings.Contains(msg, "of 1 output bits wrong") {
		t.Fatalf("a lying reference: got %q", msg)
	}
	if again := failure(t, func(tb testing.TB) { sdktest.Replay(tb, parity(true), map[string]any{"n": 5}, 0xbeef, 40) }); again != msg {
		t.Errorf("replayed %q, first %q", again, msg)
	}
}
