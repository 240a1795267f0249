// Package binenc is the compact binary encoding of tcforge artifacts: a
// magic tag and version, then little-endian packed arrays and
// length-prefixed strings. Readers check every length against the bytes
// left, so a truncated or hostile blob yields an error, never a panic or a
// huge allocation.
package binenc

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// Writer appends encoded values to a byte slice.
type Writer struct{ buf []byte }

// NewWriter starts a blob with a 4-byte magic tag and a version.
func NewWriter(magic string, version uint32, sizeHint int) *Writer {
	w := &Writer{buf: make([]byte, 0, sizeHint+16)}
	w.buf = append(w.buf, magic[:4]...)
	w.U32(version)
	return w
}

// Bytes returns the encoded blob.
func (w *Writer) Bytes() []byte { return w.buf }

// U32 appends a uint32.
func (w *Writer) U32(v uint32) { w.buf = binary.LittleEndian.AppendUint32(w.buf, v) }

// I64 appends an int64.
func (w *Writer) I64(v int64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(v)) }

// F32s appends a length-prefixed float32 array.
func (w *Writer) F32s(v []float32) {
	w.U32(uint32(len(v)))
	for _, x := range v {
		w.buf = binary.LittleEndian.AppendUint32(w.buf, math.Float32bits(x))
	}
}

// I32s appends a length-prefixed int32 array, packed at the narrowest of
// 1, 2 or 4 bytes per element that holds all its values: circuits' source
// indices, weights and thresholds are mostly small, so this roughly halves
// what crosses the plugin boundary.
func (w *Writer) I32s(v []int32) {
	lo, hi := MinMax(v)
	size := Width(lo, hi)
	PutI32s(w.PackedI32s(len(v), size), size, v)
}

// MinMax returns the least and the greatest of v and 0 (so that an empty
// array packs at one byte per element).
func MinMax(v []int32) (lo, hi int32) {
	for _, x := range v {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// Width returns the narrowest element size, 1, 2 or 4 bytes, that holds
// every value in [lo, hi].
func Width(lo, hi int32) int {
	switch {
	case lo >= math.MinInt8 && hi <= math.MaxInt8:
		return 1
	case lo >= math.MinInt16 && hi <= math.MaxInt16:
		return 2
	}
	return 4
}

// PackedI32s appends the header of a length-prefixed int32 array of n
// elements packed at size bytes each (1, 2 or 4, see Width) and returns
// the n·size bytes that follow, for the caller to fill with PutI32s: an
// array gathered from pieces is so written without being assembled first.
func (w *Writer) PackedI32s(n, size int) []byte {
	w.U32(uint32(n))
	w.buf = append(w.buf, byte(size))
	off := len(w.buf)
	w.buf = append(w.buf, make([]byte, size*n)...)
	return w.buf[off:]
}

// PutI32s packs v at size bytes per element (1, 2 or 4) into the start of
// dst, which must hold them, and returns the rest of dst. Values that do
// not fit size are truncated: size comes from Width.
func PutI32s(dst []byte, size int, v []int32) []byte {
	switch size {
	case 1:
		b := dst[:len(v)]
		for i, x := range v {
			b[i] = byte(x)
		}
	case 2:
		b := dst[:2*len(v)]
		for i, x := range v {
			b[2*i] = byte(x)
			b[2*i+1] = byte(x >> 8)
		}
	default:
		b := dst[:4*len(v)]
		for i, x := range v {
			binary.LittleEndian.PutUint32(b[4*i:4*i+4], uint32(x))
		}
	}
	return dst[size*len(v):]
}

// U8s appends a length-prefixed byte array.
func (w *Writer) U8s(v []byte) {
	w.U32(uint32(len(v)))
	w.buf = append(w.buf, v...)
}

// String appends a length-prefixed string.
func (w *Writer) String(s string) {
	w.U32(uint32(len(s)))
	w.buf = append(w.buf, s...)
}

// Strings appends a length-prefixed string array.
func (w *Writer) Strings(v []string) {
	w.U32(uint32(len(v)))
	for _, s := range v {
		w.String(s)
	}
}

// ErrTruncated reports a blob that ends before its declared contents.
var ErrTruncated = errors.New("binenc: truncated data")

// Reader decodes a blob written by Writer. The first error sticks: later
// reads return zero values and Err reports it.
type Reader struct {
	buf     []byte
	err     error
	version uint32
}

// NewReader checks the magic tag and version and returns a reader positioned after them.
func NewReader(data []byte, magic string, version uint32) *Reader {
	return NewReaderVersions(data, magic, version, version)
}

// NewReaderVersions is NewReader for a format whose decoder still reads
// the older versions oldest…newest; Version tells which one the blob is.
func NewReaderVersions(data []byte, magic string, oldest, newest uint32) *Reader {
	r := &Reader{buf: data}
	if len(data) < 8 || string(data[:4]) != magic {
		r.err = fmt.Errorf("binenc: not a %q blob", magic)
		return r
	}
	r.buf = data[4:]
	v := r.U32()
	switch {
	case r.err != nil:
	case v < oldest || v > newest:
		if oldest == newest {
			r.err = fmt.Errorf("binenc: %q blob version %d, this build reads version %d", magic, v, newest)
		} else {
			r.err = fmt.Errorf("binenc: %q blob version %d, this build reads versions %d…%d", magic, v, oldest, newest)
		}
	default:
		r.version = v
	}
	return r
}

// Version returns the version of the blob (0 if its header was rejected).
func (r *Reader) Version() uint32 { return r.version }

// Err returns the first decoding error.
func (r *Reader) Err() error { return r.err }

// Done returns the first error, or an error if bytes are left over.
func (r *Reader) Done() error {
	if r.err == nil && len(r.buf) != 0 {
		r.err = fmt.Errorf("binenc: %d trailing bytes", len(r.buf))
	}
	return r.err
}

func (r *Reader) take(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.buf)) {
		r.err = ErrTruncated
		return nil
	}
	b := r.buf[:n]
	r.buf = r.buf[n:]
	return b
}

// U32 reads a uint32.
func (r *Reader) U32() uint32 {
	b := r.take(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// I64 reads an int64.
func (r *Reader) I64() int64 {
	b := r.take(8)
	if b == nil {
		return 0
	}
	return int64(binary.LittleEndian.Uint64(b))
}

// I32s reads a length-prefixed int32 array written by Writer.I32s.
func (r *Reader) I32s() []int32 {
	p := r.PackedI32s()
	if r.err != nil {
		return nil
	}
	out := make([]int32, p.Len())
	p.Get(out)
	return out
}

// Packed is a packed int32 array as read, not yet unpacked: Data holds
// its elements at Size bytes each (1, 2 or 4).
type Packed struct {
	Data []byte
	Size int
}

// Len returns the number of elements.
func (p Packed) Len() int {
	if p.Size == 0 {
		return 0
	}
	return len(p.Data) / p.Size
}

// Get unpacks the first len(dst) elements into dst (at most Len).
func (p Packed) Get(dst []int32) {
	switch p.Size {
	case 1:
		b := p.Data[:len(dst)]
		for i := range dst {
			dst[i] = int32(int8(b[i]))
		}
	case 2:
		b := p.Data[:2*len(dst)]
		for i := range dst {
			dst[i] = int32(int16(uint16(b[2*i]) | uint16(b[2*i+1])<<8))
		}
	case 4:
		b := p.Data[:4*len(dst)]
		for i := range dst {
			dst[i] = int32(binary.LittleEndian.Uint32(b[4*i : 4*i+4]))
		}
	}
}

// PackedI32s reads a length-prefixed int32 array written by Writer.I32s
// without unpacking it: the result's Data is a view of the blob. Decoders
// that scatter an array into place unpack it piecewise with Get, instead
// of unpacking it into a temporary first. After an error it is empty.
func (r *Reader) PackedI32s() Packed {
	n := uint64(r.U32())
	sz := r.take(1)
	if sz == nil {
		return Packed{}
	}
	size := uint64(sz[0])
	if size != 1 && size != 2 && size != 4 {
		r.err = fmt.Errorf("binenc: bad int32 array element size %d", size)
		return Packed{}
	}
	b := r.take(size * n)
	if b == nil {
		return Packed{}
	}
	return Packed{Data: b, Size: int(size)}
}

// F32s reads a length-prefixed float32 array.
func (r *Reader) F32s() []float32 {
	n := uint64(r.U32())
	b := r.take(4 * n)
	if b == nil {
		return nil
	}
	out := make([]float32, n)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// U8s reads a length-prefixed byte array (a copy).
func (r *Reader) U8s() []byte {
	b := r.U8sView()
	if b == nil {
		return nil
	}
	return append([]byte(nil), b...)
}

// U8sView reads a length-prefixed byte array as a view of the blob, not a
// copy: for decoders that only read it while decoding.
func (r *Reader) U8sView() []byte {
	n := uint64(r.U32())
	return r.take(n)
}

// String reads a length-prefixed string.
func (r *Reader) String() string {
	n := uint64(r.U32())
	return string(r.take(n))
}

// Strings reads a length-prefixed string array.
func (r *Reader) Strings() []string {
	n := uint64(r.U32())
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.buf))/4 {
		r.err = ErrTruncated
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.String()
	}
	return out
}
