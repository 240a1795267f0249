package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/cli"
	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// BenchmarkRunSHA3_256 is a whole "tcforge run" of one full SHA3-256
// point (plugin processes started, logic circuit and layered circuit over
// RPC, verification on 256 messages) against the same run with the
// bundled plugins called in-process: the ratio of the two is the cost of
// the RPC boundary.
func BenchmarkRunSHA3_256(b *testing.B) {
	dir := b.TempDir()
	cfg := filepath.Join(dir, "sha3-256.hcl")
	src := `pipeline "sha3-256" {
  construction "keccak" {
    preset = "sha3-256"
  }
  layerer "reifier" {}
}`
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name  string
		flags []string
	}{{"rpc", nil}, {"in-process", []string{"--in-process"}}} {
		b.Run(mode.name, func(b *testing.B) {
			args := append(append([]string{"run", "--log-level", "error", "--progress", "never"}, mode.flags...), cfg)
			for b.Loop() {
				var out, errb bytes.Buffer
				if code := cli.Main(context.Background(), cli.Env{Stdout: &out, Stderr: &errb, Builtins: testBuiltins()}, args); code != 0 {
					b.Fatalf("exit %d\n%s%s", code, out.String(), errb.String())
				}
			}
		})
	}
}

// BenchmarkLayerSHA3_512 sends a full SHA3-512 logic circuit to the
// reifier plugin and gets its layered circuit (5.5 M edges) back, over RPC
// from a plugin process and in-process: the transfer's cost.
func BenchmarkLayerSHA3_512(b *testing.B) {
	ctx := context.Background()
	kp, err := sdk.NewPass(context.Background(), keccak.Plugin, map[string]any{"preset": "sha3-512"})
	if err != nil {
		b.Fatal(err)
	}
	c, err := keccak.Plugin.Build(ctx, kp)
	if err != nil {
		b.Fatal(err)
	}
	for _, inProcess := range []bool{false, true} {
		name := "rpc"
		if inProcess {
			name = "in-process"
		}
		b.Run(name, func(b *testing.B) {
			reg := registry.New(registry.Options{Builtins: testBuiltins(), InProcess: inProcess, Log: zerolog.Nop()})
			defer reg.Close()
			pl, _, err := reg.Open(ctx, "reifier")
			if err != nil {
				b.Fatal(err)
			}
			l := pl.(*sdk.Layerer)
			p, err := sdk.NewPass(ctx, l, nil)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				lc, err := l.Layer(ctx, p, c)
				if err != nil {
					b.Fatal(err)
				}
				if lc.Depth() != 148 {
					b.Fatalf("depth %d", lc.Depth())
				}
			}
		})
	}
}

// BenchmarkCodecSHA3_256 times each step the RPC path adds around the
// plugins' own work for one SHA3-256 point: encoding and decoding the logic
// circuit (which includes validating it) and the layered circuit, and
// validating each alone, so that the decoders' share can be told apart.
func BenchmarkCodecSHA3_256(b *testing.B) {
	ctx := context.Background()
	kp, err := sdk.NewPass(context.Background(), keccak.Plugin, map[string]any{"preset": "sha3-256"})
	if err != nil {
		b.Fatal(err)
	}
	c, err := keccak.Plugin.Build(ctx, kp)
	if err != nil {
		b.Fatal(err)
	}
	lc, err := reifier.Compile(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	cb, err := c.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	lb, err := lc.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	b.Run("logic/encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.MarshalBinary(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("logic/decode", func(b *testing.B) {
		for b.Loop() {
			var d circuit.Circuit
			if err := d.UnmarshalBinary(cb); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("logic/validate", func(b *testing.B) {
		for b.Loop() {
			if err := c.Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("layered/encode", func(b *testing.B) {
		for b.Loop() {
			if _, err := lc.MarshalBinary(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("layered/decode", func(b *testing.B) {
		for b.Loop() {
			var d layered.Circuit
			if err := d.UnmarshalBinary(lb); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("layered/validate", func(b *testing.B) {
		for b.Loop() {
			if err := lc.Validate(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
