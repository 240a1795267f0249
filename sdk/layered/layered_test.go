package layered_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// lanePatterns returns n input words enumerating every assignment of n
// inputs (n ≤ 6) across the 64 lanes: lane l holds assignment l mod 2ⁿ.
func lanePatterns(n int) []uint64 {
	in := make([]uint64, n)
	for i := range in {
		for l := 0; l < 64; l++ {
			in[i] |= uint64(l>>i&1) << l
		}
	}
	return in
}

// xorCircuit is XOR of two inputs in two threshold levels, with the third
// input carried along by copies:
//
//	level 1: or = [x0 + x1 ≥ 1], and = [x0 + x1 ≥ 2], c = copy x2
//	level 2: xor = [or − and ≥ 1], c' = copy c
func xorCircuit() *layered.Circuit {
	b := layered.NewBuilder(3, []circuit.Range{{Name: "x", Start: 0, Len: 3}})
	tOr, tAnd, tCopy := b.Tag("or"), b.Tag("and"), b.Tag("copy")
	b.Gate(layered.KindGate, 1, []int32{0, 1}, []int32{1, 1}, tOr)
	b.Gate(layered.KindGate, 2, []int32{0, 1}, []int32{1, 1}, tAnd)
	b.Copy(2, tCopy)
	b.Level()
	b.Gate(layered.KindGate, 1, []int32{0, 1}, []int32{1, -1}, b.Tag("xor"))
	b.Copy(2, tCopy)
	b.Level()
	return b.Circuit([]circuit.Range{{Name: "xor", Start: 0, Len: 1}, {Name: "x2", Start: 1, Len: 1}})
}

// TestXorTwoLevels evaluates xorCircuit exhaustively.
func TestXorTwoLevels(t *testing.T) {
	c := xorCircuit()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	in := lanePatterns(3)
	out, err := c.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{in[0] ^ in[1], in[2]}; !reflect.DeepEqual(out, want) {
		t.Errorf("outputs %x, want %x", out, want)
	}
	if c.Depth() != 2 || c.NumGates() != 5 || c.NumOutputs() != 2 || c.LevelWidth(0) != 3 || c.LevelWidth(1) != 3 || c.LevelWidth(2) != 2 {
		t.Errorf("depth %d gates %d outputs %d widths %d %d %d", c.Depth(), c.NumGates(), c.NumOutputs(), c.LevelWidth(0), c.LevelWidth(1), c.LevelWidth(2))
	}
	src, w := c.Row(3)
	if !reflect.DeepEqual(src, []int32{0, 1}) || !reflect.DeepEqual(w, []int32{1, -1}) {
		t.Errorf("Row(3) = %v, %v", src, w)
	}
	if got := c.Tags[c.Tag[4]]; got != "copy" {
		t.Errorf("gate 4 tagged %q, want %q (tags are interned once)", got, "copy")
	}
}

// parityCircuit computes the parity of n inputs in two levels: parity of
// S = Σxᵢ is Σₖ (−1)^(k+1)·[S ≥ k], a linear form of one threshold layer.
func parityCircuit(n int) *layered.Circuit {
	b := layered.NewBuilder(n, nil)
	tag := b.Tag("")
	all, ones := make([]int32, n), make([]int32, n)
	for i := range all {
		all[i], ones[i] = int32(i), 1
	}
	alt := make([]int32, n)
	for k := 1; k <= n; k++ {
		b.Gate(layered.KindGate, int32(k), all, ones, tag)
		alt[k-1] = 1 - 2*int32((k+1)%2)
	}
	b.Level()
	b.Gate(layered.KindGate, 1, all, alt, tag)
	b.Level()
	return b.Circuit(nil)
}

func TestParityTwoLevels(t *testing.T) {
	for n := 1; n <= 6; n++ {
		c := parityCircuit(n)
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		in := lanePatterns(n)
		out, err := c.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		var want uint64
		for _, x := range in {
			want ^= x
		}
		if out[0] != want {
			t.Errorf("parity of %d: got %x, want %x", n, out[0], want)
		}
	}
}

// TestCopyKinds checks that a copy-kind gate that is not a plain identity
// [x ≥ 1] is still evaluated as the threshold gate it is, and that a
// gate-kind identity evaluates as a copy.
func TestCopyKinds(t *testing.T) {
	b := layered.NewBuilder(2, nil)
	b.Copy(0, b.Tag("copy"))
	b.Gate(layered.KindCopy, 2, []int32{1}, []int32{2}, 0)  // [2x ≥ 2] = x
	b.Gate(layered.KindCopy, 1, []int32{1}, []int32{-1}, 0) // [−x ≥ 1] = 0
	b.Gate(layered.KindCopy, 0, []int32{0}, []int32{-1}, 0) // [−x ≥ 0] = ¬x
	b.Gate(layered.KindCopy, 1, []int32{0, 1}, []int32{1, 1}, 0)
	b.Gate(layered.KindGate, 1, []int32{1}, []int32{1}, 0)
	b.Gate(layered.KindCopy, 1, nil, nil, 0) // no sources: [0 ≥ 1] = 0
	b.Gate(layered.KindGate, 0, nil, nil, 0) // no sources: [0 ≥ 0] = 1
	b.Level()
	c := b.Circuit(nil)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	in := lanePatterns(2)
	out, err := c.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []uint64{in[0], in[1], 0, ^in[0], in[0] | in[1], in[1], 0, ^uint64(0)}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("outputs %x\nwant    %x", out, want)
	}
}

// TestDepthZero checks a circuit without gate levels: its outputs are its
// inputs.
func TestDepthZero(t *testing.T) {
	c := layered.NewBuilder(3, nil).Circuit([]circuit.Range{{Name: "all", Start: 0, Len: 3}})
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Depth() != 0 || c.NumOutputs() != 3 {
		t.Errorf("depth %d outputs %d", c.Depth(), c.NumOutputs())
	}
	in := []uint64{1, 2, 3}
	out, err := c.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, in) {
		t.Errorf("outputs %v, want %v", out, in)
	}
	out[0] = 99
	if in[0] != 1 {
		t.Errorf("Eval's output aliases its input")
	}
	s := c.Stats()
	if s.Depth != 0 || s.Width != 0 || s.Gates != 0 || len(s.Widths) != 0 {
		t.Errorf("Stats = %+v", s)
	}
}

func TestEvalInputCount(t *testing.T) {
	c := xorCircuit()
	for _, n := range []int{0, 2, 4} {
		if _, err := c.Eval(make([]uint64, n)); err == nil || !strings.Contains(err.Error(), "input words") {
			t.Errorf("%d words for 3 inputs: err = %v", n, err)
		}
	}
}

// TestStats checks the canonical figures of a hand-built circuit:
//
//	inputs: 4
//	level 1: 3 gates (one copy), fan-ins 4, 1, 2
//	level 2: 5 gates (two copies), fan-ins 1, 1, 3, 0, 2; weight −7
//	level 3: 1 gate, fan-in 5
func TestStats(t *testing.T) {
	b := layered.NewBuilder(4, nil)
	tag := b.Tag("t")
	b.Gate(layered.KindGate, 2, []int32{0, 1, 2, 3}, []int32{1, 2, 3, -4}, tag)
	b.Copy(3, tag)
	b.Gate(layered.KindGate, 1, []int32{0, 1}, []int32{1, 1}, tag)
	b.Level()
	b.Copy(0, tag)
	b.Copy(1, tag)
	b.Gate(layered.KindGate, 0, []int32{0, 1, 2}, []int32{-7, 1, 1}, tag)
	b.Gate(layered.KindGate, 0, nil, nil, tag)
	b.Gate(layered.KindGate, 1, []int32{2, 2}, []int32{1, 1}, tag)
	b.Level()
	b.Gate(layered.KindGate, 3, []int32{0, 1, 2, 3, 4}, []int32{1, 1, 1, 1, 1}, tag)
	b.Level()
	c := b.Circuit(nil)
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := layered.Stats{
		Depth:     3,
		Width:     5,
		Gates:     9,
		Copies:    3,
		Edges:     4 + 1 + 2 + 1 + 1 + 3 + 0 + 2 + 5,
		MaxFanIn:  5,
		MaxWeight: 7,
		Forms:     5, // without forms, every gate (and input) is its own
		Nonzeros:  19,
		Widths:    []int{3, 5, 1},
	}
	if s := c.Stats(); !reflect.DeepEqual(s, want) {
		t.Errorf("Stats = %+v\nwant    %+v", s, want)
	}
}

// TestStatsExtremeWeight checks that max |weight| counts the most negative
// int32 weight, whose negation does not fit an int32.
func TestStatsExtremeWeight(t *testing.T) {
	b := layered.NewBuilder(2, nil)
	b.Gate(layered.KindGate, 0, []int32{0, 1}, []int32{math.MinInt32, math.MaxInt32}, b.Tag(""))
	b.Level()
	c := b.Circuit(nil)
	if got, want := c.Stats().MaxWeight, 1<<31; got != want {
		t.Errorf("MaxWeight = %d, want %d", got, want)
	}
}

// TestBuilder checks the builder's bookkeeping: Width of the open level,
// indices within the level, tag interning, Grow keeping what was built,
// and independence of the returned circuit from the ranges passed in.
func TestBuilder(t *testing.T) {
	inRanges := []circuit.Range{{Name: "a", Start: 0, Len: 1}, {Name: "b", Start: 1, Len: 1}}
	b := layered.NewBuilder(2, inRanges)
	if b.Width() != 0 {
		t.Errorf("Width of an empty level = %d", b.Width())
	}
	t0, t1 := b.Tag("x"), b.Tag("y")
	if b.Tag("x") != t0 || t0 == t1 {
		t.Errorf("Tag interning: %d %d %d", t0, t1, b.Tag("x"))
	}
	if i := b.Copy(1, t0); i != 0 {
		t.Errorf("first gate index %d", i)
	}
	b.Grow(100, 1000)
	if i := b.Copy(0, t1); i != 1 || b.Width() != 2 {
		t.Errorf("second gate index %d, width %d", i, b.Width())
	}
	b.Level()
	if b.Width() != 0 {
		t.Errorf("Width after Level = %d", b.Width())
	}
	b.Grow(1, 1)
	if i := b.Gate(layered.KindGate, 2, []int32{0, 1}, []int32{1, 1}, t0); i != 0 {
		t.Errorf("first gate of level 2 has index %d", i)
	}
	b.Level()
	outRanges := []circuit.Range{{Name: "and", Start: 0, Len: 1}}
	c := b.Circuit(outRanges)
	inRanges[0].Name, outRanges[0].Name = "changed", "changed"
	if c.InputRanges[0].Name != "a" || c.OutputRanges[0].Name != "and" {
		t.Errorf("circuit shares the caller's range slices")
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	wantStart := []int32{0, 1, 2, 4}
	if !reflect.DeepEqual(c.RowStart, wantStart) || !reflect.DeepEqual(c.LevelStart, []int32{0, 2, 3}) {
		t.Errorf("RowStart %v LevelStart %v", c.RowStart, c.LevelStart)
	}
	in := lanePatterns(2)
	out, err := c.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	if out[0] != in[0]&in[1] {
		t.Errorf("output %x, want %x", out[0], in[0]&in[1])
	}
}

// cloneCircuit deep-copies c so that a test can corrupt the copy.
func cloneCircuit(c *layered.Circuit) *layered.Circuit {
	d := *c
	d.LevelStart = append([]int32(nil), c.LevelStart...)
	d.Kind = append([]layered.Kind(nil), c.Kind...)
	d.Threshold = append([]int32(nil), c.Threshold...)
	d.Tag = append([]int32(nil), c.Tag...)
	d.RowStart = append([]int32(nil), c.RowStart...)
	d.Src = append([]int32(nil), c.Src...)
	d.Weight = append([]int32(nil), c.Weight...)
	d.Tags = append([]string(nil), c.Tags...)
	d.InputRanges = append([]circuit.Range(nil), c.InputRanges...)
	d.OutputRanges = append([]circuit.Range(nil), c.OutputRanges...)
	d.FormStart = append([]int32(nil), c.FormStart...)
	d.FormConst = append([]int32(nil), c.FormConst...)
	d.FormRowStart = append([]int32(nil), c.FormRowStart...)
	d.FormSrc = append([]int32(nil), c.FormSrc...)
	d.FormCoef = append([]int32(nil), c.FormCoef...)
	if c.FormStart == nil {
		d.FormStart, d.FormConst, d.FormRowStart, d.FormSrc, d.FormCoef = nil, nil, nil, nil, nil
	}
	clone := func(v []int32) []int32 {
		if v == nil {
			return nil
		}
		return append([]int32{}, v...)
	}
	d.InputPos, d.Pos, d.FormPos = clone(c.InputPos), clone(c.Pos), clone(c.FormPos)
	return &d
}

// validateCases are corruptions of xorCircuit (gates 0–2 in level 1, 3–4
// in level 2; edges 0–1, 2–3, 4, 5–6, 7), each with a fragment of the error
// message that must name the problem.
func validateCases() []struct {
	name    string
	corrupt func(c *layered.Circuit)
	want    string
} {
	return []struct {
		name    string
		corrupt func(c *layered.Circuit)
		want    string
	}{
		{"negative inputs", func(c *layered.Circuit) { c.NumInputs = -1 }, "negative input count"},
		{"thresholds length", func(c *layered.Circuit) { c.Threshold = c.Threshold[1:] }, "thresholds"},
		{"tags length", func(c *layered.Circuit) { c.Tag = append(c.Tag, 0) }, "tags"},
		{"kinds length", func(c *layered.Circuit) { c.Kind = c.Kind[:4] }, "4 gates but 5 thresholds"},
		{"RowStart length", func(c *layered.Circuit) { c.RowStart = c.RowStart[:5] }, "RowStart has 5 entries, want 6"},
		{"weights length", func(c *layered.Circuit) { c.Weight = append(c.Weight, 1) }, "8 sources but 9 weights"},
		{"RowStart[0] not 0", func(c *layered.Circuit) { c.RowStart[0] = 1 }, "RowStart does not span"},
		{"RowStart short of edges", func(c *layered.Circuit) { c.RowStart[5] = 7 }, "RowStart does not span"},
		{"RowStart decreasing", func(c *layered.Circuit) { c.RowStart[2] = 1 }, "edge offsets decrease"},
		// Gate 3's row reaching past the edges must be caught before its
		// sources are read.
		{"RowStart beyond edges mid-way", func(c *layered.Circuit) { c.RowStart[4] = 20 }, "edge offsets"},
		{"RowStart huge mid-way", func(c *layered.Circuit) { c.RowStart[4] = math.MaxInt32 }, "edge offsets"},
		{"LevelStart empty", func(c *layered.Circuit) { c.LevelStart = nil }, "LevelStart does not span"},
		{"LevelStart[0] not 0", func(c *layered.Circuit) { c.LevelStart[0] = 1 }, "LevelStart does not span"},
		{"LevelStart short of gates", func(c *layered.Circuit) { c.LevelStart[2] = 4 }, "LevelStart does not span"},
		{"LevelStart past gates", func(c *layered.Circuit) { c.LevelStart[2] = 6 }, "LevelStart does not span"},
		{"LevelStart decreasing", func(c *layered.Circuit) {
			c.LevelStart = []int32{0, 3, 2, 5}
		}, "level 2 has negative width"},
		// Level 1 reaching past the gates must be caught before its rows
		// are read.
		{"LevelStart beyond gates mid-way", func(c *layered.Circuit) {
			c.LevelStart = []int32{0, 9, 5}
		}, "level 1"},
		{"LevelStart huge mid-way", func(c *layered.Circuit) {
			c.LevelStart = []int32{0, math.MaxInt32, 5}
		}, "level 1"},
		{"source beyond inputs", func(c *layered.Circuit) { c.Src[1] = 3 }, "level 1 gate 0: source 3 outside level 0 (width 3)"},
		{"source beyond previous level", func(c *layered.Circuit) { c.Src[7] = 3 }, "level 2 gate 1: source 3 outside level 1 (width 3)"},
		{"negative source", func(c *layered.Circuit) { c.Src[5] = -1 }, "level 2 gate 0: source -1"},
		{"source within its own level's width only", func(c *layered.Circuit) {
			c.LevelStart = []int32{0, 2, 5} // level 1 now has width 2; gate 2 moves to level 2
		}, "source 2 outside level 1 (width 2)"},
		{"tag out of range", func(c *layered.Circuit) { c.Tag[2] = int32(len(c.Tags)) }, "gate 2: tag"},
		{"negative tag", func(c *layered.Circuit) { c.Tag[4] = -1 }, "gate 4: tag -1"},
		{"unknown kind", func(c *layered.Circuit) { c.Kind[3] = 7 }, "gate 3: unknown kind 7"},
		{"input range too long", func(c *layered.Circuit) { c.InputRanges[0].Len = 4 }, `input range "x"`},
		{"input range negative", func(c *layered.Circuit) { c.InputRanges[0].Start = -1 }, `input range "x"`},
		{"input range overflowing", func(c *layered.Circuit) {
			c.InputRanges[0].Start = 1
			c.InputRanges[0].Len = math.MaxInt
		}, `input range "x"`},
		{"output range beyond last level", func(c *layered.Circuit) { c.OutputRanges[1].Start = 2 }, `output range "x2" exceeds the 2 outputs`},
		{"output range negative length", func(c *layered.Circuit) { c.OutputRanges[0].Len = -1 }, `output range "xor"`},
		{"output range overflowing", func(c *layered.Circuit) {
			c.OutputRanges[1].Start = math.MaxInt
			c.OutputRanges[1].Len = math.MaxInt
		}, `output range "x2"`},
		{"output range over a shallower level", func(c *layered.Circuit) {
			c.OutputRanges[0].Len = 3 // level 1 has 3 gates, the last level only 2
		}, `output range "xor"`},
	}
}

func TestValidate(t *testing.T) {
	if err := xorCircuit().Validate(); err != nil {
		t.Fatalf("valid circuit rejected: %v", err)
	}
	for _, tc := range validateCases() {
		t.Run(tc.name, func(t *testing.T) {
			c := cloneCircuit(xorCircuit())
			tc.corrupt(c)
			err := c.Validate()
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not mention %q", err, tc.want)
			}
			if !strings.HasPrefix(err.Error(), "layered: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// TestMarshalRoundTrip checks that decoding an encoding gives back an
// equal circuit and that re-encoding reproduces the bytes.
func TestMarshalRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i, c := range []*layered.Circuit{xorCircuit(), parityCircuit(5), randomCircuit(rng, 4, 5), randomCircuit(rng, 30, 3)} {
		data, err := c.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var d layered.Circuit
		if err := d.UnmarshalBinary(data); err != nil {
			t.Fatalf("circuit %d: %v", i, err)
		}
		if !reflect.DeepEqual(c, &d) {
			t.Errorf("circuit %d: round trip differs:\n got %+v\nwant %+v", i, &d, c)
		}
		again, _ := d.MarshalBinary()
		if !bytes.Equal(data, again) {
			t.Errorf("circuit %d: re-encoding differs", i)
		}
	}
}

// randomCircuit returns a valid random circuit of the given depth, with
// weights and thresholds of every packing width.
func randomCircuit(rng *rand.Rand, inputs, depth int) *layered.Circuit {
	b := layered.NewBuilder(inputs, []circuit.Range{{Name: "in", Start: 0, Len: inputs}})
	tags := []int32{b.Tag("a"), b.Tag("b/c"), b.Tag("")}
	prev := inputs
	big := func() int32 { return int32(rng.Uint32()) >> (rng.IntN(4) * 8) }
	for range depth {
		width := 1 + rng.IntN(40)
		for range width {
			if rng.IntN(4) == 0 {
				b.Copy(int32(rng.IntN(prev)), tags[rng.IntN(3)])
				continue
			}
			k := rng.IntN(8)
			src, w := make([]int32, k), make([]int32, k)
			for i := range src {
				src[i], w[i] = int32(rng.IntN(prev)), big()
			}
			b.Gate(layered.KindGate, big(), src, w, tags[rng.IntN(3)])
		}
		b.Level()
		prev = width
	}
	return b.Circuit([]circuit.Range{{Name: "out", Start: 0, Len: prev}, {Name: "tail", Start: prev - 1, Len: 1}})
}

// TestUnmarshalTruncated checks that every proper prefix of an encoding,
// and the encoding with a trailing byte, is rejected.
func TestUnmarshalTruncated(t *testing.T) {
	data, _ := xorCircuit().MarshalBinary()
	for n := 0; n < len(data); n++ {
		var d layered.Circuit
		if err := d.UnmarshalBinary(data[:n]); err == nil {
			t.Fatalf("prefix of %d/%d bytes accepted", n, len(data))
		}
	}
	var d layered.Circuit
	if err := d.UnmarshalBinary(append(append([]byte(nil), data...), 0)); err == nil || !strings.Contains(err.Error(), "trailing") {
		t.Errorf("trailing byte: err = %v", err)
	}
}

// TestUnmarshalGarbled sets each byte of an encoding to a few values:
// decoding must never panic, and whatever it accepts must evaluate.
func TestUnmarshalGarbled(t *testing.T) {
	data, _ := xorCircuit().MarshalBinary()
	for i := range data {
		for _, v := range []byte{0, 1, 2, 0x7f, 0x80, 0xfe, 0xff, data[i] ^ 1, data[i] + 1, data[i] - 1} {
			b := append([]byte(nil), data...)
			b[i] = v
			var d layered.Circuit
			if err := d.UnmarshalBinary(b); err != nil {
				continue
			}
			if d.NumInputs > 1<<16 {
				continue // a garbled input count; evaluating would only allocate
			}
			if _, err := d.Eval(make([]uint64, d.NumInputs)); err != nil {
				t.Fatal(err)
			}
			_ = d.Stats()
		}
	}
}

// TestUnmarshalRejects checks specific bad blobs, faithfully encoded
// invalid circuits, and that a failed decode leaves the receiver untouched.
func TestUnmarshalRejects(t *testing.T) {
	good, _ := xorCircuit().MarshalBinary()
	wrongVersion := append([]byte(nil), good...)
	wrongVersion[4] = 3 // the oldest version still read is 4
	type badCase struct {
		name string
		data []byte
		want string
	}
	cases := []badCase{
		{"nil", nil, "TCLT"},
		{"wrong magic", append([]byte("TCLC"), good[4:]...), "TCLT"},
		{"old version", wrongVersion, "version"},
	}
	// Corruptions the encoding can carry must be rejected by decoding. The
	// encoding rebuilds some arrays (RowStart from fan-ins), so not every
	// corruption survives MarshalBinary, which may even panic on arrays
	// that do not index each other: those cases are skipped.
	extra := []struct {
		name    string
		corrupt func(c *layered.Circuit)
	}{
		{"fan-ins overshoot then undershoot", func(c *layered.Circuit) { c.RowStart[1] = 50 }},
		{"negative fan-in", func(c *layered.Circuit) { c.RowStart[1] = -5 }},
		{"fan-ins overflowing int32", func(c *layered.Circuit) {
			c.RowStart = []int32{0, math.MaxInt32, math.MinInt32, math.MinInt32 + 3, math.MinInt32 + 5, math.MinInt32 + 8}
		}},
	}
	for _, tc := range validateCases() {
		extra = append(extra, struct {
			name    string
			corrupt func(c *layered.Circuit)
		}{tc.name, tc.corrupt})
	}
	for _, tc := range extra {
		c := cloneCircuit(xorCircuit())
		tc.corrupt(c)
		data := marshalOrNil(c)
		if data == nil {
			continue
		}
		if ok := cloneCircuit(xorCircuit()); ok.UnmarshalBinary(data) == nil && reflect.DeepEqual(ok, xorCircuit()) {
			continue // the encoding does not carry this corruption
		}
		cases = append(cases, badCase{tc.name, data, "layered: "})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			keep := xorCircuit()
			d := cloneCircuit(keep)
			err := d.UnmarshalBinary(tc.data)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "decoding layered circuit") {
				t.Errorf("error %q, want it to mention %q", err, tc.want)
			}
			if !reflect.DeepEqual(d, keep) {
				t.Errorf("failed decode modified the receiver")
			}
		})
	}
}

// marshalOrNil encodes c, or returns nil if MarshalBinary panics on it.
func marshalOrNil(c *layered.Circuit) (data []byte) {
	defer func() {
		if recover() != nil {
			data = nil
		}
	}()
	data, err := c.MarshalBinary()
	if err != nil {
		return nil
	}
	return data
}

// refEval is the definition of a layered circuit's value on one sample,
// written apart from Eval: level by level, gate g fires iff Σ wᵢ·xᵢ ≥ θ.
func refEval(c *layered.Circuit, x []uint) []uint {
	prev := x
	for L := 1; L <= c.Depth(); L++ {
		// What level L reads: the previous level's forms, or its gates.
		in := make([]int64, len(prev))
		for i, v := range prev {
			in[i] = int64(v)
		}
		if c.HasForms() {
			in = in[:0]
			for f := c.FormStart[L-1]; f < c.FormStart[L]; f++ {
				k, src, coef := c.Form(int(f))
				v := int64(k)
				for i, s := range src {
					v += int64(coef[i]) * int64(prev[s])
				}
				in = append(in, v)
			}
		}
		var cur []uint
		for g := c.LevelStart[L-1]; g < c.LevelStart[L]; g++ {
			src, w := c.Row(int(g))
			var sum int64
			for k, s := range src {
				sum += int64(w[k]) * in[s]
			}
			v := uint(0)
			if sum >= int64(c.Threshold[g]) {
				v = 1
			}
			cur = append(cur, v)
		}
		prev = cur
	}
	return prev
}

// rowCircuit returns a random circuit in which consecutive gates often
// share a row (as an XOR's counters do) while differing in kind and
// threshold, and copies of the same source sit next to gates reading it.
func rowCircuit(rng *rand.Rand, inputs, depth int) *layered.Circuit {
	b := layered.NewBuilder(inputs, nil)
	tag := b.Tag("")
	prev := inputs
	weights := []int32{1, 1, 1, -1, -1, 2, -3, 0, math.MaxInt32, math.MinInt32}
	for range depth {
		width := 1 + rng.IntN(12)
		var src, w []int32
		for range width {
			switch rng.IntN(5) {
			case 0: // a fresh row
				k := rng.IntN(14)
				src, w = make([]int32, k), make([]int32, k)
				for i := range src {
					src[i], w[i] = int32(rng.IntN(prev)), weights[rng.IntN(len(weights))]
				}
			case 1: // a copy's row
				src, w = []int32{int32(rng.IntN(prev))}, []int32{1}
			}
			// otherwise: the previous gate's row again
			kind := layered.KindGate
			if rng.IntN(3) == 0 {
				kind = layered.KindCopy
			}
			theta := int32(rng.IntN(7) - 3)
			if rng.IntN(3) == 0 {
				theta = 1
			}
			b.Gate(kind, theta, src, w, tag)
		}
		b.Level()
		prev = width
	}
	return b.Circuit(nil)
}

// TestEvalMatchesDefinition compares Eval (and a shared Evaluator, used
// concurrently) with the per-sample definition on random circuits whose
// gates share rows, mix copies and gates, and use extreme weights.
func TestEvalMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for iter := 0; iter < 400; iter++ {
		inputs := 1 + rng.IntN(6)
		c := rowCircuit(rng, inputs, 1+rng.IntN(4))
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		in := make([]uint64, inputs)
		for i := range in {
			in[i] = rng.Uint64()
		}
		out, err := c.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		for l := 0; l < 64; l++ {
			x := make([]uint, inputs)
			for i := range x {
				x[i] = uint(in[i]>>l) & 1
			}
			want := refEval(c, x)
			for j := range want {
				if got := uint(out[j]>>l) & 1; got != want[j] {
					t.Fatalf("iteration %d, lane %d, output %d: got %d, want %d\ncircuit %+v", iter, l, j, got, want[j], c)
				}
			}
		}
		if iter%40 != 0 {
			continue
		}
		// One Evaluator shared by EvalSliced's goroutines.
		samples := bitvec.Random(rng, 300, inputs)
		outs, err := bitvec.EvalSliced(samples, inputs, c.Evaluator())
		if err != nil {
			t.Fatal(err)
		}
		for s, v := range samples {
			x := make([]uint, inputs)
			for i := range x {
				x[i] = v.Get(i)
			}
			for j, want := range refEval(c, x) {
				if got := outs[s].Get(j); got != want {
					t.Fatalf("iteration %d, sample %d, output %d: got %d, want %d", iter, s, j, got, want)
				}
			}
		}
	}
}

// TestCopyThenSameRow is the smallest case of a gate sharing the row of a
// copy before it: the copy is evaluated without summing its row, so the
// next gate must not rely on that sum.
func TestCopyThenSameRow(t *testing.T) {
	c := copyThenSameRow()
	in := lanePatterns(2)
	out, err := c.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{in[1], in[1], ^uint64(0), 0}; !reflect.DeepEqual(out, want) {
		t.Errorf("outputs %x, want %x", out, want)
	}
}

// copyThenSameRow is a copy of x1 followed by gates reading the same row:
// [x1 ≥ 1] = x1, [x1 ≥ 0] = 1, [x1 ≥ 2] = 0.
func copyThenSameRow() *layered.Circuit {
	b := layered.NewBuilder(2, nil)
	tag := b.Tag("")
	b.Copy(1, tag) // evaluated by the copy fast path
	b.Gate(layered.KindGate, 1, []int32{1}, []int32{1}, tag)
	b.Gate(layered.KindGate, 0, []int32{1}, []int32{1}, tag)
	b.Gate(layered.KindGate, 2, []int32{1}, []int32{1}, tag)
	b.Level()
	return b.Circuit(nil)
}
