package sha1_test

import (
	"crypto/sha1"
	"fmt"
	"math/rand/v2"
	"testing"

	sha1plugin "github.com/tcforge/tcforge/plugins/sha1"
	"github.com/tcforge/tcforge/plugins/sha1/sha1ref"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestVectors: FIPS 180-4's examples (and the empty message), through the
// circuit and the reference.
func TestVectors(t *testing.T) {
	for _, tc := range []struct{ msg, digest string }{
		{"", "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
		{"abc", "a9993e364706816aba3e25717850c26c9cd0d89d"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "84983e441c3bd26ebaae4aa1f95129e5e54670f1"},
	} {
		sdktest.CheckVectors(t, sha1plugin.Plugin, map[string]any{"message_bits": 8 * len(tc.msg)},
			[]sdktest.Vector{{In: fmt.Sprintf("%x", tc.msg), Want: tc.digest, Bits: 8 * len(tc.msg)}})
	}
}

// TestStdlib: the circuit against crypto/sha1 on random whole-byte messages
// of lengths around the padding's block boundaries (1 to 3 blocks).
func TestStdlib(t *testing.T) {
	for _, n := range []int{0, 1, 55, 56, 63, 64, 119, 120, 150} {
		if testing.Short() && n > 64 {
			continue
		}
		sdktest.CheckOracle(t, sha1plugin.Plugin, map[string]any{"message_bits": 8 * n}, 16, func(in bitvec.Vec) bitvec.Vec {
			d := sha1.Sum(in.PackMSB(8 * n))
			return bitvec.FromPackedMSB(d[:], 160)
		})
	}
}

// TestReference: reduced steps and bit lengths against sha1ref, through
// the host's point pipeline.
func TestReference(t *testing.T) {
	for _, v := range []map[string]any{
		{"steps": 1, "message_bits": 0},
		{"steps": 5, "message_bits": 3},
		{"steps": 16, "message_bits": 447},
		{"steps": 17, "message_bits": 448},
		{"steps": 21, "blocks": 2},
		{"steps": 41, "message_bits": 1001},
		{"steps": 61, "message_bits": 100},
		{"steps": 80, "message_bits": 777},
	} {
		c := sdktest.CheckReference(t, sha1plugin.Plugin, v, 32)
		if len(c.Outputs) != 160 {
			t.Errorf("%v: %d outputs", v, len(c.Outputs))
		}
	}
}

// TestSHA1Ref: the independent reference at 80 steps is crypto/sha1, on
// random messages of 0 to 200 bytes.
func TestSHA1Ref(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1804))
	for n := range 200 {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(rng.Uint32())
		}
		want := sha1.Sum(msg)
		if got := bitvec.FromBytes(sha1ref.Sum(bitvec.FromPackedMSB(msg, 8*n).Bytes(8*n), sha1ref.Steps)).PackMSB(160); string(got) != string(want[:]) {
			t.Fatalf("%d bytes: sha1ref %x, crypto/sha1 %x", n, got, want)
		}
	}
}

func TestEstimate(t *testing.T) {
	for _, v := range []map[string]any{{"steps": 3}, {"blocks": 3}, {"message_bits": 700, "steps": 40}} {
		sdktest.CheckEstimate(t, sha1plugin.Plugin, v, 100)
	}
}

func TestRefused(t *testing.T) {
	sdktest.CheckRefused(t, sha1plugin.Plugin, map[string]any{"steps": 81}, "steps", "at most 80")
	sdktest.CheckRefused(t, sha1plugin.Plugin, map[string]any{"blocks": 2, "message_bits": 8}, "message_bits", "not both")
	sdktest.CheckRefused(t, sha1plugin.Plugin, map[string]any{"message_bits": 1 << 25}, "message_bits", "at most 16777216 bits")
}
