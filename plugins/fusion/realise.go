package fusion

import (
	"context"
	"fmt"
	"math"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// gates is the threshold-gate DAG before layering. Values 0..nIn−1 are the
// inputs (level 0), value nIn+k is gate k. A gate may read values of any
// lower level; emit carries them up with copy gates. The last nOut gates
// are the output gates, in output order, all on the last level.
//
// A gate's sources and weights are its row. The gates of one node's switch
// points all read the same sum and differ only in their thresholds, so they
// share one row: rows are stored once (CSR over src and w) and gates refer
// to them. On SHA3-256 there are about six times fewer rows than gates and
// five times fewer row entries than edges, and every pass before the final
// write of the layered circuit works on rows.
type gates struct {
	nIn      int
	lev      []int32 // per value
	theta    []int32 // per gate
	row      []int32 // per gate: index of its row
	tag      []int32 // per gate: index into tags
	kind     []layered.Kind
	rowStart []int32 // per row, CSR over src/w (len rows+1)
	src      []int32 // value ids
	w        []int32
	tags     []string
	nOut     int
	depth    int32
	liveV    []bool
	// edgeBufs delivers, once, the Src and Weight arrays of the layered
	// circuit (see allocEdges).
	edgeBufs <-chan edgeArrays

	// Every row is also kept as the forms it adds up, which is what the
	// layered circuit stores: row r reads forms rowFKey with weights rowFW
	// over [rowFStart[r], rowFStart[r+1]); form f of the form table is
	// Σ formCoef·value(formTerm) over [formStart[f], formStart[f+1]).
	// Forms carry no constant (it is in the readers' thresholds).
	rowFStart []int32
	rowFKey   []int32
	rowFW     []int32
	formStart []int32
	formTerm  []int32
	formCoef  []int32
	valForm   []int32 // per value: its one-term form, or -1
	rowOwn    []int32 // per row: the form of its own sum that emit reads it as, or -1
	ownRows   []int32 // the rows read as their own forms, whose ids follow the table's

	// Position hints, nil if the logic circuit has none: per input, per
	// row (that of the node whose row it is; a gate gets its row's), per
	// table form (that of the node it realises, or of its row, or of its
	// one value).
	inPos, rowPos, formPos []int32
}

// valuePos returns the position hint of value v (an input or a gate).
// The circuit must have hints.
func (g *gates) valuePos(v int32) int32 {
	if int(v) < g.nIn {
		return g.inPos[v]
	}
	return g.rowPos[g.row[int(v)-g.nIn]]
}

// valueForm returns the form of value v alone, adding it to the table.
func (g *gates) valueForm(v int32) int32 {
	for int(v) >= len(g.valForm) {
		g.valForm = append(g.valForm, -1)
	}
	if f := g.valForm[v]; f >= 0 {
		return f
	}
	pos := int32(circuit.NoPos)
	if g.inPos != nil {
		pos = g.valuePos(v)
	}
	f := addTableForm(g, []int32{v}, []int32{1}, pos)
	g.valForm[v] = f
	return f
}

// addTableForm adds the form Σ coef·value(term) to g's form table, with
// position hint pos (ignored if the circuit has no hints). The
// coefficients must fit int32.
func addTableForm[C int32 | int64](g *gates, term []int32, coef []C, pos int32) int32 {
	if g.formStart == nil {
		g.formStart = []int32{0}
	}
	if g.inPos != nil {
		g.formPos = append(g.formPos, pos)
	}
	f := int32(len(g.formStart) - 1)
	g.formTerm = append(g.formTerm, term...)
	for _, a := range coef {
		g.formCoef = append(g.formCoef, int32(a))
	}
	g.formStart = append(g.formStart, int32(len(g.formTerm)))
	return f
}

// edgeArrays are the Src and Weight arrays of the layered circuit: its
// gate←form entries and its copies.
type edgeArrays struct{ src, w []int32 }

// allocEdges starts allocating the Src and Weight arrays of the layered
// circuit on a second goroutine, so that the runtime zeroes them while
// schedule and emit lay out the levels. emit receives them through
// takeEdges. They are sized for the gate←form entries of the live gates
// (readRows), and a sixteenth more for copies.
func (g *gates) allocEdges() {
	ch := make(chan edgeArrays, 1) // buffered: the goroutine never blocks
	_, n := g.readRows()
	n += n / 16
	go func() { ch <- edgeArrays{src: make([]int32, n), w: make([]int32, n)} }()
	g.edgeBufs = ch
}

// readRows returns how many live gates read each row, and the gate←form
// entries they take: n gates of a row of k forms and e edges read it
// either as its forms (n·k entries) or, when that stores more, as one
// form of its own, the row's sum (n + e; ownForm).
func (g *gates) readRows() (rowGates []int32, entries int) {
	live := g.live()
	rowGates = make([]int32, len(g.rowStart)-1)
	for k, r := range g.row {
		if live[g.nIn+k] {
			rowGates[r]++
		}
	}
	for r, n := range rowGates {
		k := g.rowFStart[r+1] - g.rowFStart[r]
		if g.ownForm(int32(r), n) {
			k = 1
		}
		entries += int(n * k)
	}
	return rowGates, entries
}

// ownForm reports whether the n gates that read row r read it as one form
// of its own (see readRows).
func (g *gates) ownForm(r, n int32) bool {
	k := g.rowFStart[r+1] - g.rowFStart[r]
	e := g.rowStart[r+1] - g.rowStart[r]
	return k > 1 && n*k > n+e
}

// takeEdges returns Src and Weight arrays of length n, those allocEdges
// started if it was called and they are long enough.
func (g *gates) takeEdges(n int) (src, w []int32) {
	if g.edgeBufs != nil {
		b := <-g.edgeBufs
		g.edgeBufs = nil
		if len(b.src) >= n {
			return b.src[:n], b.w[:n]
		}
	}
	return make([]int32, n), make([]int32, n)
}

func (g *gates) numGates() int { return len(g.theta) }

// srcs returns the sources of gate k.
func (g *gates) srcs(k int) []int32 {
	r := g.row[k]
	return g.src[g.rowStart[r]:g.rowStart[r+1]]
}

// builder state of the second pass.
type realiser struct {
	*gates
	c  *circuit.Circuit
	n  *normal
	pl *plans

	// forms: value(v) = fConst[v] + Σ fCoef·value(fTerm) over [fStart, fEnd)
	fStart, fEnd []int32
	fConst       []int64
	fTerm        []int32
	fCoef        []int64
	lift         []int32 // value id of node v's materialised form at lev+1, or -1

	// row accumulator over value ids
	acc     []int64
	accMark []int32
	stamp   int32
	rowV    []int32
	rowK    int64 // constant part of the row being built
	curRow  int32 // the row freeze stored last, which addGate reads
	// The row being built as forms: curF[i] is read with weight curFW[i].
	curF     []int32
	curFW    []int64
	nodeForm []int32 // per node: its multi-term form in the table, or -1
	curPos   int32   // position hint of the node whose row is being built

	outTag int32
}

// realise is the second pass: it creates the gates of every node whose
// form is needed (demand-driven from the outputs), the lift gates for
// forms read above their level, and the output gates.
func realise(ctx context.Context, c *circuit.Circuit, n *normal, pl *plans) (*gates, error) {
	nn := len(n.kind)
	need := pl.need
	nIn := len(c.Inputs)
	nG, nR, nE, nF, nO := estimate(pl, len(c.Outputs))
	r := &realiser{
		gates: &gates{
			nIn: nIn, lev: make([]int32, nIn, nIn+nG),
			theta: make([]int32, 0, nG), row: make([]int32, 0, nG), tag: make([]int32, 0, nG), kind: make([]layered.Kind, 0, nG),
			rowStart: make([]int32, 1, nR+1), src: make([]int32, 0, nE), w: make([]int32, 0, nE),
		},
		c: c, n: n, pl: pl,
		fStart: make([]int32, nn), fEnd: make([]int32, nn), fConst: make([]int64, nn),
		fTerm: make([]int32, 0, nF), fCoef: make([]int64, 0, nF),
		lift: make([]int32, nn),
		acc:  make([]int64, nIn, nIn+nG), accMark: make([]int32, nIn, nIn+nG),
		nodeForm: make([]int32, nn),
	}
	r.rowFStart = make([]int32, 1, nR+1)
	r.rowFKey, r.rowFW = make([]int32, 0, nO), make([]int32, 0, nO)
	// The table holds about a form per row (its operands' forms, most
	// multi-term forms of nodes, read once) and about as many terms as
	// the nodes' forms; emit adds the forms of rows read as their sum.
	r.formStart = make([]int32, 1, nR+1)
	r.formTerm, r.formCoef = make([]int32, 0, nF), make([]int32, 0, nF)
	if c.HasPos() {
		r.inPos = make([]int32, nIn)
		for i, v := range c.Inputs {
			r.inPos[i] = c.Pos[v]
		}
		r.rowPos = make([]int32, 0, nR)
		r.formPos = make([]int32, 0, nR)
	}
	r.valForm = make([]int32, nIn, nIn+nG)
	for i := range r.valForm {
		r.valForm[i] = -1
	}
	r.tags = append(r.tags, c.Tags...)
	r.tags = append(r.tags, "output")
	r.outTag = int32(len(r.tags) - 1)
	for v := 0; v < nn; v++ {
		r.lift[v] = -1
		r.nodeForm[v] = -1
		if v%65536 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !need[v] {
			continue
		}
		if err := r.node(int32(v)); err != nil {
			return nil, err
		}
	}
	// Output level: lift what the output gates read first, so that the
	// output gates come last, in order.
	depth := pl.depth
	r.depth = depth
	for _, o := range c.Outputs {
		isC, _, base, _ := n.lit(o)
		switch {
		case isC:
		case pl.outS[base]:
			for k := pl.sStart[base]; k < pl.sEnd[base]; k++ {
				if err := r.prepare(pl.linNode[k], depth-1); err != nil {
					return nil, err
				}
			}
		default:
			if err := r.prepare(base, depth-1); err != nil {
				return nil, err
			}
		}
	}
	for _, o := range c.Outputs {
		isC, val, base, neg := n.lit(o)
		if !isC && pl.outS[base] {
			if err := r.switchGate(base, depth-1, neg == 1, depth, r.outTag, o); err != nil {
				return nil, err
			}
			r.nOut++
			continue
		}
		r.beginRow(o)
		if !isC {
			r.addForm(r.ref(base, depth-1), 1)
			if neg == 1 { // 1 − form
				r.negateRow()
				r.rowK = 1 - r.rowK
			}
		} else {
			r.rowK = val
		}
		// value = rowK + Σ ≥ 1  ⇔  Σ ≥ 1 − rowK
		kind := layered.KindGate
		if err := r.freeze(); err != nil {
			return nil, err
		}
		if _, err := r.addGate(depth, 1-r.rowK, r.outTag, &kind); err != nil {
			return nil, err
		}
		r.nOut++
	}
	return r.gates, nil
}

// estimate returns about how many gates, rows, row entries, form terms
// and row operands (the forms rows read) the second pass creates (before
// lifts and cancellations), to size its arrays.
func estimate(pl *plans, outputs int) (gates, rows, entries, terms, operands int) {
	nn := len(pl.pk)
	t := make([]int32, nn) // form terms per node
	for v := 0; v < nn; v++ {
		if !pl.need[v] {
			continue
		}
		switch pl.pk[v] {
		case pkInput:
			t[v] = 1
		case pkAlias:
			t[v] = t[pl.aliasOf[v]]
		case pkSum:
			for k := pl.sStart[v]; k < pl.sEnd[v]; k++ {
				t[v] += t[pl.linNode[k]]
			}
			terms += int(t[v])
		case pkGates:
			sw := pl.nsw(int32(v))
			fanin := 0
			for k := pl.sStart[v]; k < pl.sEnd[v]; k++ {
				fanin += int(t[pl.linNode[k]])
			}
			gates += sw
			rows++
			entries += fanin
			terms += sw
			operands += int(pl.sEnd[v] - pl.sStart[v])
			t[v] = int32(sw)
			if pl.mat[v] {
				gates++
				rows++
				entries += sw
				operands++
				t[v] = 1
			}
		}
	}
	return gates + outputs + gates/16, rows + outputs + rows/16, entries + 4*outputs + entries/16, terms + terms/8,
		operands + outputs + operands/16
}

// node builds node v's form.
func (r *realiser) node(v int32) error {
	pl := r.pl
	r.fStart[v] = int32(len(r.fTerm))
	switch pl.pk[v] {
	case pkInput:
		r.fTerm = append(r.fTerm, r.c.Param[v])
		r.fCoef = append(r.fCoef, 1)
	case pkConst:
		r.fConst[v] = int64(pl.base[v])
	case pkSum:
		r.sumNode(v)
	case pkAlias:
		u := pl.aliasOf[v]
		sign := int64(1)
		r.fConst[v] = r.fConst[u]
		if pl.base[v] == 1 {
			sign = -1
			r.fConst[v] = 1 - r.fConst[u]
		}
		for k := r.fStart[u]; k < r.fEnd[u]; k++ {
			r.fTerm = append(r.fTerm, r.fTerm[k])
			r.fCoef = append(r.fCoef, sign*r.fCoef[k])
		}
	case pkGates:
		t := pl.tlev[v]
		for k := pl.sStart[v]; k < pl.sEnd[v]; k++ {
			x := pl.linNode[k]
			if pl.lev[x] > t {
				return fmt.Errorf("node %d: operand %d at level %d above %d", v, x, pl.lev[x], t)
			}
			if err := r.prepare(x, t); err != nil {
				return fmt.Errorf("node %d: %w", v, err)
			}
		}
		r.beginRow(v)
		for k := pl.sStart[v]; k < pl.sEnd[v]; k++ {
			x := pl.linNode[k]
			r.addForm(r.ref(x, t), pl.linW[k])
		}
		k0 := r.rowK + pl.sConst[v]
		tag := r.c.Tag[v]
		sw0, sw1 := pl.swStart[v], pl.swEnd[v]
		r.fConst[v] = int64(pl.base[v])
		if sw1-sw0 == 1 && pl.swSign[sw0] < 0 {
			// 1 − [R + k0 ≥ s] = [−R ≥ k0 + 1 − s]: one positive gate.
			r.negateRow()
			if err := r.freeze(); err != nil {
				return fmt.Errorf("node %d: %w", v, err)
			}
			gid, err := r.addGate(t+1, k0+1-pl.swAt[sw0], tag, nil)
			if err != nil {
				return fmt.Errorf("node %d: %w", v, err)
			}
			r.fConst[v] = 0
			r.fTerm = append(r.fTerm, gid)
			r.fCoef = append(r.fCoef, 1)
		} else {
			if err := r.freeze(); err != nil {
				return fmt.Errorf("node %d: %w", v, err)
			}
			for s := sw0; s < sw1; s++ {
				gid, err := r.addGate(t+1, pl.swAt[s]-k0, tag, nil)
				if err != nil {
					return fmt.Errorf("node %d: %w", v, err)
				}
				r.fTerm = append(r.fTerm, gid)
				r.fCoef = append(r.fCoef, int64(pl.swSign[s]))
			}
		}
		if xy, ok := pl.pairOf(v); ok {
			r.pairForm(v, xy)
		}
		if pl.mat[v] {
			r.fEnd[v] = int32(len(r.fTerm))
			m, err := r.materialise(v, t+2)
			if err != nil {
				return err
			}
			r.fTerm = r.fTerm[:r.fStart[v]]
			r.fCoef = r.fCoef[:r.fStart[v]]
			r.fStart[v] = int32(len(r.fTerm))
			r.nodeForm[v] = -1 // the table's form of v is the materialised one's row
			r.fConst[v] = 0
			r.fTerm = append(r.fTerm, m)
			r.fCoef = append(r.fCoef, 1)
		}
	}
	r.fEnd[v] = int32(len(r.fTerm))
	return nil
}

// switchGate adds, on level L, the one gate of single-switch node v (its
// negation if neg), reading v's S at level t; it gets the position hint
// of node at (the output it is).
func (r *realiser) switchGate(v int32, t int32, neg bool, L int32, tag int32, at int32) error {
	pl := r.pl
	for k := pl.sStart[v]; k < pl.sEnd[v]; k++ {
		if err := r.prepare(pl.linNode[k], t); err != nil {
			return fmt.Errorf("node %d: %w", v, err)
		}
	}
	r.beginRow(at)
	for k := pl.sStart[v]; k < pl.sEnd[v]; k++ {
		r.addForm(r.ref(pl.linNode[k], t), pl.linW[k])
	}
	k0 := r.rowK + pl.sConst[v]
	s := pl.swAt[pl.swStart[v]]
	theta := s - k0
	if (pl.swSign[pl.swStart[v]] < 0) != neg {
		// 1 − [R ≥ s − k0] = [−R ≥ k0 + 1 − s]
		r.negateRow()
		theta = k0 + 1 - s
	}
	if err := r.freeze(); err != nil {
		return fmt.Errorf("node %d: %w", v, err)
	}
	_, err := r.addGate(L, theta, tag, nil)
	return err
}

// materialise adds the gate [form(v) ≥ 1] at level L and returns its id.
func (r *realiser) materialise(v int32, L int32) (int32, error) {
	r.beginRow(v)
	r.addForm(v, 1)
	if err := r.freeze(); err != nil {
		return 0, err
	}
	return r.addGate(L, 1-r.rowK, r.c.Tag[v], nil)
}

// prepare makes sure node v's form can be read by a gate at level t+1:
// a form on level t, or of a single gate (carried by copies), is read as
// is; any other form gets its lift gate [form ≥ 1] at its level + 1
// (rule 7). Call it before beginRow.
func (r *realiser) prepare(v int32, t int32) error {
	lv := r.pl.lev[v]
	if lv == t || r.fEnd[v]-r.fStart[v] <= 1 || r.lift[v] >= 0 || r.pl.hi[v] > 1 {
		return nil
	}
	m, err := r.materialise(v, lv+1)
	if err != nil {
		return err
	}
	r.lift[v] = m
	return nil
}

// ref returns what a gate at level t+1 reads for node v after prepare: v
// itself (its form), or its lift gate encoded as −1−id.
func (r *realiser) ref(v int32, t int32) int32 {
	if r.pl.lev[v] == t || r.fEnd[v]-r.fStart[v] <= 1 || r.pl.hi[v] > 1 {
		return v
	}
	return -1 - r.lift[v]
}

// beginRow starts the row of node v (whose position hint its gates get).
func (r *realiser) beginRow(v int32) {
	r.curPos = r.c.PosOf(v)
	r.stamp++
	r.rowV = r.rowV[:0]
	r.rowK = 0
	r.curF = r.curF[:0]
	r.curFW = r.curFW[:0]
}

// negateRow negates the row being built (its constant excepted).
func (r *realiser) negateRow() {
	for _, u := range r.rowV {
		r.acc[u] = -r.acc[u]
	}
	for i := range r.curFW {
		r.curFW[i] = -r.curFW[i]
	}
}

// addEntry adds w·(form f of the table) to the row's forms.
func (r *realiser) addEntry(f int32, w int64) {
	for i, h := range r.curF {
		if h == f {
			r.curFW[i] += w
			return
		}
	}
	r.curF = append(r.curF, f)
	r.curFW = append(r.curFW, w)
}

// formOf returns the table form of node x's (multi-term) form, and the
// sign s with form(x) = fConst(x) + s·(table form): an alias (NOT, XOR
// with a constant) shares the form of the node it maps.
func (r *realiser) formOf(x int32) (int32, int64) {
	pl := r.pl
	root, sign := x, int64(1)
	for pl.pk[root] == pkAlias {
		if pl.base[root] == 1 {
			sign = -sign
		}
		root = pl.aliasOf[root]
	}
	if r.fEnd[root]-r.fStart[root] != r.fEnd[x]-r.fStart[x] {
		root, sign = x, 1
	}
	if f := r.nodeForm[root]; f >= 0 {
		return f, sign
	}
	a, b := r.fStart[root], r.fEnd[root]
	f := addTableForm(r.gates, r.fTerm[a:b], r.fCoef[a:b], r.c.PosOf(root))
	r.nodeForm[root] = f
	return f, sign
}

func (r *realiser) touch(u int32) {
	if r.accMark[u] != r.stamp {
		r.accMark[u] = r.stamp
		r.acc[u] = 0
		r.rowV = append(r.rowV, u)
	}
}

// addForm adds w·form(x) to the row; x < 0 encodes the value −1−x.
func (r *realiser) addForm(x int32, w int64) {
	if x < 0 {
		u := -1 - x
		r.touch(u)
		r.acc[u] += w
		r.addEntry(r.valueForm(u), w)
		return
	}
	r.rowK += w * r.fConst[x]
	for k := r.fStart[x]; k < r.fEnd[x]; k++ {
		u := r.fTerm[k]
		r.touch(u)
		r.acc[u] += w * r.fCoef[k]
	}
	switch a := r.fStart[x]; r.fEnd[x] - a {
	case 0:
	case 1:
		r.addEntry(r.valueForm(r.fTerm[a]), w*r.fCoef[a])
	default:
		f, s := r.formOf(x)
		r.addEntry(f, s*w)
	}
}

// freeze stores the row being built as a new row of the gate DAG,
// dropping zero coefficients; the gates addGate adds next read it. The
// row's forms are stored with it; if a value cancelled out (so that a
// form it is a term of may not be carried to where the row reads it),
// the row reads one form of its own instead: the row itself.
func (r *realiser) freeze() error {
	start := len(r.src)
	cancelled := false
	for _, u := range r.rowV {
		w := r.acc[u]
		if w == 0 {
			cancelled = true
			continue
		}
		if w > math.MaxInt32 || w < math.MinInt32 {
			r.src, r.w = r.src[:start], r.w[:start]
			return fmt.Errorf("weight %d overflows int32", w)
		}
		r.src = append(r.src, u)
		r.w = append(r.w, int32(w))
	}
	r.curRow = int32(len(r.rowStart) - 1)
	r.rowStart = append(r.rowStart, int32(len(r.src)))
	if r.rowPos != nil {
		r.rowPos = append(r.rowPos, r.curPos)
	}
	if cancelled {
		r.rowFKey = append(r.rowFKey, addTableForm(r.gates, r.src[start:], r.w[start:], r.curPos))
		r.rowFW = append(r.rowFW, 1)
	} else {
		for i, f := range r.curF {
			w := r.curFW[i]
			if w == 0 {
				continue
			}
			if w > math.MaxInt32 || w < math.MinInt32 {
				return fmt.Errorf("weight %d overflows int32", w)
			}
			r.rowFKey = append(r.rowFKey, f)
			r.rowFW = append(r.rowFW, int32(w))
		}
	}
	r.rowFStart = append(r.rowFStart, int32(len(r.rowFKey)))
	return nil
}

// addGate appends the gate [frozen row ≥ theta] at level L and returns its
// value id. kind, if non-nil, is set to copy for a plain copy of one value.
func (r *realiser) addGate(L int32, theta int64, tag int32, kind *layered.Kind) (int32, error) {
	if theta > math.MaxInt32 || theta < math.MinInt32 {
		return 0, fmt.Errorf("threshold %d overflows int32", theta)
	}
	k := layered.KindGate
	if a := r.rowStart[r.curRow]; kind != nil && r.rowStart[r.curRow+1]-a == 1 && r.w[a] == 1 && theta == 1 {
		k = layered.KindCopy
	}
	id := int32(r.nIn + len(r.theta))
	r.theta = append(r.theta, int32(theta))
	r.row = append(r.row, r.curRow)
	r.tag = append(r.tag, tag)
	r.kind = append(r.kind, k)
	r.lev = append(r.lev, L)
	r.acc = append(r.acc, 0)
	r.accMark = append(r.accMark, 0)
	return id, nil
}
