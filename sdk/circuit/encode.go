package circuit

import (
	"fmt"
	"slices"
	"sync"

	"github.com/tcforge/tcforge/internal/binenc"
)

const (
	magic   = "TCLC"
	version = 3 // 2: narrow packed arrays; 3: position hints
	// oldestVersion is the oldest encoding UnmarshalBinary still reads
	// (version 2 is version 3 without the hints).
	oldestVersion = 2
)

// parallelArgs is the operand count from which encoding and decoding
// split the arrays over two goroutines.
const parallelArgs = 1 << 16

// MarshalBinary encodes the circuit in tcforge's compact binary form.
// A large circuit's operand arrays (Args, Weights) are packed on a second
// goroutine while the per-node arrays are packed on this one.
func (c *Circuit) MarshalBinary() ([]byte, error) {
	arrays := [][]int32{c.Param, c.Tag, c.ArgStart, c.Args, c.Weights}
	sizes := make([]int, len(arrays))
	both(len(c.Args) >= parallelArgs, func(second bool) {
		for i, v := range arrays {
			if (i >= 3) == second {
				sizes[i] = binenc.Width(binenc.MinMax(v))
			}
		}
	})
	n := 64 + 2*len(c.Ops) + 16*(len(c.InputRanges)+len(c.OutputRanges)) + 4*(len(c.Inputs)+len(c.Outputs)) + 16*len(c.Attrs)
	for i, v := range arrays {
		n += sizes[i] * len(v)
	}
	for _, t := range c.Tags {
		n += 4 + len(t)
	}
	w := binenc.NewWriter(magic, version, n)
	ops := make([]byte, len(c.Ops))
	for i, op := range c.Ops {
		ops[i] = byte(op)
	}
	w.U8s(ops)
	dst := make([][]byte, len(arrays))
	for i, v := range arrays {
		dst[i] = w.PackedI32s(len(v), sizes[i])
	}
	both(len(c.Args) >= parallelArgs, func(second bool) {
		for i, v := range arrays {
			if (i >= 3) == second {
				binenc.PutI32s(dst[i], sizes[i], v)
			}
		}
	})
	w.Strings(c.Tags)
	w.I32s(c.Inputs)
	WriteRanges(w, c.InputRanges)
	w.I32s(c.Outputs)
	WriteRanges(w, c.OutputRanges)
	keys := make([]string, 0, len(c.Attrs))
	for k := range c.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.U32(uint32(len(keys)))
	for _, k := range keys {
		w.String(k)
		w.I64(c.Attrs[k])
	}
	// Position hints: a flag (0: none), then the hints.
	if c.Pos == nil {
		w.U32(0)
	} else {
		w.U32(1)
		w.I32s(c.Pos)
	}
	return w.Bytes(), nil
}

// both runs f(false) and f(true), on two goroutines if parallel.
func both(parallel bool, f func(second bool)) {
	if !parallel {
		f(false)
		f(true)
		return
	}
	var wg sync.WaitGroup
	wg.Go(func() { f(true) })
	f(false)
	wg.Wait()
}

// UnmarshalBinary decodes a circuit written by MarshalBinary (this
// version or the previous, which has no position hints) or MarshalFlat,
// and validates it.
func (c *Circuit) UnmarshalBinary(data []byte) error {
	if binenc.IsFlat(data, magic, flatVersion) {
		return c.unmarshalFlat(data)
	}
	r := binenc.NewReaderVersions(data, magic, oldestVersion, version)
	var d Circuit
	if ops := r.U8sView(); len(ops) > 0 {
		d.Ops = make([]Op, len(ops))
		for i, op := range ops {
			d.Ops[i] = Op(op)
		}
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
	if r.Version() >= 3 {
		switch hints := r.U32(); {
		case r.Err() != nil:
		case hints == 1:
			d.Pos = r.I32s()
			if d.Pos == nil {
				d.Pos = []int32{}
			}
		case hints != 0:
			return fmt.Errorf("decoding logic circuit: position hints flag %d, want 0 or 1", hints)
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
