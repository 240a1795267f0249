package tokensasstates

import (
	"math"
	"slices"
	"strconv"
)

// combo is a fetched combination: an offset r ≠ 0 and a normalised
// Σ w·slot on token z − r.
type combo struct {
	r    int
	slot []int32
	w    []int64
}

// class is a unit class: gates alike (terms and outputs) on the tokens
// toks, each with its threshold; two FFN units compute it.
type class struct {
	dims  []int32 // slot s ≥ 0, or fetched combination −(j+1)
	w     []int64
	outs  [][2]int64 // (slot, coef)
	toks  []int32
	thr   []int64 // per entry of toks
	bound float64 // Σ|w·x| over the gate's terms
	wabs  float64 // Σ|w| over the stream dimensions its terms read
}

// level is what a block computes for one level: its fetched
// combinations and unit classes.
type level struct {
	combos  []combo
	classes []*class
	cleared int // slots of the level below to clear
}

// classesAt sets level L's fetched combinations and unit classes: one
// class a gate, alike on every token it sits on, reading its token's
// slots and fetched combinations. A wide level has hundreds of
// thousands of gate instances and some tens of thousands of classes:
// each instance's terms and key are built in reused buffers, and a class
// is allocated only when its key is new (map lookups by string(bytes) do
// not allocate).
func (mp *mapping) classesAt(L int) {
	gs, parts, slot, bound, lv, rel, mass := mp.gs, mp.parts, mp.slot, mp.bound, mp.lv, mp.rel, mp.mass
	order, outs := mp.instances(L)
	var kb keyBuf
	combosAt, slotsAt := mp.remotes(L, order, &kb)
	// fetch returns the index of fetched combination (r, Σ w·slot),
	// adding it to the level's (slot and w are copied).
	comboID := map[string]int{}
	classID := map[string][]int32{} // key → the classes of alike gates (two on one token: two units)
	fetch := func(r int64, slot []int32, w []int64) int {
		key := kb.combo(r, slot, w)
		j, ok := comboID[string(key)]
		if !ok {
			j = len(lv[L].combos)
			comboID[string(key)] = j
			lv[L].combos = append(lv[L].combos, combo{r: int(r), slot: slices.Clone(slot), w: slices.Clone(w)})
		}
		mp.anyFetch = true
		return j
	}
	var (
		rem  []remote
		dims []int32
		ws   []int64
		nw   []int64
		one  = []int64{1}
	)
	for _, in := range order {
		g := gs[L][in.g]
		dims, ws = dims[:0], ws[:0]
		var bnd, wabs float64
		thr := g.thr
		for k, s := range g.src {
			if rel(in.t, parts[L-1][s].tok) == 0 {
				dims = append(dims, slot[L-1][s])
				ws = append(ws, g.w[k])
				bnd += math.Abs(float64(g.w[k])) * bound[L-1][slot[L-1][s]]
				wabs += math.Abs(float64(g.w[k]))
			}
		}
		rem = mp.remotesOf(L, in, rem)
		for _, x := range rem {
			if combosAt[x.r] > slotsAt[x.r] {
				for e, s := range x.slot {
					j := fetch(x.r, []int32{s}, one)
					dims = append(dims, int32(-(j + 1)))
					ws = append(ws, x.w[e])
					bnd += math.Abs(float64(x.w[e])) * bound[L-1][s]
					wabs += math.Abs(float64(x.w[e]))
				}
				continue
			}
			nw = append(nw[:0], x.w...)
			f := normalize(nw)
			j := fetch(x.r, x.slot, nw)
			dims = append(dims, int32(-(j + 1)))
			ws = append(ws, f)
			bnd += math.Abs(float64(f)) * mass(L-1, x.slot, nw)
			for _, y := range nw {
				wabs += math.Abs(float64(f * y))
			}
		}
		o := outs[in]
		kb.b = appendTerms(kb.b[:0], dims, ws)
		kb.b = append(kb.b, '>')
		for _, e := range o {
			kb.b = strconv.AppendInt(kb.b, e[0], 10)
			kb.b = append(kb.b, '*')
			kb.b = strconv.AppendInt(kb.b, e[1], 10)
			kb.b = append(kb.b, ' ')
		}
		ids := classID[string(kb.b)]
		placed := false
		for _, j := range ids {
			if cl := lv[L].classes[j]; !slices.Contains(cl.toks, in.t) {
				cl.toks = append(cl.toks, in.t)
				cl.thr = append(cl.thr, thr)
				placed = true
				break
			}
		}
		if !placed {
			classID[string(kb.b)] = append(ids, int32(len(lv[L].classes)))
			lv[L].classes = append(lv[L].classes, &class{dims: slices.Clone(dims), w: slices.Clone(ws), outs: o,
				toks: []int32{in.t}, thr: []int64{thr}, bound: bnd, wabs: wabs})
		}
	}
}

// inst is a gate instance: gate g of a level on token t.
type inst struct{ g, t int32 }

// instances returns level L's gate instances, a gate on every token
// holding a partial of it (its home; on the folded level, every token
// reading it), in order of first use, and each one's outputs: the (slot,
// coef) of every partial it adds to.
func (mp *mapping) instances(L int) (order []inst, outs map[inst][][2]int64) {
	parts, slot := mp.parts, mp.slot
	outs = map[inst][][2]int64{}
	for i, pt := range parts[L] {
		for k, g := range pt.src {
			key := inst{g, pt.tok}
			if _, ok := outs[key]; !ok {
				order = append(order, key)
			}
			outs[key] = append(outs[key], [2]int64{int64(slot[L][i]), pt.coef[k]})
		}
	}
	return order, outs
}

// remote is what a gate instance reads from the token at offset r:
// Σ w·slot.
type remote struct {
	r    int64
	slot []int32
	w    []int64
}

// remotesOf returns gate instance in's remote sources grouped by offset,
// in order of first appearance, in rem's storage (reused call to call).
func (mp *mapping) remotesOf(L int, in inst, rem []remote) []remote {
	g, parts, slot := mp.gs[L][in.g], mp.parts[L-1], mp.slot[L-1]
	rem = rem[:cap(rem)]
	n := 0
	for k, s := range g.src {
		r := mp.rel(in.t, parts[s].tok)
		if r == 0 {
			continue
		}
		j := 0
		for j < n && rem[j].r != r {
			j++
		}
		if j == n {
			if n == len(rem) {
				rem = append(rem, remote{})
				rem = rem[:cap(rem)]
			}
			rem[n].r, rem[n].slot, rem[n].w = r, rem[n].slot[:0], rem[n].w[:0]
			n++
		}
		rem[j].slot = append(rem[j].slot, slot[s])
		rem[j].w = append(rem[j].w, g.w[k])
	}
	return rem[:n]
}

// remotes counts, per offset, the distinct normalised combinations the
// level's gate instances (order) read there and the distinct slots they
// read there: per offset a level fetches either one dimension per
// normalised combination the gates read (Keccak's θ column sums) or one
// per slot, whichever is fewer.
func (mp *mapping) remotes(L int, order []inst, kb *keyBuf) (combosAt, slotsAt map[int64]int) {
	combos := map[int64]map[string]bool{}
	slots := map[int64]map[int32]bool{}
	var rem []remote
	var w []int64
	for _, in := range order {
		rem = mp.remotesOf(L, in, rem)
		for _, x := range rem {
			if slots[x.r] == nil {
				slots[x.r], combos[x.r] = map[int32]bool{}, map[string]bool{}
			}
			for _, s := range x.slot {
				slots[x.r][s] = true
			}
			w = append(w[:0], x.w...)
			normalize(w)
			if key := kb.combo(x.r, x.slot, w); !combos[x.r][string(key)] {
				combos[x.r][string(key)] = true
			}
		}
	}
	combosAt, slotsAt = map[int64]int{}, map[int64]int{}
	for r := range slots {
		combosAt[r], slotsAt[r] = len(combos[r]), len(slots[r])
	}
	return combosAt, slotsAt
}

// keyBuf builds map keys in one reused buffer.
type keyBuf struct{ b []byte }

// combo returns the key of a fetched combination, offset r and Σ w·slot,
// in kb's buffer (valid until its next use).
func (kb *keyBuf) combo(r int64, slot []int32, w []int64) []byte {
	kb.b = kb.b[:0]
	kb.b = strconv.AppendInt(kb.b, r, 10)
	for e := range slot {
		kb.b = append(kb.b, ' ')
		kb.b = strconv.AppendInt(kb.b, int64(slot[e]), 10)
		kb.b = append(kb.b, ':')
		kb.b = strconv.AppendInt(kb.b, w[e], 10)
	}
	return kb.b
}

// steepBias is class cl's bias on token t: Steep(½ − θ(t)), or, where
// it has no gate, low enough to keep both units off.
func steepBias(cl *class, t int32) float64 {
	if i := slices.Index(cl.toks, t); i >= 0 {
		return Steep * (0.5 - float64(cl.thr[i]))
	}
	return -Steep*cl.bound - 1
}

// uniform reports whether class cl sits on every token with one
// threshold.
func (mp *mapping) uniform(cl *class) bool {
	return len(cl.toks) == mp.T && slices.Min(cl.thr) == slices.Max(cl.thr)
}

// tokenParts splits the tokens into parts. Per-token constants: a
// class's bias on token z is Steep(½ − θ(z)), or, where it has no gate,
// low enough to keep both units off. Tokens on which every class's bias
// agrees form one part; every part but the largest gets an indicator
// dimension in the position embedding.
func (mp *mapping) tokenParts() {
	T, top, lv, uniform := mp.T, mp.top, mp.lv, mp.uniform
	part := make([]int32, T)
	nPart := 1
	for L := 1; L <= top; L++ {
		for _, cl := range lv[L].classes {
			if uniform(cl) {
				continue
			}
			part, nPart = refine(part, func(z int) float64 { return steepBias(cl, int32(z)) })
		}
	}
	mp.part, mp.nPart = part, nPart
}

// refine splits the parts (part: token → its part) by a value a token:
// tokens stay together where their parts and values agree. It returns
// the new parts, numbered in order of their first token, and their count.
func refine(part []int32, val func(z int) float64) ([]int32, int) {
	ids := map[[2]float64]int32{}
	next := make([]int32, len(part))
	for z := range part {
		k := [2]float64{float64(part[z]), val(z)}
		id, ok := ids[k]
		if !ok {
			id = int32(len(ids))
			ids[k] = id
		}
		next[z] = id
	}
	return next, len(ids)
}

// readoutItems refines the parts by the readout items' thresholds, picks
// the base part (the largest) and a token of each part, and sets each
// item's readout threshold and the parts' corrections to it.
func (mp *mapping) readoutItems() {
	T, top, nSlots, nOut, partsOf, parts, slot, outThrF := mp.T, mp.top, mp.nSlots, mp.nOut, mp.partsOf, mp.parts, mp.slot, mp.outThrF
	part, nPart := mp.part, mp.nPart
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
		part, nPart = refine(part, func(z int) float64 {
			if math.IsNaN(v[z]) {
				return math.Inf(1)
			}
			return v[z]
		})
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
	mp.part, mp.nPart, mp.rep, mp.basePart, mp.readThr, mp.corr = part, nPart, rep, basePart, readThr, corr
}
