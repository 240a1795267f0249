package decoder

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// Constants of the construction (see the package doc).
const (
	// C is the least value of the ±C dimensions that pin LayerNorm's scale.
	C = 8192.0
	// Gap is the least score gap between the attended token and any other:
	// e^−Gap underflows float32, so every softmax is exactly one-hot there.
	Gap = 110.0
	// Steep is the slope of a step's ramp.
	Steep = 4.0
	// Eps is the layer-norm epsilon (PyTorch's default).
	Eps = 1e-5
	// codeBase is the period of the finest position code; (cos, sin) pairs
	// of periods codeBase, codeBase², … tell positions apart.
	codeBase = 32
	// posPairs pairs code a position (up to codeBase³), rcPairs a row or a
	// col (up to codeBase²).
	posPairs, rcPairs = 3, 3
	// MaxPositions is the longest sequence the position code tells apart.
	MaxPositions = codeBase * codeBase * codeBase
	// maxRowCol is the most rows or cols the row and col codes tell apart.
	maxRowCol = codeBase * codeBase * codeBase
)

// code returns the code of p with n (cos, sin) pairs of periods codeBase,
// codeBase², ….
func code(p, n int) []float64 {
	c := make([]float64, 2*n)
	T := float64(codeBase)
	for f := range n {
		a := 2 * math.Pi * float64(p) / T
		c[2*f], c[2*f+1] = math.Cos(a), math.Sin(a)
		T *= codeBase
	}
	return c
}

// groups splits the generated tokens into groups, each tokens of one step
// that share one cone: a token joins the first group of its step whose
// cone holds at least half of its own (SHA-2's bytes of a′ and e′ all
// read the round), else starts a group (Keccak's lanes: one each).
func groups(g *dag, sc *schedule, w *working, lo *layout) [][]int {
	var out [][]int
	for a := 0; a < len(lo.gen); {
		b := a
		for b < len(lo.gen) && lo.genStep[b] == lo.genStep[a] {
			b++
		}
		var sets []map[int32]bool
		first := len(out)
		for t := a; t < b; t++ {
			mine := coneNodes(g, sc, w, lo, t)
			joined := false
			for i, set := range sets {
				in := 0
				for v := range mine {
					if set[v] {
						in++
					}
				}
				if 2*in >= len(mine) {
					for v := range mine {
						set[v] = true
					}
					out[first+i] = append(out[first+i], t)
					joined = true
					break
				}
			}
			if !joined {
				sets = append(sets, mine)
				out = append(out, []int{t})
			}
		}
		a = b
	}
	return out
}

// layerMode is how a layer's heads find what they fetch.
type layerMode uint8

const (
	// rowHeads: a head fetches the token at (row − Δ, col) for fixed Δ and
	// col: its query is the row code rotated by Δ and the col code as a
	// bias, shared by every position (no dimensions of its own).
	rowHeads layerMode = iota
	// targeted: head h of a position fetches the position's h-th source,
	// whose code the position embedding holds.
	targeted
)

// rowKey is a row head's target: Δ rows back, col.
type rowKey struct{ delta, col int32 }

// plan is the model's shape: groups and their kinds, the heads of every
// layer, the residual layout.
type plan struct {
	cones   []*cone
	kind    []int32 // per group (1-based)
	rep     []int32 // per kind: a group
	slotOf  []int32 // per generated token: its slot in its group
	groupOf []int32
	layers  int
	// Heads: per layer the mode, and for each group the head of each of its
	// needs at that layer (needs[layer][group]: source position → head).
	mode  []layerMode
	rows  []map[rowKey]int32
	heads []int // per layer
	H     int
	// Targeted layers' needs per group, in head order.
	tneeds [][][]int32 // [layer][group] → source positions
	// Residual layout.
	d, hd                               int
	dimSink, dimPlus, dimMinus          int
	dimPos, dimRow, dimCol, dimQRow     int
	dimKind, dimSlot, dimTok, dimFeat   int
	dimQuery                            []int // per layer: first query dim (targeted)
	dimFetch, dimOut, dimWork           int
	kindBits, slotBits, nFeat, workDims int
	// family[k] and variant[k] of every kind; famRep[f] is family f's
	// first kind.
	family, variant  []int32
	famRep           []int32
	famBits, varBits int
	forms            []*coneForms // per kind
	// workMax[i] bounds |work dim i| at any position (any kind's forms).
	workMax []float64
	// featDim[k][j] is the feature dimension (relative to dimFeat) of
	// the kind's feature j, or −1 where every group of the kind reads the
	// same constant there (folded into the thresholds: featVal).
	featDim [][]int32
	featVal [][]float64
}

// needsAt returns the distinct source positions group cone c fetches at
// layer l (0-based), in the order of first need.
func needsAt(c *cone, l int) []int32 {
	var out []int32
	seen := map[int32]bool{}
	for j, s := range c.fetch {
		if slices.Contains(c.need[j], int32(l+1)) && !seen[s.pos] {
			seen[s.pos] = true
			out = append(out, s.pos)
		}
	}
	return out
}

// newPlan plans the model for the groups' cones.
func newPlan(g *dag, lo *layout, gs [][]int, cones []*cone) (*plan, error) {
	p := &plan{cones: cones, slotOf: make([]int32, len(lo.gen)), groupOf: make([]int32, len(lo.gen))}
	for gi, ts := range gs {
		for slot, t := range ts {
			p.slotOf[t], p.groupOf[t] = int32(slot), int32(gi)
		}
	}
	for _, c := range cones {
		p.layers = max(p.layers, int(c.levels))
	}
	p.layers = max(1, p.layers)
	p.planHeads(lo)
	p.groupKinds(lo)
	p.foldFeatures(g)
	if err := p.layoutDims(lo); err != nil {
		return nil, err
	}
	return p, nil
}

// planHeads chooses every layer's mode and heads: row heads where the
// groups' needs fall on few (Δ, col) keys, targeted heads where each
// position needs its own (fewer dimensions of the two).
func (p *plan) planHeads(lo *layout) {
	L := p.layers
	p.mode = make([]layerMode, L)
	p.rows = make([]map[rowKey]int32, L)
	p.heads = make([]int, L)
	p.tneeds = make([][][]int32, L)
	keysAt := make([]map[rowKey]int32, L)
	most := make([]int, L)
	per := make([][][]int32, L)
	for l := range L {
		keys := map[rowKey]int32{}
		per[l] = make([][]int32, len(p.cones))
		for gi, c := range p.cones {
			ns := needsAt(c, l)
			per[l][gi] = ns
			most[l] = max(most[l], len(ns))
			for _, u := range ns {
				k := rowKey{c.step - lo.row[u], lo.col[u]}
				if _, ok := keys[k]; !ok {
					keys[k] = int32(len(keys))
				}
			}
		}
		keysAt[l] = keys
	}
	// With H heads a layer, a layer uses row heads if its keys fit, else
	// targeted heads (its needs must fit); fetched dims cost 8 a head,
	// a targeted layer 2·posPairs more a head. Take the cheapest H.
	bestH, bestCost := 0, math.MaxInt
	for H := 1; H <= 4096; H++ {
		cost, ok, grow := 8*H, true, false
		for l := range L {
			switch {
			case len(keysAt[l]) <= H:
			case most[l] <= H:
				cost += 2 * posPairs * most[l]
			default:
				ok = false
			}
			grow = grow || len(keysAt[l]) > H
		}
		if ok && cost < bestCost {
			bestH, bestCost = H, cost
		}
		if !grow {
			break
		}
	}
	for l := range L {
		if len(keysAt[l]) <= bestH {
			p.mode[l], p.rows[l], p.heads[l] = rowHeads, keysAt[l], len(keysAt[l])
			continue
		}
		p.mode[l], p.heads[l] = targeted, most[l]
		p.tneeds[l] = make([][]int32, len(p.cones))
		for gi, c := range p.cones {
			p.tneeds[l][gi] = canonicalNeeds(c, l, per[l][gi])
		}
	}
	p.H = max(1, bestH)
}

// canonicalNeeds orders a group's sources at one layer by how its cone
// uses them (which node or output reads which bit with what weight), so
// that cones alike up to the order of their sources (Keccak's θ reads six
// lanes alike) fetch them with the same heads.
func canonicalNeeds(c *cone, l int, ns []int32) []int32 {
	sig := map[int32][]string{}
	use := func(reader string, j int32, w float64) {
		s := c.fetch[j]
		if slices.Contains(c.need[j], int32(l+1)) {
			sig[s.pos] = append(sig[s.pos], reader+"."+strconv.Itoa(int(s.b))+"*"+strconv.FormatFloat(w, 'g', -1, 64))
		}
	}
	for i, n := range c.nodes {
		if int(n.level) != l+1 {
			continue
		}
		for k, j := range n.fe {
			use("n"+strconv.Itoa(i), j, n.feW[k])
		}
	}
	if l == 0 {
		for slot, os := range c.outs {
			for b, o := range os {
				for k, j := range o.fe {
					use("o"+strconv.Itoa(slot)+"."+strconv.Itoa(b), j, o.feW[k])
				}
			}
		}
	}
	key := map[int32]string{}
	for pos, ss := range sig {
		slices.Sort(ss)
		key[pos] = strings.Join(ss, ";")
	}
	out := slices.Clone(ns)
	slices.SortStableFunc(out, func(a, b int32) int { return strings.Compare(key[a], key[b]) })
	return out
}

// headOf returns the head group gi fetches source position u with at
// layer l.
func (p *plan) headOf(lo *layout, gi int, l int, u int32) int32 {
	c := p.cones[gi]
	if p.mode[l] == rowHeads {
		return p.rows[l][rowKey{c.step - lo.row[u], lo.col[u]}]
	}
	return int32(slices.Index(p.tneeds[l][gi], u))
}

// shape is a group's structure with its fetches named by head: groups of
// one shape run the same units (a kind).
func (p *plan) shape(lo *layout, gi int, skeleton bool) string {
	c := p.cones[gi]
	var b strings.Builder
	f := func(x float64) { b.WriteString(strconv.FormatUint(math.Float64bits(x), 36)); b.WriteByte(',') }
	fes := func(level int32, js []int32, ws []float64) {
		t := make([]string, len(js))
		for i, j := range js {
			s := c.fetch[j]
			h := int32(-1)
			if !skeleton {
				h = p.headOf(lo, gi, int(level)-1, s.pos)
			}
			t[i] = fmt.Sprintf("h%d.%d.%d*%s", level, h, s.b, strconv.FormatUint(math.Float64bits(ws[i]), 36))
		}
		slices.Sort(t)
		b.WriteString(strings.Join(t, ","))
	}
	fmt.Fprintf(&b, "S%d|", len(c.tokens))
	for _, n := range c.nodes {
		fmt.Fprintf(&b, "N%d:", n.level)
		f(n.theta)
		for i, u := range n.in {
			fmt.Fprintf(&b, "n%d*", u)
			f(n.inW[i])
		}
		fes(n.level, n.fe, n.feW)
		for i, j := range n.ft {
			fmt.Fprintf(&b, "f%d*", j)
			f(n.ftW[i])
		}
	}
	for slot, os := range c.outs {
		for k, o := range os {
			fmt.Fprintf(&b, "O%d.%d:", slot, k)
			f(o.cst)
			for i, u := range o.node {
				fmt.Fprintf(&b, "n%d*", u)
				f(o.nodeW[i])
			}
			fes(1, o.fe, o.feW)
			for i, j := range o.ft {
				fmt.Fprintf(&b, "f%d*", j)
				f(o.ftW[i])
			}
		}
	}
	return b.String()
}

// groupKinds numbers the groups' shapes (kinds) and the kinds' skeletons
// (families: shapes alike but for the heads some fetches use, as when a
// schedule reads a word from the prompt in one round and from the working
// in the next). A kind's code is its family's bits, then its variant's:
// units alike in every kind of a family are gated by the family bits only.
func (p *plan) groupKinds(lo *layout) {
	p.kind = make([]int32, len(p.cones))
	p.rep = []int32{-1}
	p.family, p.variant = []int32{-1}, []int32{-1}
	seen := map[string]int32{}
	fams := map[string]int32{}
	var famSize []int32
	for gi := range p.cones {
		sh := p.shape(lo, gi, false)
		k, ok := seen[sh]
		if !ok {
			k = int32(len(p.rep))
			seen[sh] = k
			p.rep = append(p.rep, int32(gi))
			sk := p.shape(lo, gi, true)
			f, ok := fams[sk]
			if !ok {
				f = int32(len(famSize))
				fams[sk] = f
				famSize = append(famSize, 0)
				p.famRep = append(p.famRep, k)
			}
			p.family = append(p.family, f)
			p.variant = append(p.variant, famSize[f])
			famSize[f]++
		}
		p.kind[gi] = k
	}
	most := int32(1)
	for _, n := range famSize {
		most = max(most, n)
	}
	p.varBits = bits.Len(uint(most - 1))
	p.famBits = bits.Len(uint(len(famSize) - 1))
	p.kindBits = p.varBits + p.famBits
}

// code returns kind k's code: its family, then its variant.
func (p *plan) code(k int32) int32 { return p.family[k]<<p.varBits | p.variant[k] }

// foldFeatures keeps a feature dimension only for the constants that
// differ between the groups of a kind (SHA-2's round constants): one the
// same everywhere is folded into the thresholds.
func (p *plan) foldFeatures(g *dag) {
	p.featDim = make([][]int32, len(p.rep))
	p.featVal = make([][]float64, len(p.rep))
	for f, fk := range p.famRep {
		rc := p.cones[p.rep[fk]]
		n := len(rc.feats)
		same := make([]bool, n)
		for j := range n {
			same[j] = true
		}
		for gi, c := range p.cones {
			if p.family[p.kind[gi]] != int32(f) {
				continue
			}
			for j := range n {
				if g.constValue(c.feats[j]) != g.constValue(rc.feats[j]) {
					same[j] = false
				}
			}
		}
		dim := make([]int32, n)
		val := make([]float64, n)
		next := int32(0)
		for j := range n {
			val[j] = g.constValue(rc.feats[j])
			if same[j] {
				dim[j] = -1
				continue
			}
			dim[j] = next
			next++
		}
		p.nFeat = max(p.nFeat, int(next))
		for k := range p.rep {
			if k > 0 && p.family[k] == int32(f) {
				p.featDim[k], p.featVal[k] = dim, val
			}
		}
	}
}

// layoutDims places the residual dimensions and every kind's work
// dimensions: a cone node that other nodes read holds a dimension from
// its level until the last level reading it, which clears it, so a later
// node may take it in the same layer.
func (p *plan) layoutDims(lo *layout) error {
	maxSlots := 1
	for _, c := range p.cones {
		maxSlots = max(maxSlots, len(c.tokens))
	}
	p.slotBits = bits.Len(uint(maxSlots - 1))
	p.dimSink, p.dimPlus, p.dimMinus = 0, 1, 2
	p.dimPos = 3
	p.dimRow = p.dimPos + 2*posPairs
	p.dimCol = p.dimRow + 2*rcPairs
	p.dimQRow = p.dimCol + 2*rcPairs
	p.dimKind = p.dimQRow + 2*rcPairs
	p.dimSlot = p.dimKind + p.kindBits
	p.dimTok = p.dimSlot + p.slotBits
	p.dimFeat = p.dimTok + 8
	next := p.dimFeat + p.nFeat
	p.dimQuery = make([]int, p.layers)
	for l := range p.layers {
		p.dimQuery[l] = -1
		if p.mode[l] == targeted {
			p.dimQuery[l] = next
			next += 2 * posPairs * p.heads[l]
		}
	}
	p.dimFetch = next
	p.dimOut = p.dimFetch + 8*p.H
	p.dimWork = p.dimOut + 8
	p.forms = make([]*coneForms, len(p.rep))
	for k := 1; k < len(p.rep); k++ {
		p.forms[k] = buildForms(p.cones[p.rep[k]])
		p.workDims = max(p.workDims, p.forms[k].dims)
	}
	p.workMax = make([]float64, p.workDims)
	for k := 1; k < len(p.rep); k++ {
		for _, fc := range p.forms[k].clears {
			p.workMax[fc.dim] = max(p.workMax[fc.dim], math.Abs(fc.lo), math.Abs(fc.hi))
		}
	}
	d := p.dimWork + p.workDims
	hd := max(8, 4*rcPairs, 2*posPairs, (d+p.H-1)/p.H)
	p.d, p.hd = hd*p.H, hd
	for _, x := range []int{len(lo.row)} {
		if x > MaxPositions {
			return fmt.Errorf("decoder: %d positions; the position code tells at most %d apart", x, MaxPositions)
		}
	}
	for _, r := range lo.row {
		if r >= maxRowCol {
			return fmt.Errorf("decoder: %d steps; the row code tells at most %d apart", r+1, maxRowCol)
		}
	}
	for _, c := range lo.col {
		if c >= maxRowCol {
			return fmt.Errorf("decoder: a step of %d tokens; the col code tells at most %d apart", c+1, maxRowCol)
		}
	}
	return nil
}
