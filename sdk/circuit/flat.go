package circuit

import (
	"bytes"
	"fmt"
	"slices"
	"unsafe"

	"github.com/tcforge/tcforge/internal/binenc"
)

// flatVersion is the version of the flat encoding (binenc's flat layout):
// the circuit's arrays as they lie in memory.
const flatVersion = 4

// MarshalFlat encodes the circuit in the flat layout (version 4): a small
// head (tags, ranges, attributes), then Ops, Param, Tag, ArgStart, Args,
// Weights, Inputs, Outputs and the position hints as they lie in memory.
// It returns the blob as parts to be written one after the other; all but
// the first are the circuit's own arrays, not copies, and must not change
// until written. Nothing is checked or packed: the receiver checks the
// blob as it takes it (DecodeView).
func (c *Circuit) MarshalFlat() [][]byte {
	w := binenc.NewFlatWriter(magic, flatVersion)
	h := w.Head()
	h.Strings(c.Tags)
	WriteRanges(h, c.InputRanges)
	WriteRanges(h, c.OutputRanges)
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range c.Attrs {
			if !yield(k) {
				return
			}
		}
	})
	h.U32(uint32(len(keys)))
	for _, k := range keys {
		h.String(k)
		h.I64(c.Attrs[k])
	}
	var ops []byte
	if c.Ops != nil {
		ops = unsafe.Slice((*byte)(unsafe.SliceData(c.Ops)), len(c.Ops))
	}
	w.U8s(ops)
	for _, a := range [][]int32{c.Param, c.Tag, c.ArgStart, c.Args, c.Weights, c.Inputs, c.Outputs, c.Pos} {
		w.I32s(a)
	}
	return w.Parts()
}

// DecodeView decodes a blob of either encoding (MarshalBinary's or
// MarshalFlat's) and validates it, once. A flat blob is not unpacked: the
// circuit's arrays are views of data, which the caller hands over and
// must not use or change afterwards. A packed blob is decoded as
// UnmarshalBinary does.
func DecodeView(data []byte) (*Circuit, error) {
	if !binenc.IsFlat(data, magic, flatVersion) {
		var c Circuit
		if err := c.UnmarshalBinary(data); err != nil {
			return nil, err
		}
		return &c, nil
	}
	r, err := binenc.NewFlatReader(data, magic, flatVersion)
	if err != nil {
		return nil, fmt.Errorf("decoding logic circuit: %w", err)
	}
	var d Circuit
	h := r.Head()
	d.Tags = h.Strings()
	d.InputRanges = ReadRanges(h)
	d.OutputRanges = ReadRanges(h)
	if n := h.U32(); h.Err() == nil && n > 0 {
		d.Attrs = map[string]int64{}
		for i := uint32(0); i < n && h.Err() == nil; i++ {
			k := h.String()
			d.Attrs[k] = h.I64()
		}
	}
	if ops := r.U8s(); len(ops) > 0 {
		d.Ops = unsafe.Slice((*Op)(unsafe.SliceData(ops)), len(ops))
	}
	for _, a := range []*[]int32{&d.Param, &d.Tag, &d.ArgStart, &d.Args, &d.Weights, &d.Inputs, &d.Outputs, &d.Pos} {
		*a = r.I32s()
	}
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("decoding logic circuit: %w", err)
	}
	// As the packed decoding leaves them: the arrays never nil, an
	// absent ArgStart a single 0.
	for _, a := range []*[]int32{&d.Param, &d.Tag, &d.Args, &d.Weights, &d.Inputs, &d.Outputs} {
		if *a == nil {
			*a = []int32{}
		}
	}
	if d.ArgStart == nil {
		d.ArgStart = []int32{0}
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("decoding logic circuit: %w", err)
	}
	return &d, nil
}

// unmarshalFlat is UnmarshalBinary for a flat blob: it decodes a copy of
// data (UnmarshalBinary may not keep data).
func (c *Circuit) unmarshalFlat(data []byte) error {
	d, err := DecodeView(bytes.Clone(data))
	if err != nil {
		return err
	}
	*c = *d
	return nil
}
