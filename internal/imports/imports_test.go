package imports

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const module = "github.com/tcforge/tcforge/"

// outside prefixes the import paths outside the module (the standard
// library's included) in the rules, so that they never match a folder of
// the module (the standard library has internal/ packages too).
const outside = "ext:"

// pkg is what go list says of one package of the module.
type pkg struct {
	ImportPath string
	Imports    []string // direct, non-test
	Deps       []string // transitive, non-test
}

// listModule returns every package of the module, from go list. It first
// stats every Go file and go.mod of the module, so that go test's cache
// (which sees the files a test opens, not what go list reads) reruns the
// test when a source changes.
func listModule(t *testing.T) []pkg {
	t.Helper()
	err := filepath.WalkDir(filepath.Join("..", ".."), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != filepath.Join("..", "..") {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".go") || d.Name() == "go.mod") {
			_, err = os.Stat(path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("walking the module: %v", err)
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go") // the toolchain running the test
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	out, err := exec.Command(gobin, "list", "-json=ImportPath,Imports,Deps", module+"...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages of the module, want the whole tree", len(pkgs))
	}
	return pkgs
}

// under reports whether path is dir or below it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// TestImportRules holds the rules docs/design.md states for every non-test
// package of the module.
func TestImportRules(t *testing.T) {
	rules := []struct {
		name string
		// applies says the rule covers package p; bad says p may not
		// import imp (a package of the module without the module
		// prefix, or outside+path for any other).
		applies func(p string) bool
		deps    bool // checks the transitive imports, not the direct ones
		bad     func(p, imp string) bool
	}{
		{"sdk never imports host/ or plugins/", func(p string) bool { return under(p, "sdk") }, true,
			func(_, imp string) bool { return under(imp, "host") || under(imp, "plugins") }},
		{"sdk compiles without gRPC but for sdk/serve", func(p string) bool { return under(p, "sdk") && !under(p, "sdk/serve") }, true,
			func(_, imp string) bool {
				return strings.Contains(imp, "grpc") || under(imp, "internal/wire") || strings.Contains(imp, "go-plugin")
			}},
		{"plugins import only sdk/... and their own packages", func(p string) bool { return under(p, "plugins") }, false,
			func(p, imp string) bool {
				own := strings.Join(strings.SplitN(p, "/", 3)[:2], "/")
				return !strings.HasPrefix(imp, outside) && !under(imp, "sdk") && !under(imp, own)
			}},
		{"the host imports plugins only in host/builtin", func(p string) bool { return under(p, "host") && p != "host/builtin" }, false,
			func(_, imp string) bool { return under(imp, "plugins") }},
		{"internal/wire imports no sdk package but the IR ones", func(p string) bool { return under(p, "internal/wire") }, false,
			func(_, imp string) bool {
				switch imp {
				case "sdk/bitvec", "sdk/circuit", "sdk/layered", "sdk/model":
					return false
				}
				return under(imp, "sdk")
			}},
		{"internal/ never imports host/ or plugins/", func(p string) bool { return under(p, "internal") }, true,
			func(_, imp string) bool { return under(imp, "host") || under(imp, "plugins") }},
	}
	pkgs := listModule(t)
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			covered := 0
			for _, p := range pkgs {
				if !r.applies(p.ImportPath) {
					continue
				}
				covered++
				imps := p.Imports
				if r.deps {
					imps = p.Deps
				}
				for _, imp := range imps {
					if rel, ok := strings.CutPrefix(imp, module); ok {
						imp = rel
					} else {
						imp = outside + imp
					}
					if r.bad(p.ImportPath, imp) {
						t.Errorf("%s imports %s", p.ImportPath, imp)
					}
				}
			}
			if covered == 0 {
				t.Errorf("no package is covered by the rule")
			}
		})
	}
}
