package tokensasstates

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

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
	// bound[L][s] is the largest magnitude a partial in slot s of level L
	// takes (span: steps of one sum add up to their prefix sums), over
	// every token: a unit reads its dimensions on every token, its gate's
	// or not.
	bound := make([][]float64, top+1)
	for L := range bound {
		bound[L] = make([]float64, nSlots[L])
		for s := range bound[L] {
			bound[L][s] = 1
		}
		if L == 0 {
			continue
		}
		row := rowIDs(gs[L])
		for q, pt := range parts[L] {
			lo, hi := span(pt.src, pt.coef, gs[L], row)
			s := slot[L][q]
			bound[L][s] = max(bound[L][s], float64(-lo), float64(hi))
		}
	}
	// mass returns Σ|w|·bound over a combination of slots of level L.
	mass := func(L int, slot []int32, w []int64) float64 {
		var m float64
		for k, s := range slot {
			m += math.Abs(float64(w[k])) * bound[L][s]
		}
		return m
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
		bound float64 // Σ|w·x| over the gate's terms
		wabs  float64 // Σ|w| over the stream dimensions its terms read
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
					u.bound += math.Abs(float64(g.w[k])) * bound[L-1][slot[L-1][s]]
					u.wabs += math.Abs(float64(g.w[k]))
				}
			}
			for _, x := range rem[n] {
				if len(combosAt[x.r]) > len(slotsAt[x.r]) {
					for e, s := range x.slot {
						j := fetch(x.r, []int32{s}, []int64{1})
						u.dims = append(u.dims, int32(-(j + 1)))
						u.w = append(u.w, x.w[e])
						u.bound += math.Abs(float64(x.w[e])) * bound[L-1][s]
						u.wabs += math.Abs(float64(x.w[e]))
					}
					continue
				}
				w := slices.Clone(x.w)
				f := normalize(w)
				j := fetch(x.r, x.slot, w)
				u.dims = append(u.dims, int32(-(j + 1)))
				u.w = append(u.w, f)
				u.bound += math.Abs(float64(f)) * mass(L-1, x.slot, w)
				for _, y := range w {
					u.wabs += math.Abs(float64(f * y))
				}
			}
			kb = appendTerms(kb[:0], u.dims, u.w)
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
	// LayerNorm's mean. A row reading LN(x) sums wᵢ(xᵢ − μ) − (Σw)(0 − μ)
	// (the sink cancels μ), so its float32 terms reach |wᵢ|(|xᵢ| + |μ|),
	// |μ| ≤ Σ|x|/d: a step's budget is Σ|w|(|x| + 2|μ|) + |θ| over its
	// weights, per-token biases included. Where |μ| would break it, a
	// balance dimension (after the fetched ones) holds minus the sum of the token's other
	// dimensions — every write to the stream writes its negation there —
	// so μ = 0 and the budget is Σ|w·x| + |θ|.
	sumAbs := make([]float64, top+1) // Σ|x| over a token's dimensions in block L
	mu := 0.0
	for L := 1; L <= top; L++ {
		sumAbs[L] = 3 // cos, sin, an indicator
		for _, b := range bound[L-1] {
			sumAbs[L] += b
		}
		for _, cb := range lv[L].combos {
			sumAbs[L] += mass(L-1, cb.slot, cb.w)
		}
		mu = max(mu, sumAbs[L]/float64(dNeed))
	}
	// budget returns a class's budget with |μ| ≤ mu, the largest over its
	// tokens.
	budget := func(cl *class, mu float64) float64 {
		w := cl.wabs
		b0 := steepBias(cl, rep[basePart])
		for q, k := range indDim {
			if k >= 0 && !uniform(cl) {
				w += math.Abs(steepBias(cl, rep[q])-b0) / Steep
			}
		}
		var thr float64
		for _, th := range cl.thr {
			thr = max(thr, math.Abs(float64(th)))
		}
		return cl.bound + thr + 2*mu*w
	}
	dimBal := -1
	for L := 1; L <= top && dimBal < 0; L++ {
		for _, cl := range lv[L].classes {
			if budget(cl, mu) > MaxSum {
				dimBal = dNeed
				dNeed++
				break
			}
		}
	}
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
	if dimBal >= 0 {
		mu = 0
	}
	for L := 1; L <= top; L++ {
		for _, cl := range lv[L].classes {
			maxS = max(maxS, budget(cl, mu))
		}
	}
	if dimBal >= 0 {
		m.Attrs["balance"] = 1
	}
	for L := 1; L <= top; L++ {
		var sq float64
		for _, b := range bound[L-1] {
			sq += b * b
		}
		for _, cb := range lv[L].combos {
			m := mass(L-1, cb.slot, cb.w)
			sq += m * m
		}
		if dimBal >= 0 { // the balance: minus the sum of the rest
			sq += sumAbs[L] * sumAbs[L]
		}
		dataSq = max(dataSq, float64(nPart)+1+sq)
	}
	cv := C
	for cv*cv < 10*Steep*maxS*dataSq {
		cv *= 2
	}
	m.Attrs["C"] = int64(cv)
	m.Attrs["max_sum"] = int64(maxS)
	if maxS > MaxSum {
		return nil, fmt.Errorf("tokens-as-states: a gate's Σ|w·x| + |θ| (x bounded by the steps its forms add up) reaches %d > %d: each LayerNorm output carries a relative float32 error of 2⁻²⁴, so a step's pre-activation K·Σ w·x would be uncertain by more than its margin (not exact in float32)", int64(maxS), int64(MaxSum))
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
	if dimBal >= 0 {
		base.balanceRows(dimBal)
		in.balanceRows(dimBal)
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
		if dimBal >= 0 {
			outW.balanceCols(dimBal)
			l2W.balanceCols(dimBal)
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
