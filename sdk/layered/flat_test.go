package layered_test

import (
	"bytes"
	"encoding/binary"
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
func within(v []int32, data []byte) bool {
	if len(v) == 0 {
		return true
	}
	p, lo := uintptr(unsafe.Pointer(&v[0])), uintptr(unsafe.Pointer(&data[0]))
	return p >= lo && p+4*uintptr(len(v)) <= lo+uintptr(len(data))
}

// TestFlatRoundTrip checks the flat encoding against the packed one: both
// decode to the same circuit, and DecodeView takes the arrays in place
// (views of the blob, no fresh arrays).
func TestFlatRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	tests := []struct {
		name string
		c    *layered.Circuit
	}{
		{"empty", layered.NewBuilder(0, nil).Circuit(nil)},
		{"inputs only", layered.NewBuilder(2, nil).Circuit(nil)},
		{"copy then same row", copyThenSameRow()},
		{"xor", xorCircuit()},
		{"parity 5", parityCircuit(5)},
		{"random", randomCircuit(rng, 30, 4)},
		{"xor forms", xorForms()},
		{"random forms", formsCircuit(rng, 4, 3)},
		{"hinted forms", hintedForms()},
		{"hinted xor", hintedXor()},
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
			if len(data)%8 != 0 {
				t.Errorf("flat blob of %d bytes, not a multiple of 8", len(data))
			}
			got, err := layered.DecodeView(data)
			if err != nil {
				t.Fatalf("DecodeView: %v", err)
			}
			if !reflect.DeepEqual(got, &want) {
				t.Fatalf("flat decodes to\n%+v\npacked to\n%+v", got, &want)
			}
			for name, v := range map[string][]int32{"Src": got.Src, "Weight": got.Weight, "RowStart": got.RowStart, "Threshold": got.Threshold, "Pos": got.Pos} {
				if !within(v, data) {
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
			// A packed blob through DecodeView is decoded as before.
			if viaView, err := layered.DecodeView(packed); err != nil || !reflect.DeepEqual(viaView, &want) {
				t.Fatalf("DecodeView of the packed blob: %v", err)
			}
		})
	}
}

// TestFlatRefusesMalformed checks that a flat blob carrying what Validate
// refuses (a plugin that lies) is refused with Validate's located error,
// and that a blob whose table lies about sizes is refused before anything
// is read or allocated by those sizes.
func TestFlatRefusesMalformed(t *testing.T) {
	for _, tc := range validateCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := cloneCircuit(xorCircuit())
			tc.corrupt(c)
			_, err := layered.DecodeView(flatBytes(c))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "decoding layered circuit: ") {
				t.Errorf("error %q does not locate %q", err, tc.want)
			}
		})
	}
	good := flatBytes(xorCircuit())
	// The table starts at byte 16, 8 bytes per array: present, size, pad,
	// count. Array 0 is Kind, 4 is Src.
	entry := func(i int) int { return 16 + 8*i }
	blobs := []struct {
		name string
		edit func(b []byte) []byte
		want string
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-8] }, "runs past"},
		{"trailing bytes", func(b []byte) []byte { return append(b, make([]byte, 8)...) }, "its arrays end at"},
		{"huge array count", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[8:], 1<<31)
			return b
		}, "run past"},
		{"huge element count", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[entry(4)+4:], 0xffffffff)
			return b
		}, "array 4 of 4294967295 elements runs past"},
		{"bad element size", func(b []byte) []byte { b[entry(4)+1] = 2; return b }, "element size 2"},
		{"absent with elements", func(b []byte) []byte { b[entry(4)] = 0; return b }, "absent but of"},
		{"bad flags", func(b []byte) []byte { b[entry(1)+2] = 1; return b }, "bad flags"},
		{"other magic", func(b []byte) []byte { b[0] = 'X'; return b }, "not a"},
	}
	for _, tc := range blobs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := layered.DecodeView(tc.edit(bytes.Clone(good)))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
		})
	}
}
