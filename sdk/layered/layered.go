// Package layered holds the layered threshold circuit that layerer plugins
// produce: level 0 is the inputs; every gate of level L reads only gates of
// level L−1 (level 0: the inputs); a gate fires iff Σ wᵢxᵢ ≥ θ; the last
// level is exactly the outputs, in order.
//
// Gates are stored level by level in flat arrays with CSR rows. An edge's
// source is the index of a gate *within the previous level* (for level 1: an
// input index), so "strictly layered" holds by construction of the encoding
// and validation only checks ranges.
package layered

import (
	"fmt"

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
// previous level's width, tags and output ranges.
func (c *Circuit) Validate() error {
	g := len(c.Kind)
	if c.NumInputs < 0 {
		return fmt.Errorf("layered: negative input count")
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
		prev := int32(c.LevelWidth(L - 1))
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
					return fmt.Errorf("layered: level %d gate %d: source %d outside level %d (width %d)", L, gi-lo, s, L-1, prev)
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
	return c.checkRanges()
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
type Stats struct {
	Depth     int   `json:"depth"`
	Width     int   `json:"width"`
	Gates     int   `json:"gates"`
	Copies    int   `json:"copies"`
	Edges     int   `json:"edges"`
	MaxFanIn  int   `json:"max_fanin"`
	MaxWeight int   `json:"max_weight"`
	Widths    []int `json:"level_widths"` // Widths[L-1] = gates in level L
}

// Stats computes the canonical figures.
func (c *Circuit) Stats() Stats {
	s := Stats{Depth: c.Depth(), Gates: len(c.Kind), Edges: len(c.Src)}
	for L := 1; L <= s.Depth; L++ {
		w := c.LevelWidth(L)
		s.Widths = append(s.Widths, w)
		if w > s.Width {
			s.Width = w
		}
	}
	for g, k := range c.Kind {
		if k == KindCopy {
			s.Copies++
		}
		if f := int(c.RowStart[g+1] - c.RowStart[g]); f > s.MaxFanIn {
			s.MaxFanIn = f
		}
	}
	for _, w := range c.Weight {
		a := int(w) // before negating: −MinInt32 does not fit an int32
		if a < 0 {
			a = -a
		}
		if a > s.MaxWeight {
			s.MaxWeight = a
		}
	}
	return s
}
