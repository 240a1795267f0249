package circuit_test

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unsafe"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// flatBytes returns c's flat encoding in one slice.
func flatBytes(c *circuit.Circuit) []byte { return bytes.Join(c.MarshalFlat(), nil) }

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
	rng := rand.New(rand.NewPCG(5, 6))
	hinted := validCircuit()
	hinted.Pos = make([]int32, hinted.NumNodes())
	for i := range hinted.Pos {
		hinted.Pos[i] = int32(i%5) - 1
	}
	tests := []struct {
		name string
		c    *circuit.Circuit
	}{
		{"empty", circuit.NewBuilder().Circuit()},
		{"valid", validCircuit()},
		{"hinted", hinted},
		{"random", randomCircuit(rng, 300)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			packed, err := tt.c.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			var want circuit.Circuit
			if err := want.UnmarshalBinary(packed); err != nil {
				t.Fatal(err)
			}
			data := flatBytes(tt.c)
			got, err := circuit.DecodeView(data)
			if err != nil {
				t.Fatalf("DecodeView: %v", err)
			}
			if !reflect.DeepEqual(got, &want) {
				t.Fatalf("flat decodes to\n%+v\npacked to\n%+v", got, &want)
			}
			for name, v := range map[string][]int32{"Args": got.Args, "ArgStart": got.ArgStart, "Param": got.Param, "Pos": got.Pos} {
				if tt.c.NumNodes() > 0 && !within(v, data) {
					t.Errorf("%s is a fresh array, not a view of the blob", name)
				}
			}
			var copied circuit.Circuit
			if err := copied.UnmarshalBinary(data); err != nil {
				t.Fatalf("UnmarshalBinary of the flat blob: %v", err)
			}
			if !reflect.DeepEqual(&copied, &want) {
				t.Fatal("UnmarshalBinary of the flat blob differs from the packed decoding")
			}
			if len(copied.Args) > 0 && within(copied.Args, data) {
				t.Error("UnmarshalBinary kept a view of its argument")
			}
			if viaView, err := circuit.DecodeView(packed); err != nil || !reflect.DeepEqual(viaView, &want) {
				t.Fatalf("DecodeView of the packed blob: %v", err)
			}
		})
	}
}

// TestFlatRefusesMalformed checks that a flat blob carrying what Validate
// refuses (a plugin or host that lies) is refused with Validate's located
// error, and one whose table lies about sizes before they are used.
func TestFlatRefusesMalformed(t *testing.T) {
	for _, tc := range validateCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := cloneCircuit(validCircuit())
			tc.corrupt(c)
			_, err := circuit.DecodeView(flatBytes(c))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "decoding logic circuit: ") {
				t.Errorf("error %q does not locate %q", err, tc.want)
			}
		})
	}
	good := flatBytes(validCircuit())
	// The table starts at byte 16, 8 bytes per array; array 4 is Args.
	const args = 16 + 8*4
	blobs := []struct {
		name string
		edit func(b []byte) []byte
		want string
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)-8] }, "runs past"},
		{"huge element count", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[args+4:], 0xffffffff)
			return b
		}, "array 4 of 4294967295 elements runs past"},
		{"head length past the end", func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[12:], 0x7fffffff)
			return b
		}, "run past"},
	}
	for _, tc := range blobs {
		t.Run(tc.name, func(t *testing.T) {
			_, err := circuit.DecodeView(tc.edit(bytes.Clone(good)))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}
