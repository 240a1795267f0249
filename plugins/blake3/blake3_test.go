package blake3_test

import (
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"os"
	"testing"

	"lukechampine.com/blake3"

	blake3plugin "github.com/tcforge/tcforge/plugins/blake3"
	"github.com/tcforge/tcforge/plugins/blake3/blake3ref"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// vector is a case of the BLAKE3 team's test vectors (testdata: the
// hash mode's cases of test_vectors/test_vectors.json): the input is
// input_len bytes i mod 251, the digest the first 32 bytes of hash.
type vector struct {
	InputLen int    `json:"input_len"`
	Hash     string `json:"hash"`
}

func vectors(t *testing.T) []vector {
	t.Helper()
	b, err := os.ReadFile("testdata/test_vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Cases []vector }
	if err := json.Unmarshal(b, &f); err != nil || len(f.Cases) != 35 {
		t.Fatalf("testdata/test_vectors.json: %v, %d cases", err, len(f.Cases))
	}
	return f.Cases
}

// input is a test vector's input.
func input(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

// TestVectors: the BLAKE3 team's test vectors through the circuit and the
// reference: one chunk and two (up to 1025 bytes) in every tier, the
// three- and four-chunk trees (2048–3073 bytes) without -short, up to
// nine chunks (8193 bytes) in the heavy tier.
func TestVectors(t *testing.T) {
	limit := 3073
	switch {
	case testing.Short():
		limit = 1025
	case sdktest.IsHeavy():
		limit = 8193
	}
	for _, v := range vectors(t) {
		if v.InputLen > limit {
			continue
		}
		sdktest.CheckVectors(t, blake3plugin.Plugin, map[string]any{"message_bits": 8 * v.InputLen},
			[]sdktest.Vector{{In: hex.EncodeToString(input(v.InputLen)), Want: v.Hash[:64], Bits: 8 * v.InputLen}})
	}
}

// TestLukechampine: the circuit against lukechampine.com/blake3 on random
// messages at the block and chunk boundaries.
func TestLukechampine(t *testing.T) {
	lengths := []int{0, 1, 64, 65, 200, 1024, 1025, 2049}
	if testing.Short() {
		lengths = []int{0, 65, 1025}
	}
	for _, n := range lengths {
		sdktest.CheckOracle(t, blake3plugin.Plugin, map[string]any{"message_bits": 8 * n}, 8, func(in bitvec.Vec) bitvec.Vec {
			d := blake3.Sum256(in.PackMSB(8 * n))
			return bitvec.FromPackedMSB(d[:], 256)
		})
	}
}

// TestBlake3Ref: the independent reference at 7 rounds is every test
// vector (up to 102,400 bytes: trees of 100 chunks) and
// lukechampine.com/blake3 on random messages of 0 to 5,000 bytes.
func TestBlake3Ref(t *testing.T) {
	for _, v := range vectors(t) {
		if got := blake3ref.Sum(input(v.InputLen), blake3ref.Rounds); hex.EncodeToString(got[:]) != v.Hash[:64] {
			t.Errorf("%d bytes: blake3ref %x, test vector %s", v.InputLen, got, v.Hash[:64])
		}
	}
	rng := rand.New(rand.NewPCG(3, 2019))
	for n := 0; n <= 5000; n += 1 + n/64 {
		msg := make([]byte, n)
		for i := range msg {
			msg[i] = byte(rng.Uint32())
		}
		if got, want := blake3ref.Sum(msg, blake3ref.Rounds), blake3.Sum256(msg); got != want {
			t.Fatalf("%d bytes: blake3ref %x, lukechampine.com/blake3 %x", n, got, want)
		}
	}
}

// TestReference: reduced rounds against blake3ref through the host's
// point pipeline: one block, several, two and three chunks.
func TestReference(t *testing.T) {
	cases := []map[string]any{
		{"rounds": 1, "message_bits": 0},
		{"rounds": 1, "message_bits": 8},
		{"rounds": 2, "blocks": 1},
		{"rounds": 3, "message_bits": 8 * 130},
		{"rounds": 1, "message_bits": 8 * 1025},
		{"rounds": 2, "blocks": 33},
		{"rounds": 6, "message_bits": 8 * 100},
	}
	if testing.Short() {
		cases = cases[:4]
	}
	for _, v := range cases {
		c := sdktest.CheckReference(t, blake3plugin.Plugin, v, 16)
		if len(c.Outputs) != 256 {
			t.Errorf("%v: %d outputs", v, len(c.Outputs))
		}
	}
	c := sdktest.Build(t, blake3plugin.Plugin, map[string]any{"rounds": 1, "blocks": 33})
	if len(c.Inputs) != 8*33*64 || c.Attrs["chunks"] != 3 || c.Attrs["blocks"] != 33 {
		t.Errorf("blocks 33: %d message bits, %d chunks, %d blocks; want 16896 bits, 3 chunks, 33 blocks", len(c.Inputs), c.Attrs["chunks"], c.Attrs["blocks"])
	}
}

func TestEstimate(t *testing.T) {
	for _, v := range []map[string]any{{"rounds": 2}, {"message_bits": 0}, {"blocks": 17, "rounds": 1}, {"message_bits": 8 * 3000, "rounds": 1}} {
		sdktest.CheckEstimate(t, blake3plugin.Plugin, v, 100)
	}
}

func TestRefused(t *testing.T) {
	sdktest.CheckRefused(t, blake3plugin.Plugin, map[string]any{"rounds": 8}, "rounds", "at most 7")
	sdktest.CheckRefused(t, blake3plugin.Plugin, map[string]any{"message_bits": 12}, "message_bits", "not a whole number of bytes")
	sdktest.CheckRefused(t, blake3plugin.Plugin, map[string]any{"blocks": 2000}, "blocks", "at most 1024 blocks")
}
