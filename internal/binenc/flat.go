package binenc

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// The flat layout is the other shape of an artifact's blob: its large
// arrays stored as they lie in memory (int32 little-endian, bytes as
// bytes, each at an 8-byte aligned offset) after a small head of packed
// fields, so that writing one is writing the arrays themselves and
// reading one is taking views of the blob, with no unpacking and no
// expansion. It is what crosses the plugin boundary where the blob goes
// through a file (internal/wire, "blob files"): a few times the packed
// size, but no work per element on either side beyond the receiver's
// checks.
//
//	magic[4] version:u32 arrays:u32 headLen:u32
//	per array: present:u8 elemSize:u8 pad:u16 count:u32   (8 bytes)
//	head (headLen bytes, a Writer's body)
//	pad to 8; each array, padded to 8
//
// A present flag of 0 marks a nil array (count 0), so that nil and empty
// slices survive the trip as they are.

// flatEntry is one array's table entry size in bytes.
const flatEntry = 8

// FlatWriter assembles a flat blob. The arrays it is given are not
// copied: Parts returns them as they are, between the header and padding.
type FlatWriter struct {
	magic   string
	version uint32
	head    *Writer
	arrays  [][]byte
	sizes   []byte
	nils    []bool
}

// NewFlatWriter starts a flat blob with a 4-byte magic tag and a version.
func NewFlatWriter(magic string, version uint32) *FlatWriter {
	return &FlatWriter{magic: magic, version: version, head: &Writer{}}
}

// Head returns the writer of the blob's head (packed fields before the
// arrays).
func (w *FlatWriter) Head() *Writer { return w.head }

// I32s adds an int32 array (a view of v's memory on a little-endian
// machine, else a converted copy).
func (w *FlatWriter) I32s(v []int32) {
	w.nils = append(w.nils, v == nil)
	w.sizes = append(w.sizes, 4)
	w.arrays = append(w.arrays, i32Bytes(v))
}

// U8s adds a byte array.
func (w *FlatWriter) U8s(v []byte) {
	w.nils = append(w.nils, v == nil)
	w.sizes = append(w.sizes, 1)
	w.arrays = append(w.arrays, v)
}

// zeros pads parts to 8 bytes.
var zeros [8]byte

// Parts returns the blob as consecutive pieces: the header, table and head
// in one, then each array (the caller's memory) and its padding. The
// arrays must not change until the parts are written.
func (w *FlatWriter) Parts() [][]byte {
	head := w.head.buf
	pre := make([]byte, 0, 16+flatEntry*len(w.arrays)+len(head)+8)
	pre = append(pre, w.magic[:4]...)
	pre = binary.LittleEndian.AppendUint32(pre, w.version)
	pre = binary.LittleEndian.AppendUint32(pre, uint32(len(w.arrays)))
	pre = binary.LittleEndian.AppendUint32(pre, uint32(len(head)))
	for i, a := range w.arrays {
		present := byte(1)
		if w.nils[i] {
			present = 0
		}
		pre = append(pre, present, w.sizes[i], 0, 0)
		pre = binary.LittleEndian.AppendUint32(pre, uint32(len(a)/int(w.sizes[i])))
	}
	pre = append(pre, head...)
	pre = append(pre, zeros[:pad8(len(pre))]...)
	parts := [][]byte{pre}
	for _, a := range w.arrays {
		if len(a) > 0 {
			parts = append(parts, a)
		}
		if p := pad8(len(a)); p > 0 {
			parts = append(parts, zeros[:p])
		}
	}
	return parts
}

// Bytes returns the blob in one slice (a copy of Parts).
func (w *FlatWriter) Bytes() []byte {
	parts := w.Parts()
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]byte, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// pad8 is the padding that brings n to a multiple of 8.
func pad8(n int) int { return (8 - n%8) % 8 }

// littleEndian reports whether this machine stores int32 little-endian.
func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// i32Bytes returns v's bytes little-endian: a view of v where the machine
// is little-endian, else a converted copy.
func i32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	if littleEndian() {
		return unsafe.Slice((*byte)(unsafe.Pointer(&v[0])), 4*len(v))
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// FlatReader reads a flat blob: its head through Head, its arrays, in the
// order written, through I32s and U8s. Every offset and size in the table
// is checked against the blob before anything is read.
type FlatReader struct {
	head    *Reader
	data    []byte
	entries []flatArray
	next    int
	err     error
}

// flatArray is one array's place in the blob.
type flatArray struct {
	present bool
	size    int // bytes per element
	off, n  int // byte offset, element count
}

// IsFlat reports whether data starts with magic and the given version (a
// flat blob's header), without checking anything else.
func IsFlat(data []byte, magic string, version uint32) bool {
	return len(data) >= 8 && string(data[:4]) == magic && binary.LittleEndian.Uint32(data[4:8]) == version
}

// NewFlatReader checks a flat blob's header and table: magic and version,
// the table and head within the blob, every array's element size (1 or 4),
// and the arrays, each at its aligned place, ending exactly at the blob's
// end. Sizes are checked in 64 bits: no count read from the blob is
// trusted before it is.
func NewFlatReader(data []byte, magic string, version uint32) (*FlatReader, error) {
	if len(data) < 16 || string(data[:4]) != magic {
		return nil, fmt.Errorf("binenc: not a %q blob", magic)
	}
	if v := binary.LittleEndian.Uint32(data[4:8]); v != version {
		return nil, fmt.Errorf("binenc: %q flat blob version %d, want %d", magic, v, version)
	}
	n := uint64(binary.LittleEndian.Uint32(data[8:12]))
	headLen := uint64(binary.LittleEndian.Uint32(data[12:16]))
	end := 16 + flatEntry*n + headLen
	if end > uint64(len(data)) {
		return nil, fmt.Errorf("binenc: %q flat blob: table of %d arrays and head of %d bytes run past its %d bytes", magic, n, headLen, len(data))
	}
	r := &FlatReader{data: data, entries: make([]flatArray, n)}
	table := data[16 : 16+flatEntry*n]
	r.head = &Reader{buf: data[16+flatEntry*n : end], version: version}
	off := end + uint64(pad8(int(end)))
	for i := range r.entries {
		e := table[flatEntry*i:]
		present, size, count := e[0], uint64(e[1]), uint64(binary.LittleEndian.Uint32(e[4:8]))
		switch {
		case present > 1 || e[2] != 0 || e[3] != 0:
			return nil, fmt.Errorf("binenc: %q flat blob: array %d: bad flags", magic, i)
		case size != 1 && size != 4:
			return nil, fmt.Errorf("binenc: %q flat blob: array %d: element size %d", magic, i, size)
		case present == 0 && count != 0:
			return nil, fmt.Errorf("binenc: %q flat blob: array %d: absent but of %d elements", magic, i, count)
		}
		bytes := size * count
		if off+bytes > uint64(len(data)) {
			return nil, fmt.Errorf("binenc: %q flat blob: array %d of %d elements runs past its %d bytes", magic, i, count, len(data))
		}
		r.entries[i] = flatArray{present: present == 1, size: int(size), off: int(off), n: int(count)}
		off += bytes + uint64(pad8(int(bytes)))
	}
	if off != uint64(len(data)) {
		return nil, fmt.Errorf("binenc: %q flat blob: %d bytes, its arrays end at %d", magic, len(data), off)
	}
	return r, nil
}

// Head returns the reader of the blob's head.
func (r *FlatReader) Head() *Reader { return r.head }

// Err returns the first error of the array reads.
func (r *FlatReader) Err() error { return r.err }

// Done returns the first error, or an error if the head has bytes left
// over or arrays are left unread.
func (r *FlatReader) Done() error {
	if r.err == nil {
		r.err = r.head.Done()
	}
	if r.err == nil && r.next != len(r.entries) {
		r.err = fmt.Errorf("binenc: flat blob holds %d arrays, %d read", len(r.entries), r.next)
	}
	return r.err
}

// entry returns the next array's entry if it has elements of size bytes.
func (r *FlatReader) entry(size int) (flatArray, bool) {
	if r.err != nil {
		return flatArray{}, false
	}
	if r.next >= len(r.entries) {
		r.err = fmt.Errorf("binenc: flat blob holds only %d arrays", len(r.entries))
		return flatArray{}, false
	}
	e := r.entries[r.next]
	if e.size != size {
		r.err = fmt.Errorf("binenc: flat blob: array %d has %d-byte elements, want %d", r.next, e.size, size)
		return flatArray{}, false
	}
	r.next++
	return e, true
}

// I32s returns the next array, of int32: a view of the blob (no copy)
// where the machine is little-endian and the blob 4-byte aligned, else a
// copy. nil if it was written nil.
func (r *FlatReader) I32s() []int32 {
	e, ok := r.entry(4)
	if !ok || !e.present {
		return nil
	}
	if e.n == 0 {
		return []int32{}
	}
	b := r.data[e.off : e.off+4*e.n]
	if littleEndian() && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), e.n)
	}
	out := make([]int32, e.n)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// U8s returns the next array, of bytes: a view of the blob. nil if it was
// written nil.
func (r *FlatReader) U8s() []byte {
	e, ok := r.entry(1)
	if !ok || !e.present {
		return nil
	}
	return r.data[e.off : e.off+e.n : e.off+e.n]
}
