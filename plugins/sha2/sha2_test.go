package sha2_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/sha2/sha2ref"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// params is the Pass of sha2 for values.
func params(t *testing.T, values map[string]any) *sdk.Pass {
	t.Helper()
	return sdktest.Pass(t, sha2.Plugin, values)
}

// evalAll evaluates c on every input vector.
func evalAll(t *testing.T, c *circuit.Circuit, in []bitvec.Vec) []bitvec.Vec {
	t.Helper()
	out, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCircuit builds each instance, evaluates the logic circuit on random
// inputs and compares every output bit with the plugin's reference and
// with an independent computation: the standard library (full rounds,
// whole bytes) or sha2ref.
func TestCircuit(t *testing.T) {
	tests := []struct {
		name    string
		values  map[string]any
		inBits  int // circuit inputs
		outBits int
		blocks  int64
	}{
		{"sha256", map[string]any{"preset": "sha256"}, 440, 256, 1},
		{"sha224", map[string]any{"preset": "sha224"}, 440, 224, 1},
		{"sha384", map[string]any{"preset": "sha384"}, 888, 384, 1},
		{"sha512", map[string]any{"preset": "sha512"}, 888, 512, 1},
		{"sha512-224", map[string]any{"preset": "sha512-224"}, 888, 224, 1},
		{"sha512-256", map[string]any{"preset": "sha512-256"}, 888, 256, 1},
		{"sha256 2 blocks", map[string]any{"preset": "sha256", "blocks": int64(2)}, 952, 256, 2},
		{"sha256 empty", map[string]any{"preset": "sha256", "message_bits": int64(0)}, 0, 256, 1},
		{"sha256 447 bits", map[string]any{"preset": "sha256", "message_bits": int64(447)}, 447, 256, 1},
		{"sha256 448 bits", map[string]any{"preset": "sha256", "message_bits": int64(448)}, 448, 256, 2},
		{"sha256 8 rounds", map[string]any{"preset": "sha256", "rounds": int64(8)}, 440, 256, 1},
		{"sha256 20 rounds 3 bits", map[string]any{"preset": "sha256", "rounds": int64(20), "message_bits": int64(3)}, 3, 256, 1},
		{"sha512 5 rounds", map[string]any{"preset": "sha512", "rounds": int64(5)}, 888, 512, 1},
		{"sha256 compress", map[string]any{"preset": "sha256", "mode": "compress"}, 768, 256, 1},
		{"sha512 compress 17 rounds", map[string]any{"preset": "sha512", "mode": "compress", "rounds": int64(17)}, 1536, 512, 1},
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := params(t, tt.values)
			c, err := sha2.Plugin.Build(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if len(c.Inputs) != tt.inBits || len(c.Outputs) != tt.outBits || c.Attrs["blocks"] != tt.blocks {
				t.Fatalf("%d inputs, %d outputs, %d blocks; want %d, %d, %d", len(c.Inputs), len(c.Outputs), c.Attrs["blocks"], tt.inBits, tt.outBits, tt.blocks)
			}
			in := bitvec.Random(rng, 70, tt.inBits)
			got := evalAll(t, c, in)
			ref, err := sha2.Plugin.Reference(context.Background(), p, in)
			if err != nil {
				t.Fatal(err)
			}
			v := map[string]sha2ref.Variant{"sha224": sha2ref.SHA224, "sha256": sha2ref.SHA256, "sha384": sha2ref.SHA384,
				"sha512": sha2ref.SHA512, "sha512-224": sha2ref.SHA512_224, "sha512-256": sha2ref.SHA512_256}[p.Params.String("preset")]
			rounds := int(c.Attrs["rounds"])
			for s := range in {
				var indep []byte
				if p.Params.String("mode") == "compress" {
					all := in[s].Bytes(tt.inBits)
					w := v.WordBits
					indep = v.Compress(all[:8*w], all[8*w:], rounds)
				} else {
					indep = v.Sum(in[s].Bytes(tt.inBits), rounds)
				}
				if g := got[s].Bytes(tt.outBits); !bytes.Equal(g, indep) || !bitvec.Equal(got[s], ref[s], tt.outBits) {
					t.Fatalf("sample %d: circuit %s\nreference %s\nsha2ref %s", s, got[s].Text(tt.outBits), ref[s].Text(tt.outBits), bitvec.FromBytes(indep).Text(tt.outBits))
				}
			}
		})
	}
}

// TestNIST evaluates the SHA-256 and SHA-512 circuits on NIST's "abc".
func TestNIST(t *testing.T) {
	for _, tc := range []struct {
		preset, digest string
	}{
		{"sha256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"sha512", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
	} {
		c, err := sha2.Plugin.Build(context.Background(), params(t, map[string]any{"preset": tc.preset, "message_bits": int64(24)}))
		if err != nil {
			t.Fatal(err)
		}
		out := evalAll(t, c, []bitvec.Vec{bitvec.FromPackedMSB([]byte("abc"), 24)})
		if got := hexOf(out[0].PackMSB(len(c.Outputs))); got != tc.digest {
			t.Errorf("%s(abc) = %s, want %s", tc.preset, got, tc.digest)
		}
	}
}

func hexOf(b []byte) string {
	const digits = "0123456789abcdef"
	var s strings.Builder
	for _, x := range b {
		s.WriteByte(digits[x>>4])
		s.WriteByte(digits[x&15])
	}
	return s.String()
}

// TestPrepare rejects impossible parameters with the reason.
func TestPrepare(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"preset": "sha256", "rounds": int64(65)}, "at most 64 rounds"},
		{map[string]any{"preset": "sha256", "rounds": int64(0)}, "rounds"},
		{map[string]any{"preset": "sha512", "rounds": int64(81)}, "rounds"},
		{map[string]any{"preset": "sha256", "blocks": int64(2), "message_bits": int64(8)}, "not both"},
		{map[string]any{"mode": "compress", "blocks": int64(2)}, "does not apply"},
	} {
		_, err := sdk.NewPass(context.Background(), sha2.Plugin, tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.values, err, tc.want)
		}
	}
}

// TestSize pins the logic circuit's size for SHA-256: one SUMBIT node per
// bit of each addition (48 schedule words, 2 per round, 8 feed-forward).
func TestSize(t *testing.T) {
	c, err := sha2.Plugin.Build(context.Background(), params(t, map[string]any{"preset": "sha256"}))
	if err != nil {
		t.Fatal(err)
	}
	st := c.Stats()
	if want := 32 * (48 + 2*64 + 8); st.ByOp[circuit.OpSumBit] != want {
		t.Errorf("%d SUMBIT nodes, want %d", st.ByOp[circuit.OpSumBit], want)
	}
	if want := 3 * 32 * 64; st.ByOp[circuit.OpAnd]+st.ByOp[circuit.OpAndNot]+st.ByOp[circuit.OpThreshold] != want {
		t.Errorf("%d AND/ANDNOT/THRESHOLD nodes, want %d", st.ByOp[circuit.OpAnd]+st.ByOp[circuit.OpAndNot]+st.ByOp[circuit.OpThreshold], want)
	}
}

// TestPos checks the position hints: every node is hinted with a bit
// index within its word (0…w−1); input and output bits (most significant
// first in each word) with theirs; and a SUMBIT of bit k reads bits 0…k
// only, as an addition does.
func TestPos(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		w      int
	}{
		{map[string]any{"preset": "sha256", "rounds": int64(20)}, 32},
		{map[string]any{"preset": "sha512", "rounds": int64(5), "blocks": int64(2)}, 64},
		{map[string]any{"preset": "sha256", "mode": "compress"}, 32},
	} {
		c := sdktest.Build(t, sha2.Plugin, tc.values)
		for v, p := range c.Pos {
			if p < 0 || int(p) >= tc.w {
				t.Fatalf("%v: node %d (%s, %q) hinted %d", tc.values, v, c.Ops[v], c.Tags[c.Tag[v]], p)
			}
			if c.Ops[v] != circuit.OpSumBit {
				continue
			}
			args, _ := c.Operands(circuit.Node(v))
			for _, a := range args {
				if c.Pos[a] > p {
					t.Fatalf("%v: SUMBIT %d at bit %d reads node %d at bit %d", tc.values, v, p, a, c.Pos[a])
				}
			}
		}
		msb := func(j int) int32 { return int32(tc.w - 1 - j%tc.w) }
		for j, n := range c.Inputs {
			if c.Pos[n] != msb(j) {
				t.Fatalf("%v: input %d hinted %d, want %d", tc.values, j, c.Pos[n], msb(j))
			}
		}
		for j, n := range c.Outputs {
			if c.Pos[n] != msb(j) {
				t.Fatalf("%v: output %d hinted %d, want %d", tc.values, j, c.Pos[n], msb(j))
			}
		}
	}
}
