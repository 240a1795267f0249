package tokensasstates

// Words: partials of one level that a gate of the next level reads as
// the bits of one word at several token offsets. A rotation-like gate —
// ≥ 2 sources, all on distinct tokens other than its own, all of one
// weight (SHA-2's Σ₀(a) = ROTR² ⊕ ROTR¹³ ⊕ ROTR²² on token z reads a's
// bits on tokens z+2, z+13, z+22) — joins its sources into one word; the
// partials of a word get one slot on all its tokens (assignSlots), so a
// rotation reads one slot at each offset, and the next level fetches one
// dimension an offset and word rather than one an offset and slot the
// word's bits happened to get (full SHA-256 at 8-bit chunks: 120
// fetched dimensions on the widest level, 213 without words).

// words returns level L's word of every partial (−1: none) from the
// gates of level L+1: the components of the relation "read by one
// rotation-like gate", less those holding two partials of one token (nil
// when no gate joins two partials).
func (mp *mapping) words(L int) []int32 {
	parts := mp.parts[L]
	up := make([]int32, len(parts))
	for i := range up {
		up[i] = int32(i)
	}
	find := func(x int32) int32 {
		for up[x] != x {
			up[x] = up[up[x]]
			x = up[x]
		}
		return x
	}
	// A gate reading a partial of its own token (Keccak's θ: C[x−1] on
	// slice z beside C[x+1] on z − 1) is no rotation.
	local := make([]bool, len(mp.gs[L+1]))
	for _, pt := range mp.parts[L+1] {
		for _, g := range pt.src {
			for _, q := range mp.gs[L+1][g].src {
				if parts[q].tok == pt.tok {
					local[g] = true
				}
			}
		}
	}
	joined := false
	seen := make([]bool, mp.T)
	for i, g := range mp.gs[L+1] {
		if len(g.src) < 2 || local[i] {
			continue
		}
		ok := true
		for k, q := range g.src {
			t := parts[q].tok
			if g.w[k] != g.w[0] || seen[t] {
				ok = false
			}
			seen[t] = true
		}
		for _, q := range g.src {
			seen[parts[q].tok] = false
		}
		if !ok {
			continue
		}
		for _, q := range g.src[1:] {
			a, b := find(g.src[0]), find(q)
			if a != b {
				up[b] = a
				joined = true
			}
		}
	}
	if !joined {
		return nil
	}
	// A word with two partials on one token is no word.
	word := make([]int32, len(parts))
	bad := map[int32]bool{}
	onTok := map[[2]int32]bool{}
	size := map[int32]int{}
	for q := range parts {
		r := find(int32(q))
		word[q] = r
		size[r]++
		k := [2]int32{r, parts[q].tok}
		if onTok[k] {
			bad[r] = true
		}
		onTok[k] = true
	}
	for q := range word {
		if bad[word[q]] || size[word[q]] < 2 {
			word[q] = -1
		}
	}
	return word
}
