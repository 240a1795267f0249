package point_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestPoint runs the adder through the point pipeline: the logic circuit
// verifies against the reference, the Reifier-style layering against the
// logic circuit; a lying reference and a lying layerer are caught, with
// the plugin named.
func TestPoint(t *testing.T) {
	ctx := context.Background()
	values := map[string]any{"n": 4}
	lg, err := point.Build(ctx, adder.Plugin, sdktest.Pass(t, adder.Plugin, values), 7, 64, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(lg.In) != 64 || len(lg.Out) != 64 || len(lg.Circuit.Inputs) != 8 || len(lg.Circuit.Outputs) != 5 {
		t.Fatalf("%d samples, %d outputs, circuit %d → %d", len(lg.In), len(lg.Out), len(lg.Circuit.Inputs), len(lg.Circuit.Outputs))
	}
	ly, err := point.Layer(ctx, reifier.Plugin, sdktest.Pass(t, reifier.Plugin, nil), lg, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := ly.Circuit.Depth(); d != 6 { // the adder pipeline's law: n + 2
		t.Errorf("depth %d, want 6", d)
	}

	liar := *adder.Plugin
	liar.Reference = func(ctx context.Context, pass *sdk.Pass, in []bitvec.Vec) ([]bitvec.Vec, error) {
		out, err := adder.Plugin.Reference(ctx, pass, in)
		out[3].Set(0, out[3].Get(0)^1)
		return out, err
	}
	if _, err := point.Build(ctx, &liar, sdktest.Pass(t, &liar, values), 7, 64, false); err == nil ||
		!strings.Contains(err.Error(), `construction "adder": logic circuit vs construction reference: sample 3, output bit 0`) {
		t.Errorf("a lying reference: %v", err)
	}

	wrong := &sdk.Layerer{Name: "wrong", Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
		l, err := reifier.Compile(ctx, c)
		last := l.LevelStart[len(l.LevelStart)-2]
		l.Threshold[last] = 1 << 20 // the first output stuck at 0
		return l, err
	}}
	ly, err = point.Layer(ctx, wrong, &sdk.Pass{}, lg, false)
	if err == nil || ly.Circuit == nil || !strings.Contains(err.Error(), `layerer "wrong": layered circuit vs logic circuit: sample `) {
		t.Errorf("a lying layerer: %v (circuit kept: %v)", err, ly.Circuit != nil)
	}
}

// TestMismatchReport: a mismatch names the first wrong sample and bit, the
// number of wrong bits and samples, input, output and want in hex, and
// the seed that replays it.
func TestMismatchReport(t *testing.T) {
	in := point.Samples(7, 3, 12)
	want := []bitvec.Vec{bitvec.FromPackedMSB([]byte{0xab, 0xcd}, 16), bitvec.FromPackedMSB([]byte{0x00, 0x00}, 16), bitvec.FromPackedMSB([]byte{0xff, 0xff}, 16)}
	got := []bitvec.Vec{bitvec.FromPackedMSB([]byte{0xab, 0xcd}, 16), bitvec.FromPackedMSB([]byte{0x81, 0x00}, 16), bitvec.FromPackedMSB([]byte{0xff, 0xfe}, 16)}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{point.FirstMismatch("x", got, want, 16), "x: sample 1, output bit 0 is 1, want 0; 2 of 16 output bits wrong; output 0x8100, want 0x0000 (bits packed most significant first)"},
		{point.SeededMismatch("x", 7, in, 12, got, want, 16), "x: sample 1, output bit 0 is 1, want 0; 2 of 16 output bits wrong, 2 of 3 samples wrong; input " + point.Hex(in[1], 12) + ", output 0x8100, want 0x0000 (bits packed most significant first); seed 0x7, 3 samples (sdktest.Replay reproduces it)"},
		{point.FirstMismatch("x", got[:1], want[:1], 16), ""},
	} {
		got := ""
		if tc.err != nil {
			got = tc.err.Error()
		}
		if got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	if h := point.Hex(bitvec.NewVec(1000), 1000); h != "0x"+strings.Repeat("00", 64)+"…(1000 bits in all)" {
		t.Errorf("a long vector: %s", h)
	}
}
