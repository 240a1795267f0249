package layered

import (
	"fmt"

	"github.com/tcforge/tcforge/sdk/binenc"
	"github.com/tcforge/tcforge/sdk/circuit"
)

const (
	magic   = "TCLT"
	version = 2 // 2: narrow packed arrays, fan-ins instead of RowStart
)

// MarshalBinary encodes the circuit in tcforge's compact binary form.
func (c *Circuit) MarshalBinary() ([]byte, error) {
	w := binenc.NewWriter(magic, version, 4*len(c.Kind)+3*len(c.Src))
	w.I64(int64(c.NumInputs))
	w.I32s(c.LevelStart)
	kinds := make([]byte, len(c.Kind))
	for i, k := range c.Kind {
		kinds[i] = byte(k)
	}
	w.U8s(kinds)
	w.I32s(c.Threshold)
	w.I32s(c.Tag)
	fanIn := make([]int32, len(c.Kind))
	for g := range fanIn {
		fanIn[g] = c.RowStart[g+1] - c.RowStart[g]
	}
	w.I32s(fanIn)
	w.I32s(c.Src)
	w.I32s(c.Weight)
	w.Strings(c.Tags)
	circuit.WriteRanges(w, c.InputRanges)
	circuit.WriteRanges(w, c.OutputRanges)
	return w.Bytes(), nil
}

// UnmarshalBinary decodes a circuit written by MarshalBinary and validates it.
func (c *Circuit) UnmarshalBinary(data []byte) error {
	r := binenc.NewReader(data, magic, version)
	var d Circuit
	d.NumInputs = int(r.I64())
	d.LevelStart = r.I32s()
	kinds := r.U8s()
	d.Kind = make([]Kind, len(kinds))
	for i, k := range kinds {
		d.Kind[i] = Kind(k)
	}
	d.Threshold = r.I32s()
	d.Tag = r.I32s()
	fanIn := r.I32s()
	d.RowStart = make([]int32, len(fanIn)+1)
	for g, n := range fanIn {
		d.RowStart[g+1] = d.RowStart[g] + n
	}
	d.Src = r.I32s()
	d.Weight = r.I32s()
	d.Tags = r.Strings()
	d.InputRanges = circuit.ReadRanges(r)
	d.OutputRanges = circuit.ReadRanges(r)
	if err := r.Done(); err != nil {
		return fmt.Errorf("decoding layered circuit: %w", err)
	}
	if err := d.Validate(); err != nil {
		return fmt.Errorf("decoding layered circuit: %w", err)
	}
	*c = d
	return nil
}
