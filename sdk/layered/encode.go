package layered

import (
	"errors"
	"fmt"
	"math"

	"github.com/tcforge/tcforge/sdk/binenc"
	"github.com/tcforge/tcforge/sdk/circuit"
)

const (
	magic   = "TCLT"
	version = 3 // 2: narrow packed arrays, fan-ins instead of RowStart; 3: repeated rows sent once
)

// repeatRow flags, in the encoded kind byte, a gate whose row (sources
// and weights) equals the previous gate's: the n counters [S ≥ k] of an
// n-ary XOR share one row, so most of a Keccak circuit's edges are sent
// once instead of n times.
const repeatRow = 0x80

// MarshalBinary encodes the circuit in tcforge's compact binary form.
func (c *Circuit) MarshalBinary() ([]byte, error) {
	n := len(c.Kind)
	if err := c.checkRows(); err != nil {
		return nil, fmt.Errorf("encoding layered circuit: %w", err)
	}
	kinds := make([]byte, n)
	fanIn := make([]int32, 0, n)
	src := make([]int32, 0, len(c.Src)/2)
	weight := make([]int32, 0, len(c.Src)/2)
	for g := range n {
		kinds[g] = byte(c.Kind[g])
		lo, hi := c.RowStart[g], c.RowStart[g+1]
		if g > 0 && c.sameRow(g-1, g) {
			kinds[g] |= repeatRow
			continue
		}
		fanIn = append(fanIn, hi-lo)
		src = append(src, c.Src[lo:hi]...)
		weight = append(weight, c.Weight[lo:hi]...)
	}
	w := binenc.NewWriter(magic, version, 4*n+3*len(src))
	w.I64(int64(c.NumInputs))
	w.I32s(c.LevelStart)
	w.U8s(kinds)
	w.I32s(c.Threshold)
	w.I32s(c.Tag)
	w.I32s(fanIn)
	w.I32s(src)
	w.I32s(weight)
	w.Strings(c.Tags)
	circuit.WriteRanges(w, c.InputRanges)
	circuit.WriteRanges(w, c.OutputRanges)
	return w.Bytes(), nil
}

// checkRows checks what encoding relies on: RowStart spans Src and Weight
// monotonically, one row per gate.
func (c *Circuit) checkRows() error {
	n := len(c.Kind)
	if len(c.RowStart) != n+1 || c.RowStart[0] != 0 {
		return fmt.Errorf("layered: RowStart has %d entries for %d gates", len(c.RowStart), n)
	}
	if len(c.Src) != len(c.Weight) || int(c.RowStart[n]) != len(c.Src) {
		return fmt.Errorf("layered: edge offsets do not span the %d sources and %d weights", len(c.Src), len(c.Weight))
	}
	for g := range n {
		if c.RowStart[g+1] < c.RowStart[g] {
			return fmt.Errorf("layered: edge offsets decrease at gate %d", g)
		}
	}
	return nil
}

// sameRow reports whether gates a and b read the same sources with the
// same weights.
func (c *Circuit) sameRow(a, b int) bool {
	alo, ahi := c.RowStart[a], c.RowStart[a+1]
	blo, bhi := c.RowStart[b], c.RowStart[b+1]
	if ahi-alo != bhi-blo || ahi == alo {
		return false
	}
	for i := range ahi - alo {
		if c.Src[alo+i] != c.Src[blo+i] || c.Weight[alo+i] != c.Weight[blo+i] {
			return false
		}
	}
	return true
}

// UnmarshalBinary decodes a circuit written by MarshalBinary and validates it.
func (c *Circuit) UnmarshalBinary(data []byte) error {
	r := binenc.NewReader(data, magic, version)
	var d Circuit
	d.NumInputs = int(r.I64())
	d.LevelStart = r.I32s()
	kinds := r.U8s()
	d.Threshold = r.I32s()
	d.Tag = r.I32s()
	fanIn := r.I32s()
	src := r.I32s()
	weight := r.I32s()
	if err := r.Err(); err != nil {
		return fmt.Errorf("decoding layered circuit: %w", err)
	}
	if err := d.expandRows(kinds, fanIn, src, weight); err != nil {
		return fmt.Errorf("decoding layered circuit: %w", err)
	}
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

// expandRows rebuilds Kind, RowStart, Src and Weight from the encoded
// kinds (with repeatRow flags), the fan-ins of the rows sent and their
// sources and weights.
func (d *Circuit) expandRows(kinds []byte, fanIn, src, weight []int32) error {
	if len(src) != len(weight) {
		return fmt.Errorf("%d sources but %d weights", len(src), len(weight))
	}
	total := int64(0)
	for g, k := range kinds {
		if k&repeatRow != 0 {
			if g == 0 {
				return errors.New("gate 0 repeats a row")
			}
			continue
		}
	}
	for _, f := range fanIn {
		if f < 0 {
			return fmt.Errorf("negative fan-in %d", f)
		}
		total += int64(f)
	}
	if total != int64(len(src)) {
		return fmt.Errorf("fan-ins add up to %d edges, %d sent", total, len(src))
	}
	d.Kind = make([]Kind, len(kinds))
	d.RowStart = make([]int32, len(kinds)+1)
	edges := int64(0)
	row, next := 0, int32(0)
	var prevLen int64
	for g, k := range kinds {
		d.Kind[g] = Kind(k &^ repeatRow)
		if k&repeatRow != 0 {
			edges += prevLen
		} else {
			if row >= len(fanIn) {
				return errors.New("more rows than fan-ins")
			}
			prevLen = int64(fanIn[row])
			edges += prevLen
			row++
		}
		// Repeated rows expand; bound the expansion so that a small
		// hostile blob cannot demand gigabytes.
		if edges > math.MaxInt32 || edges > 1<<25+1024*int64(len(src)+len(kinds)) {
			return errors.New("repeated rows expand to too many edges")
		}
		d.RowStart[g+1] = int32(edges)
	}
	if row != len(fanIn) {
		return fmt.Errorf("%d fan-ins for %d rows", len(fanIn), row)
	}
	d.Src = make([]int32, edges)
	d.Weight = make([]int32, edges)
	var plo, phi int32
	for g, k := range kinds {
		lo, hi := d.RowStart[g], d.RowStart[g+1]
		if k&repeatRow != 0 {
			copy(d.Src[lo:hi], d.Src[plo:phi])
			copy(d.Weight[lo:hi], d.Weight[plo:phi])
		} else {
			copy(d.Src[lo:hi], src[next:next+hi-lo])
			copy(d.Weight[lo:hi], weight[next:next+hi-lo])
			next += hi - lo
		}
		plo, phi = lo, hi
	}
	return nil
}
