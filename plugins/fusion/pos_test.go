package fusion_test

import (
	"context"
	"slices"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// subset reports whether every element of a is in b (both sorted).
func subset(a, b []int) bool {
	for _, x := range a {
		if _, ok := slices.BinarySearch(b, x); !ok {
			return false
		}
	}
	return true
}

// TestPosKeccak checks that every objective carries the sponge's position
// hints onto every gate, copy and form of a toy Keccak (w = 8): nothing
// unhinted, every level's gates (depth and size: every level; round: all
// but the last round's, whose switch points depend on the round
// constant's bit in each slice) split evenly over the 8 slices, and no
// edge spanning an offset a Keccak round does not read. A circuit without
// hints compiles to one without (depth and size).
func TestPosKeccak(t *testing.T) {
	const w = 8
	c := sponge(3, 2, 96, 1)
	for _, obj := range []fusion.Objective{fusion.Depth, fusion.Size, fusion.Round} {
		l, err := fusion.Compile(context.Background(), c, fusion.Options{Objective: obj})
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Validate(); err != nil {
			t.Fatal(err)
		}
		levels, err := sdktest.SliceLevels(l, w)
		if err != nil {
			t.Fatalf("%s: %v", obj, err)
		}
		offsets := sdktest.KeccakOffsets(w)
		for _, ls := range levels {
			if !ls.Even() && (obj != fusion.Round || ls.Level < l.Depth()-1) {
				t.Errorf("%s: level %d: gates per slice %v", obj, ls.Level, ls.PerSlice)
			}
			if !subset(ls.Offsets, offsets) || !subset(ls.FormOffsets, offsets) {
				t.Errorf("%s: level %d reads across offsets %v (forms %v), outside %v", obj, ls.Level, ls.Offsets, ls.FormOffsets, offsets)
			}
		}
		if obj == fusion.Round {
			continue
		}
		plain := *c
		plain.Pos = nil
		l, err = fusion.Compile(context.Background(), &plain, fusion.Options{Objective: obj})
		if err != nil {
			t.Fatal(err)
		}
		if l.HasPos() || l.InputPos != nil || l.FormPos != nil {
			t.Errorf("%s: circuit without hints compiled to one with", obj)
		}
	}
}

// TestPosSHA3_256 checks the hints fusion gives full SHA3-256 (one
// block), the information a tokens-as-states mapper places values by:
// every input, gate, copy and form hinted with its slice (0 unhinted);
// every level's gates split evenly over the 64 slices (but the first,
// whose θ counters are fewer in the slices of the padding constants);
// and, with objective depth, each round's two levels read across exactly
// the offsets theory says: the θ counters of slice z read forms of slice
// z only, each such form (a θ sum) adding values of slices z and z − 1;
// a χ gate of slice z reads the θ outputs of slices z − r[x][y] for the
// 25 ρ offsets r (mod 64: 0 and 24 distinct others, −1 among them). The
// offsets of every level are logged.
func TestPosSHA3_256(t *testing.T) {
	if testing.Short() {
		t.Skip("full SHA3-256")
	}
	const w = 64
	c := sha3Circuit(135)
	keccakOffsets := sdktest.KeccakOffsets(w)
	if len(keccakOffsets) != 25 {
		t.Fatalf("%d Keccak offsets mod 64, want 25: %v", len(keccakOffsets), keccakOffsets)
	}
	for _, obj := range []fusion.Objective{fusion.Depth, fusion.Size} {
		l, err := fusion.Compile(context.Background(), c, fusion.Options{Objective: obj})
		if err != nil {
			t.Fatal(err)
		}
		levels, err := sdktest.SliceLevels(l, w)
		if err != nil {
			t.Fatalf("%s: %v", obj, err)
		}
		checkNoneUnhinted(t, l)
		for _, ls := range levels {
			even := ls.Even()
			t.Logf("%s level %2d: %4d gates a slice (even %v), %2d forms a slice below; gates read forms at offsets %v, forms add values at offsets %v",
				obj, ls.Level, ls.PerSlice[0], even, ls.Forms[0], ls.Offsets, ls.FormOffsets)
			if !even && ls.Level > 1 {
				t.Errorf("%s: level %d: gates per slice %v", obj, ls.Level, ls.PerSlice)
			}
			if !ls.FormsEven() {
				t.Errorf("%s: level %d: forms per slice %v", obj, ls.Level, ls.Forms)
			}
			if !subset(ls.Offsets, keccakOffsets) || !subset(ls.FormOffsets, keccakOffsets) {
				t.Errorf("%s: level %d reads across offsets %v (forms %v), outside %v", obj, ls.Level, ls.Offsets, ls.FormOffsets, keccakOffsets)
			}
			if obj != fusion.Depth || ls.Level > 46 {
				continue // the last round: only the digest's lanes
			}
			wantGates, wantForms := []int{0}, []int{0, w - 1} // θ
			if ls.Level%2 == 0 {
				wantGates, wantForms = keccakOffsets, []int{0} // χ
			}
			if !slices.Equal(ls.Offsets, wantGates) || !slices.Equal(ls.FormOffsets, wantForms) {
				t.Errorf("depth: level %d: gates read offsets %v, forms %v; want %v and %v", ls.Level, ls.Offsets, ls.FormOffsets, wantGates, wantForms)
			}
		}
		t.Logf("%s: level 1, gates a slice: %v", obj, levels[0].PerSlice)
	}
}

// checkNoneUnhinted counts the values without a hint (−1): there must be
// none.
func checkNoneUnhinted(t *testing.T, l *layered.Circuit) {
	t.Helper()
	n := 0
	for _, v := range [][]int32{l.InputPos, l.Pos, l.FormPos} {
		for _, p := range v {
			if p < 0 {
				n++
			}
		}
	}
	if n != 0 || len(l.Pos) != l.NumGates() {
		t.Errorf("%d unhinted values, %d gate hints for %d gates", n, len(l.Pos), l.NumGates())
	}
}
