package tokensasstates

import (
	"cmp"
	"slices"
	"strconv"

	"github.com/tcforge/tcforge/sdk/layered"
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
	var ts terms
	var srcs arena[int32]
	var ws arena[int64]
	for i := range out {
		src, w := c.Row(g0 + i)
		ts = ts[:0]
		thr := int64(c.Threshold[g0+i])
		switch {
		case !c.HasForms():
			for k, s := range src {
				ts = append(ts, term{s, int64(w[k])})
			}
		case L == 1:
			for k, f := range src {
				k0, fs, fc := c.Form(int(f))
				thr -= int64(w[k]) * int64(k0)
				for e, s := range fs {
					ts = append(ts, term{s, int64(w[k]) * int64(fc[e])})
				}
			}
		default:
			f0 := int(c.FormStart[L-1])
			for k, f := range src {
				k0, _, _ := c.Form(f0 + int(f))
				thr -= int64(w[k]) * int64(k0)
				ts = append(ts, term{f, int64(w[k])})
			}
		}
		ts = ts.merge()
		g := gate{thr: thr, src: srcs.take(len(ts)), w: ws.take(len(ts))}
		for k, x := range ts {
			g.src[k], g.w[k] = x.src, x.w
		}
		out[i] = g
	}
	return out
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
func assignSlots(tok []int32, keys [][]int64, T int, word []int32) ([]int32, int) {
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
	byWord := map[int32]*group{}
	for i, k := range keys {
		if word != nil && word[i] >= 0 {
			g := byWord[word[i]]
			if g == nil {
				g = &group{first: i, key: k}
				byWord[word[i]] = g
				groups = append(groups, g)
			}
			g.toks = append(g.toks, tok[i])
			g.vals = append(g.vals, i)
			continue
		}
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

// rowIDs numbers a level's gates by their rows: gates reading the same
// sources with the same weights share an id (they compare one sum with
// their thresholds).
func rowIDs(gs []gate) []int32 {
	ids := make([]int32, len(gs))
	seen := map[string]int32{}
	var kb []byte
	for g, x := range gs {
		kb = appendTerms(kb[:0], x.src, x.w)
		id, ok := seen[string(kb)]
		if !ok {
			id = int32(len(seen))
			seen[string(kb)] = id
		}
		ids[g] = id
	}
	return ids
}

// appendTerms appends the key of the terms w[k]·src[k] to kb: equal keys,
// equal terms in the same order.
func appendTerms(kb []byte, src []int32, w []int64) []byte {
	for k := range src {
		kb = strconv.AppendInt(kb, int64(src[k]), 36)
		kb = append(kb, ':')
		kb = strconv.AppendInt(kb, w[k], 36)
		kb = append(kb, ' ')
	}
	return kb
}

// span returns the least and the greatest value Σ coef·gate over the
// gates src can take. Gates of one row are steps [s ≥ θ] of one sum s, so
// their share, as s grows, runs through the prefix sums of their
// coefficients in threshold order (from 0): its extremes are the least
// and greatest prefix sum. Rows are bounded apart. (Fusion's forms are
// such sums: a parity counter of a θ sum, Σ (−1)^k [S ≥ k], spans [0, 1]
// where its coefficients alone would give [−11, 11].)
func span(src []int32, coef []int64, gs []gate, row []int32) (lo, hi int64) {
	type step struct {
		row int32
		thr int64
		c   int64
	}
	steps := make([]step, len(src))
	for k, g := range src {
		steps[k] = step{row[g], gs[g].thr, coef[k]}
	}
	slices.SortFunc(steps, func(a, b step) int {
		if a.row != b.row {
			return int(a.row - b.row)
		}
		return cmp.Compare(a.thr, b.thr)
	})
	for i := 0; i < len(steps); {
		var p, mn, mx int64
		j := i
		for j < len(steps) && steps[j].row == steps[i].row {
			k := j
			for k < len(steps) && steps[k].row == steps[j].row && steps[k].thr == steps[j].thr {
				p += steps[k].c
				k++
			}
			mn, mx = min(mn, p), max(mx, p)
			j = k
		}
		lo, hi = lo+mn, hi+mx
		i = j
	}
	return lo, hi
}

// normalize divides a combination by the gcd of its coefficients, made
// positive on its first term, and returns the factor.
func normalize(w []int64) int64 {
	g := gcd(w)
	if len(w) > 0 && w[0] < 0 {
		g = -g
	}
	for i := range w {
		w[i] /= g
	}
	return g
}
