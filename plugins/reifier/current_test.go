package reifier

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	keccakplugin "github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// reifierCommit is the contramont/reifier commit whose compile_keccak the
// figures below come from (scripts/reifier_figures.py prints them).
const reifierCommit = "0fd3dcb6563432e2b509a7bf14be9c90cb76b39c"

// reifierFigures are compile_keccak's figures for Keccak(log_w, n, c) at
// reifierCommit: depth (gate levels), width, gates, edges.
var reifierFigures = []struct {
	logW, rounds, capacity     int
	depth, width, gates, edges int
}{
	{6, 24, 448, 121, 17600, 653024, 5359448}, // SHA3-224
	{6, 24, 512, 121, 17600, 653056, 5351736}, // SHA3-256
	{0, 3, 12, 16, 275, 1281, 8161},
	{1, 2, 25, 11, 550, 1712, 10119},
	{2, 5, 50, 26, 1100, 8525, 63507},
	{3, 4, 100, 21, 2200, 13650, 99782},
	{4, 6, 200, 31, 4400, 40900, 313332},
	{5, 7, 400, 36, 8800, 95400, 740432},
	{2, 13, 50, 66, 1100, 22125, 176307},
}

// reifierInstance builds the circuit compile_keccak compiles for
// Keccak(log_w, n, c): one block, the message of r − 8 bits with SHA-3's
// suffix and padding (Reifier's 8-bit 0x86), the first c/2 state bits out.
func reifierInstance(t testing.TB, logW, rounds, capacity int) *circuit.Circuit {
	t.Helper()
	rate := 25<<logW - capacity
	return sdktest.Build(t, keccakplugin.Plugin, map[string]any{
		"log_w": logW, "rounds": rounds, "capacity": capacity, "padding": "sha3",
		"message_bits": rate - 8, "output_bits": capacity / 2,
	})
}

// TestCurrentMatchesReifier pins mode = "current" to Reifier's own
// figures, checks the circuits against the logic circuits, and logs the
// paper mode's figures beside them.
func TestCurrentMatchesReifier(t *testing.T) {
	ctx := context.Background()
	for _, f := range reifierFigures {
		c := reifierInstance(t, f.logW, f.rounds, f.capacity)
		l, err := CompileCurrent(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		sdktest.CheckLayered(t, c, l, 256)
		s := l.Stats()
		if s.Depth != f.depth || s.Width != f.width || s.Gates != f.gates || s.Edges != f.edges {
			t.Errorf("Keccak(log_w=%d, n=%d, c=%d): depth %d width %d gates %d edges %d, Reifier %d %d %d %d",
				f.logW, f.rounds, f.capacity, s.Depth, s.Width, s.Gates, s.Edges, f.depth, f.width, f.gates, f.edges)
		}
		pl, err := Compile(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		ps := pl.Stats()
		t.Logf("Keccak(log_w=%d, n=%d, c=%d): current %d / %d / %d / %d (copies %d); paper %d / %d / %d / %d",
			f.logW, f.rounds, f.capacity, s.Depth, s.Width, s.Gates, s.Edges, s.Copies, ps.Depth, ps.Width, ps.Gates, ps.Edges)
	}
}

// TestCurrentAgainstReifierSource reruns the comparison against a checkout
// of Reifier: TCFORGE_REIFIER_SRC names its src/ folder (see
// docs/design.md); it needs /usr/bin/python3 with numpy.
func TestCurrentAgainstReifierSource(t *testing.T) {
	src := os.Getenv("TCFORGE_REIFIER_SRC")
	if src == "" {
		t.Skip("TCFORGE_REIFIER_SRC is not set: the comparison with a Reifier checkout is skipped")
	}
	var specs []string
	for _, f := range reifierFigures {
		specs = append(specs, fmt.Sprintf("%d:%d:%d", f.logW, f.rounds, f.capacity))
	}
	cmd := exec.Command("/usr/bin/python3", append([]string{filepath.Join("..", "..", "scripts", "reifier_figures.py"), src}, specs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/reifier_figures.py: %v\n%s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	n := 0
	for sc.Scan() {
		var logW, rounds, capacity, depth, width, gates, edges int
		var widths string
		if _, err := fmt.Sscan(sc.Text(), &logW, &rounds, &capacity, &depth, &width, &gates, &edges, &widths); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		c := reifierInstance(t, logW, rounds, capacity)
		l, err := CompileCurrent(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		s := l.Stats()
		if s.Depth != depth || s.Width != width || s.Gates != gates || s.Edges != edges {
			t.Errorf("Keccak(log_w=%d, n=%d, c=%d): tcforge %d / %d / %d / %d, Reifier %d / %d / %d / %d",
				logW, rounds, capacity, s.Depth, s.Width, s.Gates, s.Edges, depth, width, gates, edges)
		}
		if got := strings.Trim(strings.ReplaceAll(fmt.Sprint(s.Widths), " ", ","), "[]"); got != widths {
			t.Errorf("Keccak(log_w=%d, n=%d, c=%d): level widths %s, Reifier %s", logW, rounds, capacity, got, widths)
		}
		n++
	}
	if n != len(specs) {
		t.Fatalf("the script printed %d instances, want %d:\n%s", n, len(specs), out)
	}
}

// TestCurrentLaws checks mode = "current"'s laws on Keccak sponges: one
// block of m message bits over n rounds, d output bits (d ≤ r): depth
// 5n + 1, width 11·25w, gates 17·25w·n + d, edges 141·25w·n −
// 121·(25w − m) + d (round 1's θ counters have no edges from the 25w − m
// constant state bits, each an operand of 11 sums of 11 counters). With
// n_b blocks each further absorb is two levels (a 2-operand XOR) and the
// message bits not yet absorbed are carried from the input level: depth
// n_b(5n + 2) − 1, width 11·25w + m − r.
func TestCurrentLaws(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []map[string]any{
		{"preset": "sha3-384"},
		{"preset": "sha3-512"},
		{"preset": "shake128", "output_bits": 1344},
		{"log_w": 3, "rounds": 6, "rate": 120, "padding": "sha3", "blocks": 3},
		{"log_w": 4, "rounds": 3, "capacity": 150, "padding": "keccak", "message_bits": 555, "output_bits": 100},
		{"log_w": 2, "rounds": 4, "rate": 50, "padding": "none", "blocks": 2},
		{"log_w": 5, "rounds": 2, "rate": 400, "padding": "sha3"},
	} {
		c := sdktest.Build(t, keccakplugin.Plugin, tc)
		l, err := CompileCurrent(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		sdktest.CheckLayered(t, c, l, 128)
		a := c.Attrs
		b, n, nb, m, r, d := int(a["b"]), int(a["rounds"]), int(a["blocks"]), int(a["message_bits"]), int(a["rate"]), int(a["output_bits"])
		s := l.Stats()
		want := layered.Stats{Depth: nb*(5*n+2) - 1, Width: 11*b + max(0, m-r)}
		if s.Depth != want.Depth || s.Width != want.Width {
			t.Errorf("%v: depth %d width %d, want %d %d", tc, s.Depth, s.Width, want.Depth, want.Width)
		}
		if nb == 1 {
			gates, edges := 17*b*n+d, 141*b*n-121*(b-m)+d
			if s.Gates != gates || s.Edges != edges {
				t.Errorf("%v: gates %d edges %d, want %d %d", tc, s.Gates, s.Edges, gates, edges)
			}
		}
	}
}

// TestCurrentRules checks each rule on small circuits: constants fold
// into thresholds, NOT and copies are free, one-live-operand ops are
// literals or constants, outputs are one row.
func TestCurrentRules(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(b *circuit.Builder, x []circuit.Node) []circuit.Node
		// widths per level; edges
		widths []int
		edges  int
	}{
		{"not and copy are free", func(b *circuit.Builder, x []circuit.Node) []circuit.Node {
			return []circuit.Node{b.And(b.Not(x[0]), b.Copy(x[1]), b.Not(b.Not(x[2])))}
		}, []int{1, 1}, 4},
		{"xor with constants is a literal", func(b *circuit.Builder, x []circuit.Node) []circuit.Node {
			return []circuit.Node{b.Xor(x[0], b.Const(1), b.Const(1), b.Const(1)), b.Xor(x[1], b.Const(0))}
		}, []int{2}, 2},
		{"ops on constants are constants", func(b *circuit.Builder, x []circuit.Node) []circuit.Node {
			return []circuit.Node{b.And(x[0], b.Const(0)), b.Or(b.Const(1), x[1]), b.Threshold(1, []circuit.Node{x[0]}, []int32{0})}
		}, []int{3}, 0},
		{"xor keeps a counter per operand, constants folded", func(b *circuit.Builder, x []circuit.Node) []circuit.Node {
			return []circuit.Node{b.Xor(x[0], b.Not(x[1]), b.Const(1), b.Const(0))}
		}, []int{4, 1, 1}, 4*2 + 4 + 1},
		{"negated output in the output row", func(b *circuit.Builder, x []circuit.Node) []circuit.Node {
			return []circuit.Node{b.Not(b.AndNot(x[0], x[1])), x[2], b.Not(x[2])}
		}, []int{1 + 1, 3}, 2 + 1 + 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := circuit.NewBuilder()
			x := b.Input("x", 3)
			b.Output("y", tc.build(b, x))
			c := b.Circuit()
			l, err := CompileCurrent(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			sdktest.CheckLayered(t, c, l, 64)
			s := l.Stats()
			if fmt.Sprint(s.Widths) != fmt.Sprint(tc.widths) || s.Edges != tc.edges {
				t.Errorf("widths %v edges %d, want %v %d", s.Widths, s.Edges, tc.widths, tc.edges)
			}
		})
	}
}

// TestCurrentRandom checks mode = "current" against the logic circuit on
// random circuits rich in constants, negations and copies, and that it is
// never deeper than the paper's mode.
func TestCurrentRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1))
	for k := 0; k < 300; k++ {
		b := circuit.NewBuilder()
		nodes := b.Input("x", 1+rng.IntN(6))
		pick := func() circuit.Node {
			if rng.IntN(4) == 0 {
				return b.Const(rng.IntN(2))
			}
			return nodes[len(nodes)-1-rng.IntN(min(len(nodes), 8))]
		}
		args := func(n int) []circuit.Node {
			out := make([]circuit.Node, n)
			for i := range out {
				out[i] = pick()
			}
			return out
		}
		for range 5 + rng.IntN(40) {
			var v circuit.Node
			switch rng.IntN(8) {
			case 0:
				v = b.Not(pick())
			case 1:
				v = b.And(args(1 + rng.IntN(3))...)
			case 2:
				v = b.Or(args(1 + rng.IntN(3))...)
			case 3, 4:
				v = b.Xor(args(1 + rng.IntN(5))...)
			case 5:
				v = b.AndNot(pick(), args(1+rng.IntN(2))...)
			case 6:
				xs := args(1 + rng.IntN(4))
				ws := make([]int32, len(xs))
				for i := range ws {
					ws[i] = int32(rng.IntN(7) - 3)
				}
				v = b.Threshold(int32(rng.IntN(5)-2), xs, ws)
			case 7:
				v = b.Copy(pick())
			}
			nodes = append(nodes, v)
		}
		b.Output("y", args(1+rng.IntN(4)))
		c := b.Circuit()
		l, err := CompileCurrent(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		sdktest.CheckLayered(t, c, l, 64)
		p, err := Compile(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		if l.Depth() > p.Depth() {
			t.Fatalf("circuit %d: current depth %d > paper depth %d", k, l.Depth(), p.Depth())
		}
	}
}

// TestModeParam checks that the plugin's mode parameter selects the mode.
func TestModeParam(t *testing.T) {
	c := reifierInstance(t, 1, 2, 25)
	for mode, depth := range map[string]int{"paper": 2 + 2 + 6*2, "current": 5*2 + 1} {
		l, err := Plugin.Layer(context.Background(), sdktest.Pass(t, Plugin, map[string]any{"mode": mode}), c)
		if err != nil {
			t.Fatal(err)
		}
		if l.Depth() != depth {
			t.Errorf("mode %q: depth %d, want %d", mode, l.Depth(), depth)
		}
	}
	if _, err := sdk.NewParams(Plugin.Params, map[string]any{"mode": "curent"}); err == nil || !strings.Contains(err.Error(), "mode") {
		t.Errorf("mode = \"curent\" accepted (%v)", err)
	}
}

// BenchmarkCompileCurrentSHA3_256 layers full SHA3-256 in mode = "current".
func BenchmarkCompileCurrentSHA3_256(b *testing.B) {
	c := sdktest.Build(b, keccakplugin.Plugin, map[string]any{"preset": "sha3-256"})
	for b.Loop() {
		if _, err := CompileCurrent(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}

// TestModeAndMaxWeight: the plugin's two parameters together. An addition
// of two 8-bit words (SUMBIT nodes) layers in paper mode under the default
// bound in one step (counters, parity: depth 3 with the output copies) and
// under max_weight = 64 in two chunks of 4 bits (3·2^4 ≤ 64) with a carry
// (two more levels); both verify against the logic circuit. The current mode, like
// today's Reifier release, has no lowering of an addition and says so,
// naming the node.
func TestModeAndMaxWeight(t *testing.T) {
	b := circuit.NewBuilder()
	x, y := b.Input("x", 8), b.Input("y", 8)
	var sum []circuit.Node
	b.Scope("add", func() { sum = b.Add(x, y) })
	b.Output("sum", sum)
	c := b.Circuit()
	for _, tc := range []struct {
		values map[string]any
		depth  int
	}{
		{map[string]any{}, 3},
		{map[string]any{"mode": "paper", "max_weight": int64(64)}, 5},
	} {
		l, err := Plugin.Layer(context.Background(), sdktest.Pass(t, Plugin, tc.values), c)
		if err != nil {
			t.Fatalf("%v: %v", tc.values, err)
		}
		sdktest.CheckLayered(t, c, l, 256)
		if l.Depth() != tc.depth {
			t.Errorf("%v: depth %d, want %d", tc.values, l.Depth(), tc.depth)
		}
	}
	_, err := Plugin.Layer(context.Background(), sdktest.Pass(t, Plugin, map[string]any{"mode": "current"}), c)
	if err == nil || !strings.Contains(err.Error(), "SUMBIT") || !strings.Contains(err.Error(), "(add)") {
		t.Errorf("mode = \"current\" on an addition: err = %v, want a refusal naming the SUMBIT node", err)
	}
}
