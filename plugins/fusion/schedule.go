package fusion

// Scheduling (rule 8). Every gate may sit on any level between one above
// its latest source and one below its earliest reader. A value v read last
// on level R(v) costs R(v) − L(v) − 1 copy gates. The scheduler sweeps the
// gates in reverse topological order and moves each to the level that
// minimises the copies of itself and of its sources (the cost is convex in
// the level, so the breakpoints suffice), until a sweep moves nothing.

// readerInfo is, per value, the highest and lowest level that reads it and
// how many readers sit there.
type readerInfo struct {
	maxL, maxN []int32
	minL, minN []int32
	rstart     []int32 // reader CSR, built on demand
	rd         []int32
}

// live marks the values the outputs depend on (computed once).
func (g *gates) live() []bool {
	if g.liveV != nil {
		return g.liveV
	}
	g.liveV = g.computeLive()
	return g.liveV
}

func (g *gates) computeLive() []bool {
	nG := g.numGates()
	live := make([]bool, g.nIn+nG)
	lastRow := int32(-1)
	for k := nG - 1; k >= 0; k-- {
		if k < nG-g.nOut && !live[g.nIn+k] {
			continue
		}
		live[g.nIn+k] = true
		if g.row[k] == lastRow {
			continue // its sources are marked already
		}
		lastRow = g.row[k]
		for _, s := range g.srcs(k) {
			live[s] = true
		}
	}
	return live
}

func (g *gates) readers(live []bool) *readerInfo {
	nV := g.nIn + g.numGates()
	ri := &readerInfo{maxL: make([]int32, nV), maxN: make([]int32, nV), minL: make([]int32, nV), minN: make([]int32, nV)}
	for v := range ri.minL {
		ri.minL[v] = 1 << 30
		ri.maxL[v] = -1
	}
	for k := 0; k < g.numGates(); k++ {
		if !live[g.nIn+k] {
			continue
		}
		L := g.lev[g.nIn+k]
		for _, s := range g.srcs(k) {
			ri.add(s, L)
		}
	}
	return ri
}

func (ri *readerInfo) add(s, L int32) {
	switch {
	case L > ri.maxL[s]:
		ri.maxL[s], ri.maxN[s] = L, 1
	case L == ri.maxL[s]:
		ri.maxN[s]++
	}
	switch {
	case L < ri.minL[s]:
		ri.minL[s], ri.minN[s] = L, 1
	case L == ri.minL[s]:
		ri.minN[s]++
	}
}

func (g *gates) buildReaderCSR(ri *readerInfo, live []bool) {
	nV := g.nIn + g.numGates()
	ri.rstart = make([]int32, nV+1)
	for k := 0; k < g.numGates(); k++ {
		if !live[g.nIn+k] {
			continue
		}
		for _, s := range g.srcs(k) {
			ri.rstart[s+1]++
		}
	}
	for v := 0; v < nV; v++ {
		ri.rstart[v+1] += ri.rstart[v]
	}
	ri.rd = make([]int32, ri.rstart[nV])
	fill := append([]int32(nil), ri.rstart[:nV]...)
	for k := 0; k < g.numGates(); k++ {
		if !live[g.nIn+k] {
			continue
		}
		for _, s := range g.srcs(k) {
			ri.rd[fill[s]] = int32(g.nIn + k)
			fill[s]++
		}
	}
}

// rescan recomputes s's reader extremes.
func (g *gates) rescan(ri *readerInfo, s int32) {
	ri.maxL[s], ri.maxN[s], ri.minL[s], ri.minN[s] = -1, 0, 1<<30, 0
	for _, r := range ri.rd[ri.rstart[s]:ri.rstart[s+1]] {
		ri.add(s, g.lev[r])
	}
}

// otherMax is the highest level reading s apart from reader gate id.
func (g *gates) otherMax(ri *readerInfo, s, id int32) int32 {
	if g.lev[id] < ri.maxL[s] || ri.maxN[s] > 1 {
		return ri.maxL[s]
	}
	m := int32(-1)
	for _, r := range ri.rd[ri.rstart[s]:ri.rstart[s+1]] {
		if r != id && g.lev[r] > m {
			m = g.lev[r]
		}
	}
	return m
}

// schedule moves gates to minimise copy gates without changing the depth.
func (g *gates) schedule() {
	live, slack := g.analyse()
	if !slack {
		return
	}
	ri := g.readers(live)
	nG := g.numGates()
	g.buildReaderCSR(ri, live)
	cost := func(id, x int32) int64 {
		var c int64
		if d := ri.maxL[id] - x - 1; d > 0 {
			c += int64(d)
		}
		for _, s := range g.srcs(int(id) - g.nIn) {
			r := max(g.otherMax(ri, s, id), x)
			if d := r - g.lev[s] - 1; d > 0 {
				c += int64(d)
			}
		}
		return c
	}
	for sweep := 0; sweep < 8; sweep++ {
		moved := false
		for k := nG - g.nOut - 1; k >= 0; k-- {
			id := int32(g.nIn + k)
			if !live[id] {
				continue
			}
			lo, hi := g.lo(id), ri.minL[id]-1
			cur := g.lev[id]
			if lo >= hi {
				continue
			}
			best, bestC := cur, cost(id, cur)
			try := func(x int32) {
				if x < lo || x > hi || x == best {
					return
				}
				if c := cost(id, x); c < bestC {
					best, bestC = x, c
				}
			}
			try(lo)
			try(hi)
			try(ri.maxL[id] - 1)
			for _, s := range g.srcs(k) {
				try(g.otherMax(ri, s, id))
			}
			if best == cur {
				continue
			}
			g.lev[id] = best
			moved = true
			for _, s := range g.srcs(k) {
				g.rescan(ri, s)
			}
		}
		if !moved {
			break
		}
	}
}

// analyse computes liveness and reports whether some gate could move, in
// one reverse pass: a gate's readers come after it, so its lowest reader
// level is known when the pass reaches it.
func (g *gates) analyse() ([]bool, bool) {
	nG := g.numGates()
	live := make([]bool, g.nIn+nG)
	minL := make([]int32, g.nIn+nG)
	for v := range minL {
		minL[v] = 1 << 30
	}
	slack := false
	// The sibling gates of a row mostly sit on one level: for the same row
	// and level the pass below has the same effect and the same lo, so it
	// runs once.
	lastRow, lastL, lo := int32(-1), int32(-1), int32(1)
	for k := nG - 1; k >= 0; k-- {
		id := g.nIn + k
		if k < nG-g.nOut && !live[id] {
			continue
		}
		live[id] = true
		L := g.lev[id]
		if g.row[k] != lastRow || L != lastL {
			lastRow, lastL, lo = g.row[k], L, 1
			for _, s := range g.srcs(k) {
				live[s] = true
				lo = max(lo, g.lev[s]+1)
				minL[s] = min(minL[s], L)
			}
		}
		if k < nG-g.nOut && lo < minL[id]-1 {
			slack = true
		}
	}
	g.liveV = live
	return live, slack
}

// lo is the lowest level gate id may sit on.
func (g *gates) lo(id int32) int32 {
	l := int32(1)
	for _, s := range g.srcs(int(id) - g.nIn) {
		l = max(l, g.lev[s]+1)
	}
	return l
}
