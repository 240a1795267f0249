package blake2s_test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"testing"

	"golang.org/x/crypto/blake2s"

	blake2splugin "github.com/tcforge/tcforge/plugins/blake2s"
	"github.com/tcforge/tcforge/plugins/blake2s/blake2sref"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestVectors: RFC 7693 Appendix B (BLAKE2s-256 of "abc"), through the
// circuit and the reference.
func TestVectors(t *testing.T) {
	sdktest.CheckVectors(t, blake2splugin.Plugin, map[string]any{"message_bits": 24},
		[]sdktest.Vector{{In: fmt.Sprintf("%x", "abc"), Want: "508c5e8c327c14e2e1a72ba34eeb452f37458b209ed63a294d999b4c86675982"}})
}

// TestXCrypto: the circuit against golang.org/x/crypto/blake2s on random
// messages of lengths from 0 to 200 bytes: the block boundaries (the
// empty message, 63, 64, 65, 128, 129 bytes) in every tier, every length
// in the heavy one.
func TestXCrypto(t *testing.T) {
	lengths := []int{0, 1, 3, 55, 63, 64, 65, 100, 127, 128, 129, 191, 192, 193, 200}
	if testing.Short() {
		lengths = []int{0, 3, 64, 65}
	}
	if sdktest.IsHeavy() {
		lengths = lengths[:0]
		for n := range 201 {
			lengths = append(lengths, n)
		}
	}
	for _, n := range lengths {
		sdktest.CheckOracle(t, blake2splugin.Plugin, map[string]any{"message_bits": 8 * n}, 16, func(in bitvec.Vec) bitvec.Vec {
			d := blake2s.Sum256(in.PackMSB(8 * n))
			return bitvec.FromPackedMSB(d[:], 256)
		})
	}
}

// TestReference: reduced rounds against blake2sref through the host's
// point pipeline, one to three blocks.
func TestReference(t *testing.T) {
	for _, v := range []map[string]any{
		{"rounds": 1, "message_bits": 0},
		{"rounds": 1, "message_bits": 8},
		{"rounds": 2, "blocks": 1},
		{"rounds": 3, "message_bits": 8 * 65},
		{"rounds": 5, "blocks": 2},
		{"rounds": 9, "message_bits": 8 * 150},
	} {
		c := sdktest.CheckReference(t, blake2splugin.Plugin, v, 32)
		if len(c.Outputs) != 256 {
			t.Errorf("%v: %d outputs", v, len(c.Outputs))
		}
	}
	c := sdktest.Build(t, blake2splugin.Plugin, map[string]any{"blocks": 2})
	if len(c.Inputs) != 1024 || c.Attrs["blocks"] != 2 {
		t.Errorf("blocks 2: %d message bits, %d blocks, want 1024 bits (128 bytes), 2 blocks", len(c.Inputs), c.Attrs["blocks"])
	}
}

// TestBlake2sRef: the independent reference at 10 rounds is x/crypto's
// BLAKE2s-256, on random messages of every length from 0 to 200 bytes.
func TestBlake2sRef(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 693))
	for n := range 201 {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(rng.Uint32())
		}
		if got, want := blake2sref.Sum(msg, blake2sref.Rounds), blake2s.Sum256(msg); got != want {
			t.Fatalf("%d bytes: blake2sref %x, x/crypto %x", n, got, want)
		}
	}
}

// TestBlockMode: mode "block" (the counter an input, for byte modules)
// gives x/crypto's BLAKE2s-256 of a random message of every length 0 … 64
// bytes zero-padded with its bit length after it, and agrees with
// blake2sref.Block on random inputs (any block, any length) at reduced
// rounds.
func TestBlockMode(t *testing.T) {
	rng := rand.New(rand.NewPCG(64, 7693))
	var vectors []sdktest.Vector
	for n := range 65 {
		in := make([]byte, 72)
		for i := range n {
			in[i] = byte(rng.Uint32())
		}
		binary.BigEndian.PutUint64(in[64:], uint64(8*n))
		d := blake2s.Sum256(in[:n])
		vectors = append(vectors, sdktest.Vector{In: hex.EncodeToString(in), Want: hex.EncodeToString(d[:])})
	}
	sdktest.CheckVectors(t, blake2splugin.Plugin, map[string]any{"mode": "block"}, vectors)
	for _, r := range []int{1, 4} {
		c := sdktest.CheckReference(t, blake2splugin.Plugin, map[string]any{"mode": "block", "rounds": r}, 64)
		if len(c.Inputs) != 576 || len(c.Outputs) != 256 {
			t.Errorf("mode block: %d inputs, %d outputs; want 576 (block, length), 256", len(c.Inputs), len(c.Outputs))
		}
	}
	sdktest.CheckEstimate(t, blake2splugin.Plugin, map[string]any{"mode": "block", "rounds": 2}, 100)
	sdktest.CheckRefused(t, blake2splugin.Plugin, map[string]any{"mode": "block", "blocks": 1}, "blocks", "one block of 0 to 64 bytes")
}

func TestEstimate(t *testing.T) {
	for _, v := range []map[string]any{{"rounds": 2}, {"message_bits": 0}, {"blocks": 3, "rounds": 4}} {
		sdktest.CheckEstimate(t, blake2splugin.Plugin, v, 100)
	}
}

func TestRefused(t *testing.T) {
	sdktest.CheckRefused(t, blake2splugin.Plugin, map[string]any{"rounds": 11}, "rounds", "at most 10")
	sdktest.CheckRefused(t, blake2splugin.Plugin, map[string]any{"message_bits": 12}, "message_bits", "not a whole number of bytes")
	sdktest.CheckRefused(t, blake2splugin.Plugin, map[string]any{"blocks": 2, "message_bits": 8}, "message_bits", "not both")
	sdktest.CheckRefused(t, blake2splugin.Plugin, map[string]any{"blocks": 2000}, "blocks", "at most 1024 blocks")
}
