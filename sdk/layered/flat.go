package layered

import (
	"bytes"
	"fmt"
	"unsafe"

	"github.com/tcforge/tcforge/internal/binenc"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// flatVersion is the version of the flat encoding (binenc's flat layout):
// the circuit's arrays as they lie in memory, every row in full.
const flatVersion = 6

// MarshalFlat encodes the circuit in the flat layout (version 6): a small
// head, then Kind, Threshold, Tag, RowStart, Src, Weight, the form arrays
// and the position hints as they lie in memory. It returns the blob as
// parts to be written one after the other; all but the first are the
// circuit's own arrays, not copies, and must not change until written.
// Nothing is checked or packed, so encoding costs no work per gate: it is
// the plugin side of the boundary where a blob crosses as a file, and
// the host checks the blob as it takes it (DecodeView).
func (c *Circuit) MarshalFlat() [][]byte {
	w := binenc.NewFlatWriter(magic, flatVersion)
	h := w.Head()
	h.I64(int64(c.NumInputs))
	h.I32s(c.LevelStart)
	h.Strings(c.Tags)
	circuit.WriteRanges(h, c.InputRanges)
	circuit.WriteRanges(h, c.OutputRanges)
	if c.FormStart == nil {
		h.U32(0)
	} else {
		h.U32(1)
		h.I32s(c.FormStart)
	}
	w.U8s(kindBytes(c.Kind))
	for _, a := range [][]int32{c.Threshold, c.Tag, c.RowStart, c.Src, c.Weight,
		c.FormConst, c.FormRowStart, c.FormSrc, c.FormCoef, c.InputPos, c.Pos, c.FormPos} {
		w.I32s(a)
	}
	return w.Parts()
}

// DecodeView decodes a blob of either encoding (MarshalBinary's or
// MarshalFlat's) and validates it as Validate does, once. A flat blob is
// not unpacked: the circuit's arrays are views of data, which the caller
// hands over and must not use or change afterwards. A packed blob is
// decoded as UnmarshalBinary does.
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
		return nil, fmt.Errorf("decoding layered circuit: %w", err)
	}
	var d Circuit
	h := r.Head()
	d.NumInputs = int(h.I64())
	d.LevelStart = h.I32s()
	d.Tags = h.Strings()
	d.InputRanges = circuit.ReadRanges(h)
	d.OutputRanges = circuit.ReadRanges(h)
	switch forms := h.U32(); {
	case h.Err() != nil:
	case forms == 1:
		d.FormStart = h.I32s()
		if d.FormStart == nil {
			d.FormStart = []int32{}
		}
	case forms != 0:
		return nil, fmt.Errorf("decoding layered circuit: forms flag %d, want 0 or 1", forms)
	}
	d.Kind = bytesKind(r.U8s())
	for _, a := range []*[]int32{&d.Threshold, &d.Tag, &d.RowStart, &d.Src, &d.Weight,
		&d.FormConst, &d.FormRowStart, &d.FormSrc, &d.FormCoef, &d.InputPos, &d.Pos, &d.FormPos} {
		*a = r.I32s()
	}
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("decoding layered circuit: %w", err)
	}
	// The gate arrays (and, with forms, the form arrays) are never nil
	// once decoded, whichever the encoding.
	if d.Kind == nil {
		d.Kind = []Kind{}
	}
	for _, a := range []*[]int32{&d.Threshold, &d.Tag, &d.RowStart, &d.Src, &d.Weight} {
		*a = nonNil(*a)
	}
	if d.FormStart != nil {
		for _, a := range []*[]int32{&d.FormConst, &d.FormRowStart, &d.FormSrc, &d.FormCoef} {
			*a = nonNil(*a)
		}
	}
	if err := d.Validate(); err != nil {
		return nil, fmt.Errorf("decoding layered circuit: %w", err)
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

// kindBytes returns k's memory as bytes.
func kindBytes(k []Kind) []byte {
	if k == nil {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.SliceData(k)), len(k))
}

// bytesKind returns b's memory as kinds.
func bytesKind(b []byte) []Kind {
	if b == nil {
		return nil
	}
	return unsafe.Slice((*Kind)(unsafe.SliceData(b)), len(b))
}
