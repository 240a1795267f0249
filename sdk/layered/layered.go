// Package layered holds the layered threshold circuit that layerer plugins
// produce: level 0 is the inputs; every gate of level L reads only gates of
// level L−1 (level 0: the inputs); a gate fires iff Σ wᵢxᵢ ≥ θ; the last
// level is exactly the outputs, in order.
//
// Gates are stored level by level in flat arrays with CSR rows. An edge's
// source is the index of a gate *within the previous level* (for level 1: an
// input index), so "strictly layered" holds by construction of the encoding
// and validation only checks ranges.
//
// A circuit may carry linear forms (the residual stream of a transformer):
// then every level L below the last holds forms, each an integer constant
// plus an integer combination of level L's gates (level 0: the inputs), and
// the gates of level L+1 read forms of level L instead of gates. A circuit
// without forms means that each gate is its own form.
package layered

import (
	"fmt"
	"math"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// Kind tells a real gate from a copy (identity) gate that only carries a
// value across a level.
type Kind uint8

// Gate kinds.
const (
	KindGate Kind = iota
	KindCopy
)

// Circuit is a layered threshold circuit. Gate g (global index, levels in
// order) reads Src[RowStart[g]:RowStart[g+1]] with the matching Weight and
// fires iff the weighted sum ≥ Threshold[g].
type Circuit struct {
	NumInputs  int
	LevelStart []int32 // gates of level L (1-based) are [LevelStart[L-1], LevelStart[L]); LevelStart[0] = 0

	Kind      []Kind
	Threshold []int32
	Tag       []int32 // index into Tags
	RowStart  []int32 // len = gates+1
	Src       []int32 // index within the previous level
	Weight    []int32

	Tags []string

	InputRanges  []circuit.Range
	OutputRanges []circuit.Range // over the gates of the last level

	// Linear forms, optional: with FormStart nil every gate is its own
	// form and a gate's Src indexes gates of the previous level. Otherwise
	// len(FormStart) = Depth+1, the forms of level L (0 ≤ L < Depth) are
	// [FormStart[L], FormStart[L+1]), a gate of level L+1 reads forms of
	// level L (Src indexes a form within level L), and form f is
	//
	//	FormConst[f] + Σ FormCoef[e]·x[FormSrc[e]],  e ∈ [FormRowStart[f], FormRowStart[f+1])
	//
	// over the gates x of level L (level 0: the inputs), FormSrc indexing
	// a gate within level L. The last level has no forms: its gates are
	// the outputs.
	FormStart    []int32
	FormConst    []int32
	FormRowStart []int32 // len = forms+1
	FormSrc      []int32 // index within the form's level
	FormCoef     []int32

	// Position hints, optional (see circuit.Circuit.Pos): which position
	// of the construction (Keccak: the slice z) each value belongs to,
	// circuit.NoPos (−1) where a value has none. Either all nil (no
	// hints) or InputPos has one entry per input, Pos one per gate and
	// FormPos one per form (nil if the circuit has no forms). Layerers
	// give a gate or form the hint of the logic node it realises, a copy
	// its source's; a mapper may place values by them. Nothing depends on
	// them for correctness.
	InputPos []int32
	Pos      []int32
	FormPos  []int32
}

// HasPos reports whether the circuit carries position hints.
func (c *Circuit) HasPos() bool { return c.Pos != nil }

// PosAt returns the position hint of value i of level L: input i for
// L = 0, else gate i of level L; circuit.NoPos if the circuit carries
// no hints.
func (c *Circuit) PosAt(L, i int) int32 {
	switch {
	case c.Pos == nil:
		return circuit.NoPos
	case L == 0:
		return c.InputPos[i]
	}
	return c.Pos[int(c.LevelStart[L-1])+i]
}

// FormPosAt returns the position hint of form f of level L, the f-th
// source the gates of level L+1 read: without explicit forms, that of
// value f of level L (PosAt). circuit.NoPos if the circuit carries no
// hints.
func (c *Circuit) FormPosAt(L, f int) int32 {
	if c.FormStart == nil || c.Pos == nil {
		return c.PosAt(L, f)
	}
	return c.FormPos[int(c.FormStart[L])+f]
}

// HasForms reports whether the circuit carries explicit linear forms.
func (c *Circuit) HasForms() bool { return c.FormStart != nil }

// NumForms returns the number of forms of level L, which the gates of
// level L+1 read: without explicit forms, and on the last level (the
// outputs), the level's width.
func (c *Circuit) NumForms(L int) int {
	if c.FormStart == nil || L >= c.Depth() {
		return c.LevelWidth(L)
	}
	return int(c.FormStart[L+1] - c.FormStart[L])
}

// Form returns form f's constant and its sources (indices within its
// level) and coefficients. The circuit must have forms.
func (c *Circuit) Form(f int) (constant int32, src, coef []int32) {
	a, b := c.FormRowStart[f], c.FormRowStart[f+1]
	return c.FormConst[f], c.FormSrc[a:b], c.FormCoef[a:b]
}

// Depth returns the number of gate levels (the input level is not counted).
func (c *Circuit) Depth() int { return len(c.LevelStart) - 1 }

// NumGates returns the number of gates, copies included.
func (c *Circuit) NumGates() int { return len(c.Kind) }

// LevelWidth returns the number of gates in level L (L = 0: inputs).
func (c *Circuit) LevelWidth(L int) int {
	if L == 0 {
		return c.NumInputs
	}
	return int(c.LevelStart[L] - c.LevelStart[L-1])
}

// NumOutputs returns the width of the last level (the input count if there is no gate level).
func (c *Circuit) NumOutputs() int { return c.LevelWidth(c.Depth()) }

// Row returns gate g's sources (indices within the previous level) and weights.
func (c *Circuit) Row(g int) ([]int32, []int32) {
	a, b := c.RowStart[g], c.RowStart[g+1]
	return c.Src[a:b], c.Weight[a:b]
}

// Validate checks array lengths, level bounds, source indices against the
// previous level's width, tags, output ranges and position hints.
func (c *Circuit) Validate() error {
	g := len(c.Kind)
	if err := c.checkInputs(); err != nil {
		return err
	}
	if len(c.Threshold) != g || len(c.Tag) != g {
		return fmt.Errorf("layered: %d gates but %d thresholds and %d tags", g, len(c.Threshold), len(c.Tag))
	}
	if len(c.RowStart) != g+1 {
		return fmt.Errorf("layered: RowStart has %d entries, want %d", len(c.RowStart), g+1)
	}
	if len(c.Src) != len(c.Weight) {
		return fmt.Errorf("layered: %d sources but %d weights", len(c.Src), len(c.Weight))
	}
	if c.RowStart[0] != 0 || int(c.RowStart[g]) != len(c.Src) {
		return fmt.Errorf("layered: RowStart does not span the edges")
	}
	if err := c.checkLevels(g); err != nil {
		return err
	}
	if err := c.checkForms(); err != nil {
		return err
	}
	for L := 1; L < len(c.LevelStart); L++ {
		lo, hi := c.LevelStart[L-1], c.LevelStart[L]
		prev := int32(c.LevelWidth(L - 1))
		if c.FormStart != nil {
			prev = int32(c.NumForms(L - 1))
		}
		for gi := lo; gi < hi; gi++ {
			a, b := c.RowStart[gi], c.RowStart[gi+1]
			if b < a {
				return fmt.Errorf("layered: gate %d: edge offsets decrease", gi)
			}
			if int(b) > len(c.Src) {
				return fmt.Errorf("layered: gate %d: edge offsets run past the %d edges", gi, len(c.Src))
			}
			for e := a; e < b; e++ {
				if s := c.Src[e]; s < 0 || s >= prev {
					return fmt.Errorf("layered: level %d gate %d: source %d outside level %d (%s)", L, gi-lo, s, L-1, c.sourceCount(prev))
				}
			}
			if t := c.Tag[gi]; t < 0 || int(t) >= len(c.Tags) {
				return fmt.Errorf("layered: gate %d: tag %d out of range", gi, t)
			}
			if k := c.Kind[gi]; k != KindGate && k != KindCopy {
				return fmt.Errorf("layered: gate %d: unknown kind %d", gi, k)
			}
		}
	}
	if c.FormStart != nil {
		if err := c.checkMass(); err != nil {
			return err
		}
	}
	if err := c.checkPos(); err != nil {
		return err
	}
	return c.checkRanges()
}

// checkInputs checks the input count: not negative, and an int32 index
// (a source of level 1 is one, checked against the count as an int32).
func (c *Circuit) checkInputs() error {
	if c.NumInputs < 0 {
		return fmt.Errorf("layered: negative input count")
	}
	if c.NumInputs > math.MaxInt32 {
		return fmt.Errorf("layered: input count %d exceeds the int32 range", c.NumInputs)
	}
	return nil
}

// checkPos checks the position hints: all three arrays nil, or each of
// its length (FormPos nil without forms) holding hints ≥ circuit.NoPos.
func (c *Circuit) checkPos() error {
	if c.Pos == nil {
		if c.InputPos != nil || c.FormPos != nil {
			return fmt.Errorf("layered: input or form position hints without gate hints (Pos)")
		}
		return nil
	}
	if c.InputPos == nil {
		return fmt.Errorf("layered: gate position hints without input hints (InputPos)")
	}
	if c.FormStart == nil && c.FormPos != nil {
		return fmt.Errorf("layered: form position hints in a circuit without forms")
	}
	if c.FormStart != nil && c.FormPos == nil {
		return fmt.Errorf("layered: gate position hints without form hints (FormPos)")
	}
	if err := circuit.CheckPos("layered: input position hints", c.InputPos, c.NumInputs); err != nil {
		return err
	}
	if err := circuit.CheckPos("layered: gate position hints", c.Pos, len(c.Kind)); err != nil {
		return err
	}
	if c.FormStart != nil {
		return circuit.CheckPos("layered: form position hints", c.FormPos, len(c.FormConst))
	}
	return nil
}

// sourceCount says how many sources a level offers its readers: its
// width, or its forms.
func (c *Circuit) sourceCount(n int32) string {
	if c.FormStart != nil {
		return fmt.Sprintf("%d forms", n)
	}
	return fmt.Sprintf("width %d", n)
}

// maxMass bounds a gate's flattened mass Σ_f |w_f|·Σ_e |a_e| (its
// weights once every form it reads is substituted), so that the
// flattened circuit's weights and sums fit int32.
const maxMass = math.MaxInt32 - 1

// checkForms checks the forms (if any): FormStart spans them level by
// level, their rows span FormSrc and FormCoef, and every source lies
// within its level. LevelStart must be valid.
func (c *Circuit) checkForms() error {
	if c.FormStart == nil {
		if c.FormConst != nil || c.FormRowStart != nil || c.FormSrc != nil || c.FormCoef != nil {
			return fmt.Errorf("layered: form arrays without FormStart")
		}
		return nil
	}
	depth := c.Depth()
	if len(c.FormStart) != depth+1 || c.FormStart[0] != 0 {
		return fmt.Errorf("layered: FormStart has %d entries for %d levels", len(c.FormStart), depth)
	}
	n := len(c.FormConst)
	if int(c.FormStart[depth]) != n {
		return fmt.Errorf("layered: FormStart does not span the %d forms", n)
	}
	if len(c.FormRowStart) != n+1 || c.FormRowStart[0] != 0 || int(c.FormRowStart[n]) != len(c.FormSrc) {
		return fmt.Errorf("layered: FormRowStart does not span the form entries")
	}
	if len(c.FormSrc) != len(c.FormCoef) {
		return fmt.Errorf("layered: %d form sources but %d coefficients", len(c.FormSrc), len(c.FormCoef))
	}
	for L := range depth {
		lo, hi := c.FormStart[L], c.FormStart[L+1]
		if hi < lo || int(hi) > n {
			return fmt.Errorf("layered: forms of level %d: bad span [%d, %d)", L, lo, hi)
		}
		width := int32(c.LevelWidth(L))
		for f := lo; f < hi; f++ {
			a, b := c.FormRowStart[f], c.FormRowStart[f+1]
			if b < a || int(b) > len(c.FormSrc) {
				return fmt.Errorf("layered: form %d: entry offsets out of order", f)
			}
			for _, s := range c.FormSrc[a:b] {
				if s < 0 || s >= width {
					return fmt.Errorf("layered: level %d form %d: source %d outside level %d (width %d)", L, f-lo, s, L, width)
				}
			}
		}
	}
	return nil
}

// formMass returns Σ|a| of every form, saturated at 2³¹.
func (c *Circuit) formMass() []int64 {
	mass := make([]int64, len(c.FormConst))
	for f := range mass {
		var m int64
		for _, a := range c.FormCoef[c.FormRowStart[f]:c.FormRowStart[f+1]] {
			m = min(m+abs64(int64(a)), 1<<31)
		}
		mass[f] = m
	}
	return mass
}

// checkMass checks that no gate's flattened mass exceeds maxMass. The
// forms and the gates' rows must be valid.
func (c *Circuit) checkMass() error {
	mass := c.formMass()
	for L := 1; L <= c.Depth(); L++ {
		base := c.FormStart[L-1]
		for g := c.LevelStart[L-1]; g < c.LevelStart[L]; g++ {
			var m int64
			for e := c.RowStart[g]; e < c.RowStart[g+1]; e++ {
				m += abs64(int64(c.Weight[e])) * mass[base+c.Src[e]]
				if m > maxMass {
					return fmt.Errorf("layered: level %d gate %d: weights times form coefficients add up past %d", L, g-c.LevelStart[L-1], maxMass)
				}
			}
		}
	}
	return nil
}

func abs64(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// checkLevels checks that LevelStart spans the g gates, level by level.
func (c *Circuit) checkLevels(g int) error {
	if len(c.LevelStart) == 0 || c.LevelStart[0] != 0 || int(c.LevelStart[len(c.LevelStart)-1]) != g {
		return fmt.Errorf("layered: LevelStart does not span the gates")
	}
	for L := 1; L < len(c.LevelStart); L++ {
		lo, hi := c.LevelStart[L-1], c.LevelStart[L]
		if hi < lo {
			return fmt.Errorf("layered: level %d has negative width", L)
		}
		if int(hi) > g {
			return fmt.Errorf("layered: level %d ends past the %d gates", L, g)
		}
	}
	return nil
}

// checkRanges checks the input and output ranges against the input count
// and the last level's width; LevelStart must be valid.
func (c *Circuit) checkRanges() error {
	for _, r := range c.InputRanges {
		if r.Start < 0 || r.Len < 0 || r.Start > c.NumInputs-r.Len {
			return fmt.Errorf("layered: input range %q exceeds %d inputs", r.Name, c.NumInputs)
		}
	}
	out := c.NumOutputs()
	for _, r := range c.OutputRanges {
		if r.Start < 0 || r.Len < 0 || r.Start > out-r.Len {
			return fmt.Errorf("layered: output range %q exceeds the %d outputs of the last level", r.Name, out)
		}
	}
	return nil
}

// Stats are the canonical size figures of a layered circuit (the paper's
// conventions: depth counts gate levels only; width counts copies).
// Edges, MaxFanIn and MaxWeight are those of the flattened circuit (a gate
// reading a form counts the form's gates, and its weight times theirs),
// so circuits with and without forms compare; Forms and Nonzeros are what
// a model stores: the most forms on one level and the entries of gate
// rows plus form rows.
type Stats struct {
	Depth     int   `json:"depth"`
	Width     int   `json:"width"`
	Gates     int   `json:"gates"`
	Copies    int   `json:"copies"`
	Edges     int   `json:"edges"`
	MaxFanIn  int   `json:"max_fanin"`
	MaxWeight int   `json:"max_weight"`
	Forms     int   `json:"forms"`
	Nonzeros  int   `json:"nonzeros"`
	Widths    []int `json:"level_widths"` // Widths[L-1] = gates in level L
}

// Stats computes the canonical figures.
func (c *Circuit) Stats() Stats {
	s := Stats{Depth: c.Depth(), Gates: len(c.Kind), Nonzeros: len(c.Src) + len(c.FormSrc)}
	for L := 0; L <= s.Depth; L++ {
		s.Forms = max(s.Forms, c.NumForms(L))
		if L == 0 {
			continue
		}
		w := c.LevelWidth(L)
		s.Widths = append(s.Widths, w)
		if w > s.Width {
			s.Width = w
		}
	}
	for _, k := range c.Kind {
		if k == KindCopy {
			s.Copies++
		}
	}
	if c.FormStart == nil {
		s.Edges = len(c.Src)
		for g := range c.Kind {
			s.MaxFanIn = max(s.MaxFanIn, int(c.RowStart[g+1]-c.RowStart[g]))
		}
		for _, w := range c.Weight {
			s.MaxWeight = max(s.MaxWeight, int(abs64(int64(w)))) // int64: −MinInt32 does not fit an int32
		}
		return s
	}
	size := make([]int32, len(c.FormConst))
	maxA := make([]int64, len(c.FormConst))
	for f := range size {
		a, b := c.FormRowStart[f], c.FormRowStart[f+1]
		size[f] = b - a
		for _, x := range c.FormCoef[a:b] {
			maxA[f] = max(maxA[f], abs64(int64(x)))
		}
	}
	for L := 1; L <= s.Depth; L++ {
		base := c.FormStart[L-1]
		for g := c.LevelStart[L-1]; g < c.LevelStart[L]; g++ {
			fan := 0
			for e := c.RowStart[g]; e < c.RowStart[g+1]; e++ {
				f := base + c.Src[e]
				fan += int(size[f])
				s.MaxWeight = max(s.MaxWeight, int(abs64(int64(c.Weight[e]))*maxA[f]))
			}
			s.Edges += fan
			s.MaxFanIn = max(s.MaxFanIn, fan)
		}
	}
	return s
}

// Flatten returns the circuit without forms that computes the same: every
// form a gate reads is substituted into the gate's row (sources in order
// of first appearance, equal sources merged, zero weights dropped) and its
// constant into the threshold. A circuit without forms is returned as is.
// The circuit must be valid (so that the flattened weights fit int32); a
// threshold past int32 is clamped to where the gate is constant. Gates
// and inputs keep their position hints; the forms' go with the forms.
func (c *Circuit) Flatten() *Circuit {
	if c.FormStart == nil {
		return c
	}
	f := c.flatRows(math.MaxInt)
	d := &Circuit{
		NumInputs: c.NumInputs, LevelStart: c.LevelStart, Kind: c.Kind, Tag: c.Tag, Tags: c.Tags,
		InputRanges: c.InputRanges, OutputRanges: c.OutputRanges, InputPos: c.InputPos, Pos: c.Pos,
		Threshold: f.threshold, RowStart: make([]int32, len(c.Kind)+1),
	}
	edges := 0
	for g := range c.Kind {
		edges += int(f.hi[g] - f.lo[g])
		d.RowStart[g+1] = int32(edges)
	}
	d.Src, d.Weight = make([]int32, edges), make([]int32, edges)
	for g := range c.Kind {
		a, b := d.RowStart[g], d.RowStart[g+1]
		copy(d.Src[a:b], f.src[f.lo[g]:f.hi[g]])
		copy(d.Weight[a:b], f.wt[f.lo[g]:f.hi[g]])
	}
	return d
}
