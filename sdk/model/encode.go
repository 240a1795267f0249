package model

import (
	"fmt"
	"math"
	"slices"

	"github.com/tcforge/tcforge/internal/binenc"
)

const (
	magic   = "TCMD"
	version = 3 // 2: structured transformer IR, CSR tensors; 3: stock encoder layers
	// versionLabels is version 3 followed by the labels (Labels'
	// own record); a model without labels is written as version 3, byte
	// for byte as before.
	versionLabels = 4
	// versionDecoder is version 4's layout with an optional labels record
	// (a flag first) and then the decoder section (decoder.go).
	versionDecoder = 5
)

// MarshalBinary encodes the model in tcforge's compact binary form (packed
// little-endian arrays; CSR row pointers sent as row lengths).
func (m *Model) MarshalBinary() ([]byte, error) {
	size := 0
	for i := range m.Tensors {
		size += 8*len(m.Tensors[i].Val) + m.Tensors[i].Rows
	}
	v := uint32(version)
	if m.Labels != nil {
		v = versionLabels
	}
	if m.Decoder != nil {
		v = versionDecoder
	}
	w := binenc.NewWriter(magic, v, size)
	w.String(m.Arch)
	keys := make([]string, 0, len(m.Attrs))
	for k := range m.Attrs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	w.U32(uint32(len(keys)))
	for _, k := range keys {
		w.String(k)
		w.I64(m.Attrs[k])
	}
	w.I64(int64(m.Tokens))
	w.I64(int64(m.DModel))
	w.String(m.Embed.Base)
	w.String(m.Embed.Input)
	w.I32s(m.Embed.InputToken)
	w.U32(uint32(len(m.Blocks)))
	for _, b := range m.Blocks {
		if a := b.Attn; a != nil {
			w.U32(1)
			w.String(string(a.Mode))
			w.I64(int64(math.Float64bits(a.Beta)))
			writeNorm(w, a.Norm)
			w.U32(boolU32(a.Residual))
			w.U32(uint32(len(a.Heads)))
			for _, h := range a.Heads {
				w.Strings([]string{h.Q, h.K, h.V, h.O})
			}
		} else {
			w.U32(0)
		}
		if f := b.FFN; f != nil {
			w.U32(1)
			w.Strings([]string{f.Gate, f.Value, f.Out})
			writeNorm(w, f.Norm)
			w.U32(boolU32(f.Residual))
		} else {
			w.U32(0)
		}
		if l := b.Layer; l != nil {
			w.U32(1)
			w.I64(int64(l.Heads))
			w.I64(int64(math.Float64bits(l.Eps)))
			names := l.Names()
			w.Strings(names[:])
		} else {
			w.U32(0)
		}
	}
	w.I32s(m.Readout.Token)
	w.I32s(m.Readout.Dim)
	w.F32s(m.Readout.Threshold)
	w.U32(uint32(len(m.Tensors)))
	for i := range m.Tensors {
		t := &m.Tensors[i]
		if len(t.RowPtr) != t.Rows+1 {
			return nil, fmt.Errorf("encoding model: tensor %q has %d row pointers for %d rows", t.Name, len(t.RowPtr), t.Rows)
		}
		w.String(t.Name)
		w.I64(int64(t.Rows))
		w.I64(int64(t.Cols))
		lens := make([]int32, t.Rows)
		for r := range lens {
			lens[r] = t.RowPtr[r+1] - t.RowPtr[r]
		}
		w.I32s(lens)
		w.I32s(t.Col)
		w.F32s(t.Val)
	}
	if v == versionDecoder {
		w.U32(boolU32(m.Labels != nil))
	}
	if m.Labels != nil {
		lb, err := m.Labels.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("encoding model: %w", err)
		}
		w.U8s(lb)
	}
	if d := m.Decoder; d != nil {
		writeDecoder(w, d)
	}
	return w.Bytes(), nil
}

func boolU32(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

func writeNorm(w *binenc.Writer, n *RMSNorm) {
	if n == nil {
		w.U32(0)
		return
	}
	w.U32(1)
	w.String(n.Weight)
	w.I64(int64(math.Float64bits(n.Eps)))
}

func readNorm(r *binenc.Reader) *RMSNorm {
	if r.U32() == 0 {
		return nil
	}
	return &RMSNorm{Weight: r.String(), Eps: math.Float64frombits(uint64(r.I64()))}
}

// UnmarshalBinary decodes a model written by MarshalBinary. It checks the
// encoding, not the model: call Validate before using it.
func (m *Model) UnmarshalBinary(data []byte) error {
	r := binenc.NewReaderVersions(data, magic, version, versionDecoder)
	var d Model
	d.Arch = r.String()
	n := r.U32()
	for i := uint32(0); i < n && r.Err() == nil; i++ {
		if d.Attrs == nil {
			d.Attrs = map[string]int64{}
		}
		k := r.String()
		d.Attrs[k] = r.I64()
	}
	d.Tokens = int(r.I64())
	d.DModel = int(r.I64())
	d.Embed.Base = r.String()
	d.Embed.Input = r.String()
	d.Embed.InputToken = r.I32s()
	nb := r.U32()
	for i := uint32(0); i < nb && r.Err() == nil; i++ {
		var b Block
		if r.U32() == 1 {
			a := &Attention{Mode: AttnMode(r.String()), Beta: math.Float64frombits(uint64(r.I64()))}
			a.Norm = readNorm(r)
			a.Residual = r.U32() == 1
			nh := r.U32()
			for h := uint32(0); h < nh && r.Err() == nil; h++ {
				s := r.Strings()
				if r.Err() == nil && len(s) != 4 {
					return fmt.Errorf("decoding model: block %d head %d has %d tensor names, want 4", i, h, len(s))
				}
				if r.Err() == nil {
					a.Heads = append(a.Heads, Head{Q: s[0], K: s[1], V: s[2], O: s[3]})
				}
			}
			b.Attn = a
		}
		if r.U32() == 1 {
			s := r.Strings()
			if r.Err() == nil && len(s) != 3 {
				return fmt.Errorf("decoding model: block %d FFN has %d tensor names, want 3", i, len(s))
			}
			f := &FFN{}
			if r.Err() == nil {
				f.Gate, f.Value, f.Out = s[0], s[1], s[2]
			}
			f.Norm = readNorm(r)
			f.Residual = r.U32() == 1
			b.FFN = f
		}
		if r.U32() == 1 {
			l := &EncoderLayer{Heads: int(r.I64()), Eps: math.Float64frombits(uint64(r.I64()))}
			s := r.Strings()
			if r.Err() == nil && len(s) != len(StockNames) {
				return fmt.Errorf("decoding model: block %d layer has %d tensor names, want %d", i, len(s), len(StockNames))
			}
			if r.Err() == nil {
				l.SetNames(s)
			}
			b.Layer = l
		}
		d.Blocks = append(d.Blocks, b)
	}
	d.Readout.Token = r.I32s()
	d.Readout.Dim = r.I32s()
	d.Readout.Threshold = r.F32s()
	nt := r.U32()
	for i := uint32(0); i < nt && r.Err() == nil; i++ {
		t := Tensor{Name: r.String(), Rows: int(r.I64()), Cols: int(r.I64())}
		lens := r.I32s()
		t.Col = r.I32s()
		t.Val = r.F32s()
		if r.Err() != nil {
			break
		}
		if len(lens) != t.Rows {
			return fmt.Errorf("decoding model: tensor %q: %d row lengths for %d rows", t.Name, len(lens), t.Rows)
		}
		t.RowPtr = make([]int32, t.Rows+1)
		sum := int64(0)
		for k, l := range lens {
			if l < 0 {
				return fmt.Errorf("decoding model: tensor %q: negative row length", t.Name)
			}
			sum += int64(l)
			if sum > int64(len(t.Col)) {
				return fmt.Errorf("decoding model: tensor %q: row lengths exceed the %d entries", t.Name, len(t.Col))
			}
			t.RowPtr[k+1] = int32(sum)
		}
		if sum != int64(len(t.Col)) || len(t.Col) != len(t.Val) {
			return fmt.Errorf("decoding model: tensor %q: %d row entries, %d columns, %d values", t.Name, sum, len(t.Col), len(t.Val))
		}
		d.Tensors = append(d.Tensors, t)
	}
	hasLabels := r.Version() == versionLabels
	if r.Version() == versionDecoder {
		hasLabels = r.U32() == 1
	}
	if hasLabels && r.Err() == nil {
		lb := r.U8s()
		if r.Err() == nil {
			d.Labels = &Labels{}
			if err := d.Labels.UnmarshalBinary(lb); err != nil {
				return fmt.Errorf("decoding model: %w", err)
			}
		}
	}
	if r.Version() == versionDecoder && r.Err() == nil {
		d.Decoder = readDecoder(r)
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("decoding model: %w", err)
	}
	// Empty arrays decode as nil, as an encoder's zero values are.
	d.Embed.InputToken = nilIfEmpty(d.Embed.InputToken)
	d.Readout.Token = nilIfEmpty(d.Readout.Token)
	d.Readout.Dim = nilIfEmpty(d.Readout.Dim)
	if len(d.Readout.Threshold) == 0 {
		d.Readout.Threshold = nil
	}
	for i := range d.Tensors {
		d.Tensors[i].Col = nilIfEmpty(d.Tensors[i].Col)
		if len(d.Tensors[i].Val) == 0 {
			d.Tensors[i].Val = nil
		}
	}
	*m = d
	return nil
}

func nilIfEmpty(xs []int32) []int32 {
	if len(xs) == 0 {
		return nil
	}
	return xs
}

func writeDecoder(w *binenc.Writer, d *Decoder) {
	for _, v := range []int{d.Vocab, d.Positions, d.Prompt, d.Working, d.Digest} {
		w.I64(int64(v))
	}
	w.Strings([]string{d.TokEmbed, d.PosEmbed, d.NormW, d.NormB, d.HeadW, d.HeadB})
	w.I64(int64(math.Float64bits(d.NormEps)))
	w.I32s(d.PromptBits)
	w.I32s(d.DigestBits)
	w.I32s(d.WorkStart)
	w.I32s(d.WorkSrc)
	w.I32s(d.WorkCoef)
	w.I32s(d.WorkConst)
	w.I32s(d.Step)
	w.Strings(d.Names)
}

func readDecoder(r *binenc.Reader) *Decoder {
	d := &Decoder{}
	for _, p := range []*int{&d.Vocab, &d.Positions, &d.Prompt, &d.Working, &d.Digest} {
		*p = int(r.I64())
	}
	names := r.Strings()
	if r.Err() == nil && len(names) == 6 {
		d.TokEmbed, d.PosEmbed, d.NormW, d.NormB, d.HeadW, d.HeadB = names[0], names[1], names[2], names[3], names[4], names[5]
	}
	d.NormEps = math.Float64frombits(uint64(r.I64()))
	d.PromptBits = r.I32s()
	d.DigestBits = r.I32s()
	d.WorkStart = r.I32s()
	d.WorkSrc = nilIfEmpty(r.I32s())
	d.WorkCoef = nilIfEmpty(r.I32s())
	d.WorkConst = r.I32s()
	d.Step = r.I32s()
	if n := r.Strings(); len(n) > 0 {
		d.Names = n
	}
	return d
}
