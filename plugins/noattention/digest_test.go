package noattention_test

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestOutputUnchanged pins the mapper's models bit for bit: the SHA-256 of
// the encoding (MarshalBinary, labels included) of what Map builds in each
// variant from a few layered circuits: reifier's (copies, 0/1 values) and
// fusion's (forms; SHA-256 with 8-bit addition chunks, whose sums make the
// residual variant raise its anchor). A refactor must leave these digests
// alone; a change meant to alter the models updates them (the test prints
// the new digest) and says why in its commit.
func TestOutputUnchanged(t *testing.T) {
	layer := func(name string, c *circuit.Circuit, maxSum int64) *layered.Circuit {
		t.Helper()
		var l *layered.Circuit
		var err error
		if name == "reifier" {
			l, err = reifier.Compile(context.Background(), c)
		} else {
			l, err = fusion.Compile(context.Background(), c, fusion.Options{MaxSum: maxSum})
		}
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	keccakToy := sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(2)})
	mdToy := sdktest.Build(t, md.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(1), "block_bits": int64(20), "blocks": int64(2)})
	adder8 := sdktest.Build(t, adder.Plugin, map[string]any{"n": int64(8)})
	sha256r2 := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(2)})
	tests := []struct {
		name      string
		l         *layered.Circuit
		mlp, resi string // digests of the two variants
	}{
		{"keccak w=2 r2 reifier", layer("reifier", keccakToy, 0),
			"7ef0d1b2bb4ee8b61ae4bf10b6f92d9507c7028c2aa3ad35a913b66688287ea4",
			"4bef9c2d46948082d1dbabb1066b2075d4decbf5168726724686e181fd94286b"},
		{"keccak w=2 r2 fusion", layer("fusion", keccakToy, 0),
			"84a96feac308ab5b2730a6c8b115945f933f68123b15edff7b61faea09c02f32",
			"5ec9d9b5f29080004d9573f893ed4bf93c5bf8bae1a0c674c36677d265c73a0b"},
		{"md 2 blocks reifier", layer("reifier", mdToy, 0),
			"8faac055349a8d1f5053f686db295639cd52e8fd0bff3a25f4244566f238a596",
			"f5d6a803c72d51cfe87fa32ce86b120450cba2fa69ff101a852c36dd2a6b945c"},
		{"adder 8 fusion", layer("fusion", adder8, 0),
			"9683c914c8c2300dca9a3af0b48359062ed68e00beba56924d9ce3207eb554fb",
			"8c67b8f589bfdac8753e17007d517673025e4b43230d9b8fd45b675f22724f1b"},
		{"sha256 r2 fusion 8-bit chunks", layer("fusion", sha256r2, 1<<16),
			"ef5c36da379914295d4e6fb44114e9b7bea6675a8ab77637915db04af68057fb",
			"4f83582256201c8aa6426f815b46b1a5194587534c7b828b55dbe61f40c577ed"},
	}
	for _, tc := range tests {
		for _, v := range []struct{ variant, want string }{{"mlp", tc.mlp}, {"residual", tc.resi}} {
			t.Run(tc.name+" "+v.variant, func(t *testing.T) {
				pass := sdktest.Pass(t, noattention.Plugin, map[string]any{"variant": v.variant})
				m, err := noattention.Plugin.Map(context.Background(), pass, tc.l)
				if err != nil {
					t.Fatal(err)
				}
				if got := sdktest.Digest(t, m); got != v.want {
					t.Errorf("model encoding's digest %s, want %s", got, v.want)
				}
			})
		}
	}
}
