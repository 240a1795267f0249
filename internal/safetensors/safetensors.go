// Package safetensors writes a model.Model as a safetensors file plus a
// JSON config (Export), reads it back (Import), and parses safetensors
// files (Read). The host exports verified models with it (tcforge run
// --export); python/tcforge_torch loads the same files into PyTorch
// (docs/export.md).
package safetensors

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
)

// A safetensors file is an 8-byte little-endian header length N, N bytes of
// JSON header {name: {"dtype", "shape", "data_offsets": [begin, end]},
// "__metadata__": {string: string}} (padded with spaces to a multiple of 8),
// then the tensors' raw little-endian data; offsets are relative to the end
// of the header.
//
// Export writes a model as DIR/NAME.safetensors plus DIR/NAME.json, the
// config naming the architecture and how the tensors compose (see
// Config). Each weight matrix W (rows × cols) is stored either
//
//	csr:   W.crow_indices  int32 [rows+1]   row r spans [crow[r], crow[r+1])
//	       W.col_indices   int32 [nnz]      strictly increasing within a row
//	       W.values        float32 [nnz]
//	dense: W               float32 [rows, cols]
//
// The csr triplet loads in PyTorch as
// torch.sparse_csr_tensor(crow, col, values, size=(rows, cols)).

// Format is the "format" metadata value of exported files.
const Format = "tcforge-model"

// Layouts of exported tensors.
const (
	LayoutCSR   = "csr"
	LayoutDense = "dense"
)

// Tensor is one tensor of a safetensors file.
type Tensor struct {
	Name  string
	DType string // "F32", "I32" or "I64"
	Shape []int64
	Data  []byte // little-endian
}

type stHeaderEntry struct {
	DType       string   `json:"dtype"`
	Shape       []int64  `json:"shape"`
	DataOffsets [2]int64 `json:"data_offsets"`
}

func dtypeSize(dt string) (int64, bool) {
	switch dt {
	case "F32", "I32":
		return 4, true
	case "I64", "F64":
		return 8, true
	case "U8", "I8", "BOOL":
		return 1, true
	case "F16", "BF16", "I16":
		return 2, true
	}
	return 0, false
}

// stWriter streams tensors into a safetensors file: declare every tensor
// (name, dtype, shape, writer of its data) then Write.
type stWriter struct {
	entries []stEntry
	meta    map[string]string
}

type stEntry struct {
	name  string
	dtype string
	shape []int64
	size  int64
	write func(w io.Writer) error
}

func (sw *stWriter) add(name, dtype string, shape []int64, write func(io.Writer) error) {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	sz, _ := dtypeSize(dtype)
	sw.entries = append(sw.entries, stEntry{name: name, dtype: dtype, shape: shape, size: n * sz, write: write})
}

func (sw *stWriter) writeTo(w io.Writer) (int64, error) {
	header := map[string]any{}
	if len(sw.meta) > 0 {
		header["__metadata__"] = sw.meta
	}
	off := int64(0)
	for _, e := range sw.entries {
		if _, dup := header[e.name]; dup {
			return 0, fmt.Errorf("safetensors: duplicate tensor %q", e.name)
		}
		header[e.name] = stHeaderEntry{DType: e.dtype, Shape: e.shape, DataOffsets: [2]int64{off, off + e.size}}
		off += e.size
	}
	hb, err := json.Marshal(header)
	if err != nil {
		return 0, fmt.Errorf("safetensors: encoding the header: %w", err)
	}
	for len(hb)%8 != 0 {
		hb = append(hb, ' ')
	}
	var lenBuf [8]byte
	binary.LittleEndian.PutUint64(lenBuf[:], uint64(len(hb)))
	if _, err := w.Write(lenBuf[:]); err != nil {
		return 0, err
	}
	if _, err := w.Write(hb); err != nil {
		return 0, err
	}
	for _, e := range sw.entries {
		cw := &countWriter{w: w}
		if err := e.write(cw); err != nil {
			return 0, fmt.Errorf("safetensors: writing %q: %w", e.name, err)
		}
		if cw.n != e.size {
			return 0, fmt.Errorf("safetensors: %q wrote %d bytes, declared %d", e.name, cw.n, e.size)
		}
	}
	return 8 + int64(len(hb)) + off, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// writeWords writes xs as little-endian 32-bit words, word(x) each.
func writeWords[T any](xs []T, word func(T) uint32) func(io.Writer) error {
	return func(w io.Writer) error {
		buf := make([]byte, 0, 1<<16)
		for _, x := range xs {
			buf = binary.LittleEndian.AppendUint32(buf, word(x))
			if len(buf) == cap(buf) {
				if _, err := w.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		_, err := w.Write(buf)
		return err
	}
}

// i32Word and math.Float32bits are the words of I32 and F32 tensors.
func i32Word(x int32) uint32 { return uint32(x) }

// writeDense writes t as a dense row-major float32 matrix.
func writeDense(t *model.Tensor) func(io.Writer) error {
	return func(w io.Writer) error {
		row := make([]byte, 4*t.Cols)
		for r := 0; r < t.Rows; r++ {
			clear(row)
			cols, vals := t.Row(r)
			for k, c := range cols {
				binary.LittleEndian.PutUint32(row[4*int(c):], math.Float32bits(vals[k]))
			}
			if _, err := w.Write(row); err != nil {
				return err
			}
		}
		return nil
	}
}

// Read parses a safetensors blob: its tensors (in file order)
// and metadata.
func Read(data []byte) ([]Tensor, map[string]string, error) {
	if len(data) < 8 {
		return nil, nil, errors.New("safetensors: shorter than its header length")
	}
	n := binary.LittleEndian.Uint64(data[:8])
	if n > uint64(len(data)-8) {
		return nil, nil, fmt.Errorf("safetensors: header of %d bytes in a %d-byte file", n, len(data))
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &raw); err != nil {
		return nil, nil, fmt.Errorf("safetensors: header: %w", err)
	}
	body := data[8+n:]
	meta := map[string]string{}
	var out []Tensor
	var offs []int64
	for name, msg := range raw {
		if name == "__metadata__" {
			if err := json.Unmarshal(msg, &meta); err != nil {
				return nil, nil, fmt.Errorf("safetensors: metadata: %w", err)
			}
			continue
		}
		var e stHeaderEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: %w", name, err)
		}
		sz, ok := dtypeSize(e.DType)
		if !ok {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: unknown dtype %q", name, e.DType)
		}
		count := int64(1)
		for _, d := range e.Shape {
			if d < 0 {
				return nil, nil, fmt.Errorf("safetensors: tensor %q: negative dimension", name)
			}
			if d > 0 && count > int64(len(body))/d {
				return nil, nil, fmt.Errorf("safetensors: tensor %q: shape %v does not fit a %d-byte body", name, e.Shape, len(body))
			}
			count *= d
		}
		b, end := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || end < b || end > int64(len(body)) || end-b != count*sz {
			return nil, nil, fmt.Errorf("safetensors: tensor %q: data offsets [%d, %d) do not fit %d × %d bytes in a %d-byte body", name, b, end, count, sz, len(body))
		}
		out = append(out, Tensor{Name: name, DType: e.DType, Shape: e.Shape, Data: body[b:end]})
		offs = append(offs, b)
	}
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(offs[a], offs[b]) })
	sorted := make([]Tensor, len(out))
	for i, k := range idx {
		sorted[i] = out[k]
	}
	return sorted, meta, nil
}

// Config is the JSON config written next to the safetensors file.
type Config struct {
	Format       string           `json:"format"`
	Version      int              `json:"version"`
	Architecture string           `json:"architecture"`
	Layout       string           `json:"layout"`
	Weights      string           `json:"weights"` // the safetensors file, relative to the config
	Tokens       int              `json:"tokens"`
	DModel       int              `json:"d_model"`
	Attrs        map[string]int64 `json:"attrs,omitempty"`
	Stats        model.Stats      `json:"stats"`
	Embedding    Embedding        `json:"embedding"`
	Blocks       []Block          `json:"blocks"`
	// Stock, for a model whose every block is a stock encoder layer: the
	// nn.TransformerEncoder's hyper-parameters (layers, nhead,
	// dim_feedforward, layer_norm_eps; every layer has the same).
	Stock   *Stock            `json:"stock,omitempty"`
	Readout Readout           `json:"readout"`
	Tensors map[string]Shape  `json:"tensors"`
	Notes   map[string]string `json:"notes,omitempty"`
	// Computes says what function the model computes (absent in exports
	// of models built outside a pipeline run).
	Computes *Computes `json:"computes,omitempty"`
	// Precision maps each float format ("fp64", "fp32", "fp16", "bf16")
	// to what a pass in it gave on the verification samples: "exact" (a
	// pass ran and reproduced every output bit), "wrong" (a pass ran and
	// some bit differed) or "not checked" (no pass ran in that format).
	Precision map[string]string `json:"precision,omitempty"`
	// ExactIn lists the formats whose pass was exact, widest first.
	ExactIn []string `json:"exact_in,omitempty"`
	// Samples is the number of random inputs the passes ran on.
	Samples int `json:"samples,omitempty"`
	// TestVectors are some of those inputs with the construction's
	// outputs, as bit strings (character i is bit i), for a loader to
	// check itself against.
	TestVectors []TestVector `json:"test_vectors,omitempty"`
}

// TestVector is one input of a model with its expected output.
type TestVector struct {
	Input  string `json:"input"`
	Output string `json:"output"`
}

// Computes describes the function an exported model computes: the
// construction and its resolved parameters, how its input and output bits
// are laid out, and the layerer and mapper that built the model.
type Computes struct {
	// Construction is the construction plugin's name ("keccak", "sha2", …);
	// Params its resolved parameters and the circuit's attributes (e.g.
	// preset, rate, rounds, message_bits, padded_bits, output_bits).
	Construction string         `json:"construction"`
	Params       map[string]any `json:"params"`
	// Inputs and Outputs are the named runs of input and output bits, in
	// order (input bit i of the model is bit i of the concatenation).
	Inputs  []BitRange `json:"inputs"`
	Outputs []BitRange `json:"outputs"`
	// BitOrder says how a byte string maps to bits: "lsb-first" (bit i is
	// bit i mod 8 of byte ⌊i/8⌋, FIPS 202's order), "msb-first" (bit i is
	// bit 7 − i mod 8 of byte ⌊i/8⌋, FIPS 180-4's) or "bits" (the
	// construction has no byte interface).
	BitOrder string `json:"bit_order"`
	// Padding says who pads the message: "model" (the input is the
	// message, the model pads it), "caller" (the input is already padded
	// blocks) or "none".
	Padding string `json:"padding"`
	// Layerer and Mapper are the plugins (with their parameters) that
	// compiled the circuit and mapped it.
	Layerer      string         `json:"layerer"`
	LayerParams  map[string]any `json:"layerer_params,omitempty"`
	Mapper       string         `json:"mapper"`
	MapperParams map[string]any `json:"mapper_params,omitempty"`
}

// BitRange is a named run of a model's input or output bits.
type BitRange struct {
	Name  string `json:"name"`
	Start int    `json:"start"`
	Bits  int    `json:"bits"`
}

// Description is what Export adds to a config beside the model itself.
type Description struct {
	Computes *Computes
	// Exact maps each format whose pass ran to whether it reproduced every
	// output bit on Samples inputs; formats absent are "not checked".
	Exact   map[string]bool
	Samples int
	// Inputs and Outputs are test vectors: the first MaxTestVectors are
	// written (NumIn and NumOut bits each).
	Inputs, Outputs []bitvec.Vec
	NumIn, NumOut   int
}

// MaxTestVectors is the most test vectors a config holds.
const MaxTestVectors = 8

// Formats are the float formats a config's Precision covers, widest first.
var Formats = []string{"fp64", "fp32", "fp16", "bf16"}

// describe adds d to c.
func (c *Config) describe(d *Description) {
	if d == nil {
		return
	}
	c.Computes, c.Samples = d.Computes, d.Samples
	for i := range min(len(d.Inputs), len(d.Outputs), MaxTestVectors) {
		c.TestVectors = append(c.TestVectors, TestVector{Input: d.Inputs[i].Text(d.NumIn), Output: d.Outputs[i].Text(d.NumOut)})
	}
	c.Precision = map[string]string{}
	for _, f := range Formats {
		exact, ran := d.Exact[f]
		switch {
		case !ran:
			c.Precision[f] = "not checked"
		case exact:
			c.Precision[f] = "exact"
			c.ExactIn = append(c.ExactIn, f)
		default:
			c.Precision[f] = "wrong"
		}
	}
}

// Stock are the hyper-parameters of a stock nn.TransformerEncoder.
type Stock struct {
	Layers int     `json:"num_layers"`
	Heads  int     `json:"nhead"`
	FFN    int     `json:"dim_feedforward"`
	Eps    float64 `json:"layer_norm_eps"`
}

// Shape is an exported tensor's shape and stored entries.
type Shape struct {
	Rows int `json:"rows"`
	Cols int `json:"cols"`
	NNZ  int `json:"nnz"`
}

// Embedding is model.Embedding in the config.
type Embedding struct {
	Base       string  `json:"base"`
	Input      string  `json:"input"`
	InputToken []int32 `json:"input_token"`
}

// Norm is model.RMSNorm in the config.
type Norm struct {
	Weight string  `json:"weight"`
	Eps    float64 `json:"eps"`
}

// Head is model.Head in the config.
type Head struct {
	Q string `json:"q"`
	K string `json:"k"`
	V string `json:"v"`
	O string `json:"o"`
}

// Attention is model.Attention in the config.
type Attention struct {
	Mode     model.AttnMode `json:"mode"`
	Beta     float64        `json:"beta,omitempty"`
	Residual bool           `json:"residual"`
	Norm     *Norm          `json:"norm,omitempty"`
	Heads    []Head         `json:"heads"`
}

// FFN is model.FFN in the config.
type FFN struct {
	Gate     string `json:"w_gate"`
	Value    string `json:"w_value"`
	Out      string `json:"w_out"`
	Residual bool   `json:"residual"`
	Norm     *Norm  `json:"norm,omitempty"`
}

// Block is model.Block in the config.
type Block struct {
	Attention *Attention `json:"attention,omitempty"`
	FFN       *FFN       `json:"ffn,omitempty"`
	Layer     *Layer     `json:"layer,omitempty"`
}

// Layer is a stock model.EncoderLayer in the config: Tensors maps each
// PyTorch state-dict suffix (model.StockNames) to the tensor holding it (vectors
// are stored 1×n; PyTorch wants them flat).
type Layer struct {
	Heads int     `json:"nhead"`
	Eps   float64 `json:"layer_norm_eps"`
	// FFN is the layer's dim_feedforward (linear1's rows).
	FFN     int               `json:"dim_feedforward"`
	Tensors map[string]string `json:"tensors"`
}

// Readout is model.Readout in the config.
type Readout struct {
	Token     []int32   `json:"token"`
	Dim       []int32   `json:"dim"`
	Threshold []float32 `json:"threshold"`
}

// Info says what Export wrote.
type Info struct {
	Weights, Config string // file paths
	Layout          string
	Bytes           int64 // size of the safetensors file
	DenseBytes      int64 // size the dense float32 layout needs
	// Note explains a layout choice (dense refused over the limit).
	Note string
}

// DenseBytes returns the bytes of all of m's tensors as dense float32.
func DenseBytes(m *model.Model) int64 {
	var n int64
	for i := range m.Tensors {
		n += 4 * m.Tensors[i].Dense()
	}
	return n
}

func normOut(n *model.RMSNorm) *Norm {
	if n == nil {
		return nil
	}
	return &Norm{Weight: n.Weight, Eps: n.Eps}
}

func normIn(n *Norm) *model.RMSNorm {
	if n == nil {
		return nil
	}
	return &model.RMSNorm{Weight: n.Weight, Eps: n.Eps}
}

// NewConfig returns m's export config for the given layout and weights file.
func NewConfig(m *model.Model, layout, weights string) Config {
	c := Config{
		Format: Format, Version: 1, Architecture: m.Arch, Layout: layout, Weights: weights,
		Tokens: m.Tokens, DModel: m.DModel, Attrs: m.Attrs, Stats: m.Stats(),
		Embedding: Embedding{Base: m.Embed.Base, Input: m.Embed.Input, InputToken: m.Embed.InputToken},
		Readout:   Readout{Token: m.Readout.Token, Dim: m.Readout.Dim, Threshold: m.Readout.Threshold},
		Tensors:   map[string]Shape{},
		Notes: map[string]string{
			"forward": "x = base; x[input_token[b]] += input[b] for each input bit b = 1; per block: x = x + Attn(Norm(x)) (x = Attn(..) if not residual), then x = x + FFN(Norm(x)); bit k = x[readout.token[k], readout.dim[k]] >= readout.threshold[k]",
			"ffn":     "FFN(x) = w_out @ (silu(w_gate @ x) * (w_value @ x)), no biases",
			"norm":    "RMSNorm(x) = weight * x / sqrt(mean(x^2) + eps) over d_model",
			"attn":    "s_ij = (q @ x_i) . (k @ x_j); hard: a_ij = 1 iff |s_ij - 1| <= 1e-3 else 0 (unnormalised); softmax: a_ij = softmax_j(beta * s_ij) over all tokens; out_i = sum_heads o @ sum_j a_ij (v @ x_j)",
			"layer":   "a block with \"layer\" is a stock torch.nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0, activation=\"relu\", batch_first=True, norm_first=True, layer_norm_eps): its state-dict entries are the named tensors (vectors stored 1×n)",
			"csr":     "W.crow_indices int32 [rows+1], W.col_indices int32 [nnz], W.values float32 [nnz]: torch.sparse_csr_tensor(crow, col, values, size=(rows, cols))",
		},
	}
	for _, b := range m.Blocks {
		var eb Block
		if a := b.Attn; a != nil {
			ea := &Attention{Mode: a.Mode, Beta: a.Beta, Residual: a.Residual, Norm: normOut(a.Norm)}
			for _, h := range a.Heads {
				ea.Heads = append(ea.Heads, Head(h))
			}
			eb.Attention = ea
		}
		if f := b.FFN; f != nil {
			eb.FFN = &FFN{Gate: f.Gate, Value: f.Value, Out: f.Out, Residual: f.Residual, Norm: normOut(f.Norm)}
		}
		if l := b.Layer; l != nil {
			el := &Layer{Heads: l.Heads, Eps: l.Eps, Tensors: map[string]string{}}
			if t := m.Tensor(l.Linear1W); t != nil {
				el.FFN = t.Rows
			}
			for k, n := range l.Names() {
				el.Tensors[model.StockNames[k]] = n
			}
			eb.Layer = el
		}
		c.Blocks = append(c.Blocks, eb)
	}
	for i := range m.Tensors {
		t := &m.Tensors[i]
		c.Tensors[t.Name] = Shape{Rows: t.Rows, Cols: t.Cols, NNZ: t.NNZ()}
	}
	if len(c.Blocks) > 0 && c.Blocks[0].Layer != nil {
		l := c.Blocks[0].Layer
		c.Stock = &Stock{Layers: len(c.Blocks), Heads: l.Heads, FFN: l.FFN, Eps: l.Eps}
		for _, b := range c.Blocks {
			if b.Layer == nil || b.Layer.Heads != l.Heads || b.Layer.FFN != l.FFN || b.Layer.Eps != l.Eps {
				c.Stock = nil // not one repeated layer
				break
			}
		}
	}
	return c
}

// Export writes m as dir/name.safetensors and dir/name.json. The tensors
// are dense float32 if the whole model's dense form takes at most
// denseLimit bytes, CSR otherwise (denseLimit ≤ 0: always CSR); Info.Note
// says why when a dense export was refused.
func Export(m *model.Model, dir, name string, denseLimit int64) (Info, error) {
	return ExportDescribed(m, dir, name, denseLimit, nil)
}

// ExportDescribed is Export with what the model computes and the formats
// it was checked in added to the config (d nil: none).
func ExportDescribed(m *model.Model, dir, name string, denseLimit int64, d *Description) (Info, error) {
	info := Info{Layout: LayoutCSR, DenseBytes: DenseBytes(m)}
	if denseLimit > 0 {
		if info.DenseBytes <= denseLimit {
			info.Layout = LayoutDense
		} else {
			info.Note = fmt.Sprintf("dense float32 form needs %s, over the %s limit: wrote CSR tensors", humanBytes(info.DenseBytes), humanBytes(denseLimit))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return info, fmt.Errorf("export: %w", err)
	}
	info.Weights = filepath.Join(dir, name+".safetensors")
	info.Config = filepath.Join(dir, name+".json")
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
	f, err := os.Create(info.Weights)
	if err != nil {
		return info, fmt.Errorf("export: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	n, err := sw.writeTo(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
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
	if err := os.WriteFile(info.Config, append(cfg, '\n'), 0o644); err != nil {
		return info, fmt.Errorf("export: %w", err)
	}
	return info, nil
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
	m := &model.Model{Arch: c.Architecture, Attrs: c.Attrs, Tokens: c.Tokens, DModel: c.DModel,
		Embed:   model.Embedding{Base: c.Embedding.Base, Input: c.Embedding.Input, InputToken: c.Embedding.InputToken},
		Readout: model.Readout{Token: c.Readout.Token, Dim: c.Readout.Dim, Threshold: c.Readout.Threshold}}
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
