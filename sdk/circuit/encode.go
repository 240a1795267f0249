package circuit

import (
	"fmt"
	"sort"

	"github.com/tcforge/tcforge/sdk/binenc"
)

const (
	magic   = "TCLC"
	version = 2 // 2: narrow packed arrays
)

// MarshalBinary encodes the circuit in tcforge's compact binary form.
func (c *Circuit) MarshalBinary() ([]byte, error) {
	w := binenc.NewWriter(magic, version, 4*(4*len(c.Ops)+2*len(c.Args)))
	ops := make([]byte, len(c.Ops))
	for i, op := range c.Ops {
		ops[i] = byte(op)
	}
	w.U8s(ops)
	w.I32s(c.Param)
	w.I32s(c.Tag)
	w.I32s(c.ArgStart)
	w.I32s(c.Args)
	w.I32s(c.Weights)
	w.Strings(c.Tags)
	w.I32s(c.Inputs)
	WriteRanges(w, c.InputRanges)
	w.I32s(c.Outputs)
	WriteRanges(w, c.OutputRanges)
	keys := make([]string, 0, len(c.Attrs))
	for k := range c.Attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w.U32(uint32(len(keys)))
	for _, k := range keys {
		w.String(k)
		w.I64(c.Attrs[k])
	}
	return w.Bytes(), nil
}

// UnmarshalBinary decodes a circuit written by MarshalBinary and validates it.
func (c *Circuit) UnmarshalBinary(data []byte) error {
	r := binenc.NewReader(data, magic, version)
	var d Circuit
	for _, op := range r.U8s() {
		d.Ops = append(d.Ops, Op(op))
	}
	d.Param = r.I32s()
	d.Tag = r.I32s()
	d.ArgStart = r.I32s()
	d.Args = r.I32s()
	d.Weights = r.I32s()
	d.Tags = r.Strings()
	d.Inputs = r.I32s()
	d.InputRanges = ReadRanges(r)
	d.Outputs = r.I32s()
	d.OutputRanges = ReadRanges(r)
	n := r.U32()
	if r.Err() == nil && n > 0 {
		d.Attrs = map[string]int64{}
		for i := uint32(0); i < n && r.Err() == nil; i++ {
			k := r.String()
			d.Attrs[k] = r.I64()
		}
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("decoding logic circuit: %w", err)
	}
	if d.ArgStart == nil {
		d.ArgStart = []int32{0}
	}
	if err := d.Validate(); err != nil {
		return fmt.Errorf("decoding logic circuit: %w", err)
	}
	*c = d
	return nil
}

// WriteRanges encodes named ranges (shared by the artifact encodings).
func WriteRanges(w *binenc.Writer, rs []Range) {
	w.U32(uint32(len(rs)))
	for _, r := range rs {
		w.String(r.Name)
		w.I64(int64(r.Start))
		w.I64(int64(r.Len))
	}
}

// ReadRanges decodes ranges written by WriteRanges.
func ReadRanges(r *binenc.Reader) []Range {
	n := r.U32()
	var out []Range
	for i := uint32(0); i < n && r.Err() == nil; i++ {
		out = append(out, Range{Name: r.String(), Start: int(r.I64()), Len: int(r.I64())})
	}
	return out
}
