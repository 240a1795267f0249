package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestHashesConfig runs configs/hashes.hcl end to end (and, in the heavy
// tier, configs/hashes-heavy.hcl): MD5, SHA-1, BLAKE2s, BLAKE3 and Ascon
// at full size and reduced steps or rounds through both layerers, every
// point verified and every depth law (its expect blocks) met, and the
// full-size one-block points' figures as docs/writing-a-hash.md prints
// them.
func TestHashesConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 88 points of MD5, SHA-1, BLAKE2s, BLAKE3 and Ascon (about 30 s)")
	}
	out := t.TempDir()
	files := []string{filepath.Join("..", "..", "configs", "hashes.hcl")}
	if sdktest.IsHeavy() { // full BLAKE3 chunks and their trees (minutes)
		files = append(files, filepath.Join("..", "..", "configs", "hashes-heavy.hcl"))
	}
	r := tcforge(t, append([]string{"run", "--log-level", "warn", "--out", out}, files...)...)
	if r.code != 0 {
		t.Fatalf("exit %d (a point failed or missed its law)\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// The rows by pipeline, layerer and the point's columns (the others
	// empty: a row of another matrix block).
	want := []struct {
		pipeline, layerer string
		point             map[string]string
		figures           map[string]string
	}{
		{"md5-full", "reifier", map[string]string{"blocks": "1"}, map[string]string{"depth": "502", "width": "776", "gates": "292714"}},
		{"md5-full", "fusion", map[string]string{"blocks": "1"}, map[string]string{"depth": "257", "width": "744", "gates": "152472"}},
		{"sha1-full", "reifier", map[string]string{"blocks": "1"}, map[string]string{"depth": "325", "width": "2632", "gates": "469634"}},
		{"sha1-full", "fusion", map[string]string{"blocks": "1"}, map[string]string{"depth": "162", "width": "2807", "gates": "241471"}},
		{"blake2s-full", "reifier", map[string]string{"blocks": "1"}, map[string]string{"depth": "484", "width": "1384", "gates": "523280"}},
		{"blake2s-full", "fusion", map[string]string{"blocks": "1"}, map[string]string{"depth": "239", "width": "1384", "gates": "278588"}},
		{"blake3", "reifier", map[string]string{"rounds": "7", "blocks": "1"}, map[string]string{"depth": "340", "width": "1384", "gates": "361152"}},
		{"blake3", "fusion", map[string]string{"rounds": "7", "blocks": "1"}, map[string]string{"depth": "167", "width": "1384", "gates": "191372"}},
		{"ascon", "reifier", map[string]string{"rounds": "12", "blocks": "1"}, map[string]string{"depth": "436", "width": "896", "gates": "260817"}},
		{"ascon", "fusion", map[string]string{"rounds": "12", "blocks": "1"}, map[string]string{"depth": "96", "width": "2368", "gates": "181669"}},
	}
	rows := map[string][]map[string]string{}
	for _, w := range want {
		found := 0
		if _, ok := rows[w.pipeline]; !ok {
			rows[w.pipeline] = sdktest.Table(t, filepath.Join(out, w.pipeline+".csv"))
		}
		for _, row := range rows[w.pipeline] {
			if row["layerer"] != w.layerer || !matches(row, w.point) {
				continue
			}
			found++
			for col, v := range w.figures {
				if row[col] != v {
					t.Errorf("%s %v %s: %s %s, want %s", w.pipeline, w.point, w.layerer, col, row[col], v)
				}
			}
		}
		if found != 1 {
			t.Errorf("%s %v %s: %d rows, want 1", w.pipeline, w.point, w.layerer, found)
		}
	}
}

// matches reports whether a CSV row is the point: the given columns have
// the given values, the point's other columns are empty.
func matches(row, point map[string]string) bool {
	for _, col := range []string{"blocks", "message_bits", "rounds", "steps", "mode", "output_bits"} {
		if v, ok := row[col]; ok && v != point[col] {
			return false
		}
	}
	return true
}
