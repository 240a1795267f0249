package draw

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"

	"github.com/tcforge/tcforge/sdk/layered"
)

// Options control an SVG drawing. The zero value is usable.
type Options struct {
	// Title is printed above the drawing.
	Title string
	// Width is the width in pixels of the area the widest level spans
	// (default 1100).
	Width int
	// RowHeight is the height in pixels of one level (default 44).
	RowHeight int
	// MaxEdges is the most edges drawn; a circuit with more is drawn
	// without edges (default 60000).
	MaxEdges int
}

// MaxGates is the size above which a drawing stops being readable; the
// command line refuses to draw larger circuits unless told to.
const MaxGates = 5000

// palette is Okabe–Ito's colour-blind-safe set, then a few more.
var palette = []string{
	"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9",
	"#882255", "#117733", "#332288", "#AA4499", "#999933", "#44AA99",
}

const inputColor = "#6b6b6b"

// Key is one entry of a drawing's colour key.
type Key struct {
	Step  string // as returned by Step
	Color string // #rrggbb
}

// Colors assigns a colour to every step of c's tags, in order of first
// appearance from the inputs up; counters of a XOR ("theta counters") get
// a lighter shade of their XOR's colour.
func Colors(c *layered.Circuit) []Key {
	var keys []Key
	seen := map[string]bool{}
	base := map[string]string{}
	next := 0 // palette entries used
	add := func(step string) {
		if seen[step] {
			return
		}
		seen[step] = true
		b, counters := baseStep(step)
		col, ok := base[b]
		if !ok {
			if b == "input" {
				col = inputColor
			} else {
				col = palette[next%len(palette)]
				next++
			}
			base[b] = col
		}
		if counters {
			col = lighten(col, 0.5)
		}
		keys = append(keys, Key{Step: step, Color: col})
	}
	add("input")
	for g := range c.Kind {
		add(Step(c.Tags[c.Tag[g]]))
	}
	return keys
}

// lighten mixes #rrggbb with white.
func lighten(col string, f float64) string {
	v, err := strconv.ParseUint(strings.TrimPrefix(col, "#"), 16, 32)
	if err != nil {
		return col
	}
	mix := func(c uint64) uint64 { return c + uint64(f*float64(255-c)+0.5) }
	r, g, b := mix(v>>16&0xff), mix(v>>8&0xff), mix(v&0xff)
	return fmt.Sprintf("#%02x%02x%02x", r, g, b)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

// SVG draws c as a standalone SVG document: one row per level, inputs at
// the top, the outputs at the bottom; each gate a small box coloured by the
// step of its provenance tag (copies faded), its edges drawn from the
// previous row. Rows are centred and share one gate spacing, so the
// drawing's outline is the circuit's width profile. Each row is labelled
// with its level, width and, on hover, its provenance summary. A circuit
// with forms is drawn flattened (its edges go from gate to gate).
func SVG(w io.Writer, c *layered.Circuit, opt Options) error {
	c = c.Flatten()
	if opt.Width <= 0 {
		opt.Width = 1100
	}
	if opt.RowHeight <= 0 {
		opt.RowHeight = 44
	}
	if opt.MaxEdges <= 0 {
		opt.MaxEdges = 60000
	}
	levels := Levels(c)
	keys := Colors(c)
	color := map[string]string{}
	for _, k := range keys {
		color[k.Step] = k.Color
	}
	maxW := 1
	for _, l := range levels {
		maxW = max(maxW, l.Width)
	}
	const (
		left    = 150.0 // level labels
		legendW = 230.0
		top     = 56.0
	)
	rowH := float64(opt.RowHeight)
	area := float64(opt.Width)
	s := area / float64(maxW) // spacing of one gate
	boxW := max(s*0.8, 0.6)
	boxH := rowH * 0.42
	legendH := 24 + 18*float64(len(keys)+1)
	height := max(top+rowH*float64(len(levels))+30, top+legendH+20)
	width := left + area + 20 + legendW

	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	p(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="DejaVu Sans, Liberation Sans, Arial, sans-serif" font-size="12">`+"\n",
		num(width), num(height), num(width), num(height))
	p(`<rect width="100%%" height="100%%" fill="#ffffff"/>` + "\n")
	st := c.Stats()
	title := opt.Title
	if title == "" {
		title = "layered threshold circuit"
	}
	p(`<text x="12" y="22" font-size="16" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	p(`<text x="12" y="42" fill="#444">depth %d · width %d · %d gates (%d copies) · %d edges · max fan-in %d · max |weight| %d</text>`+"\n",
		st.Depth, st.Width, st.Gates, st.Copies, st.Edges, st.MaxFanIn, st.MaxWeight)

	// x of gate i of a level of the given width; y of a level's boxes.
	x0 := func(width int) float64 { return left + (area-float64(width)*s)/2 }
	cx := func(width, i int) float64 { return x0(width) + (float64(i)+0.5)*s }
	y := func(L int) float64 { return top + rowH*float64(L) + (rowH-boxH)/2 }

	// Edges, under the gates: one path per level and colour.
	if st.Edges <= opt.MaxEdges {
		p(`<g fill="none" stroke-width="0.5" stroke-opacity="0.3">` + "\n")
		for L := 1; L <= c.Depth(); L++ {
			paths := map[string]*strings.Builder{}
			var order []string
			prevW, curW := c.LevelWidth(L-1), c.LevelWidth(L)
			for g := int(c.LevelStart[L-1]); g < int(c.LevelStart[L]); g++ {
				col := color[Step(c.Tags[c.Tag[g]])]
				sb, ok := paths[col]
				if !ok {
					sb = &strings.Builder{}
					paths[col] = sb
					order = append(order, col)
				}
				xg := cx(curW, g-int(c.LevelStart[L-1]))
				src, _ := c.Row(g)
				for _, sidx := range src {
					fmt.Fprintf(sb, "M%s %sL%s %s", num(cx(prevW, int(sidx))), num(y(L-1)+boxH), num(xg), num(y(L)))
				}
			}
			for _, col := range order {
				if paths[col].Len() > 0 {
					p(`<path stroke="%s" d="%s"/>`+"\n", col, paths[col].String())
				}
			}
		}
		p("</g>\n")
	}

	// Gates: one path per level, colour and kind.
	for _, lv := range levels {
		L := lv.Level
		p(`<g><title>%s</title>`+"\n", html.EscapeString(fmt.Sprintf("level %d: %s — %s", L, lv.Kinds(), lv.Provenance(0))))
		p(`<text x="12" y="%s" dominant-baseline="middle">level %d</text>`, num(y(L)+boxH/2), L)
		p(`<text x="%s" y="%s" dominant-baseline="middle" text-anchor="end" fill="#444">%d</text>`+"\n", num(left-12), num(y(L)+boxH/2), lv.Width)
		type key struct {
			col  string
			copy bool
		}
		paths := map[key]*strings.Builder{}
		var order []key
		rect := func(k key, i int) {
			sb, ok := paths[k]
			if !ok {
				sb = &strings.Builder{}
				paths[k] = sb
				order = append(order, k)
			}
			fmt.Fprintf(sb, "M%s %sh%sv%sh-%sz", num(x0(lv.Width)+float64(i)*s+(s-boxW)/2), num(y(L)), num(boxW), num(boxH), num(boxW))
		}
		if L == 0 {
			for i := 0; i < lv.Width; i++ {
				rect(key{col: inputColor}, i)
			}
		} else {
			for g := int(c.LevelStart[L-1]); g < int(c.LevelStart[L]); g++ {
				rect(key{col: color[Step(c.Tags[c.Tag[g]])], copy: c.Kind[g] == layered.KindCopy}, g-int(c.LevelStart[L-1]))
			}
		}
		for _, k := range order {
			op := "1"
			if k.copy {
				op = "0.35"
			}
			p(`<path fill="%s" fill-opacity="%s" d="%s"/>`+"\n", k.col, op, paths[k].String())
		}
		p("</g>\n")
	}

	// Colour key.
	lx := left + area + 20
	p(`<g transform="translate(%s %s)">`+"\n", num(lx), num(top))
	p(`<text x="0" y="0" font-weight="bold">provenance</text>` + "\n")
	for i, k := range keys {
		yy := 18 * float64(i+1)
		p(`<rect x="0" y="%s" width="14" height="11" fill="%s"/><text x="20" y="%s" dominant-baseline="middle">%s</text>`+"\n",
			num(yy-5), k.Color, num(yy+0.5), html.EscapeString(k.Step))
	}
	yy := 18 * float64(len(keys)+1)
	p(`<rect x="0" y="%s" width="14" height="11" fill="#0072B2" fill-opacity="0.35"/><text x="20" y="%s" dominant-baseline="middle">faded: copy gate</text>`+"\n",
		num(yy-5), num(yy+0.5))
	if st.Edges > opt.MaxEdges {
		p(`<text x="0" y="%s" fill="#a00">%d edges: not drawn</text>`+"\n", num(yy+20), st.Edges)
	}
	p("</g>\n</svg>\n")
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("draw: writing SVG: %w", err)
	}
	return nil
}
