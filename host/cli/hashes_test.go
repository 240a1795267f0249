package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestHashesConfig runs configs/hashes.hcl end to end: MD5 and SHA-1 at
// full size and reduced steps through both layerers, every point verified
// and every depth law (its expect blocks) met, and the full-size one-block
// MD5 point's figures as docs/writing-a-hash.md prints them.
func TestHashesConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 53 points of MD5 and SHA-1 (about 15 s)")
	}
	out := t.TempDir()
	r := tcforge(t, "run", "--log-level", "warn", "--out", out, filepath.Join("..", "..", "configs", "hashes.hcl"))
	if r.code != 0 {
		t.Fatalf("exit %d (a point failed or missed its law)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	want := map[[3]string]map[string]string{
		{"md5-full", "1", "reifier"}:  {"depth": "502", "width": "776", "gates": "292714"},
		{"md5-full", "1", "fusion"}:   {"depth": "257", "width": "744", "gates": "152472"},
		{"sha1-full", "1", "reifier"}: {"depth": "325", "width": "2632", "gates": "469634"},
		{"sha1-full", "1", "fusion"}:  {"depth": "162", "width": "2807", "gates": "241471"},
	}
	found := 0
	for _, pipeline := range []string{"md5-full", "sha1-full"} {
		for _, row := range sdktest.Table(t, filepath.Join(out, pipeline+".csv")) {
			w, ok := want[[3]string{pipeline, row["blocks"], row["layerer"]}]
			if !ok || row["message_bits"] != "" {
				continue
			}
			found++
			for col, v := range w {
				if row[col] != v {
					t.Errorf("%s blocks=1 %s: %s %s, want %s", pipeline, row["layerer"], col, row[col], v)
				}
			}
		}
	}
	if found != len(want) {
		t.Errorf("found %d of the %d full-size one-block rows", found, len(want))
	}
}
