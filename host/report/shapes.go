package report

import (
	"fmt"
	"io"
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

// References returns the reference rows: GPT-2 small, GPT-2 XL and
// Llama-2-7B.
func References() []Reference {
	return []Reference{
		{Name: "GPT-2 small", Layers: 12, DModel: 768, Heads: 12, FFN: 3072, Vocab: 50257, Context: 1024},
		{Name: "GPT-2 XL", Layers: 48, DModel: 1600, Heads: 25, FFN: 6400, Vocab: 50257, Context: 1024},
		{Name: "Llama-2-7B", Layers: 32, DModel: 4096, Heads: 32, FFN: 11008, Vocab: 32000, Context: 4096, Llama: true},
	}
}

// Params returns the model's parameter count from its shape (GPT-2 small
// 124,439,808; GPT-2 XL 1,557,611,200; Llama-2-7B 6,738,415,616).
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
	Model                                string
	Tokens, DModel, Blocks, Heads, FFN   string
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
			out = append(out, ShapeRow{Model: name, Tokens: itoa(s.Tokens), DModel: itoa(s.DModel), Blocks: itoa(s.Blocks),
				Heads: itoa(s.Heads), FFN: itoa(s.FFNHidden), ParamsDense: fmt.Sprint(s.ParamsDense),
				ParamsNonzero: fmt.Sprint(s.ParamsNonzero), Verified: fmt.Sprint(m.Verified)})
		}
	}
	if len(out) == 0 {
		return nil
	}
	for _, r := range References() {
		out = append(out, ShapeRow{Model: r.Name + " (reference shape)", Tokens: itoa(r.Context) + " ctx", DModel: itoa(r.DModel),
			Blocks: itoa(r.Layers), Heads: itoa(r.Heads), FFN: itoa(r.FFN), ParamsDense: fmt.Sprint(r.Params()),
			ParamsNonzero: "-", Verified: "-", Reference: true})
	}
	return out
}

// shapeHead is the shape comparison's header.
var shapeHead = [...]string{"model", "tokens", "d_model", "blocks", "heads", "ffn", "params dense", "params nz", "verified"}

// cells returns the row's cells in shapeHead's order.
func (r ShapeRow) cells() []string {
	return []string{r.Model, r.Tokens, r.DModel, r.Blocks, r.Heads, r.FFN, r.ParamsDense, r.ParamsNonzero, r.Verified}
}

// writeShapes prints the shape comparison under a pipeline's tables.
func writeShapes(w io.Writer, res *run.Result) error {
	rows := Shapes(res)
	if rows == nil {
		return nil
	}
	fmt.Fprintf(w, "\n  shapes beside well-known transformers (reference rows: published shapes, parameters computed from them)\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(shapeHead[:], "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r.cells(), "\t")+"\t")
	}
	return tw.Flush()
}
