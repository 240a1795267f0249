package sha2ref_test

import (
	"bufio"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/plugins/sha2/sha2ref"
)

var variants = []sha2ref.Variant{sha2ref.SHA224, sha2ref.SHA256, sha2ref.SHA384, sha2ref.SHA512, sha2ref.SHA512_224, sha2ref.SHA512_256}

// stdlib computes v's digest with Go's crypto/sha256 or crypto/sha512.
func stdlib(v sha2ref.Variant, data []byte) []byte {
	var d []byte
	switch v.Name {
	case "SHA-224":
		s := sha256.Sum224(data)
		d = s[:]
	case "SHA-256":
		s := sha256.Sum256(data)
		d = s[:]
	case "SHA-384":
		s := sha512.Sum384(data)
		d = s[:]
	case "SHA-512":
		s := sha512.Sum512(data)
		d = s[:]
	case "SHA-512/224":
		s := sha512.Sum512_224(data)
		d = s[:]
	case "SHA-512/256":
		s := sha512.Sum512_256(data)
		d = s[:]
	}
	return d
}

// TestNISTVectors checks the reference against NIST's example vectors.
func TestNISTVectors(t *testing.T) {
	f, err := os.Open("testdata/nist.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byName := map[string]sha2ref.Variant{}
	for _, v := range variants {
		byName[v.Name] = v
	}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		parts := strings.Split(line, " | ")
		if len(parts) != 3 {
			t.Fatalf("bad line %q", line)
		}
		v, ok := byName[parts[0]]
		if !ok {
			t.Fatalf("unknown variant %q", parts[0])
		}
		msg := strings.TrimSpace(parts[1])
		got := hex.EncodeToString(sha2ref.BitsToBytes(v.Sum(sha2ref.BytesToBits([]byte(msg)), v.Rounds())))
		if got != parts[2] {
			t.Errorf("%s(%q) = %s, want %s", v.Name, msg, got, parts[2])
		}
		if std := hex.EncodeToString(stdlib(v, []byte(msg))); std != parts[2] {
			t.Errorf("vector file disagrees with the standard library: %s(%q) = %s", v.Name, msg, std)
		}
		n++
	}
	if n < 12 {
		t.Fatalf("read %d vectors, want at least 12", n)
	}
}

// TestStdlib compares every variant at full rounds with the standard
// library on random whole-byte messages of 0 to 300 bytes (one to four
// blocks, every padding boundary).
func TestStdlib(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, v := range variants {
		for _, n := range []int{0, 1, 55, 56, 63, 64, 111, 112, 127, 128, 200, 300} {
			data := make([]byte, n)
			for i := range data {
				data[i] = byte(rng.Uint32())
			}
			got := sha2ref.BitsToBytes(v.Sum(sha2ref.BytesToBits(data), v.Rounds()))
			if want := stdlib(v, data); hex.EncodeToString(got) != hex.EncodeToString(want) {
				t.Errorf("%s, %d bytes: %x, want %x", v.Name, n, got, want)
			}
		}
	}
}

// TestPad checks padded lengths for bit lengths around the boundaries.
func TestPad(t *testing.T) {
	for _, tc := range []struct {
		v       sha2ref.Variant
		n, want int
	}{
		{sha2ref.SHA256, 0, 1}, {sha2ref.SHA256, 447, 1}, {sha2ref.SHA256, 448, 2}, {sha2ref.SHA256, 959, 2}, {sha2ref.SHA256, 960, 3},
		{sha2ref.SHA512, 0, 1}, {sha2ref.SHA512, 895, 1}, {sha2ref.SHA512, 896, 2},
	} {
		p := tc.v.Pad(make([]byte, tc.n))
		if len(p) != tc.want*tc.v.BlockBits() || tc.v.PaddedBlocks(tc.n) != tc.want {
			t.Errorf("%s: %d bits pad to %d bits (%d blocks), want %d blocks", tc.v.Name, tc.n, len(p), tc.v.PaddedBlocks(tc.n), tc.want)
		}
		if p[tc.n] != 1 {
			t.Errorf("%s: %d bits: no 1 after the message", tc.v.Name, tc.n)
		}
	}
}

// TestReducedRounds checks known properties of reduced rounds: one round
// changes only a and e of the state (so words b, c, d, f, g, h of the
// chaining value are H(0) shifted by one plus H(0)), and different round
// counts give different digests.
func TestReducedRounds(t *testing.T) {
	iv := sha2ref.SHA256.IV
	var h [8]uint32
	for i := range h {
		h[i] = uint32(iv[i])
	}
	var m [16]uint32
	m[0] = 0x80000000
	out := sha2ref.Compress32(h, m, 1)
	for _, i := range []int{1, 2, 3, 5, 6, 7} {
		if want := h[i] + h[i-1]; out[i] != want {
			t.Errorf("1 round: word %d = %08x, want %08x", i, out[i], want)
		}
	}
	seen := map[string]int{}
	for r := 1; r <= 64; r++ {
		d := hex.EncodeToString(sha2ref.BitsToBytes(sha2ref.SHA256.Sum([]byte{1, 0, 1}, r)))
		if prev, ok := seen[d]; ok {
			t.Errorf("rounds %d and %d give the same digest", prev, r)
		}
		seen[d] = r
	}
}
