package tokensasgates_test

import (
	"context"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestOutputUnchanged pins the mapper's models bit for bit: the SHA-256
// of the encoding (MarshalBinary) of the model it maps from each of a few
// layered circuits (reifier's copies and negative weights, fusion's forms
// flattened, SHA-2's weights of many bits), in both attention modes. A
// refactor must leave these digests alone; a change meant to alter the
// models updates them (the test prints the new digest) and says why in its
// commit.
func TestOutputUnchanged(t *testing.T) {
	keccakToy := sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(2)})
	sha2Toy := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(2), "mode": "compress"})
	layer := func(name string, c *circuit.Circuit) *layered.Circuit {
		var l *layered.Circuit
		var err error
		switch name {
		case "reifier":
			l, err = reifier.Compile(context.Background(), c)
		case "fusion":
			l, err = fusion.Compile(context.Background(), c, fusion.Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	tests := []struct {
		name string
		c    *layered.Circuit
		opt  tokensasgates.Options
		want string
	}{
		{"three gates hard", sdktest.ThreeGates(), tokensasgates.Options{Mode: model.Hard}, "64cd9de6ddd6fee3acd3add04362e321cc6bea42e7d7454f43c640ddb21d4eea"},
		{"three gates softmax", sdktest.ThreeGates(), tokensasgates.Options{Mode: model.Softmax}, "ad6d87d4a9cf9d56e5f47bcd5b1520bbf6104675776384e5b8f93aa3aa52b922"},
		{"keccak w=2 reifier hard", layer("reifier", keccakToy), tokensasgates.Options{Mode: model.Hard}, "f288cf02c52b33fc530ce314fa390729b03b9a31a0d64f05fd59dcb80edd1e1e"},
		{"keccak w=2 reifier softmax", layer("reifier", keccakToy), tokensasgates.Options{Mode: model.Softmax}, "7b061927c540271c1bdd3baf5660b7c9cee9ae1e6035641ea72967002cf7c2a5"},
		{"keccak w=2 fusion hard", layer("fusion", keccakToy), tokensasgates.Options{Mode: model.Hard}, "0cdddb545b2106fa83363df3d652c1581cf12f6b549eb4e0634655dccb2bacfe"},
		{"keccak w=2 fusion softmax β=9", layer("fusion", keccakToy), tokensasgates.Options{Mode: model.Softmax, Beta: 9}, "280d0a82faf29c4bf88711424c696fa3638805a32e3ca067504129c8727212c9"},
		{"sha256 compress r2 fusion softmax", layer("fusion", sha2Toy), tokensasgates.Options{Mode: model.Softmax}, "440f47a87fa36bb4e76f67c44af8a16bed58544bccf74117d4ae18ef60f75e28"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tokensasgates.Map(context.Background(), tc.c, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			if got := sdktest.Digest(t, m); got != tc.want {
				t.Errorf("model encoding's digest %s, want %s", got, tc.want)
			}
		})
	}
}
