// Package tokensasstates is the tokens-as-states mapper: several tokens each
// hold a share of every circuit level, attention moves the values a token
// needs from other tokens, and each FFN sublayer computes one threshold
// level for every token at once. The model is a stack of stock PyTorch
// encoder layers (model.EncoderLayer: norm_first, ReLU, biases, softmax
// attention with 1/sqrt(head_dim) scaling), one a circuit level, the last
// level folded into the readout (a threshold on one residual dimension):
// a circuit of depth D gives D − 1 blocks (fusion's SHA3-256: 48).
//
// Tokens. A value belongs to the token of its position hint
// (layered.Circuit.InputPos, Pos, FormPos: Keccak's slice z; hints below T
// are tokens, else the distinct hints ranked, else hint mod T); without a
// hint, value i of a level of W goes to token ⌊i·T/W⌋, or with
// "interleave" to i mod T. A gate lives on one token, its home: its hint,
// else the token of the first value reading it.
//
// Partials. The residual stream holds, per level, the circuit's linear
// forms (the inputs on level 0) split by token: a form is the sum of its
// partials, one per token homing some of its gates, Σ coef·gate over the
// gates homed there; a form's constant is folded into the thresholds of
// the gates reading it. Partials alike on one token are one (Keccak's θ
// sum a + C[x−1] + C[x+1][z−1] is the partial a + C[x−1] on slice z and
// the column sum C[x+1] that slice z−1 holds once for five lanes). On the
// folded top level every output is one partial on its own token.
//
// Slots. Within its token a partial has a slot. Level 0 and the top level:
// its rank among the level's inputs or outputs on the token (the input map
// and the readout are nn.Linear layers shared by all tokens). Other levels:
// by structure — partials reading the same (offset, slot) pairs on many
// tokens share a slot, placed first; a rarer one takes the free slot whose
// common structure it overlaps most — so every token runs the same units
// in the same order (Keccak's first round, whose constant lanes drop
// sources on some slices, keeps the slices' layout).
//
// Residual stream of a token (d_model dimensions):
//
//	0        sink: always 0 (see LayerNorm below)
//	1, 2     +C, −C (position embedding): they pin LayerNorm's scale
//	3, 4     cos, sin of 2πz/T (position z): relative-offset attention
//	         (only when some level fetches)
//	P …      part indicators (position embedding): tokens on which every
//	         per-token constant agrees form a part; every part but the
//	         largest has a dimension, 1 on its tokens (none when all
//	         units are alike on all tokens)
//	R …      S slots: the current level's partials on this token
//	F …      fetched dimensions for one level
//
// LayerNorm. Every sublayer reads LN(x) = γ(x − μ)/σ + β. The ±C pair
// makes σ = C·sqrt(2/d)·(1 + δ) with |δ| ≤ Σ data²/(4C²), and
// γ = C·sqrt(2/d), β = 0, so LN(x) ≈ x − μ;
// every row that reads LN(x) puts −(Σ of its other weights) on the sink,
// so μ cancels exactly and the row reads (1 + δ')·Σ wᵢxᵢ. C is the least
// power of two ≥ 2¹³ with C² ≥ 10·K·max|s|·Σ data² (bounds over the
// model), so K·max|s|·δ' < 1/40 (Keccak: C = 2¹³, |δ'| < 10⁻⁵; the
// 16-bit adder's carries need more).
//
// Block b (computing level b from level b−1):
//
//   - attention: a gate on token z reading partials of token z − r (r ≠ 0)
//     reads a fetched dimension: per offset, one per normalised combination
//     Σ w·slot the gates read (Keccak's θ: the five column sums, one head of
//     offset 1) or one per slot, whichever is fewer. A head carries up to
//     head_dim fetched dimensions of one offset; its query is
//     A·(cos, sin)(2π(z−r)/T) (a rotation of the position dimensions), its
//     key (cos, sin)(2πj/T): the score A·cos(2π(j−z+r)/T) peaks at j = z−r
//     with a gap ≥ Gap, so the softmax is one-hot to e^−Gap. Heads: of the
//     shapes that carry every level's fetches, the fewest heads among those
//     within 25% of the least d_model (Keccak: 24, one per ρ offset, which
//     are distinct mod 64); nhead divides d_model (padded).
//   - FFN: a gate s = Σ wᵢxᵢ ≥ θ (integer weights and values) is
//     relu(h) − relu(h − 1) with h = K(s − θ + ½), K = Steep: two hidden
//     units adding coef·step to its partials' slots. For integer s,
//     h ≤ −K/2 or h ≥ K/2 = 2, so the step saturates and small errors in
//     its inputs do not reach its output (with relu(s − θ + 1) − relu(s − θ)
//     they would grow by Σ|wᵢ| a level). Gates with the same weights over
//     the same slots and fetched dimensions and the same outputs share their
//     two units across tokens (a position-wise FFN: Keccak's 64 slices run
//     one slice's units). Their biases may differ per token — a threshold
//     (Keccak's ι round constants, folded into the forms' constants), or
//     −K·max|s| − 1 on a token without such a gate — through the part
//     indicators. Two units relu(x), relu(−x) per slot of the level below
//     and per fetched dimension write −x: the dead values are cleared.
//
// Readout: output k is its slot ≥ θₖ − ½ (the folded gate's threshold,
// form constants included; ½ when nothing is folded), one threshold per
// rank on a token: where a token's differs, the last FFN adds the
// difference through its part indicator (one unit a part). Every step's
// pre-activation is at least K/2 − 1 = 1 from its kinks and every readout ½
// from its threshold on exact values; the forward pass reports the
// measured margin.
package tokensasstates

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Plugin is the tokens-as-states mapper.
var Plugin = &sdk.Mapper{
	Name:    "tokens-as-states",
	Version: "0.2.0",
	Doc:     "Several tokens each hold a share of every level's forms (by position hint: Keccak's slice z); attention moves values between tokens by relative position; one stock PyTorch encoder layer (LayerNorm, softmax MHA, ReLU FFN) per circuit level, units shared across tokens, the last level folded into the readout.",
	Params: []sdk.Param{
		{Name: "tokens", Type: sdk.Int, Default: 8, Min: sdk.Bound(1), Max: sdk.Bound(4096),
			Doc: "number of state tokens (at most the widest level)"},
		{Name: "assign", Type: sdk.String, Default: "chunks", Enum: []string{"chunks", "interleave"},
			Doc: "where values without a position hint go: \"chunks\" (value i of W to token ⌊iT/W⌋) or \"interleave\" (value i to token i mod T)"},
	},
	Prepare: func(_ context.Context, pass *sdk.Pass) (any, error) {
		return Config{Tokens: pass.Params.Int("tokens"), Interleave: pass.Params.String("assign") == "interleave"}, nil
	},
	Map: func(ctx context.Context, pass *sdk.Pass, c *layered.Circuit) (*model.Model, error) {
		return Map(ctx, c, pass.Prepared.(Config))
	},
}

// Config is the mapper's resolved parameters.
type Config struct {
	Tokens     int
	Interleave bool
}

// Constants of the construction (see the package doc).
const (
	// C is the least value of the ±C dimensions (see Map).
	C = 8192.0
	// Gap is the least score gap between the attended token and any other.
	Gap = 40.0
	// Steep is the slope of a step's ramp: K(s − θ + ½) is ±K/2 away from
	// the ramp's middle for integer s, and K/2 − 1 away from its kinks.
	Steep = 4.0
	// MaxSum bounds Σ|w·x| + |θ| over every gate: K·MaxSum·2⁻²⁴ stays
	// below 1/16 of a step's margin (the 14-bit adder's carries reach
	// 17,982, the 15-bit adder's 5.7·10⁶; Keccak's θ, 35).
	MaxSum = 1 << 18
	// Eps is the layer-norm epsilon (PyTorch's default).
	Eps = 1e-5
	// Fixed dimensions.
	dimSink, dimPlus, dimMinus, dimCos, dimSin = 0, 1, 2, 3, 4
)

// gate is one threshold gate over the values of the level below.
type gate struct {
	src []int32
	w   []int64
	thr int64
}

// value is what the residual stream holds of a level: Σ coef·gate over
// the level's gates (a form without its constant, which the gates reading
// it fold into their thresholds; on the last level, and without forms,
// one gate).
type value struct {
	src  []int32
	coef []int64
}

// values returns level L's values (1 ≤ L ≤ depth).
func values(c *layered.Circuit, L int) []value {
	if !c.HasForms() || L == c.Depth() {
		out := make([]value, c.LevelWidth(L))
		for i := range out {
			out[i] = value{src: []int32{int32(i)}, coef: []int64{1}}
		}
		return out
	}
	out := make([]value, c.NumForms(L))
	f0 := int(c.FormStart[L])
	for i := range out {
		_, src, coef := c.Form(f0 + i)
		v := value{src: src}
		for _, k := range coef {
			v.coef = append(v.coef, int64(k))
		}
		out[i] = v
	}
	return out
}

// gates returns level L's gates over level L−1's values (level 0: the
// inputs, the forms of level 0 composed in).
func gates(c *layered.Circuit, L int) []gate {
	out := make([]gate, c.LevelWidth(L))
	g0 := int(c.LevelStart[L-1])
	for i := range out {
		src, w := c.Row(g0 + i)
		acc := map[int32]int64{}
		thr := int64(c.Threshold[g0+i])
		switch {
		case !c.HasForms():
			for k, s := range src {
				acc[s] += int64(w[k])
			}
		case L == 1:
			for k, f := range src {
				k0, fs, fc := c.Form(int(f))
				thr -= int64(w[k]) * int64(k0)
				for e, s := range fs {
					acc[s] += int64(w[k]) * int64(fc[e])
				}
			}
		default:
			f0 := int(c.FormStart[L-1])
			for k, f := range src {
				k0, _, _ := c.Form(f0 + int(f))
				thr -= int64(w[k]) * int64(k0)
				acc[f] += int64(w[k])
			}
		}
		g := gate{thr: thr}
		for s, v := range acc {
			if v != 0 {
				g.src = append(g.src, s)
			}
		}
		slices.Sort(g.src)
		for _, s := range g.src {
			g.w = append(g.w, acc[s])
		}
		out[i] = g
	}
	return out
}

// tensor collects a sparse matrix row by row.
type tensor struct {
	name       string
	rows, cols int
	ent        []map[int32]float64
}

func newTensor(name string, rows, cols int) *tensor {
	t := &tensor{name: name, rows: rows, cols: cols, ent: make([]map[int32]float64, rows)}
	return t
}

func (t *tensor) add(r, c int, v float64) {
	if t.ent[r] == nil {
		t.ent[r] = map[int32]float64{}
	}
	t.ent[r][int32(c)] += v
}

// readLN makes row r a read of LayerNorm's output: the sink gets minus the
// sum of the row's other weights.
func (t *tensor) readLN(r int) {
	var s float64
	for c, v := range t.ent[r] {
		if c != dimSink {
			s += v
		}
	}
	if s != 0 {
		t.add(r, dimSink, -s)
	}
}

func (t *tensor) build() model.Tensor {
	m := model.Tensor{Name: t.name, Rows: t.rows, Cols: t.cols, RowPtr: make([]int32, t.rows+1)}
	for r, e := range t.ent {
		cols := make([]int32, 0, len(e))
		for c, v := range e {
			if v != 0 {
				cols = append(cols, c)
			}
		}
		slices.Sort(cols)
		for _, c := range cols {
			m.Col = append(m.Col, c)
			m.Val = append(m.Val, float32(e[c]))
		}
		m.RowPtr[r+1] = int32(len(m.Col))
	}
	return m
}

// fill sets every entry of a 1×n tensor to v.
func fill(t *tensor, v float64) *tensor {
	for c := range t.cols {
		t.add(0, c, v)
	}
	return t
}

// hints returns the circuit's position hints of the inputs, the gates and
// the forms (nil where it has none).
func hints(c *layered.Circuit) (in, gate, form []int32) {
	return c.InputPos, c.Pos, c.FormPos
}

// levelValues returns the values the residual stream holds for levels
// 0 … top: nil for the inputs, the forms, and on the top level either the
// output gates (top = depth) or, folded (top = depth − 1), each output
// gate's pre-activation as a sum over the top level's gates, with the
// output thresholds (form constants folded in).
func levelValues(c *layered.Circuit, top int) ([][]value, []int64) {
	D := c.Depth()
	vals := make([][]value, top+1)
	for L := 1; L <= top; L++ {
		vals[L] = values(c, L)
	}
	nOut := c.NumOutputs()
	thr := make([]int64, nOut)
	g0 := int(c.LevelStart[D-1])
	for k := range nOut {
		thr[k] = int64(c.Threshold[g0+k])
	}
	if top == D {
		return vals, thr
	}
	out := make([]value, nOut)
	f0 := 0
	if c.HasForms() {
		f0 = int(c.FormStart[D-1])
	}
	for k := range out {
		src, w := c.Row(g0 + k)
		acc := map[int32]int64{}
		for e, s := range src {
			if !c.HasForms() {
				acc[s] += int64(w[e])
				continue
			}
			k0, fs, fc := c.Form(f0 + int(s))
			thr[k] -= int64(w[e]) * int64(k0)
			for j, g := range fs {
				acc[g] += int64(w[e]) * int64(fc[j])
			}
		}
		var v value
		for g := range acc {
			if acc[g] != 0 {
				v.src = append(v.src, g)
			}
		}
		slices.Sort(v.src)
		for _, g := range v.src {
			v.coef = append(v.coef, acc[g])
		}
		out[k] = v
	}
	vals[top] = out
	return vals, thr
}

// levelPos returns the position hint of every value of level L (nil when
// the circuit has none).
func levelPos(c *layered.Circuit, L, top int, inPos, gatePos, formPos []int32) []int32 {
	D := c.Depth()
	switch {
	case L == 0:
		return inPos
	case L == top && top == D-1, L == D, !c.HasForms():
		if gatePos == nil {
			return nil
		}
		lv := L
		if L == top && top == D-1 {
			lv = D // folded: the output gates
		}
		return gatePos[c.LevelStart[lv-1]:c.LevelStart[lv]]
	default:
		if formPos == nil {
			return nil
		}
		return formPos[c.FormStart[L]:c.FormStart[L+1]]
	}
}

// tokenOf maps position hints to tokens: hints below T are tokens; else
// the distinct hints, ranked, when there are at most T of them; else hint
// mod T.
func tokenOf(pos [][]int32, T int) func(h int32) int32 {
	seen := map[int32]bool{}
	for _, p := range pos {
		for _, h := range p {
			if h >= 0 {
				seen[h] = true
			}
		}
	}
	hs := make([]int32, 0, len(seen))
	for h := range seen {
		hs = append(hs, h)
	}
	slices.Sort(hs)
	switch {
	case len(hs) == 0 || hs[len(hs)-1] < int32(T):
		return func(h int32) int32 { return h }
	case len(hs) <= T:
		return func(h int32) int32 { i, _ := slices.BinarySearch(hs, h); return int32(i) }
	default:
		return func(h int32) int32 { return h % int32(T) }
	}
}

// assignSlots gives every value of a level a slot on its token so that
// values playing the same part on different tokens share a slot. keys[i]
// is value i's structure: the (offset, slot) pairs it reads through its
// gates. Values with equal keys on many tokens are placed first, each
// group on the lowest slot free on all its tokens; a rarer key takes the
// free slot whose common key it overlaps most (Keccak's first round, where
// constants drop sources on some slices, keeps the slices' layout).
func assignSlots(tok []int32, keys [][]int64, T int) ([]int32, int) {
	type group struct {
		first int
		key   []int64
		toks  []int32
		vals  []int
	}
	var groups []*group
	byKey := map[string]*group{}
	copies := map[string]int{}
	var kb []byte
	for i, k := range keys {
		kb = kb[:0]
		for _, e := range k {
			kb = strconv.AppendInt(kb, e, 36)
			kb = append(kb, ',')
		}
		base := string(kb)
		ck := base + "@" + strconv.Itoa(int(tok[i]))
		n := copies[ck]
		copies[ck] = n + 1
		gk := base + "#" + strconv.Itoa(n)
		g := byKey[gk]
		if g == nil {
			g = &group{first: i, key: k}
			byKey[gk] = g
			groups = append(groups, g)
		}
		g.toks = append(g.toks, tok[i])
		g.vals = append(g.vals, i)
	}
	slices.SortStableFunc(groups, func(a, b *group) int { return len(b.toks) - len(a.toks) })
	used := make([][]bool, T)
	next := make([]int, T) // lowest possibly free slot of each token
	free := func(t int32, s int) bool { return s >= len(used[t]) || !used[t][s] }
	var common []int // slots whose first group spans ≥ 2 tokens
	var slotKey [][]int64
	S := 0
	slot := make([]int32, len(tok))
	for _, g := range groups {
		best, bestSim := -1, 0
		for _, s := range common {
			ok := true
			for _, t := range g.toks {
				if !free(t, s) {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			if sim := overlap(g.key, slotKey[s]); sim > bestSim {
				best, bestSim = s, sim
			}
		}
		if best < 0 {
			s := 0
			for _, t := range g.toks {
				s = max(s, next[t])
			}
			for ; ; s++ {
				ok := true
				for _, t := range g.toks {
					if !free(t, s) {
						ok = false
						break
					}
				}
				if ok {
					break
				}
			}
			best = s
		}
		for best >= S {
			slotKey = append(slotKey, nil)
			S++
		}
		if slotKey[best] == nil {
			slotKey[best] = g.key
			if len(g.toks) > 1 {
				common = append(common, best)
			}
		}
		for k, t := range g.toks {
			for len(used[t]) <= best {
				used[t] = append(used[t], false)
			}
			used[t][best] = true
			for next[t] < len(used[t]) && used[t][next[t]] {
				next[t]++
			}
			slot[g.vals[k]] = int32(best)
		}
	}
	return slot, S
}

// overlap counts the common elements of two sorted slices.
func overlap(a, b []int64) int {
	n := 0
	for len(a) > 0 && len(b) > 0 {
		switch {
		case a[0] < b[0]:
			a = a[1:]
		case a[0] > b[0]:
			b = b[1:]
		default:
			n++
			a, b = a[1:], b[1:]
		}
	}
	return n
}

// normalize divides a combination by the gcd of its coefficients, made
// positive on its first term, and returns the factor.
func normalize(w []int64) int64 {
	var g int64
	for _, x := range w {
		a, b := g, max(x, -x)
		for b != 0 {
			a, b = b, a%b
		}
		g = a
	}
	if g == 0 {
		return 1
	}
	if w[0] < 0 {
		g = -g
	}
	for i := range w {
		w[i] /= g
	}
	return g
}

// Map builds the model.
func Map(ctx context.Context, c *layered.Circuit, cfg Config) (*model.Model, error) {
	D := c.Depth()
	if D < 1 {
		return nil, fmt.Errorf("tokens-as-states: the circuit has no gate level")
	}
	// Levels 0 … top are in the residual stream; top = D − 1 folds the
	// output level into the readout (a threshold on one dimension).
	top := D
	if D >= 2 {
		top = D - 1
	}
	vals, outThr := levelValues(c, top)
	width := make([]int, top+1)
	width[0] = c.NumInputs
	for L := 1; L <= top; L++ {
		width[L] = len(vals[L])
	}
	T := max(1, min(cfg.Tokens, slices.Max(width)))
	inPos, gatePos, formPos := hints(c)
	pos := make([][]int32, top+1)
	for L := range pos {
		pos[L] = levelPos(c, L, top, inPos, gatePos, formPos)
	}
	toToken := tokenOf(pos, T)
	tok := make([][]int32, top+1)
	for L := range tok {
		W := width[L]
		tok[L] = make([]int32, W)
		for i := range W {
			switch {
			case pos[L] != nil && pos[L][i] >= 0:
				tok[L][i] = toToken(pos[L][i])
			case cfg.Interleave:
				tok[L][i] = int32(i % T)
			default:
				tok[L][i] = int32(i * T / W)
			}
		}
	}
	rel := func(t, u int32) int64 { return int64((int(t) - int(u) + T) % T) }
	// Partials: what the residual stream holds. A gate lives on one token,
	// its home (its hint, else the token of the first value reading it),
	// and a value is the sum of its partials, one per token holding some
	// of its gates: Σ coef·gate over the gates homed there. Partials alike
	// on one token are one (Keccak: the column sum C[x] that θ adds to five
	// lanes of the next slice). On the folded top level every value is one
	// partial on its own token, computed there. Level 0's partials are the
	// inputs.
	type partial struct {
		tok  int32
		src  []int32
		coef []int64
	}
	parts := make([][]partial, top+1)
	partsOf := make([][][]int32, top+1) // value i of level L → its partials
	parts[0] = make([]partial, width[0])
	partsOf[0] = make([][]int32, width[0])
	for i := range width[0] {
		parts[0][i] = partial{tok: tok[0][i], src: []int32{int32(i)}, coef: []int64{1}}
		partsOf[0][i] = []int32{int32(i)}
	}
	gs := make([][]gate, top+1)
	for L := 1; L <= top; L++ {
		gs[L] = gates(c, L)
		home := make([]int32, len(gs[L]))
		for g := range home {
			home[g] = -1
			if gatePos != nil {
				if h := gatePos[int(c.LevelStart[L-1])+g]; h >= 0 {
					home[g] = toToken(h)
				}
			}
		}
		for i, v := range vals[L] {
			for _, g := range v.src {
				if home[g] < 0 {
					home[g] = tok[L][i]
				}
			}
		}
		byKey := map[string]int32{}
		var kb []byte
		partsOf[L] = make([][]int32, width[L])
		for i, v := range vals[L] {
			groups := map[int32]*partial{}
			var order []int32
			for k, g := range v.src {
				u := home[g]
				if L == top && top < D {
					u = tok[L][i]
				}
				if groups[u] == nil {
					groups[u] = &partial{tok: u}
					order = append(order, u)
				}
				groups[u].src = append(groups[u].src, g)
				groups[u].coef = append(groups[u].coef, v.coef[k])
			}
			if len(order) == 0 { // a constant value: an empty partial on its token
				groups[tok[L][i]] = &partial{tok: tok[L][i]}
				order = append(order, tok[L][i])
			}
			for _, u := range order {
				pt := groups[u]
				kb = strconv.AppendInt(kb[:0], int64(u), 10)
				if L == top { // read by the readout alone: one partial a value
					kb = append(kb, '#')
					kb = strconv.AppendInt(kb, int64(i), 10)
				}
				for k := range pt.src {
					kb = append(kb, ' ')
					kb = strconv.AppendInt(kb, int64(pt.src[k]), 10)
					kb = append(kb, ':')
					kb = strconv.AppendInt(kb, pt.coef[k], 10)
				}
				j, ok := byKey[string(kb)]
				if !ok {
					j = int32(len(parts[L]))
					byKey[string(kb)] = j
					parts[L] = append(parts[L], *pt)
				}
				partsOf[L][i] = append(partsOf[L][i], j)
			}
		}
		// The gate's sources as partials of the level below.
		for g := range gs[L] {
			acc := map[int32]int64{}
			for k, s := range gs[L][g].src {
				for _, q := range partsOf[L-1][s] {
					acc[q] += gs[L][g].w[k]
				}
			}
			var src []int32
			for q, w := range acc {
				if w != 0 {
					src = append(src, q)
				}
			}
			slices.Sort(src)
			w := make([]int64, len(src))
			for k, q := range src {
				w[k] = acc[q]
			}
			gs[L][g].src, gs[L][g].w = src, w
		}
	}
	// Slots: level 0 by rank on the token; above, by structure.
	slot := make([][]int32, top+1)
	nSlots := make([]int, top+1)
	{
		count := make([]int32, T)
		slot[0] = make([]int32, width[0])
		for i, t := range tok[0] {
			slot[0][i] = count[t]
			count[t]++
			nSlots[0] = max(nSlots[0], int(count[t]))
		}
	}
	for L := 1; L <= top; L++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		keys := make([][]int64, len(parts[L]))
		ptok := make([]int32, len(parts[L]))
		for i, pt := range parts[L] {
			ptok[i] = pt.tok
			var k []int64
			for _, g := range pt.src {
				for _, q := range gs[L][g].src {
					k = append(k, rel(pt.tok, parts[L-1][q].tok)<<32|int64(slot[L-1][q]))
				}
			}
			slices.Sort(k)
			keys[i] = slices.Compact(k)
		}
		slot[L], nSlots[L] = assignSlots(ptok, keys, T)
	}
	// The top level is read by the readout alone, a stock nn.Linear shared
	// by all tokens: output k sits in the slot of its rank among the
	// outputs on its token, and item j of every token has one threshold
	// (the per-token differences are added by the last FFN, below).
	nOut := c.NumOutputs()
	outThrF := make([]float64, nOut)
	{
		count := make([]int32, T)
		nSlots[top] = 0
		for k := range nOut {
			q := partsOf[top][k][0]
			t := parts[top][q].tok
			slot[top][q] = count[t]
			count[t]++
			nSlots[top] = max(nSlots[top], int(count[t]))
			outThrF[k] = 0.5
			if top < D {
				outThrF[k] = float64(outThr[k]) - 0.5
			}
		}
	}
	S := slices.Max(nSlots)
	// bound[L] is the largest magnitude a partial of level L takes: a unit
	// off its token reads whatever sits in its dimensions there.
	bound := make([]float64, top+1)
	for L := range bound {
		bound[L] = 1
		for _, pt := range parts[L] {
			var lo, hi float64
			for _, k := range pt.coef {
				lo, hi = lo+float64(min(k, 0)), hi+float64(max(k, 0))
			}
			bound[L] = max(bound[L], -lo, hi)
		}
	}

	// Per level: the fetched combinations (an offset r ≠ 0 and a
	// normalised Σ w·slot on token z − r) and the unit classes.
	type combo struct {
		r    int
		slot []int32
		w    []int64
	}
	type class struct {
		dims  []int32 // slot s ≥ 0, or fetched combination −(j+1)
		w     []int64
		outs  [][2]int64 // (slot, coef)
		toks  []int32
		thr   []int64 // per entry of toks
		bound float64
	}
	type level struct {
		combos  []combo
		classes []*class
		cleared int // slots of the level below to clear
	}
	lv := make([]level, top+1)
	anyFetch := false
	for L := 1; L <= top; L++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		// Gate instances: a gate on every token holding a partial of it
		// (its home; on the folded level, every token reading it).
		type inst struct{ g, t int32 }
		outs := map[inst][][2]int64{}
		var order []inst
		for i, pt := range parts[L] {
			for k, g := range pt.src {
				key := inst{g, pt.tok}
				if _, ok := outs[key]; !ok {
					order = append(order, key)
				}
				outs[key] = append(outs[key], [2]int64{int64(slot[L][i]), pt.coef[k]})
			}
		}
		// Remote sources, grouped by offset: per offset, either one
		// fetched dimension per normalised combination the gates read
		// (Keccak's θ column sums) or one per slot, whichever is fewer.
		type remote struct {
			r    int64
			slot []int32
			w    []int64
		}
		rem := make([][]remote, len(order))
		combosAt := map[int64]map[string]bool{}
		slotsAt := map[int64]map[int32]bool{}
		var kb []byte
		comboKey := func(r int64, slot []int32, w []int64) string {
			kb = kb[:0]
			kb = strconv.AppendInt(kb, r, 10)
			for e := range slot {
				kb = append(kb, ' ')
				kb = strconv.AppendInt(kb, int64(slot[e]), 10)
				kb = append(kb, ':')
				kb = strconv.AppendInt(kb, w[e], 10)
			}
			return string(kb)
		}
		for n, in := range order {
			g := gs[L][in.g]
			byR := map[int64]int{}
			for k, s := range g.src {
				r := rel(in.t, parts[L-1][s].tok)
				if r == 0 {
					continue
				}
				j, ok := byR[r]
				if !ok {
					j = len(rem[n])
					byR[r] = j
					rem[n] = append(rem[n], remote{r: r})
				}
				rem[n][j].slot = append(rem[n][j].slot, slot[L-1][s])
				rem[n][j].w = append(rem[n][j].w, g.w[k])
				if slotsAt[r] == nil {
					slotsAt[r], combosAt[r] = map[int32]bool{}, map[string]bool{}
				}
				slotsAt[r][slot[L-1][s]] = true
			}
			for _, x := range rem[n] {
				w := slices.Clone(x.w)
				normalize(w)
				combosAt[x.r][comboKey(x.r, x.slot, w)] = true
			}
		}
		comboID, classID := map[string]int{}, map[string]int{}
		fetch := func(r int64, slot []int32, w []int64) int {
			key := comboKey(r, slot, w)
			j, ok := comboID[key]
			if !ok {
				j = len(lv[L].combos)
				comboID[key] = j
				lv[L].combos = append(lv[L].combos, combo{r: int(r), slot: slot, w: w})
			}
			anyFetch = true
			return j
		}
		for n, in := range order {
			g := gs[L][in.g]
			u := &class{outs: outs[in]}
			thr := g.thr
			for k, s := range g.src {
				if rel(in.t, parts[L-1][s].tok) == 0 {
					u.dims = append(u.dims, slot[L-1][s])
					u.w = append(u.w, g.w[k])
					u.bound += math.Abs(float64(g.w[k])) * bound[L-1]
				}
			}
			for _, x := range rem[n] {
				if len(combosAt[x.r]) > len(slotsAt[x.r]) {
					for e, s := range x.slot {
						j := fetch(x.r, []int32{s}, []int64{1})
						u.dims = append(u.dims, int32(-(j + 1)))
						u.w = append(u.w, x.w[e])
						u.bound += math.Abs(float64(x.w[e])) * bound[L-1]
					}
					continue
				}
				w := slices.Clone(x.w)
				f := normalize(w)
				j := fetch(x.r, x.slot, w)
				var mass float64
				for _, y := range w {
					mass += math.Abs(float64(y))
				}
				u.dims = append(u.dims, int32(-(j + 1)))
				u.w = append(u.w, f)
				u.bound += math.Abs(float64(f)) * mass * bound[L-1]
			}
			kb = kb[:0]
			for k := range u.dims {
				kb = strconv.AppendInt(kb, int64(u.dims[k]), 10)
				kb = append(kb, '*')
				kb = strconv.AppendInt(kb, u.w[k], 10)
				kb = append(kb, ' ')
			}
			kb = append(kb, '>')
			for _, o := range u.outs {
				kb = strconv.AppendInt(kb, o[0], 10)
				kb = append(kb, '*')
				kb = strconv.AppendInt(kb, o[1], 10)
				kb = append(kb, ' ')
			}
			// Two gates alike on one token are two units (their outputs add).
			for n := 0; ; n++ {
				key := string(kb) + "#" + strconv.Itoa(n)
				j, ok := classID[key]
				if !ok {
					j = len(lv[L].classes)
					classID[key] = j
					lv[L].classes = append(lv[L].classes, u)
				}
				cl := lv[L].classes[j]
				if !slices.Contains(cl.toks, in.t) {
					cl.toks = append(cl.toks, in.t)
					cl.thr = append(cl.thr, thr)
					break
				}
			}
		}
		lv[L].cleared = nSlots[L-1]
	}
	// Per-token constants: a class's bias on token z is Steep(½ − θ(z)),
	// or, where it has no gate, low enough to keep both units off. Tokens
	// on which every class's bias agrees form one part; every part but the
	// largest gets an indicator dimension in the position embedding.
	steepBias := func(cl *class, t int32) float64 {
		if i := slices.Index(cl.toks, t); i >= 0 {
			return Steep * (0.5 - float64(cl.thr[i]))
		}
		return -Steep*cl.bound - 1
	}
	uniform := func(cl *class) bool {
		return len(cl.toks) == T && slices.Min(cl.thr) == slices.Max(cl.thr)
	}
	part := make([]int32, T)
	nPart := 1
	for L := 1; L <= top; L++ {
		for _, cl := range lv[L].classes {
			if uniform(cl) {
				continue
			}
			ids := map[[2]float64]int32{}
			next := make([]int32, T)
			for z := range T {
				k := [2]float64{float64(part[z]), steepBias(cl, int32(z))}
				id, ok := ids[k]
				if !ok {
					id = int32(len(ids))
					ids[k] = id
				}
				next[z] = id
			}
			part, nPart = next, len(ids)
		}
	}
	// The readout's items refine the parts too.
	itemThr := make([][]float64, nSlots[top]) // item j → token → threshold (NaN: none)
	for j := range itemThr {
		itemThr[j] = make([]float64, T)
		for z := range T {
			itemThr[j][z] = math.NaN()
		}
	}
	for k := range nOut {
		q := partsOf[top][k][0]
		itemThr[slot[top][q]][parts[top][q].tok] = outThrF[k]
	}
	for _, v := range itemThr {
		ids := map[[2]float64]int32{}
		next := make([]int32, T)
		for z := range T {
			key := [2]float64{float64(part[z]), v[z]}
			if math.IsNaN(v[z]) {
				key[1] = math.Inf(1)
			}
			id, ok := ids[key]
			if !ok {
				id = int32(len(ids))
				ids[key] = id
			}
			next[z] = id
		}
		part, nPart = next, len(ids)
	}
	size := make([]int, nPart)
	rep := make([]int32, nPart) // a token of each part
	for z := T - 1; z >= 0; z-- {
		size[part[z]]++
		rep[part[z]] = int32(z)
	}
	basePart := int32(0)
	for p := range size {
		if size[p] > size[basePart] {
			basePart = int32(p)
		}
	}
	// Item j's readout threshold: the base part's (else the first part's
	// having it); corr[p][j] is what part p adds to item j's slot.
	readThr := make([]float64, len(itemThr))
	corr := map[int32][]float64{}
	for j, v := range itemThr {
		readThr[j] = v[rep[basePart]]
		for z := range T {
			if math.IsNaN(readThr[j]) {
				readThr[j] = v[z]
			}
		}
		for p := range nPart {
			if t := v[rep[p]]; !math.IsNaN(t) && t != readThr[j] {
				if corr[int32(p)] == nil {
					corr[int32(p)] = make([]float64, len(itemThr))
				}
				corr[int32(p)][j] = readThr[j] - t
			}
		}
	}
	// Dimensions.
	dimInd := dimCos
	if anyFetch {
		dimInd = dimSin + 1
	}
	indDim := make([]int, nPart) // −1 for the base part
	next := dimInd
	for p := range indDim {
		indDim[p] = -1
		if int32(p) != basePart {
			indDim[p] = next
			next++
		}
	}
	dimR := next
	dimF := dimR + S
	nF := 0
	for L := 1; L <= top; L++ {
		nF = max(nF, len(lv[L].combos))
	}
	dNeed := dimF + nF
	// Heads: a head carries head_dim fetched dimensions of one offset.
	// Of the shapes (heads, head_dim) that carry every level's fetches and
	// give d_model ≥ what the dimensions need, the fewest heads among
	// those within 25% of the least d_model (Keccak: 24 heads, one per ρ
	// offset, rather than 26 of 3 dimensions).
	perR := make([]map[int]int, top+1)
	nhead := 1
	for L := 1; L <= top; L++ {
		perR[L] = map[int]int{}
		for _, cb := range lv[L].combos {
			perR[L][cb.r]++
		}
		nhead = max(nhead, len(perR[L]))
	}
	need := func(hd int) int {
		n := 0
		for L := 1; L <= top; L++ {
			k := 0
			for _, c := range perR[L] {
				k += (c + hd - 1) / hd
			}
			n = max(n, k)
		}
		return n
	}
	type shape struct{ d, nhead, hd int }
	var shapes []shape
	for hd := 2; hd <= max(2, dNeed); hd++ {
		n := max(need(hd), nhead, (dNeed+hd-1)/hd)
		shapes = append(shapes, shape{hd * n, n, hd})
		if need(hd) <= nhead && hd*nhead >= dNeed {
			break
		}
	}
	least := slices.MinFunc(shapes, func(a, b shape) int { return a.d - b.d })
	pick := least
	for _, s := range shapes {
		if 4*s.d <= 5*least.d && (s.nhead < pick.nhead || s.nhead == pick.nhead && s.d < pick.d) {
			pick = s
		}
	}
	nhead, hd, d := pick.nhead, pick.hd, pick.d

	m := &model.Model{Arch: "tokens-as-states/stock", Tokens: T, DModel: d,
		Attrs: map[string]int64{"depth": int64(D), "levels_folded": int64(D - top), "slots": int64(S),
			"fetched": int64(nF), "position_dims": int64(nPart - 1)}}
	var tensors []*tensor
	// ±cv pins LayerNorm's scale to 1 + δ, |δ| ≤ Σ data²/(4cv²): a step's
	// pre-activation K·s is then off by at most K·max|s|·δ, kept below
	// 1/40 (its margin is 1) by cv² ≥ 10·K·max|s|·Σ data², a power of two
	// (adders' carries: sums up to 2^(n+1)).
	dataSq := float64(nPart) + 1
	maxS := 1.0
	for L := 1; L <= top; L++ {
		sq := float64(nSlots[L-1]) * bound[L-1] * bound[L-1]
		for _, cb := range lv[L].combos {
			var mass float64
			for _, w := range cb.w {
				mass += math.Abs(float64(w))
			}
			sq += mass * mass * bound[L-1] * bound[L-1]
		}
		dataSq = max(dataSq, float64(nPart)+1+sq)
		for _, cl := range lv[L].classes {
			for _, th := range cl.thr {
				maxS = max(maxS, cl.bound+math.Abs(float64(th)))
			}
		}
	}
	cv := C
	for cv*cv < 10*Steep*maxS*dataSq {
		cv *= 2
	}
	m.Attrs["C"] = int64(cv)
	m.Attrs["max_sum"] = int64(maxS)
	if maxS > MaxSum {
		return nil, fmt.Errorf("tokens-as-states: a gate's Σ|w·x| + |θ| reaches %d > %d: each LayerNorm output carries a relative float32 error of 2⁻²⁴, so a step's pre-activation K·Σ w·x would be uncertain by more than its margin (not exact in float32)", int64(maxS), int64(MaxSum))
	}
	sigma0 := cv * math.Sqrt(2/float64(d))

	// Embedding: the position embedding (base) and the input map.
	base := newTensor("embed.pos", T, d)
	for z := range T {
		base.add(z, dimPlus, cv)
		base.add(z, dimMinus, -cv)
		if anyFetch {
			a := 2 * math.Pi * float64(z) / float64(T)
			base.add(z, dimCos, math.Cos(a))
			base.add(z, dimSin, math.Sin(a))
		}
		if k := indDim[part[z]]; k >= 0 {
			base.add(z, k, 1)
		}
	}
	in := newTensor("embed.input", c.NumInputs, d)
	m.Embed = model.Embedding{Base: base.name, Input: in.name, InputToken: make([]int32, c.NumInputs)}
	for i := range c.NumInputs {
		in.add(i, dimR+int(slot[0][i]), 1)
		m.Embed.InputToken[i] = tok[0][i]
	}
	tensors = append(tensors, base, in)

	A := 0.0 // query scale: a score gap of Gap, MHA's 1/sqrt(head_dim) folded in
	if T > 1 {
		A = Gap / (1 - math.Cos(2*math.Pi/float64(T))) * math.Sqrt(float64(hd))
	}
	F := 0 // FFN width: the widest level's units
	for L := 1; L <= top; L++ {
		p := fmt.Sprintf("layers.%d.", L-1)
		n1w, n1b := fill(newTensor(p+"norm1.weight", 1, d), sigma0), newTensor(p+"norm1.bias", 1, d)
		n2w, n2b := fill(newTensor(p+"norm2.weight", 1, d), sigma0), newTensor(p+"norm2.bias", 1, d)
		inW, inB := newTensor(p+"self_attn.in_proj_weight", 3*d, d), newTensor(p+"self_attn.in_proj_bias", 1, 3*d)
		outW, outB := newTensor(p+"self_attn.out_proj.weight", d, d), newTensor(p+"self_attn.out_proj.bias", 1, d)
		// Heads: each offset's combinations, head_dim at a time.
		combos := lv[L].combos
		byR := map[int][]int{}
		var rs []int
		for j, cb := range combos {
			if byR[cb.r] == nil {
				rs = append(rs, cb.r)
			}
			byR[cb.r] = append(byR[cb.r], j)
		}
		slices.Sort(rs)
		h := 0
		for _, r := range rs {
			js := byR[r]
			for len(js) > 0 {
				n := min(hd, len(js))
				a := 2 * math.Pi * float64(r) / float64(T)
				q, k, v := h*hd, d+h*hd, 2*d+h*hd
				// q = A·(cos, sin)(2π(z−r)/T) = A·rot(−r)(cos z, sin z).
				inW.add(q, dimCos, A*math.Cos(a))
				inW.add(q, dimSin, A*math.Sin(a))
				inW.add(q+1, dimCos, -A*math.Sin(a))
				inW.add(q+1, dimSin, A*math.Cos(a))
				inW.add(k, dimCos, 1)
				inW.add(k+1, dimSin, 1)
				for _, row := range []int{q, q + 1, k, k + 1} {
					inW.readLN(row)
				}
				for e, j := range js[:n] {
					for t, s := range combos[j].slot {
						inW.add(v+e, dimR+int(s), float64(combos[j].w[t]))
					}
					inW.readLN(v + e)
					outW.add(dimF+j, h*hd+e, 1)
				}
				js = js[n:]
				h++
			}
		}
		dim := func(x int32) int {
			if x >= 0 {
				return dimR + int(x)
			}
			return dimF + int(-x-1)
		}
		// FFN: two units a class, then two a cleared dimension.
		classes := lv[L].classes
		width := 2*len(classes) + 2*(lv[L].cleared+len(combos))
		if L == top {
			width += len(corr)
		}
		F = max(F, width)
		l1W, l1B := newTensor(p+"linear1.weight", width, d), newTensor(p+"linear1.bias", 1, width)
		l2W, l2B := newTensor(p+"linear2.weight", d, width), newTensor(p+"linear2.bias", 1, d)
		u := 0
		for _, cl := range classes {
			// h = K(s − θ + ½): the step is relu(h) − relu(h − 1), saturated
			// (h ≤ −K/2 or h ≥ K/2 ≥ 1 + K·error) so input errors die here.
			for k := range cl.dims {
				l1W.add(u, dim(cl.dims[k]), Steep*float64(cl.w[k]))
				l1W.add(u+1, dim(cl.dims[k]), Steep*float64(cl.w[k]))
			}
			b0 := steepBias(cl, rep[basePart])
			if !uniform(cl) {
				for q, k := range indDim {
					if k < 0 {
						continue
					}
					if dv := steepBias(cl, rep[q]) - b0; dv != 0 {
						l1W.add(u, k, dv)
						l1W.add(u+1, k, dv)
					}
				}
			}
			l1W.readLN(u)
			l1W.readLN(u + 1)
			l1B.add(0, u, b0)
			l1B.add(0, u+1, b0-1)
			for _, o := range cl.outs {
				l2W.add(dimR+int(o[0]), u, float64(o[1]))
				l2W.add(dimR+int(o[0]), u+1, -float64(o[1]))
			}
			u += 2
		}
		// Clear the level below and the fetched copies: x = relu(x) − relu(−x).
		clear := func(dim int) {
			l1W.add(u, dim, 1)
			l1W.add(u+1, dim, -1)
			l1W.readLN(u)
			l1W.readLN(u + 1)
			l2W.add(dim, u, -1)
			l2W.add(dim, u+1, 1)
			u += 2
		}
		for s := range lv[L].cleared {
			clear(dimR + s)
		}
		for j := range combos {
			clear(dimF + j)
		}
		if L == top {
			// Per-token readout thresholds: relu(indicator of part p) ≈ 1 on
			// p's tokens adds θ(item) − θ(p's item) to its slots.
			for p := range int32(nPart) {
				if corr[p] == nil {
					continue
				}
				l1W.add(u, indDim[p], 1)
				l1W.readLN(u)
				for j, v := range corr[p] {
					if v != 0 {
						l2W.add(dimR+j, u, v)
					}
				}
				u++
			}
		}
		tensors = append(tensors, n1w, n1b, inW, inB, outW, outB, n2w, n2b, l1W, l1B, l2W, l2B)
		m.Blocks = append(m.Blocks, model.Block{Layer: &model.EncoderLayer{Heads: nhead, Eps: Eps,
			Norm1W: n1w.name, Norm1B: n1b.name, InProjW: inW.name, InProjB: inB.name,
			OutProjW: outW.name, OutProjB: outB.name, Norm2W: n2w.name, Norm2B: n2b.name,
			Linear1W: l1W.name, Linear1B: l1B.name, Linear2W: l2W.name, Linear2B: l2B.name}})
	}
	// Every stock layer has the same dim_feedforward: pad to the widest.
	for _, t := range tensors {
		switch {
		case strings.HasSuffix(t.name, "linear1.weight"):
			t.ent = append(t.ent, make([]map[int32]float64, F-t.rows)...)
			t.rows = F
		case strings.HasSuffix(t.name, "linear1.bias"), strings.HasSuffix(t.name, "linear2.weight"):
			t.cols = F
		}
	}
	m.Attrs["ffn_width"] = int64(F)
	// Readout: output k is its value ≥ ½ (a gate), or, folded, its
	// pre-activation ≥ θ − ½.
	m.Readout = model.Readout{Token: make([]int32, nOut), Dim: make([]int32, nOut), Threshold: make([]float32, nOut)}
	for k := range nOut {
		q := partsOf[top][k][0]
		m.Readout.Token[k] = parts[top][q].tok
		m.Readout.Dim[k] = int32(dimR) + slot[top][q]
		m.Readout.Threshold[k] = float32(readThr[slot[top][q]])
	}
	for _, t := range tensors {
		m.Tensors = append(m.Tensors, t.build())
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("tokens-as-states: built an invalid model: %w", err)
	}
	return m, nil
}
