package fusion_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// sharedParity has inputs a0..a7 and x0..x5 and outputs x_i ∧ (a0 ⊕ … ⊕ a7):
// depth first fuses the parity into every AND (one level of 6·8 switch
// points), size first materialises it once (8 counters, one gate, 6
// ANDs: three levels, narrower).
func sharedParity() *circuit.Circuit {
	b := circuit.NewBuilder()
	a := b.Input("a", 8)
	x := b.Input("x", 6)
	p := b.Xor(a...)
	out := make([]circuit.Node, len(x))
	for i, xi := range x {
		out[i] = b.And(xi, p)
	}
	b.Output("y", out)
	return b.Circuit()
}

// TestMaxWidth checks the width budget: the shallowest of the chain's
// plans (round, round without rule 10, depth first, size first) whose
// realised width fits, on toy Keccak sponges whose four plans have
// distinct depths and widths, with the figures each candidate has without
// a budget (NoPair drives the second), and outputs equal to the logic
// circuit.
func TestMaxWidth(t *testing.T) {
	type fig struct{ depth, width int }
	w1r1 := sponge(0, 1, 12, 1) // w = 1, 1 round: round (2, 962); without rule 10 it is depth first
	w1r3 := sponge(0, 3, 12, 1) // w = 1, 3 rounds: (4, 40216), (5, 7150 = 286·25), (7, 275), (12, 275)
	w4r4 := sponge(2, 4, 50, 1) // w = 4, 4 rounds: (5, 162866), (6, 28600 = 286·100), (9, 1100), (16, 1100)
	w2b2 := sponge(1, 2, 25, 2) // w = 2, 2 rounds, 2 blocks: (5, 83358), (6, 21652), (9, 575), (16, 575)
	shared := sharedParity()
	for _, tt := range []struct {
		name string
		c    *circuit.Circuit
		opts fusion.Options
		want fig
	}{
		{"w1r1 round, no budget", w1r1, fusion.Options{Objective: fusion.Round}, fig{2, 962}},
		{"w1r1 round 962", w1r1, fusion.Options{Objective: fusion.Round, MaxWidth: 962}, fig{2, 962}},
		{"w1r1 round 961", w1r1, fusion.Options{Objective: fusion.Round, MaxWidth: 961}, fig{3, 74}},
		{"w1r1 round NoPair", w1r1, fusion.Options{Objective: fusion.Round, NoPair: true}, fig{3, 74}},
		{"w1r3 round NoPair", w1r3, fusion.Options{Objective: fusion.Round, NoPair: true}, fig{5, 7150}},
		{"w1r3 round 1e6", w1r3, fusion.Options{Objective: fusion.Round, MaxWidth: 1_000_000}, fig{4, 40216}},
		{"w1r3 round 40215", w1r3, fusion.Options{Objective: fusion.Round, MaxWidth: 40215}, fig{5, 7150}},
		{"w1r3 round 7150", w1r3, fusion.Options{Objective: fusion.Round, MaxWidth: 7150}, fig{5, 7150}},
		{"w1r3 round 7149", w1r3, fusion.Options{Objective: fusion.Round, MaxWidth: 7149}, fig{7, 275}},
		{"w1r3 round 275", w1r3, fusion.Options{Objective: fusion.Round, MaxWidth: 275}, fig{7, 275}},
		{"w1r3 round NoPair 40216", w1r3, fusion.Options{Objective: fusion.Round, NoPair: true, MaxWidth: 40216}, fig{5, 7150}},
		{"w1r3 depth 1e6", w1r3, fusion.Options{MaxWidth: 1_000_000}, fig{7, 275}},
		{"w1r3 size 1e6", w1r3, fusion.Options{Objective: fusion.Size, MaxWidth: 1_000_000}, fig{12, 275}},
		{"w4r4 round 162866", w4r4, fusion.Options{Objective: fusion.Round, MaxWidth: 162866}, fig{5, 162866}},
		{"w4r4 round 162865", w4r4, fusion.Options{Objective: fusion.Round, MaxWidth: 162865}, fig{6, 28600}},
		{"w4r4 round 28600", w4r4, fusion.Options{Objective: fusion.Round, MaxWidth: 28600}, fig{6, 28600}},
		{"w4r4 round 28599", w4r4, fusion.Options{Objective: fusion.Round, MaxWidth: 28599}, fig{9, 1100}},
		{"w4r4 round 1100", w4r4, fusion.Options{Objective: fusion.Round, MaxWidth: 1100}, fig{9, 1100}},
		{"w4r4 round ASAP 28600", w4r4, fusion.Options{Objective: fusion.Round, ASAP: true, MaxWidth: 28600}, fig{6, 28600}},
		{"w2b2 round 83357", w2b2, fusion.Options{Objective: fusion.Round, MaxWidth: 83357}, fig{6, 21652}},
		{"w2b2 round 21651", w2b2, fusion.Options{Objective: fusion.Round, MaxWidth: 21651}, fig{9, 575}},
		{"shared depth, no budget", shared, fusion.Options{}, fig{2, 48}},
		{"shared size, no budget", shared, fusion.Options{Objective: fusion.Size}, fig{3, 14}},
		{"shared depth 48", shared, fusion.Options{MaxWidth: 48}, fig{2, 48}},
		{"shared depth 47", shared, fusion.Options{MaxWidth: 47}, fig{3, 14}},
		{"shared round 47", shared, fusion.Options{Objective: fusion.Round, MaxWidth: 47}, fig{3, 14}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l, err := fusion.Compile(context.Background(), tt.c, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Validate(); err != nil {
				t.Fatal(err)
			}
			s := l.Stats()
			if got := (fig{s.Depth, s.Width}); got != tt.want {
				t.Errorf("depth %d width %d, want %d, %d (widths %v)", got.depth, got.width, tt.want.depth, tt.want.width, s.Widths)
			}
			rng := rand.New(rand.NewPCG(uint64(len(tt.c.Inputs)), 18))
			for range 4 {
				in := make([]uint64, len(tt.c.Inputs))
				for i := range in {
					in[i] = rng.Uint64()
				}
				equalOn(t, tt.c, in, map[string]*layered.Circuit{"fusion": l})
			}
		})
	}
}

// TestMaxWidthRefused checks the error of a budget no plan fits: it names
// the budget and the narrowest plan with its realised width.
func TestMaxWidthRefused(t *testing.T) {
	for _, tt := range []struct {
		c    *circuit.Circuit
		opts fusion.Options
		want string
	}{
		{sharedParity(), fusion.Options{MaxWidth: 13}, `fusion: no plan fits max_width = 13: the narrowest, objective "size", is 14 wide`},
		{sharedParity(), fusion.Options{Objective: fusion.Round, MaxWidth: 1}, `fusion: no plan fits max_width = 1: the narrowest, objective "size", is 14 wide`},
		{sponge(2, 4, 50, 1), fusion.Options{Objective: fusion.Round, MaxWidth: 1099}, `fusion: no plan fits max_width = 1099: the narrowest, objective "depth", is 1100 wide`},
		{sponge(2, 4, 50, 1), fusion.Options{Objective: fusion.Size, MaxWidth: 1000}, `fusion: no plan fits max_width = 1000: the narrowest, objective "size", is 1100 wide`},
	} {
		l, err := fusion.Compile(context.Background(), tt.c, tt.opts)
		if err == nil || err.Error() != tt.want {
			t.Errorf("%+v: got %v, %v; want error %q", tt.opts, l, err, tt.want)
		}
	}
}

// TestMaxWidthParam drives the budget through the plugin's parameters, as
// a config does: objective "round" with max_width 7150 on a w = 1,
// 3-round sponge gives the round objective without rule 10 (depth 5,
// 286·25w); a negative budget is refused by the schema.
func TestMaxWidthParam(t *testing.T) {
	c := sponge(0, 3, 12, 1)
	for _, tt := range []struct {
		values       map[string]any
		depth, width int
	}{
		{map[string]any{"objective": "round"}, 4, 40216},
		{map[string]any{"objective": "round", "max_width": int64(7150)}, 5, 7150},
		{map[string]any{"objective": "round", "max_width": int64(7149)}, 7, 275},
		{map[string]any{"objective": "depth", "max_width": int64(1_000_000)}, 7, 275},
	} {
		pass := sdktest.Pass(t, fusion.Plugin, tt.values)
		l, err := fusion.Plugin.Layer(context.Background(), pass, c)
		if err != nil {
			t.Fatalf("%v: %v", tt.values, err)
		}
		if l.Depth() != tt.depth || l.Stats().Width != tt.width {
			t.Errorf("%v: depth %d width %d, want %d, %d", tt.values, l.Depth(), l.Stats().Width, tt.depth, tt.width)
		}
		sdktest.CheckLayered(t, c, l, 64)
	}
	_, err := sdk.NewPass(context.Background(), fusion.Plugin, map[string]any{"max_width": int64(-1)})
	if err == nil || !strings.Contains(err.Error(), "max_width") || !strings.Contains(err.Error(), "at least 0") {
		t.Errorf("max_width = -1: %v, want a schema error naming max_width", err)
	}
}

// TestWidthBound checks the plan's width bound, which lets a budget skip
// realising a plan that cannot fit: never above the realised circuit's
// width (scheduling moves gates within their windows, copies only add),
// on random circuits under every objective, with and without rule 10 and
// scheduling; equal to it on Keccak sponges of one block (no gate has
// slack, no copies).
func TestWidthBound(t *testing.T) {
	variants := []fusion.Options{
		{}, {Objective: fusion.Size}, {ASAP: true}, {Objective: fusion.Size, ASAP: true},
		{Objective: fusion.Round}, {Objective: fusion.Round, NoPair: true},
	}
	check := func(name string, c *circuit.Circuit, exact bool) {
		t.Helper()
		for _, o := range variants {
			l, err := fusion.Compile(context.Background(), c, o)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, o, err)
			}
			b, err := fusion.WidthBound(context.Background(), c, o)
			if err != nil {
				t.Fatalf("%s %+v: %v", name, o, err)
			}
			w := l.Stats().Width
			if b < 1 || b > w || (exact && b != w) {
				t.Errorf("%s %+v: bound %d, width %d", name, o, b, w)
			}
		}
	}
	rng := rand.New(rand.NewPCG(18, 2))
	for trial := range 100 {
		check(fmt.Sprintf("trial %d", trial), randomCircuit(rng, 1+rng.IntN(12), 5+rng.IntN(120), 1+rng.IntN(8)), false)
	}
	for _, tt := range []struct{ logW, rounds int }{{0, 1}, {0, 3}, {1, 2}, {2, 4}} {
		check(fmt.Sprintf("sponge %+v", tt), sponge(tt.logW, tt.rounds, 25<<tt.logW/2, 1), true)
	}
	check("sponge w=2, 2 blocks", sponge(1, 2, 25, 2), false)
}
