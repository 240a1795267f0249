package python_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// blockSignatures returns, by pipeline name, the layerer and mapper blocks
// of the pipeline files: each block's plugin and attributes as written.
func blockSignatures(t *testing.T, files ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		f, diags := config.Parse(file, src)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		for _, p := range f.Pipelines {
			var sb strings.Builder
			for _, b := range append(slices.Clone(p.Layerers), p.Mappers...) {
				fmt.Fprintf(&sb, "%s %q {", b.Kind, b.Name)
				var attrs []string
				for name, a := range b.Attrs {
					r := a.Expr.Range()
					attrs = append(attrs, name+" = "+string(src[r.Start.Byte:r.End.Byte]))
				}
				slices.Sort(attrs)
				sb.WriteString(strings.Join(attrs, "; ") + "} ")
			}
			out[p.Name] = sb.String()
		}
	}
	return out
}

// passes runs every config's test vectors in float64, float32, float16
// and bfloat16 and prints, one JSON object a line, the wrong output bits
// and the seconds of each pass. One thread (this machine's torch defaults
// to one; set_num_threads(2) made the sparse passes of the tokens-as-gates
// models 5-20x slower at load 8: keccak's fusion tokens-as-gates/hard
// model, 8 vectors in four formats, 19.3 s against 0.8 s).
//
// A model of more than bigTokens tokens (the reifier's tokens-as-gates
// models: 1,100 to 2,885 tokens, a dense T×T score matrix a head and
// block) runs the first bigVectors of its test vectors, the others all of
// theirs: on 8 vectors in four formats keccak's reifier tokens-as-gates
// models took 30 s and 42 s and md's hard one 304 s (wall, niced, load
// 10-12), most others under a second; merkle's, at 2,874 tokens, more.
// The table says how many vectors each model ran.
const passes = `
import sys, json, time, torch, tcforge_torch
torch.set_num_threads(1)
big_tokens, big_vectors = int(sys.argv[1]), int(sys.argv[2])
for cfg in sys.argv[3:]:
    m = tcforge_torch.load(cfg)
    vec = m.cfg["test_vectors"]
    if m.tokens > big_tokens:
        vec = vec[:big_vectors]
    bits = torch.tensor([[int(c) for c in v["input"]] for v in vec], dtype=torch.uint8)
    want = torch.tensor([[int(c) for c in v["output"]] for v in vec], dtype=torch.uint8)
    wrong, secs = {}, {}
    for f, dt in (("fp64", torch.float64), ("fp32", torch.float32), ("fp16", torch.float16), ("bf16", torch.bfloat16)):
        t0 = time.perf_counter()
        wrong[f] = int((m.run(bits, dtype=dt) != want).sum())
        secs[f] = round(time.perf_counter() - t0, 2)
    print(json.dumps({"config": cfg, "vectors": len(vec), "outputs": m.outputs, "wrong": wrong, "seconds": secs}), flush=True)
`

// The passes' limit for the largest models (see passes).
const bigTokens, bigVectors = 1000, 2

// updateExactIn makes TestExactIn rewrite docs/export.md's exact-in table
// from its passes instead of failing where they differ.
var updateExactIn = flag.Bool("update-exact-in", false, "rewrite docs/export.md's exact-in table from TestExactIn's passes (TCFORGE_HEAVY=1)")

// TestExactIn runs every pipeline of configs/mappers.hcl and
// configs/transformers.hcl at test size (testdata/formats.hcl: the same
// layerer and mapper blocks, checked here, on smaller constructions) with
// --export, then runs each exported model's test vectors in PyTorch in
// float64, float32, float16 and bfloat16: the formats the host lists as
// "exact in" (its own float32 and float64 passes) must be exactly those
// whose PyTorch pass gives every bit, and the float16 and bfloat16
// outcomes must be the table of docs/export.md, which the host does not
// claim ("not checked"); -update-exact-in rewrites the table instead. The
// six largest models run 2 of their 8 vectors (passes), as the table's
// vectors column says.
func TestExactIn(t *testing.T) {
	needTorch(t)
	sdktest.Heavy(t, "54 models, each in four formats in PyTorch: minutes on a loaded machine")
	want := blockSignatures(t, "../configs/mappers.hcl", "../configs/transformers.hcl")
	got := blockSignatures(t, "testdata/formats.hcl")
	for name, sig := range want {
		if got[name] != sig {
			t.Errorf("pipeline %q: testdata/formats.hcl has layerers and mappers\n  %s\nthe configs\n  %s", name, got[name], sig)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("testdata/formats.hcl: pipeline %q is in neither config", name)
		}
	}
	src, err := os.ReadFile("testdata/formats.hcl")
	if err != nil {
		t.Fatal(err)
	}
	f, diags := config.Parse("testdata/formats.hcl", src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	reg := registry.New(registry.Options{Builtins: builtin.Plugins(), InProcess: true, Log: zerolog.Nop()})
	defer reg.Close()
	dir := t.TempDir()
	r := &run.Runner{Registry: reg, Log: zerolog.Nop(), Jobs: 1, Samples: 8, Export: dir}
	type model struct {
		pipeline, layerer, arch string
		exact                   map[string]bool
	}
	models := map[string]model{}
	var configs []string
	for _, p := range f.Pipelines {
		res, err := r.Run(context.Background(), p)
		if err != nil || !res.OK() {
			t.Fatalf("%s: %v", p.Name, err)
		}
		for _, row := range res.Rows {
			for _, m := range row.Models {
				models[m.Export] = model{p.Name, row.Layerer, m.Arch, m.Exact}
				configs = append(configs, m.Export)
			}
		}
	}
	var table strings.Builder
	table.WriteString("| pipeline | layerer | model | host: exact in | vectors | PyTorch fp64 | fp32 | fp16 | bf16 |\n|---|---|---|---|---:|---|---|---|---|\n")
	args := append([]string{fmt.Sprint(bigTokens), fmt.Sprint(bigVectors)}, configs...)
	for _, line := range strings.Split(strings.TrimSpace(runPython(t, dir, passes, args...)), "\n") {
		var res struct {
			Config  string
			Vectors int
			Outputs int
			Wrong   map[string]int
			Seconds map[string]float64
		}
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			t.Fatalf("%v in %q", err, line)
		}
		m := models[res.Config]
		t.Logf("%s: %d vectors, seconds fp64 %.2f fp32 %.2f fp16 %.2f bf16 %.2f", filepath.Base(res.Config), res.Vectors,
			res.Seconds["fp64"], res.Seconds["fp32"], res.Seconds["fp16"], res.Seconds["bf16"])
		cell := map[string]string{}
		for _, f := range []string{"fp64", "fp32", "fp16", "bf16"} {
			cell[f] = "exact"
			if res.Wrong[f] > 0 {
				// The count depends on PyTorch's kernels (threads, BLAS):
				// logged, not tabled.
				cell[f] = "wrong"
				t.Logf("%s: %s pass: %d of %d bits wrong", filepath.Base(res.Config), f, res.Wrong[f], res.Vectors*res.Outputs)
			}
		}
		for _, f := range []string{"fp64", "fp32"} {
			if m.exact[f] != (res.Wrong[f] == 0) {
				t.Errorf("%s: the host says %s exact %v, PyTorch's %s pass got %d bits wrong", filepath.Base(res.Config), f, m.exact[f], f, res.Wrong[f])
			}
		}
		exactIn := []string{}
		for _, f := range []string{"fp64", "fp32"} {
			if m.exact[f] {
				exactIn = append(exactIn, f)
			}
		}
		fmt.Fprintf(&table, "| %s | %s | %s | %s | %d | %s | %s | %s | %s |\n", m.pipeline, m.layerer, m.arch, strings.Join(exactIn, " "), res.Vectors, cell["fp64"], cell["fp32"], cell["fp16"], cell["bf16"])
	}
	if n := strings.Count(table.String(), "\n") - 2; n != len(configs) {
		t.Fatalf("the passes gave %d of %d models", n, len(configs))
	}
	doc, err := os.ReadFile("../docs/export.md")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- table: exact-in -->\n"
	head, rest, ok := strings.Cut(string(doc), marker)
	documented, tail, ok2 := strings.Cut(rest, "\n\n")
	if !ok || !ok2 {
		t.Fatalf("docs/export.md has no %q table", strings.TrimSpace(marker))
	}
	if documented+"\n" == table.String() {
		return
	}
	if *updateExactIn {
		if err := os.WriteFile("../docs/export.md", []byte(head+marker+table.String()+"\n"+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote docs/export.md's exact-in table (%d models)", len(configs))
		return
	}
	t.Errorf("docs/export.md's exact-in table differs from the passes (go test -update-exact-in rewrites it); they give\n%s", table.String())
}
