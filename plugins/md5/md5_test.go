package md5_test

import (
	"crypto/md5"
	"fmt"
	"math/rand/v2"
	"testing"

	md5plugin "github.com/tcforge/tcforge/plugins/md5"
	"github.com/tcforge/tcforge/plugins/md5/md5ref"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestVectors: RFC 1321's test suite (A.5), through the circuit and the
// reference.
func TestVectors(t *testing.T) {
	for _, tc := range []struct{ msg, digest string }{
		{"", "d41d8cd98f00b204e9800998ecf8427e"},
		{"abc", "900150983cd24fb0d6963f7d28e17f72"},
		{"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
		{"12345678901234567890123456789012345678901234567890123456789012345678901234567890", "57edf4a22be3c955ac49da2e2107b67a"},
	} {
		sdktest.CheckVectors(t, md5plugin.Plugin, map[string]any{"message_bits": 8 * len(tc.msg)},
			[]sdktest.Vector{{In: fmt.Sprintf("%x", tc.msg), Want: tc.digest, Bits: 8 * len(tc.msg)}})
	}
}

// TestStdlib: the circuit against crypto/md5 on random whole-byte messages
// of lengths around the padding's block boundaries (1 to 3 blocks).
func TestStdlib(t *testing.T) {
	for _, n := range []int{0, 1, 55, 56, 63, 64, 119, 120, 150} {
		if testing.Short() && n > 64 {
			continue
		}
		sdktest.CheckOracle(t, md5plugin.Plugin, map[string]any{"message_bits": 8 * n}, 16, func(in bitvec.Vec) bitvec.Vec {
			d := md5.Sum(in.PackMSB(8 * n))
			return bitvec.FromPackedMSB(d[:], 128)
		})
	}
}

// TestReference: reduced steps and bit lengths against md5ref, through the
// host's point pipeline; blocks gives the longest whole-byte message.
func TestReference(t *testing.T) {
	for _, v := range []map[string]any{
		{"steps": 1, "message_bits": 0},
		{"steps": 5, "message_bits": 3},
		{"steps": 16, "message_bits": 447},
		{"steps": 17, "message_bits": 448},
		{"steps": 33, "blocks": 2},
		{"steps": 50, "message_bits": 1001},
		{"steps": 64, "message_bits": 777},
	} {
		c := sdktest.CheckReference(t, md5plugin.Plugin, v, 32)
		if len(c.Outputs) != 128 {
			t.Errorf("%v: %d outputs", v, len(c.Outputs))
		}
	}
	c := sdktest.Build(t, md5plugin.Plugin, map[string]any{"blocks": 2})
	if len(c.Inputs) != 2*512-72 {
		t.Errorf("blocks 2: %d message bits, want the longest whole-byte message of 2 blocks, 952", len(c.Inputs))
	}
}

// TestMD5Ref: the independent reference at 64 steps is crypto/md5, on
// random messages of 0 to 200 bytes.
func TestMD5Ref(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 1321))
	for n := range 200 {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(rng.Uint32())
		}
		want := md5.Sum(msg)
		if got := bitvec.FromBytes(md5ref.Sum(bitvec.FromPackedMSB(msg, 8*n).Bytes(8*n), md5ref.Steps)).PackMSB(128); string(got) != string(want[:]) {
			t.Fatalf("%d bytes: md5ref %x, crypto/md5 %x", n, got, want)
		}
	}
}

func TestEstimate(t *testing.T) {
	for _, v := range []map[string]any{{"steps": 3}, {"blocks": 3}, {"message_bits": 700, "steps": 40}} {
		sdktest.CheckEstimate(t, md5plugin.Plugin, v, 100)
	}
}

func TestRefused(t *testing.T) {
	sdktest.CheckRefused(t, md5plugin.Plugin, map[string]any{"steps": 65}, "steps", "at most 64")
	sdktest.CheckRefused(t, md5plugin.Plugin, map[string]any{"blocks": 2, "message_bits": 8}, "message_bits", "not both")
	sdktest.CheckRefused(t, md5plugin.Plugin, map[string]any{"blocks": 2000}, "blocks", "at most 1024 blocks")
}
