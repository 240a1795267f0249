package bitvec_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tcforge/tcforge/sdk/bitvec"
)

func TestVecGetSet(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 128, 200} {
		v := bitvec.NewVec(n)
		if want := (n + 63) / 64; len(v) != want {
			t.Errorf("NewVec(%d) has %d words, want %d", n, len(v), want)
		}
		for i := 0; i < n; i += 3 {
			v.Set(i, 1)
		}
		for i := 0; i < n; i++ {
			want := uint(0)
			if i%3 == 0 {
				want = 1
			}
			if v.Get(i) != want {
				t.Fatalf("n=%d bit %d = %d, want %d", n, i, v.Get(i), want)
			}
		}
		for i := 0; i < n; i += 3 {
			v.Set(i, 0)
		}
		for w, x := range v {
			if x != 0 {
				t.Fatalf("n=%d: word %d = %x after clearing", n, w, x)
			}
		}
	}
	v := bitvec.NewVec(8)
	v.Set(5, 3) // only the low bit of b counts
	v.Set(6, 2)
	if v.Get(5) != 1 || v.Get(6) != 0 {
		t.Errorf("Set with b=3, b=2: got %d %d, want 1 0", v.Get(5), v.Get(6))
	}
}

// TestBytesRoundTrip checks FromBytes and Bytes, and the bit order (bit i
// is bit i%64 of word i/64).
func TestBytesRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 63, 64, 65, 127, 128, 129, 1000} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(2))
		}
		v := bitvec.FromBytes(b)
		if len(v) != (n+63)/64 {
			t.Errorf("n=%d: %d words", n, len(v))
		}
		if got := v.Bytes(n); !reflect.DeepEqual(got, b) {
			t.Errorf("n=%d: Bytes(FromBytes(b)) = %v, want %v", n, got, b)
		}
		for i, x := range b {
			if uint(v[i/64]>>(i%64))&1 != uint(x) {
				t.Fatalf("n=%d: bit %d not at bit %d of word %d", n, i, i%64, i/64)
			}
		}
	}
	if got := bitvec.FromBytes([]byte{1, 0, 0, 1, 1}); got[0] != 0b11001 {
		t.Errorf("FromBytes(1,0,0,1,1) = %b, want 11001", got[0])
	}
	// Bytes may read fewer bits than the vector holds.
	if got := bitvec.FromBytes([]byte{1, 1, 0, 1}).Bytes(2); !reflect.DeepEqual(got, []byte{1, 1}) {
		t.Errorf("Bytes(2) = %v", got)
	}
}

func TestEqual(t *testing.T) {
	a := bitvec.FromBytes([]byte{1, 0, 1, 1, 0})
	b := bitvec.FromBytes([]byte{1, 0, 1, 0, 0})
	if !bitvec.Equal(a, b, 3) {
		t.Errorf("first 3 bits differ")
	}
	if bitvec.Equal(a, b, 4) {
		t.Errorf("first 4 bits agree")
	}
	if !bitvec.Equal(nil, nil, 0) {
		t.Errorf("empty vectors differ")
	}
}

// TestRandom checks shape, masking of the bits past n, and that Random is
// not constant.
func TestRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 5, 64, 70, 130} {
		vs := bitvec.Random(rng, 50, n)
		if len(vs) != 50 {
			t.Fatalf("%d vectors", len(vs))
		}
		ones := 0
		for _, v := range vs {
			if len(v) != (n+63)/64 {
				t.Fatalf("n=%d: %d words", n, len(v))
			}
			for i := n; i < 64*len(v); i++ {
				if v.Get(i) != 0 {
					t.Fatalf("n=%d: bit %d past the end is set", n, i)
				}
			}
			for i := 0; i < n; i++ {
				ones += int(v.Get(i))
			}
		}
		if ones == 0 || ones == 50*n {
			t.Errorf("n=%d: %d ones in %d random bits", n, ones, 50*n)
		}
	}
}

// TestSliceUnslice checks the transposition both ways for widths and
// sample counts on and off word boundaries.
func TestSliceUnslice(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 3, 63, 64, 65, 130} {
		for _, m := range []int{0, 1, 2, 31, 63, 64} {
			samples := bitvec.Random(rng, m, n)
			words := bitvec.Slice(samples, n)
			if len(words) != n {
				t.Fatalf("n=%d m=%d: %d words", n, m, len(words))
			}
			for s, v := range samples {
				for i := 0; i < n; i++ {
					if uint(words[i]>>s)&1 != v.Get(i) {
						t.Fatalf("n=%d m=%d: word %d lane %d != sample %d bit %d", n, m, i, s, s, i)
					}
				}
			}
			for i, w := range words {
				if m < 64 && w>>m != 0 {
					t.Fatalf("n=%d m=%d: word %d has lanes past the samples set: %x", n, m, i, w)
				}
			}
			back := bitvec.Unslice(words, m)
			if len(back) != m {
				t.Fatalf("n=%d m=%d: Unslice gave %d samples", n, m, len(back))
			}
			for s := range back {
				if !reflect.DeepEqual(back[s], samples[s]) {
					t.Fatalf("n=%d m=%d: sample %d: %x, want %x", n, m, s, back[s], samples[s])
				}
			}
		}
	}
	// Unslice(Slice) on arbitrary words keeps the first m lanes.
	words := []uint64{^uint64(0), 0x5555555555555555, 1 << 63}
	back := bitvec.Slice(bitvec.Unslice(words, 64), 3)
	if !reflect.DeepEqual(back, words) {
		t.Errorf("Slice(Unslice(w)) = %x, want %x", back, words)
	}
}

// evalWords is a 64-lane evaluator of a small made-up function of n input
// bits with 3 output bits: the parity of all inputs, the AND of the first
// and last input, and bit 1 of the input (or 0).
func evalWords(n int) func([]uint64) ([]uint64, error) {
	return func(in []uint64) ([]uint64, error) {
		if len(in) != n {
			return nil, fmt.Errorf("%d words for %d inputs", len(in), n)
		}
		var par uint64
		for _, w := range in {
			par ^= w
		}
		var b1 uint64
		if n > 1 {
			b1 = in[1]
		}
		return []uint64{par, in[0] & in[n-1], b1}, nil
	}
}

// evalOne is evalWords on one sample.
func evalOne(v bitvec.Vec, n int) bitvec.Vec {
	var par uint
	for i := 0; i < n; i++ {
		par ^= v.Get(i)
	}
	out := bitvec.NewVec(3)
	out.Set(0, par)
	out.Set(1, v.Get(0)&v.Get(n-1))
	if n > 1 {
		out.Set(2, v.Get(1))
	}
	return out
}

// TestEvalSliced checks that batching samples 64 at a time (concurrently)
// gives each sample the output of evaluating it alone, for sample counts
// below, at and above 64 and not multiples of it.
func TestEvalSliced(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 70} {
		for _, m := range []int{0, 1, 63, 64, 65, 128, 200, 1000} {
			in := bitvec.Random(rng, m, n)
			var calls atomic.Int32
			eval := evalWords(n)
			out, err := bitvec.EvalSliced(in, n, func(w []uint64) ([]uint64, error) {
				calls.Add(1)
				return eval(w)
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != m {
				t.Fatalf("n=%d m=%d: %d outputs", n, m, len(out))
			}
			if want := (m + 63) / 64; int(calls.Load()) != want {
				t.Errorf("n=%d m=%d: eval called %d times, want %d", n, m, calls.Load(), want)
			}
			for s := range in {
				if want := evalOne(in[s], n); !bitvec.Equal(out[s], want, 3) {
					t.Fatalf("n=%d m=%d: sample %d: got %x, want %x", n, m, s, out[s], want)
				}
				for i := 3; i < 64*len(out[s]); i++ {
					if out[s].Get(i) != 0 {
						t.Fatalf("n=%d m=%d: sample %d has output bit %d set", n, m, s, i)
					}
				}
			}
		}
	}
}

// TestEvalSlicedError checks that an error of any batch is returned, with
// no outputs.
func TestEvalSlicedError(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	in := bitvec.Random(rng, 300, 8)
	// Mark sample 200 (in the fourth batch) with a pattern no other sample
	// has, so the failing batch is recognisable from its words.
	in[200] = bitvec.FromBytes([]byte{1, 1, 1, 1, 1, 1, 1, 1})
	for s := range in {
		if s != 200 {
			in[s].Set(0, 0)
		}
	}
	boom := errors.New("boom")
	eval := evalWords(8)
	out, err := bitvec.EvalSliced(in, 8, func(w []uint64) ([]uint64, error) {
		if w[0] != 0 {
			return nil, boom
		}
		return eval(w)
	})
	if !errors.Is(err, boom) || out != nil {
		t.Errorf("EvalSliced = %d outputs, %v; want nil, boom", len(out), err)
	}
	// The width is passed through: a mismatch is the evaluator's error.
	if _, err := bitvec.EvalSliced(in, 7, evalWords(8)); err == nil {
		t.Errorf("width 7 for an 8-input evaluator: no error")
	}
}

// TestParseText: Parse skips separators, rejects other characters, and
// Text inverts it across word boundaries.
func TestParseText(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		n        int
		err      string
	}{
		{"", "", 0, ""},
		{"1", "1", 1, ""},
		{"1100 0110_1", "110001101", 9, ""},
		{strings.Repeat("10", 40), strings.Repeat("10", 40), 80, ""},
		{"10x1", "", 0, `character 'x' at offset 2`},
	} {
		v, n, err := bitvec.Parse(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("Parse(%q): got %v, want error %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || n != tc.n || v.Text(n) != tc.want || len(v) != (n+63)/64 {
			t.Errorf("Parse(%q) = %v, %d, %v; Text %q, want %q (%d bits)", tc.in, v, n, err, v.Text(n), tc.want, tc.n)
		}
	}
	if got := bitvec.Vec([]uint64{0b101, 1}).Text(66); got != "101"+strings.Repeat("0", 61)+"10" {
		t.Errorf("Text across words: %s", got)
	}
}
