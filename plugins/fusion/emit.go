package fusion

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// emit writes the layered circuit: each level's gates in creation order,
// then copies of the values alive across it; the last level is the output
// gates, in order. The forms of level L are those the gates of level L+1
// read, in order of first use. A row is read either as the forms it adds
// up (see gates.rowFStart: the operands' forms, e.g. the three θ outputs
// a χ gate reads) or, when that stores more entries, as one form of its
// own, the row's sum (e.g. the θ sum its 11 counters share): n gates of
// a row of k forms and e edges store n·k entries the first way and
// n + e the second.
//
// It first lays out every level (which gates, which copies), then writes
// the levels in order (emitLevels).
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
		r := g.row[k]
		if r == lastRow && L == lastL {
			continue
		}
		lastRow, lastL = r, L
		for _, s := range g.srcs(k) {
			if g.lev[s] >= L {
				return nil, fmt.Errorf("gate %d on level %d reads level %d", k, L, g.lev[s])
			}
			lastRead[s] = max(lastRead[s], L)
		}
	}
	// How each row is read, and the entries that takes.
	rowGates, entries := g.readRows()
	g.rowOwn = make([]int32, len(rowGates))
	own, ownTerms := 0, 0
	for r, n := range rowGates {
		g.rowOwn[r] = -1
		if g.ownForm(int32(r), n) {
			g.rowOwn[r] = 0 // numbered below
			own++
			ownTerms += int(g.rowStart[r+1] - g.rowStart[r])
		}
	}
	g.ownRows = make([]int32, 0, own)
	for r, f := range g.rowOwn {
		if f == 0 {
			g.ownRows = append(g.ownRows, int32(r))
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
			g.valueForm(int32(v)) // what its copies read
		}
	}
	// The rows' own forms follow the table's.
	for i, r := range g.ownRows {
		g.rowOwn[r] = int32(len(g.formStart) - 1 + i)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return g.emitLevels(ctx, c, lastRead, byLevel, lvStart, entries, ownTerms, copies)
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

// emitLevels writes the layered circuit level by level. Value v is copied
// on levels lev(v)+1 .. lastRead(v)−1, after the gates of each level; a
// gate of level L reads the forms of its row, which become forms of level
// L−1 at their first use there, over the positions their values have on
// level L−1 (a value or its copy). Forms are those of the table, then the
// rows' own (ownRows; their terms, ownTerms in all, are the rows').
func (g *gates) emitLevels(ctx context.Context, c *circuit.Circuit, lastRead, byLevel, lvStart []int32, entries, ownTerms, copies int) (*layered.Circuit, error) {
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
	// If every gate is live and no value is copied, the gate arrays are in
	// level order already: the circuit takes them as they are (and the gate
	// DAG's tags).
	inOrder := copies == 0 && len(byLevel) == g.numGates() && inCreationOrder(byLevel, g.nIn)
	out := &layered.Circuit{
		NumInputs:    g.nIn,
		LevelStart:   make([]int32, 1, D+1),
		RowStart:     make([]int32, 1, nGates+1),
		InputRanges:  append([]circuit.Range(nil), c.InputRanges...),
		OutputRanges: append([]circuit.Range(nil), c.OutputRanges...),
		FormStart:    make([]int32, 1, D+1),
		// About every table form is read on one level, a value's also
		// by its copies.
		FormRowStart: make([]int32, 1, len(g.formStart)+len(g.ownRows)+copies),
		FormSrc:      make([]int32, 0, len(g.formTerm)+ownTerms+copies),
		FormCoef:     make([]int32, 0, len(g.formTerm)+ownTerms+copies),
	}
	if !inOrder {
		out.Kind, out.Threshold, out.Tag = make([]layered.Kind, 0, nGates), make([]int32, 0, nGates), make([]int32, 0, nGates)
	}
	out.Src, out.Weight = g.takeEdges(entries + copies)
	hinted := g.inPos != nil
	if hinted {
		out.InputPos = g.inPos
		out.Pos = make([]int32, 0, nGates)
		out.FormPos = make([]int32, 0, len(g.formStart)+len(g.ownRows)+copies)
	}
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
	nT := int32(len(g.formStart) - 1)
	nF := int(nT) + len(g.ownRows)
	seen := make([]int32, nF) // per form: the level that last used it
	idx := make([]int32, nF)  // its index among that level's forms
	var active, placed, forms []int32
	one := [1]int32{1}
	use := func(f, L int32) int32 {
		if seen[f] != L {
			seen[f] = L
			idx[f] = int32(len(forms))
			forms = append(forms, f)
		}
		return idx[f]
	}
	e := 0 // entries written
	for L := int32(1); L <= D; L++ {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		placed, forms = placed[:0], forms[:0]
		prevRow, prevE := int32(-1), 0
		for _, id := range byLevel[lvStart[L]:lvStart[L+1]] {
			k := int(id) - g.nIn
			row := g.row[k]
			if row == prevRow {
				// Same row, same level: the same forms.
				n := e - prevE
				copy(out.Src[e:e+n], out.Src[prevE:e])
				copy(out.Weight[e:e+n], out.Weight[prevE:e])
				prevE = e
				e += n
			} else {
				keys, ws := g.rowFKey[g.rowFStart[row]:g.rowFStart[row+1]], g.rowFW[g.rowFStart[row]:g.rowFStart[row+1]]
				if f := g.rowOwn[row]; f >= 0 {
					keys, ws = g.rowOwn[row:row+1], one[:]
				}
				dst := out.Src[e : e+len(keys)]
				for i, f := range keys {
					dst[i] = use(f, L)
				}
				copy(out.Weight[e:], ws)
				prevRow, prevE = row, e
				e += len(keys)
			}
			out.RowStart = append(out.RowStart, int32(e))
			if !inOrder {
				out.Kind = append(out.Kind, g.kind[k])
				out.Threshold = append(out.Threshold, g.theta[k])
				out.Tag = append(out.Tag, tags.of(g.tag[k]))
			}
			if hinted {
				out.Pos = append(out.Pos, g.rowPos[row])
			}
			placed = append(placed, id)
		}
		if L < D {
			active = append(active, carry[csStart[L]:csStart[L+1]]...)
			kept := active[:0]
			for _, v := range active {
				out.Src[e], out.Weight[e] = use(g.valForm[v], L), 1
				e++
				out.RowStart = append(out.RowStart, int32(e))
				out.Kind = append(out.Kind, layered.KindCopy)
				out.Threshold = append(out.Threshold, 1)
				out.Tag = append(out.Tag, copyTag(v))
				if hinted {
					out.Pos = append(out.Pos, g.valuePos(v))
				}
				placed = append(placed, v)
				if lastRead[v] > L+1 {
					kept = append(kept, v)
				}
			}
			active = kept
		}
		out.LevelStart = append(out.LevelStart, int32(len(out.RowStart)-1))
		// The forms of level L−1, over the positions there.
		for _, f := range forms {
			var term, coef []int32
			var fpos int32
			if f < nT {
				a, b := g.formStart[f], g.formStart[f+1]
				term, coef = g.formTerm[a:b], g.formCoef[a:b]
				if hinted {
					fpos = g.formPos[f]
				}
			} else {
				r := g.ownRows[f-nT]
				a, b := g.rowStart[r], g.rowStart[r+1]
				term, coef = g.src[a:b], g.w[a:b]
				if hinted {
					fpos = g.rowPos[r]
				}
			}
			for _, v := range term {
				out.FormSrc = append(out.FormSrc, pos[v])
			}
			out.FormCoef = append(out.FormCoef, coef...)
			out.FormRowStart = append(out.FormRowStart, int32(len(out.FormSrc)))
			if hinted {
				out.FormPos = append(out.FormPos, fpos)
			}
		}
		out.FormStart = append(out.FormStart, int32(len(out.FormRowStart)-1))
		for i, v := range placed {
			pos[v] = int32(i)
		}
	}
	out.FormConst = make([]int32, len(out.FormRowStart)-1)
	if out.FormSrc == nil {
		out.FormSrc, out.FormCoef = []int32{}, []int32{}
	}
	out.Tags = tags.out
	if inOrder {
		out.Kind, out.Threshold, out.Tag, out.Tags = g.kind, g.theta, g.tag, g.tags
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
