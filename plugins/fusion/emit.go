package fusion

import (
	"context"
	"fmt"
	"sync"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// parallelEdges is the number of edges from which emit writes the sources
// and weights on two goroutines.
const parallelEdges = 1 << 16

// emit writes the layered circuit: each level's gates in creation order,
// then copies of the values alive across it; the last level is the output
// gates, in order.
//
// It first lays out every level (which gates, which copies, how many
// edges), then writes the arrays at their exact size. Without copies every
// value has one position, within its level, for all its readers, so the
// sources and weights can be written in any order: writeRows does it on
// two goroutines. With copies, a value's position depends on the level it
// is read from and emitCarried writes level by level.
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
	// The checks and lastRead depend only on a gate's row and level, and
	// the sibling gates of a row mostly share both: each (row, level) is
	// scanned once when its gates are consecutive.
	lastRow, lastL := int32(-1), int32(-1)
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
		srcs := g.srcs(k)
		edges += len(srcs)
		if g.row[k] == lastRow && L == lastL {
			continue
		}
		lastRow, lastL = g.row[k], L
		for _, s := range srcs {
			if g.lev[s] >= L {
				return nil, fmt.Errorf("gate %d on level %d reads level %d", k, L, g.lev[s])
			}
			lastRead[s] = max(lastRead[s], L)
		}
	}
	// Gates by level, in creation order.
	lvStart := make([]int32, D+2)
	for L := int32(1); L <= D; L++ {
		lvStart[L+1] = lvStart[L] + count[L]
	}
	byLevel := make([]int32, lvStart[D+1])
	fill := append([]int32(nil), lvStart...)
	for k := 0; k < nG; k++ {
		if id := g.nIn + k; live[id] {
			L := g.lev[id]
			byLevel[fill[L]] = int32(id)
			fill[L]++
		}
	}
	copies := 0
	for v := 0; v < nV; v++ {
		if (v < g.nIn || live[v]) && lastRead[v] > g.lev[v]+1 {
			copies += int(lastRead[v] - g.lev[v] - 1)
		}
	}
	if copies > 0 {
		return g.emitCarried(ctx, c, lastRead, byLevel, lvStart, edges, copies)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := &layered.Circuit{
		NumInputs:    g.nIn,
		LevelStart:   make([]int32, D+1),
		InputRanges:  append([]circuit.Range(nil), c.InputRanges...),
		OutputRanges: append([]circuit.Range(nil), c.OutputRanges...),
	}
	copy(out.LevelStart, lvStart[1:])
	if len(byLevel) == nG && inCreationOrder(byLevel, g.nIn) {
		// The gate arrays already are in level order.
		out.Kind, out.Threshold, out.Tag, out.Tags = g.kind, g.theta, g.tag, g.tags
	} else {
		out.Kind = make([]layered.Kind, len(byLevel))
		out.Threshold = make([]int32, len(byLevel))
		out.Tag = make([]int32, len(byLevel))
		tags := newTagTable(g.tags)
		for i, id := range byLevel {
			k := int(id) - g.nIn
			out.Kind[i], out.Threshold[i] = g.kind[k], g.theta[k]
			out.Tag[i] = tags.of(g.tag[k])
		}
		out.Tags = tags.out
	}
	// Every value's position within its level.
	pos := make([]int32, nV)
	for i := 0; i < g.nIn; i++ {
		pos[i] = int32(i)
	}
	for L := int32(1); L <= D; L++ {
		lo := lvStart[L]
		for i, id := range byLevel[lo:lvStart[L+1]] {
			pos[id] = int32(i)
		}
	}
	out.RowStart = make([]int32, len(byLevel)+1)
	for i, id := range byLevel {
		out.RowStart[i+1] = out.RowStart[i] + int32(len(g.srcs(int(id)-g.nIn)))
	}
	out.Src, out.Weight = g.takeEdges(edges)
	g.writeRows(out, byLevel, pos)
	return out, nil
}

// writeRows writes the sources (as positions, pos) and weights of the
// gates byLevel into out, whose RowStart is set; on two goroutines, each
// writing one half of the edges, if there are many.
func (g *gates) writeRows(out *layered.Circuit, byLevel, pos []int32) {
	n := len(byLevel)
	edges := out.RowStart[n]
	if edges < parallelEdges {
		g.writeRange(out, byLevel, pos, 0, n)
		return
	}
	// The first gate whose row starts in the second half of the edges.
	mid := 0
	for mid < n && out.RowStart[mid] < edges/2 {
		mid++
	}
	var wg sync.WaitGroup
	wg.Go(func() { g.writeRange(out, byLevel, pos, mid, n) })
	g.writeRange(out, byLevel, pos, 0, mid)
	wg.Wait()
}

// writeRange writes the sources and weights of the gates byLevel[a:b].
// A gate with the same row as the gate before it copies that gate's
// sources rather than looking every position up again.
func (g *gates) writeRange(out *layered.Circuit, byLevel, pos []int32, a, b int) {
	prev := int32(-1)
	for i := a; i < b; i++ {
		row := g.row[int(byLevel[i])-g.nIn]
		lo, hi := g.rowStart[row], g.rowStart[row+1]
		e0, e1 := out.RowStart[i], out.RowStart[i+1]
		dst := out.Src[e0:e1]
		if row == prev {
			copy(dst, out.Src[out.RowStart[i-1]:e0])
		} else {
			for j, s := range g.src[lo:hi] {
				dst[j] = pos[s]
			}
		}
		copy(out.Weight[e0:e1], g.w[lo:hi])
		prev = row
	}
}

// tagTable interns the layered circuit's tags in order of first use.
type tagTable struct {
	names []string // the gate DAG's tags
	idx   []int32  // per gate DAG tag: its index in out, or -1
	out   []string
	input int32 // index of the tag "input" of copied inputs, or -1
}

func newTagTable(names []string) *tagTable {
	t := &tagTable{names: names, idx: make([]int32, len(names)), input: -1}
	for i := range t.idx {
		t.idx[i] = -1
	}
	return t
}

// of returns the index in out of gate DAG tag k.
func (t *tagTable) of(k int32) int32 {
	if t.idx[k] < 0 {
		t.idx[k] = int32(len(t.out))
		t.out = append(t.out, t.names[k])
	}
	return t.idx[k]
}

// inputTag returns the index in out of the tag "input".
func (t *tagTable) inputTag() int32 {
	if t.input < 0 {
		t.input = int32(len(t.out))
		t.out = append(t.out, "input")
	}
	return t.input
}

// emitCarried is emit when some values are carried across levels by copy
// gates: value v is copied on levels lev(v)+1 .. lastRead(v)−1, after the
// gates of each level, and a gate reads the position its source has on
// the level below it.
func (g *gates) emitCarried(ctx context.Context, c *circuit.Circuit, lastRead, byLevel, lvStart []int32, edges, copies int) (*layered.Circuit, error) {
	live := g.live()
	nV := g.nIn + g.numGates()
	D := g.depth
	startCarry := make([]int32, D+2)
	for v := 0; v < nV; v++ {
		if (v < g.nIn || live[v]) && lastRead[v] > g.lev[v]+1 {
			startCarry[g.lev[v]+1]++
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
	nGates := len(byLevel) + copies
	out := &layered.Circuit{
		NumInputs:    g.nIn,
		LevelStart:   make([]int32, 1, D+1),
		Kind:         make([]layered.Kind, 0, nGates),
		Threshold:    make([]int32, 0, nGates),
		Tag:          make([]int32, 0, nGates),
		RowStart:     make([]int32, 1, nGates+1),
		InputRanges:  append([]circuit.Range(nil), c.InputRanges...),
		OutputRanges: append([]circuit.Range(nil), c.OutputRanges...),
	}
	out.Src, out.Weight = g.takeEdges(edges + copies)
	tags := newTagTable(g.tags)
	copyTag := func(v int32) int32 {
		if v < int32(g.nIn) {
			return tags.inputTag()
		}
		return tags.of(g.tag[v-int32(g.nIn)])
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
		prevRow, prevE := int32(-1), 0
		for _, id := range byLevel[lvStart[L]:lvStart[L+1]] {
			k := int(id) - g.nIn
			row := g.row[k]
			a, b := g.rowStart[row], g.rowStart[row+1]
			dst := out.Src[e : e+int(b-a)]
			if row == prevRow {
				// Same row, same level: the same positions.
				copy(dst, out.Src[prevE:e])
			} else {
				for i, s := range g.src[a:b] {
					dst[i] = pos[s]
				}
			}
			prevRow, prevE = row, e
			copy(out.Weight[e:], g.w[a:b])
			e += int(b - a)
			out.RowStart = append(out.RowStart, int32(e))
			out.Kind = append(out.Kind, g.kind[k])
			out.Threshold = append(out.Threshold, g.theta[k])
			out.Tag = append(out.Tag, tags.of(g.tag[k]))
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
	out.Tags = tags.out
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
