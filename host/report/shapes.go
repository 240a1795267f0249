package report

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tcforge/tcforge/host/run"
)

// Reference is the shape of a well-known transformer, a reference row of
// the shape comparison. Its parameter count is computed from the shape.
type Reference struct {
	Name                       string
	Layers, DModel, Heads, FFN int
	Vocab, Context             int
	// Llama: bias-free projections, a gated FFN (three matrices), RMSNorm,
	// rotary positions and an untied output matrix; otherwise GPT-2:
	// biased projections, a two-matrix FFN, LayerNorm, learned positions
	// and a tied output matrix.
	Llama bool
}

// References returns the reference rows: GPT-2 small, GPT-2 XL,
// Llama-2-7B and Llama-2-13B.
func References() []Reference {
	return []Reference{
		{Name: "GPT-2 small", Layers: 12, DModel: 768, Heads: 12, FFN: 3072, Vocab: 50257, Context: 1024},
		{Name: "GPT-2 XL", Layers: 48, DModel: 1600, Heads: 25, FFN: 6400, Vocab: 50257, Context: 1024},
		{Name: "Llama-2-7B", Layers: 32, DModel: 4096, Heads: 32, FFN: 11008, Vocab: 32000, Context: 4096, Llama: true},
		{Name: "Llama-2-13B", Layers: 40, DModel: 5120, Heads: 40, FFN: 13824, Vocab: 32000, Context: 4096, Llama: true},
	}
}

// Params returns the model's parameter count from its shape (GPT-2 small
// 124,439,808; GPT-2 XL 1,557,611,200; Llama-2-7B 6,738,415,616;
// Llama-2-13B 13,015,864,320).
func (r Reference) Params() int64 {
	d, f, n := int64(r.DModel), int64(r.FFN), int64(r.Layers)
	if r.Llama {
		layer := 4*d*d + 3*d*f + 2*d
		return n*layer + 2*int64(r.Vocab)*d + d
	}
	layer := 4*d*d + 4*d + 2*d*f + f + d + 4*d
	return n*layer + int64(r.Vocab+r.Context)*d + 2*d
}

// ShapeRow is one row of the shape comparison: a model the run built and
// verified, or a reference shape.
type ShapeRow struct {
	Model                              string
	Tokens, DModel, Blocks, Heads, FFN string
	// Generated is the number of tokens a decoder writes ("0": a
	// single-pass model; "-": a reference shape).
	Generated                            string
	ParamsDense, ParamsNonzero, Verified string
	Reference                            bool
}

// Shapes returns the shape comparison of a pipeline's models — one row a
// model (point, layerer, architecture) with its tokens, d_model, blocks,
// heads, FFN width and dense and nonzero parameters — followed by the
// reference shapes; nil when the pipeline has no models.
func Shapes(res *run.Result) []ShapeRow {
	var out []ShapeRow
	for _, row := range res.Rows {
		for _, m := range row.Models {
			if m.Err != nil || m.Stats.Blocks == 0 {
				continue
			}
			name := m.Arch
			if name == "" {
				name = m.Mapper
			}
			name = row.Layerer + ", " + name
			if pt := row.Point.String(); pt != "" {
				name = pt + ", " + name
			}
			s := m.Stats
			out = append(out, ShapeRow{Model: name, Tokens: itoa(s.Tokens), Generated: itoa(s.Generated), DModel: itoa(s.DModel), Blocks: itoa(s.Blocks),
				Heads: itoa(s.Heads), FFN: itoa(s.FFNHidden), ParamsDense: fmt.Sprint(s.ParamsDense),
				ParamsNonzero: fmt.Sprint(s.ParamsNonzero), Verified: fmt.Sprint(m.Verified)})
		}
	}
	if len(out) == 0 {
		return nil
	}
	return append(out, referenceRows()...)
}

// referenceRows returns the reference shapes as rows.
func referenceRows() []ShapeRow {
	var out []ShapeRow
	for _, r := range References() {
		out = append(out, ShapeRow{Model: r.Name + " (reference shape)", Tokens: itoa(r.Context) + " ctx", Generated: "-", DModel: itoa(r.DModel),
			Blocks: itoa(r.Layers), Heads: itoa(r.Heads), FFN: itoa(r.FFN), ParamsDense: fmt.Sprint(r.Params()),
			ParamsNonzero: "-", Verified: "-", Reference: true})
	}
	return out
}

// AllShapes returns the verified models of every pipeline of a run, each
// named after its pipeline, followed by the reference shapes: the frontier
// of the run's models in one comparison. It is nil unless two or more
// pipelines have verified models.
func AllShapes(results []*run.Result) []ShapeRow {
	var out []ShapeRow
	pipelines := 0
	for _, res := range results {
		n := 0
		for _, r := range Shapes(res) {
			if r.Reference || r.Verified != "true" {
				continue
			}
			r.Model = res.Pipeline.Name + ": " + r.Model
			out = append(out, r)
			n++
		}
		if n > 0 {
			pipelines++
		}
	}
	if pipelines < 2 {
		return nil
	}
	return append(out, referenceRows()...)
}

// shapeHead is the shape comparison's header.
var shapeHead = [...]string{"model", "tokens", "generated", "d_model", "blocks", "heads", "ffn", "params dense", "params nz", "verified"}

// cells returns the row's cells in shapeHead's order.
func (r ShapeRow) cells() []string {
	return []string{r.Model, r.Tokens, r.Generated, r.DModel, r.Blocks, r.Heads, r.FFN, r.ParamsDense, r.ParamsNonzero, r.Verified}
}

// TokensSVG plots the layers-against-tokens trade-off: blocks (y) against
// the tokens a model generates before its digest is out (x, logarithmic;
// a single-pass model generates none and sits at 1, one pass), one dot a
// verified model, numbered as in ShapesSVG. It returns "" unless some row
// is a decoder (tokens as time).
func TokensSVG(rows []ShapeRow) template.HTML {
	type pt struct {
		x, y  float64
		label string
		title string
		dec   bool
	}
	var pts []pt
	n, decoders := 0, 0
	for _, r := range rows {
		if r.Reference || r.Verified != "true" {
			continue
		}
		n++
		g, err1 := strconv.ParseFloat(r.Generated, 64)
		b, err2 := strconv.ParseFloat(r.Blocks, 64)
		if err1 != nil || err2 != nil || b <= 0 {
			continue
		}
		if g > 0 {
			decoders++
		}
		pts = append(pts, pt{x: max(1, g), y: b, label: strconv.Itoa(n), title: r.Model, dec: g > 0})
	}
	if decoders == 0 {
		return ""
	}
	const pw, ph, ml, mb, mt = 520.0, 260.0, 56.0, 40.0, 22.0
	xhi, yhi := 1.0, 1.0
	for _, p := range pts {
		xhi, yhi = max(xhi, math.Log10(p.x)), max(yhi, p.y)
	}
	xhi = math.Ceil(xhi + 0.01)
	yhi = math.Ceil(yhi*1.1/5) * 5
	X := func(x float64) float64 { return ml + math.Log10(x)/xhi*pw }
	Y := func(y float64) float64 { return mt + ph - y/yhi*ph }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="frontier" width="%g" height="%g" font-size="10" font-family="sans-serif">`, ml+pw+20, ph+mb+mt)
	fmt.Fprintf(&b, `<text x="%g" y="14" text-anchor="middle" font-weight="bold">layers against generated tokens (tokens as time)</text>`, ml+pw/2)
	fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#888"/>`, ml, mt, pw, ph)
	for e := 0.0; e <= xhi; e++ {
		x := X(math.Pow(10, e))
		label := fmt.Sprintf("1e%g", e)
		if e == 0 {
			label = "1 (one pass)"
		}
		fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#ddd"/><text x="%g" y="%g" text-anchor="middle">%s</text>`, x, mt, x, mt+ph, x, mt+ph+14, label)
	}
	for y := 0.0; y <= yhi; y += yhi / 5 {
		fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="end">%g</text>`, ml-4, Y(y)+3, y)
	}
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">generated tokens</text>`, ml+pw/2, mt+ph+30)
	for _, p := range pts {
		fill := "#1f77b4"
		if !p.dec {
			fill = "#ff7f0e"
		}
		fmt.Fprintf(&b, `<g><title>%s: %g blocks, %g generated tokens</title><circle cx="%.1f" cy="%.1f" r="4" fill="%s"/><text x="%.1f" y="%.1f">%s</text></g>`,
			html.EscapeString(p.title), p.y, p.x, X(p.x), Y(p.y), fill, X(p.x)+6, Y(p.y)-4, html.EscapeString(p.label))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// writeShapes prints the shape comparison under a pipeline's tables.
func writeShapes(w io.Writer, res *run.Result) error {
	rows := Shapes(res)
	if rows == nil {
		return nil
	}
	return writeShapeRows(w, "\n  shapes beside well-known transformers (reference rows: published shapes, parameters computed from them)\n", rows)
}

// writeShapeRows prints title, then rows as a right-aligned table under
// shapeHead.
func writeShapeRows(w io.Writer, title string, rows []ShapeRow) error {
	fmt.Fprint(w, title)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(shapeHead[:], "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r.cells(), "\t")+"\t")
	}
	return tw.Flush()
}

// WriteAllShapes prints the run's frontier after its last pipeline: the
// verified models of every pipeline (AllShapes) beside the reference
// shapes in one table. It prints nothing unless two or more pipelines
// have verified models.
func WriteAllShapes(w io.Writer, results []*run.Result) error {
	rows := AllShapes(results)
	if rows == nil {
		return nil
	}
	return writeShapeRows(w, "\nfrontier: every pipeline's verified models beside well-known transformers (reference rows: published shapes, parameters computed from them)\n", rows)
}

// ShapesSVG plots the shape comparison: blocks (x) against FFN width,
// d_model and dense parameters (y, logarithmic), one panel each; the
// run's verified models as filled dots, the reference shapes as rings,
// each labelled (the full row name as the point's title). Rows that
// failed verification are left out. It returns "" without rows to plot.
func ShapesSVG(rows []ShapeRow) template.HTML {
	type pt struct {
		x, y  [3]float64
		label string
		title string
		ref   bool
	}
	var pts []pt
	n := 0
	for _, r := range rows {
		if !r.Reference && r.Verified != "true" {
			continue
		}
		var p pt
		var err error
		vals := [4]string{r.Blocks, r.FFN, r.DModel, r.ParamsDense}
		var f [4]float64
		for i, v := range vals {
			if f[i], err = strconv.ParseFloat(v, 64); err != nil || f[i] <= 0 {
				break
			}
		}
		if err != nil || f[0] <= 0 || f[1] <= 0 || f[2] <= 0 || f[3] <= 0 {
			continue
		}
		p.x = [3]float64{f[0], f[0], f[0]}
		p.y = [3]float64{f[1], f[2], f[3]}
		p.ref, p.title = r.Reference, r.Model
		if r.Reference {
			p.label = strings.TrimSuffix(r.Model, " (reference shape)")
		} else {
			n++
			p.label = strconv.Itoa(n)
		}
		pts = append(pts, p)
	}
	if n == 0 {
		return ""
	}
	const pw, ph, ml, mb, mt = 300.0, 220.0, 56.0, 36.0, 22.0
	names := [3]string{"FFN width", "d_model", "params dense"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="frontier" width="%g" height="%g" font-size="10" font-family="sans-serif">`, 3*(pw+ml)+10, ph+mb+mt)
	for k := range 3 {
		xmax, ylo, yhi := 1.0, math.Inf(1), math.Inf(-1)
		for _, p := range pts {
			xmax = max(xmax, p.x[k])
			ylo, yhi = min(ylo, math.Log10(p.y[k])), max(yhi, math.Log10(p.y[k]))
		}
		ylo, yhi = math.Floor(ylo), math.Ceil(yhi)
		if yhi == ylo {
			yhi++
		}
		xmax = math.Ceil(xmax*1.1/50) * 50
		ox := float64(k)*(pw+ml) + ml
		X := func(x float64) float64 { return ox + x/xmax*pw }
		Y := func(y float64) float64 { return mt + ph - (math.Log10(y)-ylo)/(yhi-ylo)*ph }
		fmt.Fprintf(&b, `<text x="%g" y="14" text-anchor="middle" font-weight="bold">%s against blocks</text>`, ox+pw/2, names[k])
		fmt.Fprintf(&b, `<rect x="%g" y="%g" width="%g" height="%g" fill="none" stroke="#888"/>`, ox, mt, pw, ph)
		for e := ylo; e <= yhi; e++ {
			y := mt + ph - (e-ylo)/(yhi-ylo)*ph
			fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="#ddd"/><text x="%g" y="%g" text-anchor="end">1e%g</text>`, ox, y, ox+pw, y, ox-4, y+3, e)
		}
		for x := 0.0; x <= xmax; x += xmax / 5 {
			fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">%g</text>`, X(x), mt+ph+14, x)
		}
		fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">blocks</text>`, ox+pw/2, mt+ph+30)
		for _, p := range pts {
			fill, stroke := "#1f77b4", "#1f77b4"
			if p.ref {
				fill, stroke = "none", "#d62728"
			}
			fmt.Fprintf(&b, `<g><title>%s: %g blocks, %s %.0f</title><circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s" stroke-width="1.5"/><text x="%.1f" y="%.1f">%s</text></g>`,
				html.EscapeString(p.title), p.x[k], names[k], p.y[k], X(p.x[k]), Y(p.y[k]), fill, stroke, X(p.x[k])+6, Y(p.y[k])-4, html.EscapeString(p.label))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
