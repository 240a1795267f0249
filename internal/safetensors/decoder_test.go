package safetensors_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/tcforge/tcforge/internal/forward"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/internal/tokencheck"
	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/decoder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestDecoderRoundTrip exports the decoder of an 8-bit adder (two steps
// a step, so two stock layers of different FFN widths), dense and CSR,
// checks what the config says of it (the decoder section, each layer's
// dim_feedforward, no encoder embedding or readout, the test vectors'
// tokens) and imports it back: the same decoder, tensors and layers, and
// the same tokens from the host's greedy pass.
func TestDecoderRoundTrip(t *testing.T) {
	ctx := context.Background()
	c := sdktest.Build(t, adder.Plugin, map[string]any{"n": int64(8)})
	l, err := fusion.Compile(ctx, c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := decoder.Map(ctx, l, decoder.Config{LevelsPerStep: 2})
	if err != nil {
		t.Fatal(err)
	}
	in := bitvec.Random(rand.New(rand.NewPCG(35, 1)), 4, l.NumInputs)
	want, err := bitvec.EvalSliced(in, l.NumInputs, l.Evaluator())
	if err != nil {
		t.Fatal(err)
	}
	d := &safetensors.Description{Inputs: in, Outputs: want, NumIn: l.NumInputs, NumOut: l.NumOutputs()}
	for _, x := range in {
		tok, err := tokencheck.Expected(m.Decoder, l, x)
		if err != nil {
			t.Fatal(err)
		}
		d.Prompts, d.Tokens = append(d.Prompts, tokencheck.Prompt(m.Decoder, x)), append(d.Tokens, tok)
	}
	ffn := map[int]bool{}
	for _, b := range m.Blocks {
		ffn[m.Tensor(b.Layer.Linear1W).Rows] = true
	}
	if len(m.Blocks) < 2 || len(ffn) < 2 {
		t.Fatalf("%d layers with FFN widths %v: the test wants layers of different widths", len(m.Blocks), ffn)
	}
	for _, dense := range []int64{1 << 30, 0} {
		dir := t.TempDir()
		info, err := safetensors.ExportDescribed(m, dir, "adder", dense, d)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(info.Config)
		if err != nil {
			t.Fatal(err)
		}
		var cfg map[string]json.RawMessage
		if err := json.Unmarshal(raw, &cfg); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"embedding", "readout", "stock"} {
			if _, ok := cfg[k]; ok && (k != "stock" || len(ffn) > 1) {
				t.Errorf("%s: a decoder's config has %q", info.Layout, k)
			}
		}
		var c safetensors.Config
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		if c.Decoder == nil || c.Decoder.Positions != m.Decoder.Positions || c.Decoder.Working != m.Decoder.Working || len(c.Decoder.Step) != m.Decoder.Generated() {
			t.Fatalf("%s: config decoder %+v", info.Layout, c.Decoder)
		}
		for i, b := range c.Blocks {
			if rows := m.Tensor(m.Blocks[i].Layer.Linear1W).Rows; b.Layer == nil || b.Layer.FFN != rows {
				t.Errorf("%s: block %d: dim_feedforward %v, linear1 has %d rows", info.Layout, i, b.Layer, rows)
			}
		}
		if len(c.TestVectors) != len(in) || !slices.Equal(c.TestVectors[0].Tokens, d.Tokens[0]) || !slices.Equal(c.TestVectors[0].Prompt, d.Prompts[0]) {
			t.Errorf("%s: test vectors %+v", info.Layout, c.TestVectors)
		}
		back, err := safetensors.Import(info.Config)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Decoder, m.Decoder) {
			t.Errorf("%s: imported decoder differs:\n%+v\nwant\n%+v", info.Layout, back.Decoder, m.Decoder)
		}
		sameTensors(t, info.Layout, back, m)
		prompts := d.Prompts
		g0, err := forward.Generate(ctx, m, prompts, forward.GenerateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		g1, err := forward.Generate(ctx, back, prompts, forward.GenerateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for s := range prompts {
			if !slices.Equal(g1.Tokens[s], d.Tokens[s]) || !slices.Equal(g0.Tokens[s], d.Tokens[s]) {
				t.Errorf("%s: sample %d: generated %v (imported) and %v, want %v", info.Layout, s, g1.Tokens[s], g0.Tokens[s], d.Tokens[s])
			}
		}
	}
}

// sameTensors fails unless got has want's tensors, entry for entry.
func sameTensors(t *testing.T, what string, got, want *model.Model) {
	t.Helper()
	idx := got.TensorIndex()
	if len(got.Tensors) != len(want.Tensors) {
		t.Fatalf("%s: %d tensors, want %d", what, len(got.Tensors), len(want.Tensors))
	}
	for i := range want.Tensors {
		w := &want.Tensors[i]
		g := idx[w.Name]
		if g == nil || g.Rows != w.Rows || g.Cols != w.Cols {
			t.Fatalf("%s: tensor %s: got %v", what, w.Name, g)
		}
		for r := range w.Rows {
			wc, wv := w.Row(r)
			gc, gv := g.Row(r)
			// Dense import drops stored zeros.
			var wc2 []int32
			var wv2 []float32
			for k := range wc {
				if wv[k] != 0 {
					wc2, wv2 = append(wc2, wc[k]), append(wv2, wv[k])
				}
			}
			if !slices.Equal(gc, wc2) || !slices.Equal(gv, wv2) {
				t.Fatalf("%s: tensor %s row %d differs", what, w.Name, r)
			}
		}
	}
}
