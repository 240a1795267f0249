// Package draw describes and draws layered threshold circuits: a per-level
// summary (width, gate kinds, provenance tags) for `tcforge inspect` and an
// SVG drawing with levels as rows, coloured by provenance, for the paper's
// circuit figures.
package draw

import (
	"fmt"
	"strings"

	"github.com/tcforge/tcforge/sdk/layered"
)

// Level summarises one level of a layered circuit. Level 0 is the inputs.
type Level struct {
	Level    int     `json:"level"`
	Width    int     `json:"width"`     // gates in the level, copies included (level 0: inputs)
	Gates    int     `json:"gates"`     // real gates
	Copies   int     `json:"copies"`    // copy (identity) gates
	Edges    int     `json:"edges"`     // edges into the level
	MaxFanIn int     `json:"max_fanin"` // largest fan-in in the level
	Groups   []Group `json:"groups"`    // by provenance and kind, in order of first appearance
}

// Group is the gates of one level that share a provenance tag and a kind.
type Group struct {
	Tag   string `json:"tag"`
	Copy  bool   `json:"copy"`
	Count int    `json:"count"`
}

// String formats the group as "275 round 1/theta counters" or, for
// copies, "25 copies of round 1/theta".
func (g Group) String() string {
	tag := g.Tag
	if tag == "" {
		tag = "(untagged)"
	}
	if g.Copy {
		if g.Count == 1 {
			return fmt.Sprintf("1 copy of %s", tag)
		}
		return fmt.Sprintf("%d copies of %s", g.Count, tag)
	}
	return fmt.Sprintf("%d %s", g.Count, tag)
}

// Provenance formats a level's groups, at most max of them (0: all), as
// "275 round 1/theta counters, 25 copies of input".
func (l Level) Provenance(max int) string {
	var parts []string
	for i, g := range l.Groups {
		if max > 0 && i == max {
			rest := 0
			for _, h := range l.Groups[i:] {
				rest += h.Count
			}
			parts = append(parts, fmt.Sprintf("… %d more in %d groups", rest, len(l.Groups)-i))
			break
		}
		parts = append(parts, g.String())
	}
	return strings.Join(parts, ", ")
}

// Kinds formats the level's gate kinds: "275 gates", "25 gates + 25 copies".
func (l Level) Kinds() string {
	switch {
	case l.Level == 0:
		return fmt.Sprintf("%d inputs", l.Width)
	case l.Copies == 0:
		return plural(l.Gates, "gate", "gates")
	case l.Gates == 0:
		return plural(l.Copies, "copy", "copies")
	}
	return plural(l.Gates, "gate", "gates") + " + " + plural(l.Copies, "copy", "copies")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Levels summarises every level of c, the input level first (its groups
// are the named input ranges). Edges and fan-ins are the flattened
// circuit's (a gate reading a form counts the form's gates).
func Levels(c *layered.Circuit) []Level {
	c = c.Flatten()
	out := make([]Level, 0, c.Depth()+1)
	in := Level{Level: 0, Width: c.NumInputs}
	covered := 0
	for _, r := range c.InputRanges {
		if r.Len > 0 {
			in.Groups = append(in.Groups, Group{Tag: "input " + r.Name, Count: r.Len})
			covered += r.Len
		}
	}
	if covered < c.NumInputs {
		in.Groups = append(in.Groups, Group{Tag: "input", Count: c.NumInputs - covered})
	}
	out = append(out, in)
	for L := 1; L <= c.Depth(); L++ {
		lv := Level{Level: L, Width: c.LevelWidth(L)}
		index := map[Group]int{} // key with Count 0
		for g := int(c.LevelStart[L-1]); g < int(c.LevelStart[L]); g++ {
			isCopy := c.Kind[g] == layered.KindCopy
			if isCopy {
				lv.Copies++
			} else {
				lv.Gates++
			}
			fan := int(c.RowStart[g+1] - c.RowStart[g])
			lv.Edges += fan
			if fan > lv.MaxFanIn {
				lv.MaxFanIn = fan
			}
			key := Group{Tag: c.Tags[c.Tag[g]], Copy: isCopy}
			i, ok := index[key]
			if !ok {
				i = len(lv.Groups)
				index[key] = i
				lv.Groups = append(lv.Groups, key)
			}
			lv.Groups[i].Count++
		}
		out = append(out, lv)
	}
	return out
}

// Step is the part of a provenance tag that names what a gate computes,
// without the enclosing blocks and rounds: "theta counters" for
// "block 1/round 3/theta counters". The drawing colours gates by step.
func Step(tag string) string {
	if i := strings.LastIndexByte(tag, '/'); i >= 0 {
		tag = tag[i+1:]
	}
	if tag == "" {
		return "(untagged)"
	}
	return tag
}

// baseStep is the step without a " counters" suffix: counters of a XOR
// share the hue of the XOR's output gates, lighter.
func baseStep(step string) (string, bool) {
	if s, ok := strings.CutSuffix(step, " counters"); ok {
		return s, true
	}
	return step, false
}
