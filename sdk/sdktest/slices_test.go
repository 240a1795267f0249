package sdktest_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestKeccakOffsets checks the offsets against the ρ table: at w = 64 the
// 24 non-zero offsets are distinct mod 64, −1 (63, lane (1,0)) among
// them, so with 0 there are 25; at w = 8 they cover every residue.
func TestKeccakOffsets(t *testing.T) {
	want := []int{0, 2, 3, 8, 9, 19, 20, 21, 23, 25, 28, 36, 37, 39, 43, 44, 46, 49, 50, 54, 56, 58, 61, 62, 63}
	if got := sdktest.KeccakOffsets(64); !reflect.DeepEqual(got, want) {
		t.Errorf("KeccakOffsets(64) = %v, want %v", got, want)
	}
	if got := sdktest.KeccakOffsets(8); !reflect.DeepEqual(got, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("KeccakOffsets(8) = %v", got)
	}
	if got := sdktest.KeccakOffsets(1); !reflect.DeepEqual(got, []int{0}) {
		t.Errorf("KeccakOffsets(1) = %v", got)
	}
}

// TestSliceLevels checks the per-level figures on a hand-built circuit
// over 4 slices, and that an unhinted or out-of-range value is refused.
func TestSliceLevels(t *testing.T) {
	build := func(formPos int) *layered.Circuit {
		b := layered.NewBuilder(4, nil)
		for i := range 4 {
			b.SetInputPos(i, i)
		}
		tag := b.Tag("")
		// Level 0 forms: slice z adds inputs z and z−1.
		for z := range 4 {
			b.At(z, func() { b.Form(0, []int32{int32(z), int32((z + 3) % 4)}, []int32{1, 1}) })
		}
		// Level 1: two gates a slice, one reading its own form, one the
		// form of slice z+2 (offset 2).
		for z := range 4 {
			b.At(z, func() {
				b.Gate(layered.KindGate, 1, []int32{int32(z)}, []int32{1}, tag)
				b.Gate(layered.KindGate, 1, []int32{int32((z + 2) % 4)}, []int32{1}, tag)
			})
		}
		b.Level()
		// Level 1 forms: one, at formPos, over gates of slices 0 and 3;
		// a gate of slice 1 reads it.
		b.At(formPos, func() { b.Form(0, []int32{0, 6}, []int32{1, -1}) })
		b.At(1, func() { b.Gate(layered.KindGate, 1, []int32{0}, []int32{1}, tag) })
		b.Level()
		return b.Circuit(nil)
	}
	levels, err := sdktest.SliceLevels(build(0), 4)
	if err != nil {
		t.Fatal(err)
	}
	want := []sdktest.LevelSlices{
		{Level: 1, PerSlice: []int{2, 2, 2, 2}, Forms: []int{1, 1, 1, 1}, Offsets: []int{0, 2}, FormOffsets: []int{0, 3}},
		{Level: 2, PerSlice: []int{0, 1, 0, 0}, Forms: []int{1, 0, 0, 0}, Offsets: []int{3}, FormOffsets: []int{0, 3}},
	}
	if !reflect.DeepEqual(levels, want) {
		t.Errorf("SliceLevels =\n%+v\nwant\n%+v", levels, want)
	}
	for _, tc := range []struct {
		c    *layered.Circuit
		want string
	}{
		{build(circuit.NoPos), "level 1 form 0 hinted -1"},
		{build(4), "level 1 form 0 hinted 4"},
		{sdktest.ThreeGates(), "no position hints"},
	} {
		if _, err := sdktest.SliceLevels(tc.c, 4); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want %q", err, tc.want)
		}
	}
}
