package model

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tcforge/tcforge/internal/binenc"
)

// Labels name what a model's residual dimensions, FFN units and attention
// heads hold or compute, in terms of the layered circuit the mapper read:
// a residual dimension of a token holds, between two block boundaries, a
// gate, a linear form or a partial form of one circuit level. Boundary 0
// is the residual stream after the embedding, boundary b (1 ≤ b ≤ blocks)
// the stream after block b−1 (0-based), i.e. after b blocks.
//
// Labels never change what the model computes: they travel with it (the
// model's binary encoding carries them as an optional trailing section)
// and the export writes them as their own file (docs/labels.md).
type Labels struct {
	// Levels holds the width of every circuit level (level 0: the
	// inputs); Forms the number of forms of every level (a circuit
	// without forms: the widths). A label's level and index must fall
	// inside them.
	Levels []int32
	Forms  []int32
	// Values label residual dimensions.
	Values []ValueLabel
	// Units label FFN hidden units and attention heads.
	Units []UnitLabel
}

// ValueKind says which circuit value a residual label names.
type ValueKind uint8

// Value kinds.
const (
	// Aux is structure, not a circuit value: a constant, a scratch
	// dimension (attention's sum, a fetched copy), a position code.
	Aux ValueKind = iota
	// Gate is gate Index of Level (Level 0: input Index), 0 or 1.
	Gate
	// Form is form Index of Level: its constant plus Σ coef·gate over
	// the level's gates (a circuit without forms: the gate itself).
	Form
	// Partial is Const + Σ Coef[k]·gate(Src[k]) over gates of Level
	// (Level 0: inputs): the share of value Index that one token holds,
	// shifted by Const (tokens-as-states: a token's readout threshold
	// correction on the folded top level; else 0).
	Partial
)

var kindNames = [...]string{Aux: "aux", Gate: "gate", Form: "form", Partial: "partial"}

// String returns the kind's name as the export writes it.
func (k ValueKind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// ParseValueKind returns the kind of that name.
func ParseValueKind(s string) (ValueKind, error) {
	for k, n := range kindNames {
		if n == s {
			return ValueKind(k), nil
		}
	}
	return 0, fmt.Errorf("labels: unknown value kind %q", s)
}

// ValueLabel names what dimension Dim of token Token (−1: every token)
// holds at the block boundaries From … Until (inclusive).
type ValueLabel struct {
	Token       int32
	Dim         int32
	From, Until int32
	Kind        ValueKind
	Level       int32
	Index       int32
	// Const, Src and Coef are a Partial's constant and terms.
	Const int32
	Src   []int32
	Coef  []int32
	// Name is the construction's provenance of the value (its scope tag
	// and position hint), or what an Aux dimension is.
	Name string
}

// UnitKind tells an FFN hidden unit from an attention head.
type UnitKind uint8

// Unit kinds.
const (
	FFNUnit UnitKind = iota
	HeadUnit
)

// String returns "ffn" or "head".
func (k UnitKind) String() string {
	if k == HeadUnit {
		return "head"
	}
	return "ffn"
}

// UnitLabel names FFN hidden unit or attention head Index of block Block
// (0-based).
type UnitLabel struct {
	Block int32
	Kind  UnitKind
	Index int32
	Name  string
}

const (
	labelsMagic   = "TCLB"
	labelsVersion = 1
)

// MarshalBinary encodes the labels (their own binenc record, which the
// model's encoding embeds).
func (l *Labels) MarshalBinary() ([]byte, error) {
	w := binenc.NewWriter(labelsMagic, labelsVersion, 32*len(l.Values))
	w.I32s(l.Levels)
	w.I32s(l.Forms)
	w.U32(uint32(len(l.Values)))
	for _, v := range l.Values {
		w.I32s([]int32{v.Token, v.Dim, v.From, v.Until, int32(v.Kind), v.Level, v.Index, v.Const})
		w.I32s(v.Src)
		w.I32s(v.Coef)
		w.String(v.Name)
	}
	w.U32(uint32(len(l.Units)))
	for _, u := range l.Units {
		w.I32s([]int32{u.Block, int32(u.Kind), u.Index})
		w.String(u.Name)
	}
	return w.Bytes(), nil
}

// UnmarshalBinary decodes labels written by MarshalBinary.
func (l *Labels) UnmarshalBinary(data []byte) error {
	r := binenc.NewReader(data, labelsMagic, labelsVersion)
	var d Labels
	d.Levels = r.I32s()
	d.Forms = r.I32s()
	n := r.U32()
	for i := uint32(0); i < n && r.Err() == nil; i++ {
		h := r.I32s()
		src, coef, name := r.I32s(), r.I32s(), r.String()
		if r.Err() != nil {
			break
		}
		if len(h) != 8 {
			return fmt.Errorf("decoding labels: value label %d has %d fields, want 8", i, len(h))
		}
		d.Values = append(d.Values, ValueLabel{Token: h[0], Dim: h[1], From: h[2], Until: h[3], Kind: ValueKind(h[4]),
			Level: h[5], Index: h[6], Const: h[7], Src: nilIfEmpty(src), Coef: nilIfEmpty(coef), Name: name})
	}
	n = r.U32()
	for i := uint32(0); i < n && r.Err() == nil; i++ {
		h := r.I32s()
		name := r.String()
		if r.Err() != nil {
			break
		}
		if len(h) != 3 {
			return fmt.Errorf("decoding labels: unit label %d has %d fields, want 3", i, len(h))
		}
		d.Units = append(d.Units, UnitLabel{Block: h[0], Kind: UnitKind(h[1]), Index: h[2], Name: name})
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("decoding labels: %w", err)
	}
	*l = d
	return nil
}

// Validate checks the labels against model m: every value label's token,
// dimension, boundaries, kind, level and index (and a partial's terms),
// every unit label's block and index.
func (l *Labels) Validate(m *Model) error {
	nb := int32(len(m.Blocks))
	if len(l.Forms) != len(l.Levels) {
		return fmt.Errorf("labels: %d levels but %d form counts", len(l.Levels), len(l.Forms))
	}
	for i, v := range l.Values {
		where := func(format string, a ...any) error {
			return fmt.Errorf("labels: value label %d (%s): %s", i, v.Describe(), fmt.Sprintf(format, a...))
		}
		switch {
		case v.Token < -1 || int(v.Token) >= m.Tokens:
			return where("token %d outside 0..%d", v.Token, m.Tokens-1)
		case v.Dim < 0 || int(v.Dim) >= m.DModel:
			return where("dimension %d outside 0..%d", v.Dim, m.DModel-1)
		case v.From < 0 || v.Until < v.From || v.Until > nb:
			return where("boundaries %d…%d outside 0…%d", v.From, v.Until, nb)
		case v.Kind > Partial:
			return where("unknown kind %d", v.Kind)
		case len(v.Src) != len(v.Coef):
			return where("%d sources but %d coefficients", len(v.Src), len(v.Coef))
		}
		if v.Kind == Aux {
			continue
		}
		if v.Level < 0 || int(v.Level) >= len(l.Levels) {
			return where("unknown level %d (the circuit has levels 0…%d)", v.Level, len(l.Levels)-1)
		}
		n := l.Levels[v.Level]
		if v.Kind == Form {
			n = l.Forms[v.Level]
		}
		if v.Kind != Partial && (v.Index < 0 || v.Index >= n) {
			return where("%s %d outside level %d's %d", v.Kind, v.Index, v.Level, n)
		}
		for _, s := range v.Src {
			if s < 0 || s >= l.Levels[v.Level] {
				return where("term gate %d outside level %d's %d", s, v.Level, l.Levels[v.Level])
			}
		}
	}
	for i, u := range l.Units {
		if u.Block < 0 || u.Block >= nb {
			return fmt.Errorf("labels: unit label %d: block %d outside 0..%d", i, u.Block, nb-1)
		}
	}
	return nil
}

// Describe returns a one-line description of the label: what it holds,
// where, and its provenance name.
func (v *ValueLabel) Describe() string {
	var b strings.Builder
	switch v.Kind {
	case Aux:
		b.WriteString("aux")
	case Gate:
		if v.Level == 0 {
			fmt.Fprintf(&b, "input %d", v.Index)
		} else {
			fmt.Fprintf(&b, "L%d gate %d", v.Level, v.Index)
		}
	case Form:
		fmt.Fprintf(&b, "L%d form %d", v.Level, v.Index)
	case Partial:
		fmt.Fprintf(&b, "L%d value %d partial (%d terms", v.Level, v.Index, len(v.Src))
		if v.Const != 0 {
			fmt.Fprintf(&b, ", %+d", v.Const)
		}
		b.WriteString(")")
	default:
		fmt.Fprintf(&b, "%s", v.Kind)
	}
	if v.Name != "" {
		fmt.Fprintf(&b, " %q", v.Name)
	}
	return b.String()
}

// At returns the value labels of token tok (every-token labels included)
// at boundary b.
func (l *Labels) At(b, tok int32) []ValueLabel {
	var out []ValueLabel
	for _, v := range l.Values {
		if v.From <= b && b <= v.Until && (v.Token < 0 || v.Token == tok) {
			out = append(out, v)
		}
	}
	return out
}

// LabelUnits names every FFN hidden unit and attention head of m that the
// labels do not name yet by what it writes: the labels of the residual
// dimensions its output column reaches at the end of its block (the
// lowest token's, with how many tokens hold a value there), at most three
// listed. m.Labels must be set.
func (m *Model) LabelUnits() {
	l := m.Labels
	nb := len(m.Blocks)
	type at struct {
		first  int // index into l.Values
		tokens int
	}
	after := make([]map[int32]*at, nb+1) // boundary → dimension → its labels
	for b := range after {
		after[b] = map[int32]*at{}
	}
	for i, v := range l.Values {
		for b := v.From; b <= v.Until; b++ {
			a := after[b][v.Dim]
			switch {
			case a == nil:
				after[b][v.Dim] = &at{first: i, tokens: 1}
			default:
				a.tokens++
				if t := l.Values[a.first].Token; v.Token >= 0 && (t < 0 || v.Token < t) {
					a.first = i
				}
			}
		}
	}
	named := map[[3]int32]bool{}
	for _, u := range l.Units {
		named[[3]int32{u.Block, int32(u.Kind), u.Index}] = true
	}
	idx := m.TensorIndex()
	describe := func(b int, dims []int32) string {
		var s strings.Builder
		s.WriteString("writes ")
		for k, d := range dims {
			if k == 3 {
				fmt.Fprintf(&s, " (+%d more)", len(dims)-3)
				break
			}
			if k > 0 {
				s.WriteString("; ")
			}
			a := after[b][d]
			if a == nil {
				fmt.Fprintf(&s, "dim %d", d)
				continue
			}
			fmt.Fprintf(&s, "dim %d: %s", d, l.Values[a.first].Describe())
			if a.tokens > 1 {
				fmt.Fprintf(&s, " (%d tokens)", a.tokens)
			}
		}
		if len(dims) == 0 {
			s.WriteString("nothing")
		}
		return s.String()
	}
	// columns returns, per column of t (grouped by group columns), the rows
	// it has entries in.
	columns := func(t *Tensor, group int) [][]int32 {
		if t == nil {
			return nil
		}
		out := make([][]int32, (t.Cols+group-1)/group)
		for r := 0; r < t.Rows; r++ {
			cols, _ := t.Row(r)
			for _, c := range cols {
				g := int(c) / group
				if n := len(out[g]); n == 0 || out[g][n-1] != int32(r) {
					out[g] = append(out[g], int32(r))
				}
			}
		}
		return out
	}
	add := func(b int, k UnitKind, writes [][]int32) {
		for u, dims := range writes {
			if !named[[3]int32{int32(b), int32(k), int32(u)}] {
				l.Units = append(l.Units, UnitLabel{Block: int32(b), Kind: k, Index: int32(u), Name: describe(b+1, dims)})
			}
		}
	}
	for b, blk := range m.Blocks {
		if a := blk.Attn; a != nil {
			heads := make([][]int32, len(a.Heads))
			for h, hd := range a.Heads {
				for _, dims := range columns(idx[hd.O], 1) {
					heads[h] = append(heads[h], dims...)
				}
				slices.Sort(heads[h])
				heads[h] = slices.Compact(heads[h])
			}
			add(b, HeadUnit, heads)
		}
		if f := blk.FFN; f != nil {
			add(b, FFNUnit, columns(idx[f.Out], 1))
		}
		if ly := blk.Layer; ly != nil {
			if o := idx[ly.OutProjW]; o != nil && ly.Heads > 0 {
				add(b, HeadUnit, columns(o, o.Cols/ly.Heads))
			}
			add(b, FFNUnit, columns(idx[ly.Linear2W], 1))
		}
	}
}
