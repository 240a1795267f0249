package cli_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tcforge/tcforge/host/cli"
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
