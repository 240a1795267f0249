package fusion

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

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
	for k := nG - 1; k >= 0; k-- {
		if k < nG-g.nOut && !live[g.nIn+k] {
			continue
		}
		live[g.nIn+k] = true
		for e := g.start[k]; e < g.start[k+1]; e++ {
			live[g.src[e]] = true
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
		for e := g.start[k]; e < g.start[k+1]; e++ {
			s := g.src[e]
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
		for e := g.start[k]; e < g.start[k+1]; e++ {
			ri.rstart[g.src[e]+1]++
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
		for e := g.start[k]; e < g.start[k+1]; e++ {
			s := g.src[e]
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
		k := id - int32(g.nIn)
		for e := g.start[k]; e < g.start[k+1]; e++ {
			s := g.src[e]
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
			for e := g.start[k]; e < g.start[k+1]; e++ {
				try(g.otherMax(ri, g.src[e], id))
			}
			if best == cur {
				continue
			}
			g.lev[id] = best
			moved = true
			for e := g.start[k]; e < g.start[k+1]; e++ {
				g.rescan(ri, g.src[e])
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
	for k := nG - 1; k >= 0; k-- {
		id := g.nIn + k
		if k < nG-g.nOut && !live[id] {
			continue
		}
		live[id] = true
		L := g.lev[id]
		lo := int32(1)
		for _, s := range g.src[g.start[k]:g.start[k+1]] {
			live[s] = true
			lo = max(lo, g.lev[s]+1)
			minL[s] = min(minL[s], L)
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
	k := id - int32(g.nIn)
	l := int32(1)
	for e := g.start[k]; e < g.start[k+1]; e++ {
		l = max(l, g.lev[g.src[e]]+1)
	}
	return l
}

// emit writes the layered circuit: each level's gates in creation order,
// then copies of the values alive across it; the last level is the output
// gates, in order.
func (g *gates) emit(ctx context.Context, c *circuit.Circuit) (*layered.Circuit, error) {
	live := g.live()
	nG := g.numGates()
	nV := g.nIn + nG
	D := g.depth
	lastRead := make([]int32, nV)
	for v := range lastRead {
		lastRead[v] = -1
	}
	count := make([]int32, D+2)
	edges := 0
	for k := 0; k < nG; k++ {
		id := g.nIn + k
		if !live[id] {
			continue
		}
		L := g.lev[id]
		if L < 1 || L > D || (k >= nG-g.nOut) != (L == D) {
			return nil, fmt.Errorf("gate %d on level %d of %d", k, L, D)
		}
		count[L]++
		for e := g.start[k]; e < g.start[k+1]; e++ {
			s := g.src[e]
			if g.lev[s] >= L {
				return nil, fmt.Errorf("gate %d on level %d reads level %d", k, L, g.lev[s])
			}
			lastRead[s] = max(lastRead[s], L)
		}
		edges += int(g.start[k+1] - g.start[k])
	}
	// Copy chains: value v is copied on levels lev(v)+1 .. lastRead(v)−1.
	startCarry := make([]int32, D+2)
	copies := 0
	for v := 0; v < nV; v++ {
		if (v < g.nIn || live[v]) && lastRead[v] > g.lev[v]+1 {
			startCarry[g.lev[v]+1]++
			copies += int(lastRead[v] - g.lev[v] - 1)
		}
	}
	csStart := make([]int32, D+3)
	for L := int32(1); L <= D+1; L++ {
		csStart[L+1] = csStart[L] + startCarry[L]
	}
	carry := make([]int32, csStart[D+2])
	fill := append([]int32(nil), csStart...)
	for v := 0; v < nV; v++ {
		if (v < g.nIn || live[v]) && lastRead[v] > g.lev[v]+1 {
			L := g.lev[v] + 1
			carry[fill[L]] = int32(v)
			fill[L]++
		}
	}
	// Gates by level, in creation order.
	lvStart := make([]int32, D+2)
	for L := int32(1); L <= D; L++ {
		lvStart[L+1] = lvStart[L] + count[L]
	}
	byLevel := make([]int32, lvStart[D+1])
	fill = append(fill[:0], lvStart...)
	for k := 0; k < nG; k++ {
		if id := g.nIn + k; live[id] {
			L := g.lev[id]
			byLevel[fill[L]] = int32(id)
			fill[L]++
		}
	}
	if copies == 0 && len(byLevel) == nG && inCreationOrder(byLevel, g.nIn) {
		return g.emitInPlace(c, lvStart), nil
	}
	nGates := len(byLevel) + copies
	out := &layered.Circuit{
		NumInputs:    g.nIn,
		LevelStart:   make([]int32, 1, D+1),
		Kind:         make([]layered.Kind, 0, nGates),
		Threshold:    make([]int32, 0, nGates),
		Tag:          make([]int32, 0, nGates),
		RowStart:     make([]int32, 1, nGates+1),
		Src:          make([]int32, edges+copies),
		Weight:       make([]int32, edges+copies),
		InputRanges:  append([]circuit.Range(nil), c.InputRanges...),
		OutputRanges: append([]circuit.Range(nil), c.OutputRanges...),
	}
	tagIdx := make([]int32, len(g.tags))
	for i := range tagIdx {
		tagIdx[i] = -1
	}
	tagOf := func(t int32) int32 {
		if tagIdx[t] < 0 {
			tagIdx[t] = int32(len(out.Tags))
			out.Tags = append(out.Tags, g.tags[t])
		}
		return tagIdx[t]
	}
	inputTag := int32(-1)
	copyTag := func(v int32) int32 {
		if v < int32(g.nIn) {
			if inputTag < 0 {
				inputTag = int32(len(out.Tags))
				out.Tags = append(out.Tags, "input")
			}
			return inputTag
		}
		return tagOf(g.tag[v-int32(g.nIn)])
	}
	pos := make([]int32, nV)
	for i := 0; i < g.nIn; i++ {
		pos[i] = int32(i)
	}
	var active, placed []int32
	e := 0 // edges written
	for L := int32(1); L <= D; L++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		placed = placed[:0]
		for _, id := range byLevel[lvStart[L]:lvStart[L+1]] {
			k := id - int32(g.nIn)
			a, b := g.start[k], g.start[k+1]
			dst := out.Src[e : e+int(b-a)]
			for i, s := range g.src[a:b] {
				dst[i] = pos[s]
			}
			copy(out.Weight[e:], g.w[a:b])
			e += int(b - a)
			out.RowStart = append(out.RowStart, int32(e))
			out.Kind = append(out.Kind, g.kind[k])
			out.Threshold = append(out.Threshold, g.theta[k])
			out.Tag = append(out.Tag, tagOf(g.tag[k]))
			placed = append(placed, id)
		}
		if L < D {
			active = append(active, carry[csStart[L]:csStart[L+1]]...)
			kept := active[:0]
			for _, v := range active {
				out.Src[e], out.Weight[e] = pos[v], 1
				e++
				out.RowStart = append(out.RowStart, int32(e))
				out.Kind = append(out.Kind, layered.KindCopy)
				out.Threshold = append(out.Threshold, 1)
				out.Tag = append(out.Tag, copyTag(v))
				placed = append(placed, v)
				if lastRead[v] > L+1 {
					kept = append(kept, v)
				}
			}
			active = kept
		}
		out.LevelStart = append(out.LevelStart, int32(len(out.Kind)))
		for i, v := range placed {
			pos[v] = int32(i)
		}
	}
	return out, nil
}

// inCreationOrder reports whether the level order of the gates is their
// creation order.
func inCreationOrder(byLevel []int32, nIn int) bool {
	for i, id := range byLevel {
		if id != int32(nIn+i) {
			return false
		}
	}
	return true
}

// emitInPlace is emit's fast path when there are no copies, no dead gates
// and the gates were created level by level (depth-first Keccak, say): the
// gate arrays already are the layered circuit once every source is
// renumbered within its level. It consumes g.
func (g *gates) emitInPlace(c *circuit.Circuit, lvStart []int32) *layered.Circuit {
	pos := make([]int32, g.nIn+g.numGates())
	for i := 0; i < g.nIn; i++ {
		pos[i] = int32(i)
	}
	D := int(g.depth)
	levelStart := make([]int32, D+1)
	for L := 1; L <= D; L++ {
		lo, hi := lvStart[L], lvStart[L+1]
		for i := lo; i < hi; i++ {
			pos[g.nIn+int(i)] = i - lo
		}
		levelStart[L] = hi
	}
	for e, s := range g.src {
		g.src[e] = pos[s]
	}
	return &layered.Circuit{
		NumInputs:    g.nIn,
		LevelStart:   levelStart,
		Kind:         g.kind,
		Threshold:    g.theta,
		Tag:          g.tag,
		RowStart:     g.start,
		Src:          g.src,
		Weight:       g.w,
		Tags:         g.tags,
		InputRanges:  append([]circuit.Range(nil), c.InputRanges...),
		OutputRanges: append([]circuit.Range(nil), c.OutputRanges...),
	}
}
