package circuit_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/circuit"
)

// TestWordOps builds (x + y + z + K) ⊕ RotR(x, r) ⊕ Shr(y, s) on n-bit
// words and compares it, lane by lane, with uint64 arithmetic.
func TestWordOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		n, words, r, s int
		k              uint64
	}{
		{1, 3, 0, 0, 1},
		{8, 2, 3, 1, 0x5a},
		{32, 3, 7, 3, 0x428a2f98},
		{32, 6, 25, 10, 0xc67178f2},
		{64, 5, 41, 6, 0x6c44198c4a475817},
	} {
		b := circuit.NewBuilder()
		var ws [][]circuit.Node
		for range tc.words {
			ws = append(ws, b.Input("w", tc.n))
		}
		sum := b.Add(append(ws, b.ConstWord(tc.k, tc.n))...)
		out := b.XorWords(sum, circuit.RotR(ws[0], tc.r), b.Shr(ws[1%tc.words], tc.s))
		b.Output("y", out)
		c := b.Circuit()
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		mask := ^uint64(0) >> uint(64-tc.n)
		vals := make([][]uint64, tc.words) // [word][lane]
		in := make([]uint64, 0, tc.words*tc.n)
		for w := range vals {
			vals[w] = make([]uint64, 64)
			for l := range vals[w] {
				vals[w][l] = rng.Uint64() & mask
			}
			for i := 0; i < tc.n; i++ {
				var word uint64
				for l := 0; l < 64; l++ {
					word |= (vals[w][l] >> uint(i) & 1) << uint(l)
				}
				in = append(in, word)
			}
		}
		got, err := c.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		rot := func(x uint64, r int) uint64 { return (x>>uint(r) | x<<uint(tc.n-r)) & mask }
		for l := 0; l < 64; l++ {
			s := tc.k
			for w := range vals {
				s += vals[w][l]
			}
			want := (s & mask) ^ rot(vals[0][l], tc.r) ^ vals[1%tc.words][l]>>uint(tc.s)
			if tc.r == 0 {
				want = (s & mask) ^ vals[0][l] ^ vals[1%tc.words][l]>>uint(tc.s)
			}
			for i := 0; i < tc.n; i++ {
				if g := got[i] >> uint(l) & 1; g != want>>uint(i)&1 {
					t.Fatalf("n=%d words=%d lane %d bit %d: got %d, want %d", tc.n, tc.words, l, i, g, want>>uint(i)&1)
				}
			}
		}
		if st := c.Stats(); st.ByOp[circuit.OpSumBit] != tc.n {
			t.Errorf("n=%d: %d SUMBIT nodes, want %d", tc.n, st.ByOp[circuit.OpSumBit], tc.n)
		}
	}
}

// TestSumBitValidate checks that SUMBIT's bit index and exponents are
// range-checked.
func TestSumBitValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		k    int32
		e    int32
		want string
	}{
		{"bit 64", 64, 0, "SUMBIT of bit 64"},
		{"negative bit", -1, 0, "SUMBIT of bit -1"},
		{"exponent 64", 3, 64, "exponent 64"},
		{"negative exponent", 3, -2, "exponent -2"},
	} {
		b := circuit.NewBuilder()
		x := b.Input("x", 2)
		y := b.SumBit(1, x, []int32{0, 0})
		b.Output("y", []circuit.Node{y})
		c := b.Circuit()
		c.Param[y] = tc.k
		c.Weights[c.ArgStart[y]] = tc.e
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
		if data, err := c.MarshalBinary(); err == nil {
			var d circuit.Circuit
			if err := d.UnmarshalBinary(data); err == nil {
				t.Errorf("%s: decoded", tc.name)
			}
		}
	}
}
