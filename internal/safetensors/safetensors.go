// Package safetensors writes a model.Model as a safetensors file plus a
// JSON config (Export), reads it back (Import), and parses safetensors
// files (Read). The host exports verified models with it (tcforge run
// --export); python/tcforge_torch loads the same files into PyTorch
// (docs/export.md).
package safetensors

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

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
