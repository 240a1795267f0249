package layered

import (
	"bytes"
	"fmt"
	"unsafe"

	"github.com/tcforge/tcforge/internal/binenc"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// flatVersion is the version of the flat encoding (binenc's flat layout):
// the circuit's arrays as they lie in memory. It must differ from every
// packed version UnmarshalBinary reads (oldestVersion…version), which the
// blob's version field tells apart.
const flatVersion = 6

// MarshalFlat encodes the circuit in the flat layout (version 6): a small
// head (input count, tags, ranges), then LevelStart, Kind, Threshold, Tag,
// RowStart, Src, Weight, the forms' arrays (FormStart, FormConst,
// FormRowStart, FormSrc, FormCoef) and the position hints (InputPos, Pos,
// FormPos) as they lie in memory, every repeated row in full. It returns
// the blob as parts to be written one after the other; all but the first
// are the circuit's own arrays, not copies, and must not change until
// written. Nothing is checked or packed: the receiver checks the blob as
// it takes it (DecodeView).
func (c *Circuit) MarshalFlat() [][]byte {
	w := binenc.NewFlatWriter(magic, flatVersion)
	h := w.Head()
	h.I64(int64(c.NumInputs))
	h.Strings(c.Tags)
	circuit.WriteRanges(h, c.InputRanges)
	circuit.WriteRanges(h, c.OutputRanges)
	w.I32s(c.LevelStart)
	var kinds []byte
	if c.Kind != nil {
		kinds = unsafe.Slice((*byte)(unsafe.SliceData(c.Kind)), len(c.Kind))
	}
	w.U8s(kinds)
	for _, a := range [][]int32{
		c.Threshold, c.Tag, c.RowStart, c.Src, c.Weight,
		c.FormStart, c.FormConst, c.FormRowStart, c.FormSrc, c.FormCoef,
		c.InputPos, c.Pos, c.FormPos,
	} {
		w.I32s(a)
	}
	return w.Parts()
}

// DecodeView decodes a blob of either encoding (MarshalBinary's or
// MarshalFlat's) and validates it, once. A flat blob is not unpacked and
// nothing is expanded: the circuit's arrays are views of data, which the
// caller hands over and must not use or change afterwards, and Validate
// makes every check UnmarshalBinary makes while decoding a packed blob. A
// packed blob is decoded as UnmarshalBinary does.
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
	d.Tags = h.Strings()
	d.InputRanges = circuit.ReadRanges(h)
	d.OutputRanges = circuit.ReadRanges(h)
	d.LevelStart = r.I32s()
	if kinds := r.U8s(); kinds != nil {
		d.Kind = unsafe.Slice((*Kind)(unsafe.SliceData(kinds)), len(kinds))
	}
	for _, a := range []*[]int32{
		&d.Threshold, &d.Tag, &d.RowStart, &d.Src, &d.Weight,
		&d.FormStart, &d.FormConst, &d.FormRowStart, &d.FormSrc, &d.FormCoef,
		&d.InputPos, &d.Pos, &d.FormPos,
	} {
		*a = r.I32s()
	}
	if err := r.Done(); err != nil {
		return nil, fmt.Errorf("decoding layered circuit: %w", err)
	}
	// As the packed decoding leaves them: the gates' arrays never nil, nor
	// the forms' where there are forms.
	if d.Kind == nil {
		d.Kind = []Kind{}
	}
	for _, a := range []*[]int32{&d.Threshold, &d.Tag, &d.Src, &d.Weight} {
		*a = nonNil(*a)
	}
	if d.FormStart != nil {
		d.FormConst, d.FormSrc, d.FormCoef = nonNil(d.FormConst), nonNil(d.FormSrc), nonNil(d.FormCoef)
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
