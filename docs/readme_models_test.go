package docs_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// pipelineBlocks returns the source of every pipeline block of an HCL
// file by name, and each block's layerer and mapper labels.
func pipelineBlocks(t *testing.T, path string) (src map[string]string, labels map[string][]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, diags := hclsyntax.ParseConfig(b, path, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatalf("%s: %v", path, diags)
	}
	src, labels = map[string]string{}, map[string][]string{}
	for _, blk := range f.Body.(*hclsyntax.Body).Blocks {
		if blk.Type != "pipeline" || len(blk.Labels) != 1 {
			continue
		}
		r := blk.Range()
		name := blk.Labels[0]
		src[name] = string(b[r.Start.Byte:r.End.Byte])
		for _, in := range blk.Body.Blocks {
			if (in.Type == "layerer" || in.Type == "mapper") && len(in.Labels) == 1 {
				labels[name] = append(labels[name], in.Type+" "+in.Labels[0])
			}
		}
	}
	return src, labels
}

// TestReadmeModels: configs/readme-models.hcl, the README's export
// command, holds configs/transformers.hcl's pipelines of the same names
// block for block (so python/'s tests of those models cover it); the
// README runs it with --export out/models; every file the README's Python
// lines load is one of its models (PIPELINE.LAYERER.MAPPER-stock.pt); and
// the README names the interpreter that has torch.
func TestReadmeModels(t *testing.T) {
	t.Parallel()
	small, labels := pipelineBlocks(t, "../configs/readme-models.hcl")
	all, _ := pipelineBlocks(t, "../configs/transformers.hcl")
	if len(small) == 0 {
		t.Fatal("configs/readme-models.hcl has no pipeline")
	}
	for name, src := range small {
		if all[name] != src {
			t.Errorf("configs/readme-models.hcl's pipeline %q differs from configs/transformers.hcl's:\n%s\ntransformers.hcl:\n%s", name, src, all[name])
		}
	}
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	_, sec, ok := strings.Cut(readme, "\n## Run a model in PyTorch or ONNX Runtime\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	if !ok {
		t.Fatal("README.md has no section \"Run a model in PyTorch or ONNX Runtime\"")
	}
	if !strings.Contains(sec, "go run ./host/cmd/tcforge run --export out/models configs/readme-models.hcl") {
		t.Error("README.md's model section does not export configs/readme-models.hcl to out/models")
	}
	if !strings.Contains(sec, "/usr/bin/python3") {
		t.Error("README.md's model section does not name /usr/bin/python3, the interpreter Debian's python3-torch installs into")
	}
	loads := regexp.MustCompile(`torch\.jit\.load\("out/models/([^"]+)\.pt"\)`).FindAllStringSubmatch(sec, -1)
	if len(loads) < 2 {
		t.Fatalf("README.md's model section loads %d modules, want its two snippets'", len(loads))
	}
	for _, m := range loads {
		parts := strings.Split(m[1], ".")
		if len(parts) != 3 || !strings.HasSuffix(parts[2], "-stock") {
			t.Errorf("README.md loads %s.pt: not PIPELINE.LAYERER.MAPPER-stock", m[1])
			continue
		}
		p, l, mp := parts[0], parts[1], strings.TrimSuffix(parts[2], "-stock")
		got := strings.Join(labels[p], ", ")
		if !strings.Contains(", "+got+", ", ", layerer "+l+", ") || !strings.Contains(", "+got+", ", ", mapper "+mp+", ") {
			t.Errorf("README.md loads %s.pt, but configs/readme-models.hcl's pipeline %q has %q", m[1], p, got)
		}
	}
}

// TestConfigsListed: every config under configs/ is in docs/pipelines.md's
// table of configs ("a/b.hcl, c.hcl" in a cell names a/b.hcl and a/c.hcl).
func TestConfigsListed(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("pipelines.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n#### All configs\n")
	table, _, _ = strings.Cut(table, "\n\n†")
	if !ok {
		t.Fatal("pipelines.md has no \"All configs\" table")
	}
	listed := map[string]bool{}
	cell := regexp.MustCompile("`([^`]+\\.hcl)`")
	for _, row := range strings.Split(table, "\n") {
		first, _, _ := strings.Cut(strings.TrimPrefix(row, "| "), " |")
		dir := ""
		for _, m := range cell.FindAllStringSubmatch(first, -1) {
			name := m[1]
			if strings.Contains(name, "/") {
				dir = name[:strings.LastIndex(name, "/")+1]
			} else {
				name = dir + name
			}
			listed[name] = true
		}
	}
	var configs []string
	err = filepath.WalkDir(filepath.Join(root, "configs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".hcl") {
			rel, _ := filepath.Rel(root, p)
			configs = append(configs, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range configs {
		if !listed[c] {
			t.Errorf("docs/pipelines.md's table of configs lacks %s", c)
		}
	}
	for c := range listed {
		if !slices.Contains(configs, c) {
			t.Errorf("docs/pipelines.md's table of configs lists %s, which is not there", c)
		}
	}
}
