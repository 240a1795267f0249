package safetensors

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/tcforge/tcforge/internal/safefile"
	"github.com/tcforge/tcforge/sdk/model"
)

// Export writes m as dir/name.safetensors and dir/name.json. The tensors
// are dense float32 if the whole model's dense form takes at most
// denseLimit bytes, CSR otherwise (denseLimit ≤ 0: always CSR); Info.Note
// says why when a dense export was refused.
func Export(m *model.Model, dir, name string, denseLimit int64) (Info, error) {
	return ExportContext(context.Background(), m, dir, name, denseLimit, nil)
}

// ExportDescribed is Export with what the model computes and the formats
// it was checked in added to the config (d nil: none).
func ExportDescribed(m *model.Model, dir, name string, denseLimit int64, d *Description) (Info, error) {
	return ExportContext(context.Background(), m, dir, name, denseLimit, d)
}

// ExportContext is ExportDescribed that stops, leaving the files as they
// were, when ctx ends (it checks at every MiB it writes).
//
// The files are written atomically and whole, confined to dir
// (safefile.Dir): each into a temporary file renamed over its name, so a
// symbolic link planted at a name is replaced, never written through, and
// one in place of dir's own subdirectories is not followed. The config,
// which names the weights, goes first (removed) and last (written): a
// config present always names weights of the same export, whatever
// stopped a write between the two.
func ExportContext(ctx context.Context, m *model.Model, dir, name string, denseLimit int64, d *Description) (Info, error) {
	info := Info{Layout: LayoutCSR, DenseBytes: DenseBytes(m)}
	if denseLimit > 0 {
		if info.DenseBytes <= denseLimit {
			info.Layout = LayoutDense
		} else {
			info.Note = fmt.Sprintf("dense float32 form needs %s, over the %s limit: wrote CSR tensors", humanBytes(info.DenseBytes), humanBytes(denseLimit))
		}
	}
	root, err := safefile.OpenDir(dir, true)
	if err != nil {
		return info, fmt.Errorf("export: %w", err)
	}
	defer root.Close()
	info.Weights = filepath.Join(dir, name+".safetensors")
	info.Config = filepath.Join(dir, name+".json")
	if _, err := root.Remove(name + ".json"); err != nil {
		return info, fmt.Errorf("export: %w", err)
	}
	sw := &stWriter{meta: map[string]string{"format": Format, "architecture": m.Arch, "layout": info.Layout, "config": name + ".json"}}
	for i := range m.Tensors {
		t := &m.Tensors[i]
		if info.Layout == LayoutDense {
			sw.add(t.Name, "F32", []int64{int64(t.Rows), int64(t.Cols)}, writeDense(t))
			continue
		}
		sw.add(t.Name+".crow_indices", "I32", []int64{int64(t.Rows) + 1}, writeWords(t.RowPtr, i32Word))
		sw.add(t.Name+".col_indices", "I32", []int64{int64(len(t.Col))}, writeWords(t.Col, i32Word))
		sw.add(t.Name+".values", "F32", []int64{int64(len(t.Val))}, writeWords(t.Val, math.Float32bits))
	}
	f, err := root.Create(name + ".safetensors")
	if err != nil {
		return info, fmt.Errorf("export: %w", err)
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(ctxWriter{ctx, f}, 1<<20)
	n, err := sw.writeTo(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		return info, fmt.Errorf("export %s: %w", info.Weights, err)
	}
	info.Bytes = n
	c := NewConfig(m, info.Layout, name+".safetensors")
	c.describe(d)
	cfg, err := json.MarshalIndent(c, "", " ")
	if err != nil {
		return info, fmt.Errorf("export: encoding the config: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return info, fmt.Errorf("export %s: %w", info.Config, err)
	}
	if err := root.WriteFile(name+".json", append(cfg, '\n')); err != nil {
		return info, fmt.Errorf("export: %w", err)
	}
	return info, nil
}

// ctxWriter is a writer that fails once ctx has ended.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

// Write implements io.Writer.
func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, u := float64(n), 0
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	for f /= unit; f >= unit && u < len(units)-1; f /= unit {
		u++
	}
	return fmt.Sprintf("%.1f %s", f, units[u])
}

// Import reads a model written by Export from its JSON config path.
func Import(configPath string) (*model.Model, error) {
	cb, err := os.ReadFile(configPath)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	var c Config
	if err := json.Unmarshal(cb, &c); err != nil {
		return nil, fmt.Errorf("import %s: %w", configPath, err)
	}
	if c.Format != Format {
		return nil, fmt.Errorf("import %s: format %q, want %q", configPath, c.Format, Format)
	}
	wpath := c.Weights
	if !filepath.IsAbs(wpath) {
		wpath = filepath.Join(filepath.Dir(configPath), wpath)
	}
	data, err := os.ReadFile(wpath)
	if err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	ts, meta, err := Read(data)
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", wpath, err)
	}
	if meta["format"] != Format {
		return nil, fmt.Errorf("import %s: metadata format %q, want %q", wpath, meta["format"], Format)
	}
	byName := map[string]*Tensor{}
	for i := range ts {
		byName[ts[i].Name] = &ts[i]
	}
	m := &model.Model{Arch: c.Architecture, Attrs: c.Attrs, Tokens: c.Tokens, DModel: c.DModel}
	if e := c.Embedding; e != nil {
		m.Embed = model.Embedding{Base: e.Base, Input: e.Input, InputToken: e.InputToken}
	}
	if r := c.Readout; r != nil {
		m.Readout = model.Readout{Token: r.Token, Dim: r.Dim, Threshold: r.Threshold}
	}
	if c.Decoder != nil {
		m.Decoder = decoderIn(c.Decoder)
	}
	for _, b := range c.Blocks {
		var mb model.Block
		if a := b.Attention; a != nil {
			ma := &model.Attention{Mode: a.Mode, Beta: a.Beta, Residual: a.Residual, Norm: normIn(a.Norm)}
			for _, h := range a.Heads {
				ma.Heads = append(ma.Heads, model.Head(h))
			}
			mb.Attn = ma
		}
		if f := b.FFN; f != nil {
			mb.FFN = &model.FFN{Gate: f.Gate, Value: f.Value, Out: f.Out, Residual: f.Residual, Norm: normIn(f.Norm)}
		}
		if l := b.Layer; l != nil {
			ml := &model.EncoderLayer{Heads: l.Heads, Eps: l.Eps}
			names := make([]string, len(model.StockNames))
			for k, sn := range model.StockNames {
				names[k] = l.Tensors[sn]
			}
			ml.SetNames(names)
			mb.Layer = ml
		}
		m.Blocks = append(m.Blocks, mb)
	}
	names := make([]string, 0, len(c.Tensors))
	for n := range c.Tensors {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		sh := c.Tensors[name]
		t, err := importTensor(name, sh, c.Layout, byName)
		if err != nil {
			return nil, fmt.Errorf("import %s: %w", wpath, err)
		}
		m.Tensors = append(m.Tensors, t)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("import %s: %w", configPath, err)
	}
	return m, nil
}

func importTensor(name string, sh Shape, layout string, byName map[string]*Tensor) (model.Tensor, error) {
	get := func(n, dtype string, count int64) (*Tensor, error) {
		st, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("no tensor %q", n)
		}
		if st.DType != dtype {
			return nil, fmt.Errorf("tensor %q is %s, want %s", n, st.DType, dtype)
		}
		total := int64(1)
		for _, d := range st.Shape {
			total *= d
		}
		if total != count {
			return nil, fmt.Errorf("tensor %q has %d entries, want %d", n, total, count)
		}
		return st, nil
	}
	t := model.Tensor{Name: name, Rows: sh.Rows, Cols: sh.Cols}
	switch layout {
	case LayoutCSR:
		crow, err := get(name+".crow_indices", "I32", int64(sh.Rows)+1)
		if err != nil {
			return t, err
		}
		col, err := get(name+".col_indices", "I32", int64(sh.NNZ))
		if err != nil {
			return t, err
		}
		val, err := get(name+".values", "F32", int64(sh.NNZ))
		if err != nil {
			return t, err
		}
		t.RowPtr = readI32s(crow.Data)
		t.Col = readI32s(col.Data)
		t.Val = readF32s(val.Data)
	case LayoutDense:
		d, err := get(name, "F32", int64(sh.Rows)*int64(sh.Cols))
		if err != nil {
			return t, err
		}
		t.RowPtr = make([]int32, sh.Rows+1)
		for r := 0; r < sh.Rows; r++ {
			for c := 0; c < sh.Cols; c++ {
				v := math.Float32frombits(binary.LittleEndian.Uint32(d.Data[4*(r*sh.Cols+c):]))
				if v != 0 {
					t.Col = append(t.Col, int32(c))
					t.Val = append(t.Val, v)
				}
			}
			t.RowPtr[r+1] = int32(len(t.Col))
		}
	default:
		return t, fmt.Errorf("unknown layout %q", layout)
	}
	return t, nil
}

func readI32s(b []byte) []int32 {
	out := make([]int32, len(b)/4)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func readF32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
