package layered_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/tcforge/tcforge/sdk/layered"
)

// flatBytes returns c's flat encoding in one slice.
func flatBytes(c *layered.Circuit) []byte { return bytes.Join(c.MarshalFlat(), nil) }

// within reports whether v's memory lies inside data's.
func within[T any](v []T, data []byte) bool {
	if len(v) == 0 {
		return true
	}
	var x T
	p, lo := uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&data[0]))
	return p >= lo && p+unsafe.Sizeof(x)*uintptr(len(v)) <= lo+uintptr(len(data))
}

// TestFlatRoundTrip checks the flat encoding against the packed one: both
// decode to the same circuit (forms, hints, repeated rows, copies, no
// gates), DecodeView takes the arrays in place (views of the blob, no
// fresh arrays), UnmarshalBinary reads a flat blob into arrays of its
// own, and DecodeView reads a packed blob.
func TestFlatRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	tests := []struct {
		name string
		c    *layered.Circuit
	}{
		{"no gates", layered.NewBuilder(3, nil).Circuit(nil)},
		{"no inputs", layered.NewBuilder(0, nil).Circuit(nil)},
		{"xor", xorCircuit()},
		{"parity", parityCircuit(5)},
		{"random", randomCircuit(rng, 30, 4)},
		{"repeated rows", rowCircuit(rng, 12, 5)},
		{"copy then same row", copyThenSameRow()},
		{"forms", xorForms()},
		{"random forms", formsCircuit(rng, 6, 4)},
		{"hinted xor", hintedXor()},
		{"hinted forms", hintedForms()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			packed, err := tt.c.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var want layered.Circuit
			if err := want.UnmarshalBinary(packed); err != nil {
				t.Fatal(err)
			}
			data := flatBytes(tt.c)
			got, err := layered.DecodeView(data)
			if err != nil {
				t.Fatalf("DecodeView: %v", err)
			}
			if !reflect.DeepEqual(got, &want) {
				t.Fatalf("flat decodes to\n%+v\npacked to\n%+v", got, &want)
			}
			for name, in := range map[string]bool{
				"Kind": within(got.Kind, data), "RowStart": within(got.RowStart, data),
				"Src": within(got.Src, data), "Weight": within(got.Weight, data),
				"Threshold": within(got.Threshold, data), "Pos": within(got.Pos, data),
				"FormSrc": within(got.FormSrc, data),
			} {
				if !in {
					t.Errorf("%s is a fresh array, not a view of the blob", name)
				}
			}
			var copied layered.Circuit
			if err := copied.UnmarshalBinary(data); err != nil {
				t.Fatalf("UnmarshalBinary of the flat blob: %v", err)
			}
			if !reflect.DeepEqual(&copied, &want) {
				t.Fatal("UnmarshalBinary of the flat blob differs from the packed decoding")
			}
			if len(copied.Src) > 0 && within(copied.Src, data) {
				t.Error("UnmarshalBinary kept a view of its argument")
			}
			if viaView, err := layered.DecodeView(packed); err != nil || !reflect.DeepEqual(viaView, &want) {
				t.Fatalf("DecodeView of the packed blob: %v", err)
			}
		})
	}
}

// TestFlatRefusesMalformed checks that a flat blob carrying what Validate
// refuses (a plugin or host that lies, or a bug) is refused with
// Validate's located error, with nothing expanded or indexed before the
// check; and that a blob whose table lies about its arrays is refused
// before any count in it is used.
func TestFlatRefusesMalformed(t *testing.T) {
	type corruption struct {
		name    string
		base    func() *layered.Circuit
		corrupt func(c *layered.Circuit)
		want    string
	}
	cases := []corruption{
		{"input count past int32", xorCircuit, func(c *layered.Circuit) { c.NumInputs = 1<<32 + 3 }, "input count 4294967299 exceeds"},
		{"kinds without gates", xorCircuit, func(c *layered.Circuit) { c.Kind = nil }, "0 gates but 5 thresholds"},
		{"source past the forms", xorForms, func(c *layered.Circuit) { c.Src[2] = 2 }, "source 2 outside level 1 (2 forms)"},
		{"form source past its level", xorForms, func(c *layered.Circuit) { c.FormSrc[3] = 2 }, "level 1 form 0: source 2 outside level 1 (width 2)"},
		{"form rows out of order", xorForms, func(c *layered.Circuit) { c.FormRowStart[1] = 5 }, "form 1: entry offsets out of order"},
		{"form rows past the entries", xorForms, func(c *layered.Circuit) { c.FormRowStart[1] = math.MaxInt32 }, "form 0: entry offsets out of order"},
		{"FormStart short", xorForms, func(c *layered.Circuit) { c.FormStart = c.FormStart[:2] }, "FormStart has 2 entries for 2 levels"},
		{"form constants short", xorForms, func(c *layered.Circuit) { c.FormConst = c.FormConst[1:] }, "FormStart does not span the 2 forms"},
		{"form coefficients short", xorForms, func(c *layered.Circuit) { c.FormCoef = c.FormCoef[1:] }, "form sources but"},
		{"form arrays without FormStart", xorForms, func(c *layered.Circuit) { c.FormStart = nil }, "form arrays without FormStart"},
		{"mass overflows", xorForms, func(c *layered.Circuit) { c.FormCoef[2] = math.MaxInt32; c.Weight[2] = 2 }, "add up past"},
		{"gate hints short", hintedXor, func(c *layered.Circuit) { c.Pos = c.Pos[1:] }, "gate position hints: 4 entries for 5 values"},
		{"input hints missing", hintedXor, func(c *layered.Circuit) { c.InputPos = nil }, "without input hints"},
		{"form hints missing", hintedForms, func(c *layered.Circuit) { c.FormPos = nil }, "without form hints"},
		{"hint below NoPos", hintedForms, func(c *layered.Circuit) { c.FormPos[0] = -2 }, "value 0 has hint -2"},
	}
	for _, tc := range validateCases() {
		cases = append(cases, corruption{tc.name, xorCircuit, tc.corrupt, tc.want})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cloneCircuit(tc.base())
			tc.corrupt(c)
			_, err := layered.DecodeView(flatBytes(c))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "decoding layered circuit: layered: ") {
				t.Errorf("error %q does not locate %q", err, tc.want)
			}
		})
	}

	good := flatBytes(xorCircuit())
	// The table starts at byte 16, 8 bytes per array: 0 LevelStart,
	// 1 Kind, 2 Threshold, 3 Tag, 4 RowStart, 5 Src, 6 Weight.
	entry := func(i int) int { return 16 + 8*i }
	blobs := []struct {
		name string
		edit func(b []byte) []byte
		want string
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-8] }, "runs past"},
		{"trailing bytes", func(b []byte) []byte { return append(b, make([]byte, 8)...) }, "its arrays end at"},
		{"header only", func(b []byte) []byte { return b[:16] }, "run past"},
		{"huge source count", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[entry(5)+4:], 0xffffffff)
			return b
		}, "array 5 of 4294967295 elements runs past"},
		{"head length past the end", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[12:], 0x7fffffff)
			return b
		}, "run past"},
		{"array count past the end", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[8:], 0x7fffffff)
			return b
		}, "run past"},
		{"kinds of 4-byte elements", func(b []byte) []byte {
			// 2 of 4 bytes take the 8 that 5 kinds and padding took.
			b[entry(1)+1] = 4
			binary.LittleEndian.PutUint32(b[entry(1)+4:], 2)
			return b
		}, "array 1 has 4-byte elements, want 1"},
		{"element size 3", func(b []byte) []byte {
			b[entry(2)+1] = 3
			return b
		}, "array 2: element size 3"},
		{"absent array with elements", func(b []byte) []byte {
			b[entry(0)] = 0
			return b
		}, "absent but of"},
		{"bad flags", func(b []byte) []byte {
			b[entry(3)+2] = 1
			return b
		}, "array 3: bad flags"},
		{"source out of range in place", func(b []byte) []byte {
			// Src's first element, found by its table entry's place.
			c, err := layered.DecodeView(bytes.Clone(b))
			if err != nil {
				t.Fatal(err)
			}
			off := bytes.Index(b, unsafe.Slice((*byte)(unsafe.Pointer(&c.Src[0])), 4*len(c.Src)))
			binary.LittleEndian.PutUint32(b[off:], 1000)
			return b
		}, "level 1 gate 0: source 1000 outside level 0 (width 3)"},
		{"wrong version", func(b []byte) []byte {
			b[4] = 9
			return b
		}, "version"},
	}
	for _, tc := range blobs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := layered.DecodeView(tc.edit(bytes.Clone(good)))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "decoding layered circuit: ") {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}
