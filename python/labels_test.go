package python_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/labelcheck"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// exportLabelled exports m as dir/name.json, .safetensors and
// .labels.json (as `tcforge run --export` does) and returns the config's
// path.
func exportLabelled(t *testing.T, m *model.Model, dir, name string) string {
	t.Helper()
	info, err := safetensors.Export(m, dir, name, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.LabelsJSON(name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".labels.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return info.Config
}

// circuitValues writes, for every input, its bits and the layered
// circuit's gate values and forms per level, as JSON.
func circuitValues(t *testing.T, path string, l *layered.Circuit, in []bitvec.Vec) {
	t.Helper()
	type sample struct {
		Bits  string    `json:"bits"`
		Gates [][]int64 `json:"gates"`
		Forms [][]int64 `json:"forms"`
	}
	out := make([]sample, len(in))
	for s, v := range in {
		g := labelcheck.LevelValues(l, v)
		f := make([][]int64, len(g))
		for L := range g {
			f[L] = labelcheck.FormValues(l, L, g[L])
		}
		out[s] = sample{v.Text(l.NumInputs), g, f}
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// decodeCheck decodes, for each (config, values) pair, the model's hidden
// states at every block boundary through its labels and compares every
// labelled value with the circuit's.
const decodeCheck = `
import sys, json, torch, tcforge_torch
from tcforge_torch import labels as tl
args = sys.argv[1:]
for cfg, vals in zip(args[::2], args[1::2]):
    m = tcforge_torch.load(cfg)
    lab = tl.load_labels(m)
    samples = json.load(open(vals))
    bits = torch.tensor([[int(c) for c in s["bits"]] for s in samples], dtype=torch.uint8)
    n, worst = 0, 0.0
    for b, (vs, x) in enumerate(tl.decode(m, lab, bits)):
        want = torch.tensor([[tl.circuit_value(v, smp["gates"], smp["forms"]) for v in vs] for smp in samples], dtype=torch.float64)
        err = (x.to(torch.float64) - want).abs()
        n += err.numel()
        if err.numel():
            worst = max(worst, float(err.max()))
        bad = (~(err <= 0.25)).nonzero()
        if len(bad):
            s, k = bad[0].tolist()
            sys.exit(f"{cfg}: boundary {b}, sample {s}: label {vs[k]} decodes to {float(x[s, k])}, the circuit's value is {float(want[s, k])}")
    # The reverse lookup finds every circuit-value label it is asked for.
    v = next(v for v in lab.values if v["kind"] != "aux")
    assert v in lab.where(v["level"], v["index"]), v
    print(f"{m.arch}: {len(lab.values)} labels, {n} values, max error {worst:.3g}")
`

// TestDecodeLabels exports every mapper's model of toy Keccak, an MD
// point, SHA-256 at two rounds and the adder with its labels, and checks
// in PyTorch (tcforge_torch.labels.decode) that every labelled residual
// value at every block boundary equals the layered circuit's value on 4
// random inputs. tokens-as-gates, one token a gate (T×T attention in
// PyTorch), runs on the circuits under 2,000 gates (toy Keccak, the
// adder; internal/labelcheck checks it on all four in Go).
func TestDecodeLabels(t *testing.T) {
	needTorch(t)
	ctx := context.Background()
	circuits := []struct {
		name   string
		plugin *sdk.Construction
		values map[string]any
		maxSum int64
	}{
		{"keccak", keccak.Plugin, map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(2), "padding": "none"}, 0},
		{"md", md.Plugin, map[string]any{"log_w": int64(1), "rounds": int64(3), "block_bits": int64(25), "blocks": int64(2)}, 0},
		{"sha256-r2", sha2.Plugin, map[string]any{"preset": "sha256", "mode": "compress", "rounds": int64(2)}, 65536},
		{"adder", adder.Plugin, map[string]any{"n": int64(8)}, 0},
	}
	mappers := []struct {
		name   string
		plugin *sdk.Mapper
		values map[string]any
	}{
		{"mlp", noattention.Plugin, map[string]any{"variant": "mlp"}},
		{"residual", noattention.Plugin, map[string]any{"variant": "residual"}},
		{"gates-hard", tokensasgates.Plugin, map[string]any{"attention": "hard"}},
		{"gates-softmax", tokensasgates.Plugin, map[string]any{"attention": "softmax"}},
		{"states", tokensasstates.Plugin, map[string]any{"tokens": int64(4)}},
	}
	dir := t.TempDir()
	var args []string
	for _, cc := range circuits {
		l, err := fusion.Compile(ctx, sdktest.Build(t, cc.plugin, cc.values), fusion.Options{MaxSum: cc.maxSum})
		if err != nil {
			t.Fatal(err)
		}
		vals := filepath.Join(dir, cc.name+".values.json")
		circuitValues(t, vals, l, bitvec.Random(rand.New(rand.NewPCG(26, uint64(l.NumGates()))), 4, l.NumInputs))
		for _, mc := range mappers {
			if mc.plugin == tokensasgates.Plugin && l.NumGates() > 2000 {
				continue
			}
			m, err := mc.plugin.Map(ctx, sdktest.Pass(t, mc.plugin, mc.values), l)
			if err != nil {
				t.Fatal(err)
			}
			args = append(args, exportLabelled(t, m, dir, cc.name+"."+mc.name), vals)
		}
	}
	out := strings.Split(strings.TrimSpace(runPython(t, dir, decodeCheck, args...)), "\n")
	if len(out) != len(args)/2 {
		t.Fatalf("%d models checked, want %d:\n%s", len(out), len(args)/2, strings.Join(out, "\n"))
	}
	for _, line := range out {
		t.Log(line)
	}
}

// TestMalformedLabels: the loader refuses a label table that does not
// match the model — a dimension past d_model, an unknown level, a gate
// past its level, a table of another model (block count) — or holds a
// value that is not what its field is (issue 34 item 15: a token 0.5, a
// NaN or infinite coefficient, a fractional source, a string level, which
// loaded before), naming the table and the entry.
func TestMalformedLabels(t *testing.T) {
	needTorch(t)
	ctx := context.Background()
	l, err := fusion.Compile(ctx, sdktest.Build(t, keccak.Plugin, map[string]any{"log_w": int64(0), "rate": int64(16), "rounds": int64(1), "padding": "none"}), fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := noattention.Plugin.Map(ctx, sdktest.Pass(t, noattention.Plugin, map[string]any{"variant": "mlp"}), l)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := exportLabelled(t, m, dir, "toy")
	good := m.Labels
	k := 1 // the first circuit-value label (0 is the constant)
	value := func(key string, v any) func(map[string]any) {
		return func(tab map[string]any) { tab["values"].([]any)[k].(map[string]any)[key] = v }
	}
	cases := []struct {
		name string
		edit func(f *model.Labels, m *model.Model)
		raw  func(tab map[string]any) // the JSON, after edit; "NaN!" and "Inf!" are written NaN and Infinity
		want string
	}{
		{"dimension", func(f *model.Labels, _ *model.Model) { f.Values[k].Dim = 9999 }, nil, fmt.Sprintf("value label %d (form level 0 index 0", k)},
		{"unknown level", func(f *model.Labels, _ *model.Model) { f.Values[k].Level = 99 }, nil, "unknown level 99"},
		{"gate index", func(f *model.Labels, _ *model.Model) { f.Values[k].Index = 999 }, nil, "form 999 outside level 0's"},
		{"other model", func(_ *model.Labels, m *model.Model) { m.Blocks = m.Blocks[:1] }, nil, "blocks 1, the model has"},
		{"token 0.5", nil, value("token", 0.5), "token is 0.5, want an integer"},
		{"level a string", nil, value("level", "0"), "level is '0', want an integer"},
		{"NaN coefficient", nil, func(tab map[string]any) { value("src", []any{0})(tab); value("coef", []any{"NaN!"})(tab) }, "coef[0] is nan, want a finite number"},
		{"infinite coefficient", nil, func(tab map[string]any) { value("src", []any{0})(tab); value("coef", []any{"Inf!"})(tab) }, "coef[0] is inf, want a finite number"},
		{"source 1.5", nil, func(tab map[string]any) { value("src", []any{1.5})(tab); value("coef", []any{1})(tab) }, "src[0] is 1.5, want an integer"},
	}
	var paths []string
	for _, tc := range cases {
		bad := *m
		lb := *good
		lb.Values = append([]model.ValueLabel(nil), good.Values...)
		bad.Labels = &lb
		if tc.edit != nil {
			tc.edit(&lb, &bad)
		}
		b, err := bad.LabelsJSON("toy.json")
		if err != nil {
			t.Fatal(err)
		}
		if tc.raw != nil {
			var tab map[string]any
			if err := json.Unmarshal(b, &tab); err != nil {
				t.Fatal(err)
			}
			tc.raw(tab)
			if b, err = json.Marshal(tab); err != nil {
				t.Fatal(err)
			}
			b = bytes.ReplaceAll(bytes.ReplaceAll(b, []byte(`"NaN!"`), []byte("NaN")), []byte(`"Inf!"`), []byte("Infinity"))
		}
		p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".labels.json")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	const script = `
import sys, tcforge_torch
from tcforge_torch import labels as tl
m = tcforge_torch.load(sys.argv[1])
tl.load_labels(m)
for p in sys.argv[2:]:
    try:
        tl.load_labels(m, p)
        print("loaded")
    except tcforge_torch.FormatError as e:
        print(e)
`
	got := strings.Split(strings.TrimSpace(runPython(t, dir, script, append([]string{cfg}, paths...)...)), "\n")
	if len(got) != len(cases) {
		t.Fatalf("loader printed %q for %d tables", got, len(cases))
	}
	for i, tc := range cases {
		if !strings.Contains(got[i], paths[i]) || !strings.Contains(got[i], tc.want) {
			t.Errorf("%s: loader said %q, want it to name %s and %q", tc.name, got[i], paths[i], tc.want)
		}
	}
}

// TestInterpretabilityDoc runs docs/interpretability.md: it exports the
// SHA3-256 tokens-as-states model (fusion, 64 tokens interleaved, as
// configs/transformers.hcl's transformers-sha3-256) with its labels as
// sha3-256.json, runs the page's Python blocks in order and checks that
// they print the page's text blocks. A doc check on full SHA3-256 (5 s of
// CPU): CI's tier, as docs' figures are; -short's TestDecodeLabels checks
// the same decoding on small models.
func TestInterpretabilityDoc(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "docs/interpretability.md on full SHA3-256 (TestDecodeLabels checks the decoding)")
	ctx := context.Background()
	l, err := fusion.Compile(ctx, sdktest.Build(t, keccak.Plugin, map[string]any{"preset": "sha3-256"}), fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := tokensasstates.Plugin.Map(ctx, sdktest.Pass(t, tokensasstates.Plugin, map[string]any{"tokens": int64(64), "assign": "interleave"}), l)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	exportLabelled(t, m, dir, "sha3-256")
	doc, err := os.ReadFile("../docs/interpretability.md")
	if err != nil {
		t.Fatal(err)
	}
	var code, want strings.Builder
	blocks := 0
	for rest := string(doc); ; {
		i := strings.Index(rest, "```")
		if i < 0 {
			break
		}
		rest = rest[i+3:]
		lang, body, ok := strings.Cut(rest, "\n")
		if !ok {
			t.Fatal("docs/interpretability.md: unterminated code block")
		}
		end := strings.Index(body, "```")
		if end < 0 {
			t.Fatal("docs/interpretability.md: unterminated code block")
		}
		switch lang {
		case "python":
			code.WriteString(body[:end])
			blocks++
		case "text":
			want.WriteString(body[:end])
		}
		rest = body[end+3:]
	}
	if blocks < 5 || want.Len() == 0 {
		t.Fatalf("docs/interpretability.md: %d python blocks, %d bytes of output; want the worked example", blocks, want.Len())
	}
	got := runPython(t, dir, code.String())
	if strings.TrimSpace(got) != strings.TrimSpace(want.String()) {
		t.Errorf("docs/interpretability.md's blocks print:\n%s\nthe page shows:\n%s", got, want.String())
	}
}
