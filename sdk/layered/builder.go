package layered

import (
	"fmt"
	"math"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// Builder appends gates level by level. Gates and forms get the position
// hint of the innermost At open when they are added (none outside any).
type Builder struct {
	c      Circuit
	tagIdx map[string]int32
	// formStart[L] is the first form of level L; forms tells whether any
	// form was added.
	formStart []int32
	forms     bool
	pos       int32 // hint of the innermost open At
}

// NewBuilder starts a circuit over numInputs inputs.
func NewBuilder(numInputs int, inputRanges []circuit.Range) *Builder {
	return &Builder{
		c: Circuit{
			NumInputs:    numInputs,
			LevelStart:   []int32{0},
			RowStart:     []int32{0},
			InputRanges:  append([]circuit.Range(nil), inputRanges...),
			FormRowStart: []int32{0},
		},
		tagIdx:    map[string]int32{},
		formStart: []int32{0},
		pos:       circuit.NoPos,
	}
}

// At runs fn with pos as the position hint of every gate and form added
// inside it (see Circuit.Pos); calls nest, the innermost wins. A circuit
// none of whose values got a hint through At or SetInputPos has none.
func (b *Builder) At(pos int, fn func()) {
	checkPos(pos)
	b.hint()
	prev := b.pos
	b.pos = int32(pos)
	defer func() { b.pos = prev }()
	fn()
}

// SetInputPos sets the position hint of input i.
func (b *Builder) SetInputPos(i, pos int) {
	if i < 0 || i >= b.c.NumInputs {
		panic(fmt.Sprintf("layered.Builder: SetInputPos of input %d of %d", i, b.c.NumInputs))
	}
	checkPos(pos)
	b.hint()
	b.c.InputPos[i] = int32(pos)
}

func checkPos(pos int) {
	if pos < circuit.NoPos || pos > math.MaxInt32 {
		panic(fmt.Sprintf("layered.Builder: position hint %d, want %d (none) or a position 0…%d", pos, circuit.NoPos, math.MaxInt32))
	}
}

// hint makes the circuit carry hints: every value so far gets none.
func (b *Builder) hint() {
	if b.c.Pos != nil {
		return
	}
	none := func(n int) []int32 {
		p := make([]int32, n)
		for i := range p {
			p[i] = circuit.NoPos
		}
		return p
	}
	b.c.InputPos = none(b.c.NumInputs)
	b.c.Pos = none(len(b.c.Kind))
	b.c.FormPos = none(len(b.c.FormConst))
}

// Tag interns a provenance tag and returns its index.
func (b *Builder) Tag(tag string) int32 {
	if i, ok := b.tagIdx[tag]; ok {
		return i
	}
	i := int32(len(b.c.Tags))
	b.c.Tags = append(b.c.Tags, tag)
	b.tagIdx[tag] = i
	return i
}

// Level closes the current level (gates added since the last call) and
// starts the next. Call it once after the last gate of every level.
func (b *Builder) Level() {
	b.c.LevelStart = append(b.c.LevelStart, int32(len(b.c.Kind)))
	b.formStart = append(b.formStart, int32(len(b.c.FormConst)))
}

// Form adds the linear form constant + Σ coef[i]·x[src[i]] over the gates
// x of the last closed level (before the first Level call: the inputs)
// and returns its index among that level's forms, which is what the
// gates of the next level read. Once one form is added, the circuit has
// forms: every level but the last must get its forms, before the gates
// of the next level.
func (b *Builder) Form(constant int32, src, coef []int32) int32 {
	b.forms = true
	idx := int32(len(b.c.FormConst)) - b.formStart[len(b.formStart)-1]
	b.c.FormConst = append(b.c.FormConst, constant)
	b.c.FormSrc = append(b.c.FormSrc, src...)
	b.c.FormCoef = append(b.c.FormCoef, coef...)
	b.c.FormRowStart = append(b.c.FormRowStart, int32(len(b.c.FormSrc)))
	if b.c.Pos != nil {
		b.c.FormPos = append(b.c.FormPos, b.pos)
	}
	return idx
}

// Width returns the number of gates added to the open level so far.
func (b *Builder) Width() int {
	return len(b.c.Kind) - int(b.c.LevelStart[len(b.c.LevelStart)-1])
}

// Gate adds a gate to the open level and returns its index within the level.
// src are indices within the previous closed level.
func (b *Builder) Gate(kind Kind, theta int32, src, weight []int32, tag int32) int32 {
	idx := int32(b.Width())
	b.c.Kind = append(b.c.Kind, kind)
	b.c.Threshold = append(b.c.Threshold, theta)
	b.c.Tag = append(b.c.Tag, tag)
	b.c.Src = append(b.c.Src, src...)
	b.c.Weight = append(b.c.Weight, weight...)
	b.c.RowStart = append(b.c.RowStart, int32(len(b.c.Src)))
	if b.c.Pos != nil {
		b.c.Pos = append(b.c.Pos, b.pos)
	}
	return idx
}

// Copy adds a copy gate [x ≥ 1] of previous-level gate src.
func (b *Builder) Copy(src int32, tag int32) int32 {
	return b.Gate(KindCopy, 1, []int32{src}, []int32{1}, tag)
}

// Grow reserves room for about gates gates and edges edges.
func (b *Builder) Grow(gates, edges int) {
	grow := func(n int, s []int32) []int32 {
		if cap(s)-len(s) < n {
			t := make([]int32, len(s), len(s)+n)
			copy(t, s)
			return t
		}
		return s
	}
	b.c.Threshold = grow(gates, b.c.Threshold)
	b.c.Tag = grow(gates, b.c.Tag)
	b.c.RowStart = grow(gates, b.c.RowStart)
	b.c.Src = grow(edges, b.c.Src)
	b.c.Weight = grow(edges, b.c.Weight)
	if cap(b.c.Kind)-len(b.c.Kind) < gates {
		k := make([]Kind, len(b.c.Kind), len(b.c.Kind)+gates)
		copy(k, b.c.Kind)
		b.c.Kind = k
	}
}

// Circuit returns the circuit with the given output ranges (over the last
// level). The builder must not be used afterwards.
func (b *Builder) Circuit(outputRanges []circuit.Range) *Circuit {
	c := b.c
	c.OutputRanges = append([]circuit.Range(nil), outputRanges...)
	if b.forms {
		c.FormStart = b.formStart
		if c.FormSrc == nil {
			c.FormSrc, c.FormCoef = []int32{}, []int32{}
		}
	} else {
		c.FormRowStart = nil
		c.FormPos = nil
	}
	b.c = Circuit{}
	return &c
}
