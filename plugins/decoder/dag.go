package decoder

import (
	"context"
	"slices"

	"github.com/tcforge/tcforge/sdk/layered"
)

// dag is the layered circuit without its copies: node v < nIn is input v;
// node v ≥ nIn is a threshold gate, 1 iff Σ coef·node(src) ≥ theta over
// its terms, which read earlier nodes. A copy gate of the layered circuit
// (one form of a single gate, weight 1, threshold 1) is the node it copies;
// a form's constant is folded into the thresholds of the gates reading it.
// Flat arrays, terms in CSR form sorted by source.
type dag struct {
	nIn       int
	termStart []int32 // per node: nodes v's terms are [termStart[v], termStart[v+1]); inputs have none
	src       []int32
	coef      []int64
	theta     []int64
	level     []int32 // the layered level the node was made on (inputs 0)
	gate      []int32 // the layered gate (global index) the node is; −1 for inputs
	tag       []int32 // index into the layered circuit's Tags (−1 for inputs)
	pos       []int32 // position hint (SHA-2: the bit of its word), circuit.NoPos if none
	out       []int32 // the output nodes, in output order
	depth     int
	family    []int32 // nodes with the same terms (a threshold's steps of one sum) share a family
}

func (g *dag) nodes() int { return len(g.theta) }

// isConst reports whether node v is a constant: a gate that reads nothing
// (reifier keeps constants as such gates; its value is [0 ≥ θ]).
func (g *dag) isConst(v int32) bool {
	return int(v) >= g.nIn && g.termStart[v] == g.termStart[v+1]
}

// constValue returns constant node v's value.
func (g *dag) constValue(v int32) float64 {
	if g.theta[v] <= 0 {
		return 1
	}
	return 0
}

func (g *dag) terms(v int) ([]int32, []int64) {
	a, b := g.termStart[v], g.termStart[v+1]
	return g.src[a:b], g.coef[a:b]
}

// buildDAG reads the layered circuit.
func buildDAG(ctx context.Context, l *layered.Circuit) (*dag, error) {
	g := &dag{nIn: l.NumInputs, depth: l.Depth()}
	g.termStart = make([]int32, l.NumInputs+1)
	for range l.NumInputs {
		g.theta = append(g.theta, 0)
		g.level = append(g.level, 0)
		g.gate = append(g.gate, -1)
		g.tag = append(g.tag, -1)
		g.pos = append(g.pos, l.PosAt(0, len(g.pos)))
	}
	// val[i]: the node holding value i of the current level.
	val := make([]int32, l.NumInputs)
	for i := range val {
		val[i] = int32(i)
	}
	acc := map[int32]int64{}
	var keys []int32
	// form returns the terms and constant of form f of level L (over the
	// nodes holding level L's values).
	form := func(L, f int, w int64) int64 {
		if !l.HasForms() {
			acc[val[f]] += w
			return 0
		}
		cst, src, coef := l.Form(int(l.FormStart[L]) + f)
		for e, s := range src {
			acc[val[s]] += w * int64(coef[e])
		}
		return w * int64(cst)
	}
	for L := 1; L <= l.Depth(); L++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w := l.LevelWidth(L)
		next := make([]int32, w)
		base := int(l.LevelStart[L-1])
		for i := range w {
			gi := base + i
			src, wt := l.Row(gi)
			clear(acc)
			var cst int64
			for e, s := range src {
				cst += form(L-1, int(s), int64(wt[e]))
			}
			theta := int64(l.Threshold[gi]) - cst
			keys = keys[:0]
			for v, c := range acc {
				if c != 0 {
					keys = append(keys, v)
				}
			}
			// A copy: [x ≥ 1] of a single node x.
			if len(keys) == 1 && acc[keys[0]] == 1 && theta == 1 {
				next[i] = keys[0]
				continue
			}
			slices.Sort(keys)
			for _, v := range keys {
				g.src = append(g.src, v)
				g.coef = append(g.coef, acc[v])
			}
			next[i] = int32(len(g.theta))
			g.theta = append(g.theta, theta)
			g.level = append(g.level, int32(L))
			g.gate = append(g.gate, int32(gi))
			g.tag = append(g.tag, l.Tag[gi])
			g.pos = append(g.pos, l.PosAt(L, i))
			g.termStart = append(g.termStart, int32(len(g.src)))
		}
		val = next
	}
	g.out = val
	g.families()
	return g, nil
}

// families numbers the nodes by their terms: nodes reading the same sum
// with different thresholds are steps of one function of it.
func (g *dag) families() {
	g.family = make([]int32, g.nodes())
	seen := map[string]int32{}
	buf := make([]byte, 0, 64)
	for v := range g.nodes() {
		if v < g.nIn {
			g.family[v] = -1
			continue
		}
		buf = buf[:0]
		src, coef := g.terms(v)
		for e := range src {
			buf = appendInt(buf, int64(src[e]))
			buf = appendInt(buf, coef[e])
		}
		f, ok := seen[string(buf)]
		if !ok {
			f = int32(len(seen))
			seen[string(buf)] = f
		}
		g.family[v] = f
	}
}

func appendInt(b []byte, x int64) []byte {
	u := uint64(x)
	for range 8 {
		b = append(b, byte(u))
		u >>= 8
	}
	return b
}

// alap returns each node's latest level: outputs on the last level, every
// other node one level below its earliest reader (inputs stay on 0). A
// node no output depends on is placed on the last level.
func (g *dag) alap() []int32 {
	n := g.nodes()
	lv := make([]int32, n)
	for v := range lv {
		lv[v] = int32(g.depth)
	}
	for v := n - 1; v >= g.nIn; v-- {
		src, _ := g.terms(v)
		for _, s := range src {
			lv[s] = min(lv[s], lv[v]-1)
		}
	}
	for v := range g.nIn {
		lv[v] = 0
	}
	return lv
}
