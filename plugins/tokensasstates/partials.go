package tokensasstates

import (
	"context"
	"math"
	"slices"
	"strconv"
)

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

// placeTokens sets the top level, the levels' values and widths, the
// token count and every value's token: its position hint's, else i mod T
// (interleaved) or i·T/W.
func (mp *mapping) placeTokens() {
	c, cfg, D := mp.c, mp.cfg, mp.D
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
	mp.top, mp.vals, mp.outThr, mp.width, mp.T = top, vals, outThr, width, T
	mp.gatePos, mp.toToken, mp.tok = gatePos, toToken, tok
}

// rel is token t's offset from token u, in [0, T).
func (mp *mapping) rel(t, u int32) int64 { return int64((int(t) - int(u) + mp.T) % mp.T) }

// startLevels sets level 0's partials (the inputs), slots (by rank on
// the token) and bounds, and sizes the per-level tables that levels and
// its phases fill level by level.
func (mp *mapping) startLevels() {
	top, T, width, tok := mp.top, mp.T, mp.width, mp.tok
	mp.parts = make([][]partial, top+1)
	mp.partsOf = make([][][]int32, top+1)
	mp.partF = make([][][]int64, top+1)
	mp.gs = make([][]gate, top+1)
	mp.slot = make([][]int32, top+1)
	mp.nSlots = make([]int, top+1)
	mp.bound = make([][]float64, top+1)
	mp.lv = make([]level, top+1)
	mp.parts[0] = make([]partial, width[0])
	mp.partsOf[0] = make([][]int32, width[0])
	for i := range width[0] {
		mp.parts[0][i] = partial{tok: tok[0][i], src: []int32{int32(i)}, coef: []int64{1}}
		mp.partsOf[0][i] = []int32{int32(i)}
	}
	count := make([]int32, T)
	mp.slot[0] = make([]int32, width[0])
	for i, t := range tok[0] {
		mp.slot[0][i] = count[t]
		count[t]++
		mp.nSlots[0] = max(mp.nSlots[0], int(count[t]))
	}
	mp.bound[0] = make([]float64, mp.nSlots[0])
	for s := range mp.bound[0] {
		mp.bound[0][s] = 1
	}
}

// levels runs the per-level phases on levels 1 … top in order —
// partials (one level ahead: words, in slotsAt, read the level above),
// slots (the top level's re-slotted by placeOutputs), bounds and unit
// classes — and drops what a level's phases leave behind as
// soon as the level above no longer reads it: level L's gates once its
// classes are set, level L−1's partials once level L's are (unless
// the model is labelled; the top level's and level 0's slots stay, the
// embedding and readout read them). Full SHA3-256 without rule 10 has
// 22 levels of 457,600 gates (216 M terms): held at once, their gates
// and partials took more memory than the circuit itself.
func (mp *mapping) levels(ctx context.Context) error {
	mp.startLevels()
	mp.partialsAt(1)
	mp.vals[1] = nil
	for L := 1; L <= mp.top; L++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		if L < mp.top { // words (slotsAt) read the level above's partials and gates
			mp.partialsAt(L + 1)
			mp.vals[L+1] = nil
		}
		mp.slotsAt(L)
		if L == mp.top {
			mp.placeOutputs()
		}
		mp.boundsAt(L)
		mp.classesAt(L)
		mp.lv[L].cleared = mp.nSlots[L-1]
		mp.gs[L] = nil
		if L-1 >= 1 && !mp.cfg.Labels {
			mp.parts[L-1], mp.partsOf[L-1], mp.partF[L-1] = nil, nil, nil
		}
	}
	mp.S = slices.Max(mp.nSlots)
	return nil
}

// partialsAt splits level L's values into their partials and rewrites
// each of its gates' sources as partials of level L − 1.
func (mp *mapping) partialsAt(L int) {
	c, D, top, vals, width, tok, gatePos, toToken := mp.c, mp.D, mp.top, mp.vals, mp.width, mp.tok, mp.gatePos, mp.toToken
	parts, partsOf, partF, gs := mp.parts, mp.partsOf, mp.partF, mp.gs
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
	partF[L] = make([][]int64, width[L])
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
			// A partial's coefficients are stored divided by their
			// gcd, which its readers' weights take (SHA-2's chunk
			// sums: 2^i·bit on token i holds the bit, read with
			// weight 2^i, so a slot shared across tokens holds
			// values of one size).
			f := int64(1)
			if L < top {
				f = gcd(pt.coef)
				for k := range pt.coef {
					pt.coef[k] /= f
				}
			}
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
			partF[L][i] = append(partF[L][i], f)
		}
	}
	// The gate's sources as partials of the level below, in flat
	// storage (terms: sorted, duplicates summed, zeros dropped).
	var ts terms
	var src arena[int32]
	var w arena[int64]
	for g := range gs[L] {
		ts = ts[:0]
		for k, s := range gs[L][g].src {
			for e, q := range partsOf[L-1][s] {
				f := int64(1)
				if partF[L-1] != nil {
					f = partF[L-1][s][e]
				}
				ts = append(ts, term{q, gs[L][g].w[k] * f})
			}
		}
		ts = ts.merge()
		gs[L][g].src, gs[L][g].w = src.take(len(ts)), w.take(len(ts))
		for k, x := range ts {
			gs[L][g].src[k], gs[L][g].w[k] = x.src, x.w
		}
	}
}

// slotsAt gives every partial of level L ≥ 1 a slot on its token, by
// structure (assignSlots).
func (mp *mapping) slotsAt(L int) {
	T, parts, gs, slot, rel := mp.T, mp.parts, mp.gs, mp.slot, mp.rel
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
	var word []int32
	if L < mp.top && !mp.cfg.NoWords {
		word = mp.words(L) // reads level L + 1's partials and gates
	}
	slot[L], mp.nSlots[L] = assignSlots(ptok, keys, T, word)
}

// placeOutputs re-slots the top level for the readout and sets the
// outputs' thresholds and the slot count S.
func (mp *mapping) placeOutputs() {
	c, D, top, T, outThr, partsOf, parts, slot, nSlots := mp.c, mp.D, mp.top, mp.T, mp.outThr, mp.partsOf, mp.parts, mp.slot, mp.nSlots
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
	mp.nOut, mp.outThrF = nOut, outThrF
}

// boundsAt sets bound[L][s], the largest magnitude a partial in slot s
// of level L ≥ 1 takes (span: steps of one sum add up to their prefix
// sums), over every token: a unit reads its dimensions on every token,
// its gate's or not.
func (mp *mapping) boundsAt(L int) {
	gs, parts, slot := mp.gs, mp.parts, mp.slot
	b := make([]float64, mp.nSlots[L])
	for s := range b {
		b[s] = 1
	}
	row := rowIDs(gs[L])
	for q, pt := range parts[L] {
		lo, hi := span(pt.src, pt.coef, gs[L], row)
		s := slot[L][q]
		b[s] = max(b[s], float64(-lo), float64(hi))
	}
	mp.bound[L] = b
}

// mass returns Σ|w|·bound over a combination of slots of level L.
func (mp *mapping) mass(L int, slot []int32, w []int64) float64 {
	var m float64
	for k, s := range slot {
		m += math.Abs(float64(w[k])) * mp.bound[L][s]
	}
	return m
}

// gcd returns the greatest common divisor of the magnitudes of w (1 when
// w is empty or all zero).
func gcd(w []int64) int64 {
	var g int64
	for _, x := range w {
		a, b := g, max(x, -x)
		for b != 0 {
			a, b = b, a%b
		}
		g = a
	}
	return max(g, 1)
}
