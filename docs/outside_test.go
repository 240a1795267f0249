package docs_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk/sdktest"
)

// TestOutsideModule does what docs/plugins.md, "Out-of-tree modules",
// tells an author to do: it copies testdata/outside (a construction in a
// module of its own, on the SDK only) out of the checkout, points its
// replace directive at this checkout, builds the plugin from the module
// cache alone (GOPROXY=off, GOFLAGS=-mod=mod: go.mod gets its indirect
// requirements, go.sum is the checkout's) and runs testdata/outside's
// pipeline with --plugin-dir: every row verified by both layerers, every
// model by its passes, the laws met, the plugin's provenance its path.
func TestOutsideModule(t *testing.T) {
	t.Parallel()
	sdktest.Short(t, "builds a plugin module outside the checkout (10–30 s with a warm build cache)")
	checkout, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	for _, f := range []string{"go.mod", "main.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "outside", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "go.mod" {
			replace := regexp.MustCompile(`(?m)^replace github.com/tcforge/tcforge => .*$`)
			if !replace.Match(b) {
				t.Fatal("testdata/outside/go.mod has no replace directive for github.com/tcforge/tcforge")
			}
			b = replace.ReplaceAll(b, []byte("replace github.com/tcforge/tcforge => "+checkout))
		}
		if err := os.WriteFile(filepath.Join(mod, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	exe := filepath.Join(bin, "tcforge-plugin-parity")
	build := exec.Command("go", "build", "-o", exe, ".")
	build.Dir = mod
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		if strings.Contains(string(out), "module lookup disabled by GOPROXY=off") {
			t.Skipf("the module cache lacks a dependency of the checkout (offline, GOPROXY=off): %s", out)
		}
		t.Fatalf("go build of the outside module: %v\n%s", err, out)
	}
	res := run(t, []string{filepath.Join("testdata", "outside", "parity.hcl")}, "--plugin-dir", bin)
	rs := res.rows["parity"]
	if len(rs) != 6 {
		t.Fatalf("%d rows of pipeline parity, want 6 (3 points, 2 layerers):\n%s", len(rs), res.stdout)
	}
	for _, r := range rs {
		where := fmt.Sprintf("n=%v, %s", r.Point["n"], r.Layerer)
		if !r.Verified || !r.ExpectOK || len(r.Expect) == 0 {
			t.Errorf("%s: verified %v, expectations %v met %v", where, r.Verified, r.Expect, r.ExpectOK)
		}
		if len(r.Models) != 1 || !r.Models[0].Verified {
			t.Errorf("%s: models %+v, want one, verified", where, r.Models)
		}
		found := false
		for _, p := range r.Plugins {
			if p.Name == "parity" {
				found = p.Source == exe && p.Version == "0.1.0" && len(p.SHA256) == 64
			}
		}
		if !found {
			t.Errorf("%s: plugins %+v, want parity 0.1.0 from %s", where, r.Plugins, exe)
		}
	}
}
