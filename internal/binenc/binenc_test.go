package binenc_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/binenc"
)

const (
	testMagic   = "TEST"
	testVersion = 7
)

// record is one value of every kind the encoding has.
type record struct {
	u32     uint32
	i64     int64
	i32s    []int32
	f32s    []float32
	u8s     []byte
	str     string
	strs    []string
	trailer uint32
}

func (r record) write() []byte {
	w := binenc.NewWriter(testMagic, testVersion, 0)
	w.U32(r.u32)
	w.I64(r.i64)
	w.I32s(r.i32s)
	w.F32s(r.f32s)
	w.U8s(r.u8s)
	w.String(r.str)
	w.Strings(r.strs)
	w.U32(r.trailer)
	return w.Bytes()
}

func read(data []byte) (record, error) {
	r := binenc.NewReader(data, testMagic, testVersion)
	var rec record
	rec.u32 = r.U32()
	rec.i64 = r.I64()
	rec.i32s = r.I32s()
	rec.f32s = r.F32s()
	rec.u8s = r.U8s()
	rec.str = r.String()
	rec.strs = r.Strings()
	rec.trailer = r.U32()
	return rec, r.Done()
}

func sampleRecord() record {
	return record{
		u32:     0xdeadbeef,
		i64:     -1 << 62,
		i32s:    []int32{0, -1, 1, math.MaxInt32, math.MinInt32, 12345},
		f32s:    []float32{0, -0.5, 1e30, float32(math.Inf(-1)), math.SmallestNonzeroFloat32},
		u8s:     []byte{0, 1, 255},
		str:     "block 2/round 5/θ",
		strs:    []string{"", "a", "round 1/theta"},
		trailer: 42,
	}
}

// TestRoundTrip checks that every kind of value reads back as written.
func TestRoundTrip(t *testing.T) {
	want := sampleRecord()
	data := want.write()
	if string(data[:4]) != testMagic {
		t.Errorf("blob starts %q", data[:4])
	}
	got, err := read(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestEmpty checks empty arrays and strings: they read back empty.
func TestEmpty(t *testing.T) {
	data := record{}.write()
	got, err := read(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.i32s) != 0 || len(got.f32s) != 0 || len(got.u8s) != 0 || got.str != "" || len(got.strs) != 0 {
		t.Errorf("empty record read back as %+v", got)
	}
}

// TestNaN checks that float32 bits survive, NaN included.
func TestNaN(t *testing.T) {
	nan := math.Float32frombits(0x7fc00123)
	w := binenc.NewWriter(testMagic, testVersion, 0)
	w.F32s([]float32{nan})
	r := binenc.NewReader(w.Bytes(), testMagic, testVersion)
	got := r.F32s()
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
	if math.Float32bits(got[0]) != 0x7fc00123 {
		t.Errorf("NaN bits %x", math.Float32bits(got[0]))
	}
}

// TestI32sPacking checks that int32 arrays are packed at the narrowest
// width holding all their values, at each width boundary, and read back.
func TestI32sPacking(t *testing.T) {
	for _, tc := range []struct {
		v    []int32
		size int
	}{
		{nil, 1},
		{[]int32{0}, 1},
		{[]int32{-128, 127}, 1},
		{[]int32{128}, 2},
		{[]int32{-129}, 2},
		{[]int32{-32768, 32767, 5}, 2},
		{[]int32{32768}, 4},
		{[]int32{-32769}, 4},
		{[]int32{math.MinInt32, math.MaxInt32, 0}, 4},
		{[]int32{1, 2, 3, 100000}, 4},
	} {
		w := binenc.NewWriter(testMagic, testVersion, 0)
		w.I32s(tc.v)
		data := w.Bytes()
		if want := 8 + 4 + 1 + tc.size*len(tc.v); len(data) != want {
			t.Errorf("%v: %d bytes, want %d (element size %d)", tc.v, len(data), want, tc.size)
		}
		if data[12] != byte(tc.size) {
			t.Errorf("%v: element size byte %d, want %d", tc.v, data[12], tc.size)
		}
		r := binenc.NewReader(data, testMagic, testVersion)
		got := r.I32s()
		if err := r.Done(); err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tc.v) || (len(got) > 0 && !reflect.DeepEqual(got, tc.v)) {
			t.Errorf("%v read back as %v", tc.v, got)
		}
	}
}

// TestI32sWideAccepted checks that the reader accepts an array packed
// wider than necessary (the writer never does so, but the format allows it).
func TestI32sWideAccepted(t *testing.T) {
	w := binenc.NewWriter(testMagic, testVersion, 0)
	w.U32(2)
	data := append(w.Bytes(), 4, 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff)
	r := binenc.NewReader(data, testMagic, testVersion)
	if got := r.I32s(); !reflect.DeepEqual(got, []int32{1, -1}) || r.Done() != nil {
		t.Errorf("4-byte packed [1, -1] read as %v, %v", got, r.Err())
	}
}

// TestHeaderErrors checks magic and version checks.
func TestHeaderErrors(t *testing.T) {
	good := sampleRecord().write()
	wrongVersion := append([]byte(nil), good...)
	wrongVersion[4] = testVersion + 1
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"nil", nil, `not a "TEST" blob`},
		{"magic only", []byte("TEST"), `not a "TEST" blob`},
		{"7 bytes", []byte("TEST\x07\x00\x00"), `not a "TEST" blob`},
		{"wrong magic", append([]byte("TEXT"), good[4:]...), `not a "TEST" blob`},
		{"lower-case magic", append([]byte("test"), good[4:]...), `not a "TEST" blob`},
		{"wrong version", wrongVersion, `"TEST" blob version 8, this build reads version 7`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := read(tc.data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	// A header alone is a valid, empty blob.
	r := binenc.NewReader([]byte("TEST\x07\x00\x00\x00"), testMagic, testVersion)
	if err := r.Done(); err != nil {
		t.Errorf("header only: %v", err)
	}
}

// TestReaderVersions checks that a reader of versions oldest…newest takes
// each of them, says which it read, and rejects the versions around them.
func TestReaderVersions(t *testing.T) {
	for _, tc := range []struct {
		version uint32
		want    string // error fragment; "" = accepted
	}{
		{2, "version 2, this build reads versions 3…5"},
		{3, ""},
		{4, ""},
		{5, ""},
		{6, "version 6, this build reads versions 3…5"},
	} {
		blob := binenc.NewWriter(testMagic, tc.version, 0).Bytes()
		r := binenc.NewReaderVersions(blob, testMagic, 3, 5)
		err := r.Done()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("version %d: %v", tc.version, err)
		case tc.want == "" && r.Version() != tc.version:
			t.Errorf("version %d: Version() = %d", tc.version, r.Version())
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("version %d: err = %v, want it to mention %q", tc.version, err, tc.want)
		case tc.want != "" && r.Version() != 0:
			t.Errorf("version %d rejected but Version() = %d", tc.version, r.Version())
		}
	}
}

// TestTruncated checks that every proper prefix of a blob is rejected as
// truncated (past the header) and that reading on after an error yields
// zero values.
func TestTruncated(t *testing.T) {
	data := sampleRecord().write()
	for n := 8; n < len(data); n++ {
		got, err := read(data[:n])
		if !errors.Is(err, binenc.ErrTruncated) {
			t.Fatalf("prefix of %d/%d bytes: err = %v", n, len(data), err)
		}
		if got.trailer != 0 {
			t.Fatalf("prefix of %d bytes: read past the error: %+v", n, got)
		}
	}
}

// TestTrailing checks that Done reports bytes left over.
func TestTrailing(t *testing.T) {
	data := append(sampleRecord().write(), 1, 2, 3)
	if _, err := read(data); err == nil || !strings.Contains(err.Error(), "3 trailing bytes") {
		t.Errorf("err = %v", err)
	}
}

// TestStickyError checks that the first error sticks and later reads
// return zero values without panicking.
func TestStickyError(t *testing.T) {
	r := binenc.NewReader([]byte("TEST\x07\x00\x00\x00\x01"), testMagic, testVersion)
	if r.U32() != 0 || !errors.Is(r.Err(), binenc.ErrTruncated) {
		t.Fatalf("U32 of 1 byte: err = %v", r.Err())
	}
	if r.I64() != 0 || r.I32s() != nil || r.F32s() != nil || r.U8s() != nil || r.String() != "" || r.Strings() != nil {
		t.Errorf("reads after an error return values")
	}
	if !errors.Is(r.Done(), binenc.ErrTruncated) {
		t.Errorf("Done = %v, want the first error", r.Done())
	}
	r = binenc.NewReader([]byte("NOPE\x07\x00\x00\x00\x01\x00\x00\x00"), testMagic, testVersion)
	if r.U32() != 0 || r.Err() == nil || errors.Is(r.Err(), binenc.ErrTruncated) {
		t.Errorf("reading a blob with a bad header: %v", r.Err())
	}
}

// TestHugeLengths checks that absurd declared lengths are rejected as
// truncated before anything is allocated for them.
func TestHugeLengths(t *testing.T) {
	header := []byte("TEST\x07\x00\x00\x00")
	huge := append(append([]byte(nil), header...), 0xff, 0xff, 0xff, 0xff)
	for name, readFn := range map[string]func(r *binenc.Reader){
		"I32s":    func(r *binenc.Reader) { r.I32s() },
		"F32s":    func(r *binenc.Reader) { r.F32s() },
		"U8s":     func(r *binenc.Reader) { r.U8s() },
		"String":  func(r *binenc.Reader) { _ = r.String() },
		"Strings": func(r *binenc.Reader) { r.Strings() },
	} {
		data := huge
		if name == "I32s" {
			data = append(append([]byte(nil), huge...), 4, 0, 0, 0, 0)
		}
		allocs := testing.AllocsPerRun(10, func() {
			r := binenc.NewReader(data, testMagic, testVersion)
			readFn(r)
			if !errors.Is(r.Err(), binenc.ErrTruncated) {
				t.Fatalf("%s: err = %v", name, r.Err())
			}
		})
		if allocs > 2 {
			t.Errorf("%s: %v allocations for a rejected length", name, allocs)
		}
	}
}

// TestBadElementSize checks the element-size byte of int32 arrays.
func TestBadElementSize(t *testing.T) {
	for _, size := range []byte{0, 3, 5, 8, 255} {
		data := []byte("TEST\x07\x00\x00\x00\x01\x00\x00\x00")
		data = append(data, size, 1, 0, 0, 0, 0, 0, 0, 0)
		r := binenc.NewReader(data, testMagic, testVersion)
		if got := r.I32s(); got != nil || r.Err() == nil || !strings.Contains(r.Err().Error(), "element size") {
			t.Errorf("element size %d: %v, %v", size, got, r.Err())
		}
	}
}

// TestU8sCopies checks that U8s returns a copy, not a view of the blob.
func TestU8sCopies(t *testing.T) {
	w := binenc.NewWriter(testMagic, testVersion, 0)
	w.U8s([]byte{1, 2, 3})
	data := w.Bytes()
	r := binenc.NewReader(data, testMagic, testVersion)
	got := r.U8s()
	data[len(data)-1] = 99
	if got[2] != 3 {
		t.Errorf("U8s aliases the blob")
	}
}

// TestPackedPieces: an array written piecewise with PackedI32s and PutI32s
// reads back with I32s, and PackedI32s reads it packed, unpacking alike.
func TestPackedPieces(t *testing.T) {
	v := []int32{3, -200, 7, 40000, -1, 0}
	size := binenc.Width(binenc.MinMax(v))
	{
		w := binenc.NewWriter(testMagic, testVersion, 0)
		b := w.PackedI32s(len(v), size)
		b = binenc.PutI32s(b, size, v[:2])
		b = binenc.PutI32s(b, size, v[2:])
		if len(b) != 0 {
			t.Fatalf("%d bytes left unfilled", len(b))
		}
		w.U8s([]byte("xyz"))
		data := w.Bytes()
		r := binenc.NewReader(data, testMagic, testVersion)
		if got := r.I32s(); !reflect.DeepEqual(got, v) {
			t.Fatalf("I32s = %v, want %v", got, v)
		}
		if got := string(r.U8sView()); got != "xyz" || r.Done() != nil {
			t.Fatalf("U8sView = %q, %v", got, r.Done())
		}
		r = binenc.NewReader(data, testMagic, testVersion)
		p := r.PackedI32s()
		got := make([]int32, p.Len())
		p.Get(got)
		if !reflect.DeepEqual(got, v) || p.Size != size {
			t.Fatalf("PackedI32s = %v (size %d), want %v", got, p.Size, v)
		}
	}
	for _, tc := range []struct {
		lo, hi int32
		want   int
	}{{0, 0, 1}, {-128, 127, 1}, {-129, 0, 2}, {0, 128, 2}, {-32768, 32767, 2}, {0, 32768, 4}, {math.MinInt32, 0, 4}} {
		if got := binenc.Width(tc.lo, tc.hi); got != tc.want {
			t.Errorf("Width(%d, %d) = %d, want %d", tc.lo, tc.hi, got, tc.want)
		}
	}
}
