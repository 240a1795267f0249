package keccakref

import (
	"bytes"
	"crypto/sha3"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

var (
	sha3Suffix  = []byte{0, 1}
	shakeSuffix = []byte{1, 1, 1, 1}
	full1600    = Params{LogW: 6, Rounds: 24}
)

// testBytes returns n deterministic pseudo-random bytes.
func testBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// randomState returns a pseudo-random state with w-bit lanes.
func randomState(p Params, r *rand.Rand) State {
	var s State
	for i := range s {
		s[i] = r.Uint64() & p.mask()
	}
	return s
}

func refHash(rate int, suffix, msg []byte, outBytes int) []byte {
	return BitsToBytes(Hash(full1600, rate, suffix, BytesToBits(msg), 8*outBytes))
}

func TestAgainstCryptoSHA3(t *testing.T) {
	msgLens := []int{0, 1, 3, 71, 135, 136, 137, 200, 1000}
	tests := []struct {
		name string
		rate int
		size int
		sum  func([]byte) []byte
	}{
		{"SHA3-224", 1152, 28, func(m []byte) []byte { h := sha3.Sum224(m); return h[:] }},
		{"SHA3-256", 1088, 32, func(m []byte) []byte { h := sha3.Sum256(m); return h[:] }},
		{"SHA3-384", 832, 48, func(m []byte) []byte { h := sha3.Sum384(m); return h[:] }},
		{"SHA3-512", 576, 64, func(m []byte) []byte { h := sha3.Sum512(m); return h[:] }},
	}
	for _, tc := range tests {
		for _, n := range msgLens {
			t.Run(fmt.Sprintf("%s/%d", tc.name, n), func(t *testing.T) {
				msg := testBytes(n, uint64(n))
				want := tc.sum(msg)
				got := refHash(tc.rate, sha3Suffix, msg, tc.size)
				if !bytes.Equal(got, want) {
					t.Errorf("got  %x\nwant %x", got, want)
				}
			})
		}
	}

	shakes := []struct {
		name string
		rate int
		sum  func([]byte, int) []byte
	}{
		{"SHAKE128", 1344, sha3.SumSHAKE128},
		{"SHAKE256", 1088, sha3.SumSHAKE256},
	}
	// Output lengths in bits, including exact and straddled rate multiples.
	outLens := []int{8, 256, 1088, 1096, 1344, 1352, 2688, 4000}
	for _, tc := range shakes {
		for _, n := range msgLens {
			for _, out := range outLens {
				t.Run(fmt.Sprintf("%s/%d/%d", tc.name, n, out), func(t *testing.T) {
					msg := testBytes(n, uint64(n)+1000)
					want := tc.sum(msg, out/8)
					got := refHash(tc.rate, shakeSuffix, msg, out/8)
					if !bytes.Equal(got, want) {
						t.Errorf("got  %x\nwant %x", got, want)
					}
				})
			}
		}
	}
}

func TestKnownAnswers(t *testing.T) {
	tests := []struct {
		name   string
		rate   int
		suffix []byte
		msg    string
		outLen int // bits
		want   string
	}{
		{"SHA3-256/empty", 1088, sha3Suffix, "", 256,
			"a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a"},
		{"SHA3-256/abc", 1088, sha3Suffix, "abc", 256,
			"3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532"},
		{"SHAKE128/empty", 1344, shakeSuffix, "", 256,
			"7f9c2ba4e88f827d616045507605853ed73b8093f6efbc88eb1a6eacfa66ef26"},
		{"Keccak-256/empty", 1088, nil, "", 256,
			"c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := hex.EncodeToString(BitsToBytes(Hash(full1600, tc.rate, tc.suffix, BytesToBits([]byte(tc.msg)), tc.outLen)))
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

var keccakF1600RC = [24]uint64{
	0x0000000000000001, 0x0000000000008082, 0x800000000000808A, 0x8000000080008000,
	0x000000000000808B, 0x0000000080000001, 0x8000000080008081, 0x8000000000008009,
	0x000000000000008A, 0x0000000000000088, 0x0000000080008009, 0x000000008000000A,
	0x000000008000808B, 0x800000000000008B, 0x8000000000008089, 0x8000000000008003,
	0x8000000000008002, 0x8000000000000080, 0x000000000000800A, 0x800000008000000A,
	0x8000000080008081, 0x8000000000008080, 0x0000000080000001, 0x8000000080008008,
}

func TestRoundConstant64(t *testing.T) {
	for i, want := range keccakF1600RC {
		if got := RoundConstant(6, i); got != want {
			t.Errorf("RoundConstant(6, %d) = %#016x, want %#016x", i, got, want)
		}
	}
}

func TestRoundConstantSmallW(t *testing.T) {
	// Keccak-f[200] constants are the low 8 bits of the Keccak-f[1600] ones.
	want200 := []uint64{
		0x01, 0x82, 0x8a, 0x00, 0x8b, 0x01, 0x81, 0x09, 0x8a,
		0x88, 0x09, 0x0a, 0x8b, 0x8b, 0x89, 0x03, 0x02, 0x80,
	}
	for i, want := range want200 {
		if got := RoundConstant(3, i); got != want {
			t.Errorf("RoundConstant(3, %d) = %#02x, want %#02x", i, got, want)
		}
	}
	// For every w, the w-bit constant is the truncation of the 64-bit one
	// (including negative indices), and the constants have period 255.
	for logW := 0; logW <= 6; logW++ {
		for ir := -300; ir < 300; ir++ {
			c := RoundConstant(logW, ir)
			if want := RoundConstant(6, ir) & laneMask(logW); c != want {
				t.Errorf("RoundConstant(%d, %d) = %#x, want %#x", logW, ir, c, want)
			}
			if c2 := RoundConstant(logW, ir+255); c2 != c {
				t.Errorf("RoundConstant(%d, %d) = %#x differs from index %d: %#x", logW, ir+255, c2, ir, c)
			}
		}
	}
}

func TestRoundIndices(t *testing.T) {
	tests := []struct {
		logW, rounds int
		want         []int
	}{
		{6, 24, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
		{6, 12, []int{12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}},
		{2, 3, []int{13, 14, 15}},
		{2, 19, []int{-3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
		{0, 0, []int{}},
	}
	for _, tc := range tests {
		if got := RoundIndices(tc.logW, tc.rounds); !slices.Equal(got, tc.want) {
			t.Errorf("RoundIndices(%d, %d) = %v, want %v", tc.logW, tc.rounds, got, tc.want)
		}
	}
}

func TestZeroConstantRounds(t *testing.T) {
	tests := []struct {
		logW, rounds, want int
	}{
		{2, 13, 1},
		{2, 19, 2},
		{3, 15, 1},
		{4, 24, 0},
		{6, 24, 0},
	}
	for _, tc := range tests {
		if got := ZeroConstantRounds(tc.logW, tc.rounds); got != tc.want {
			t.Errorf("ZeroConstantRounds(%d, %d) = %d, want %d", tc.logW, tc.rounds, got, tc.want)
		}
	}
}

func TestBitsRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for logW := 0; logW <= 6; logW++ {
		p := Params{LogW: logW, Rounds: DefaultRounds(logW)}
		s := randomState(p, r)
		bits := p.ToBits(s)
		if len(bits) != p.B() {
			t.Fatalf("w=%d: len(ToBits) = %d, want %d", p.W(), len(bits), p.B())
		}
		if got := p.FromBits(bits); got != s {
			t.Errorf("w=%d: FromBits(ToBits(s)) != s", p.W())
		}
		// Spot-check the FIPS 202 order s[w*(5y+x)+z] = a[x][y][z].
		for _, xyz := range [][3]int{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {4, 4, p.W() - 1}, {2, 3, p.W() / 2}} {
			x, y, z := xyz[0], xyz[1], xyz[2]
			one := make([]byte, p.B())
			one[p.W()*(5*y+x)+z] = 1
			var want State
			want[x+5*y] = 1 << uint(z)
			if got := p.FromBits(one); got != want {
				t.Errorf("w=%d: FromBits with bit (%d,%d,%d) = %v, want %v", p.W(), x, y, z, got, want)
			}
		}
		// Round trip through Permute at this width.
		ps := s
		p.Permute(&ps)
		if got := p.FromBits(p.ToBits(ps)); got != ps {
			t.Errorf("w=%d: bit round trip of permuted state failed", p.W())
		}
	}

	b := testBytes(37, 7)
	if got := BitsToBytes(BytesToBits(b)); !bytes.Equal(got, b) {
		t.Errorf("BitsToBytes(BytesToBits(b)) = %x, want %x", got, b)
	}
	if got, want := BytesToBits([]byte{0x06}), []byte{0, 1, 1, 0, 0, 0, 0, 0}; !bytes.Equal(got, want) {
		t.Errorf("BytesToBits(0x06) = %v, want %v", got, want)
	}
}

func TestPermuteZeroRoundsIdentity(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for logW := 0; logW <= 6; logW++ {
		p := Params{LogW: logW, Rounds: 0}
		var zero State
		s := zero
		p.Permute(&s)
		if s != zero {
			t.Errorf("w=%d: zero rounds changed the zero state: %v", p.W(), s)
		}
		rs := randomState(p, r)
		s = rs
		p.Permute(&s)
		if s != rs {
			t.Errorf("w=%d: zero rounds changed a random state", p.W())
		}
	}
}

func TestPermuteDeterministicAndMasked(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for logW := 0; logW <= 6; logW++ {
		for _, rounds := range []int{1, DefaultRounds(logW), DefaultRounds(logW) + 3} {
			p := Params{LogW: logW, Rounds: rounds}
			in := randomState(p, r)
			a, b := in, in
			p.Permute(&a)
			p.Permute(&b)
			if a != b {
				t.Errorf("w=%d rounds=%d: Permute is not deterministic", p.W(), rounds)
			}
			if a == in {
				t.Errorf("w=%d rounds=%d: Permute left a random state unchanged", p.W(), rounds)
			}
			for i, lane := range a {
				if lane&^p.mask() != 0 {
					t.Errorf("w=%d rounds=%d: lane %d = %#x has bits above w", p.W(), rounds, i, lane)
				}
			}
		}
	}
}

func TestPermuteComposition(t *testing.T) {
	// Keccak-p[25w, n] with the last n indices: applying rounds with indices
	// ir_0..ir_{n-1} equals applying round-by-round the same indices.
	r := rand.New(rand.NewPCG(7, 8))
	for logW := 0; logW <= 6; logW++ {
		p := Params{LogW: logW, Rounds: DefaultRounds(logW)}
		in := randomState(p, r)
		got := in
		p.Permute(&got)
		want := in
		for ir := 0; ir < DefaultRounds(logW); ir++ {
			want = p.round(want, ir)
		}
		if got != want {
			t.Errorf("w=%d: Permute != composition of rounds 0..%d", p.W(), DefaultRounds(logW)-1)
		}
		// The last k rounds of Keccak-f equal Keccak-p[25w, k] applied after
		// the first n-k rounds.
		k := 5
		mid := in
		for ir := 0; ir < DefaultRounds(logW)-k; ir++ {
			mid = p.round(mid, ir)
		}
		Params{LogW: logW, Rounds: k}.Permute(&mid)
		if mid != want {
			t.Errorf("w=%d: Keccak-p with %d rounds is not the tail of Keccak-f", p.W(), k)
		}
	}
}

func TestPermuteInjectiveW1(t *testing.T) {
	// At w=1 the state has 25 bits. A random function on 2^25 points would
	// produce about 4 collisions among 2^14 distinct inputs; a permutation
	// produces none.
	for _, rounds := range []int{1, 12, 20} {
		p := Params{LogW: 0, Rounds: rounds}
		r := rand.New(rand.NewPCG(9, uint64(rounds)))
		seen := make(map[State]State)
		for len(seen) < 1<<14 {
			in := randomState(p, r)
			out := in
			p.Permute(&out)
			if prev, ok := seen[out]; ok && prev != in {
				t.Fatalf("rounds=%d: collision: %v and %v both map to %v", rounds, prev, in, out)
			}
			seen[out] = in
		}
	}
}

func TestThetaLinear(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for logW := 0; logW <= 6; logW++ {
		p := Params{LogW: logW, Rounds: DefaultRounds(logW)}
		for range 20 {
			a, b := randomState(p, r), randomState(p, r)
			var ab State
			for i := range ab {
				ab[i] = a[i] ^ b[i]
			}
			ta, tb, tab := p.theta(a), p.theta(b), p.theta(ab)
			for i := range tab {
				if tab[i] != ta[i]^tb[i] {
					t.Fatalf("w=%d: theta(a^b) != theta(a)^theta(b) at lane %d", p.W(), i)
				}
			}
		}
		var zero State
		if p.theta(zero) != zero {
			t.Errorf("w=%d: theta(0) != 0", p.W())
		}
		// A single bit in a column whose parity becomes odd affects the bit
		// itself plus two neighbouring columns: 1 + 5 + 5 = 11 bits.
		var one State
		one[0] = 1
		n := 0
		for _, lane := range p.theta(one) {
			for ; lane != 0; lane &= lane - 1 {
				n++
			}
		}
		if n != 11 {
			t.Errorf("w=%d: theta of a single bit has weight %d, want 11", p.W(), n)
		}
	}
}

func TestPad10Star1(t *testing.T) {
	tests := []struct {
		msgLen int
		suffix []byte
		rate   int
		want   int
	}{
		{0, nil, 1088, 1088},
		{0, sha3Suffix, 1088, 1088},
		{1084, sha3Suffix, 1088, 1088},
		{1085, sha3Suffix, 1088, 2176},
		{1086, nil, 1088, 1088},
		{1087, nil, 1088, 2176},
		{1088, shakeSuffix, 1344, 1344},
		{1339, shakeSuffix, 1344, 2688},
		{5, nil, 1, 7},
	}
	for _, tc := range tests {
		msg := make([]byte, tc.msgLen)
		for i := range msg {
			msg[i] = byte(i & 1)
		}
		orig := slices.Clone(msg)
		got := Pad10Star1(msg, tc.suffix, tc.rate)
		if len(got) != tc.want {
			t.Errorf("Pad10Star1(len %d, suffix %v, rate %d): len = %d, want %d", tc.msgLen, tc.suffix, tc.rate, len(got), tc.want)
			continue
		}
		if !bytes.Equal(msg, orig) {
			t.Errorf("Pad10Star1 modified its input")
		}
		m := tc.msgLen + len(tc.suffix)
		if !bytes.Equal(got[:tc.msgLen], msg) || !bytes.Equal(got[tc.msgLen:m], tc.suffix) {
			t.Errorf("Pad10Star1 did not preserve message and suffix")
		}
		if got[m] != 1 || got[len(got)-1] != 1 {
			t.Errorf("Pad10Star1 padding does not start and end with 1")
		}
		for i := m + 1; i < len(got)-1; i++ {
			if got[i] != 0 {
				t.Errorf("Pad10Star1 padding has nonzero bit at %d", i)
			}
		}
	}
}

func TestSpongeSmallWidth(t *testing.T) {
	// Sponge output is a prefix of longer output, and absorbing is
	// sensitive to every input bit.
	for logW := 0; logW <= 6; logW++ {
		p := Params{LogW: logW, Rounds: DefaultRounds(logW)}
		rate := p.B() / 2
		msg := BytesToBits(testBytes(13, uint64(logW)))
		long := Hash(p, rate, nil, msg, 3*rate+5)
		short := Hash(p, rate, nil, msg, rate-1)
		if !bytes.Equal(long[:len(short)], short) {
			t.Errorf("w=%d: short output is not a prefix of long output", p.W())
		}
		flipped := slices.Clone(msg)
		flipped[len(flipped)/2] ^= 1
		if bytes.Equal(Hash(p, rate, nil, flipped, 3*rate+5), long) {
			t.Errorf("w=%d: flipping a message bit did not change the output", p.W())
		}
	}
}

func TestSpongePanics(t *testing.T) {
	p := Params{LogW: 3, Rounds: 18}
	tests := []struct {
		name string
		f    func()
	}{
		{"rate zero", func() { p.Sponge(nil, 0, 8) }},
		{"rate B", func() { p.Sponge(nil, p.B(), 8) }},
		{"unpadded", func() { p.Sponge(make([]byte, 7), 8, 8) }},
		{"bad logW", func() { Params{LogW: 7, Rounds: 1}.Permute(&State{}) }},
		{"bad FromBits", func() { p.FromBits(make([]byte, 3)) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			tc.f()
		})
	}
}
