// Package python_test runs tcforge's exported models through the PyTorch
// loader in this directory (the tcforge_torch package) with Debian's
// /usr/bin/python3 and python3-torch, bit for bit against the layered
// circuits they were mapped from. It skips, saying so, where PyTorch is
// not installed.
package python_test

import (
	"bytes"
	"context"
	"crypto/sha3"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// python is Debian's interpreter, the one python3-torch installs into.
const python = "/usr/bin/python3"

// torchMissing says, once per test binary, why python cannot import torch
// ("" if it can): importing torch takes seconds, and every test asks.
var torchMissing = sync.OnceValue(func() string {
	if out, err := exec.Command(python, "-c", "import torch").CombinedOutput(); err != nil {
		return fmt.Sprintf("PyTorch check skipped: %s cannot import torch (apt-get install python3-torch): %v %s", python, err, bytes.TrimSpace(out))
	}
	return ""
})

// needTorch skips the test unless python can import torch. The tests that
// call it are independent (own temp dirs, own python processes) and run in
// parallel.
func needTorch(t *testing.T) {
	t.Helper()
	t.Parallel()
	if why := torchMissing(); why != "" {
		t.Skip(why)
	}
}

// docSnippet returns the python block a document marks with
// "<!-- snippet: NAME -->", the text a user copies.
func docSnippet(t *testing.T, path, name string) string {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- snippet: "+name+" -->\n```python\n")
	snippet, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatalf("%s has no <!-- snippet: %s --> python block", path, name)
	}
	return snippet
}

// runPython runs script with the loader on the path, in dir.
func runPython(t *testing.T, dir, script string, args ...string) string {
	t.Helper()
	pkg, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, append([]string{"-c", script}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+pkg)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	return string(out)
}

// build builds a keccak point.
func build(t *testing.T, values map[string]any) *circuit.Circuit {
	t.Helper()
	return sdktest.Build(t, keccak.Plugin, values)
}

// mappers are the four models of the two mapper plugins.
var mappers = []struct {
	arch string
	mk   func(context.Context, *layered.Circuit) (*model.Model, error)
}{
	{"no-attention-mlp", noattention.MLP},
	{"no-attention-residual", noattention.Residual},
	{"tokens-as-gates-hard", func(ctx context.Context, c *layered.Circuit) (*model.Model, error) {
		return tokensasgates.Map(ctx, c, tokensasgates.Options{Mode: model.Hard})
	}},
	{"tokens-as-gates-softmax", func(ctx context.Context, c *layered.Circuit) (*model.Model, error) {
		return tokensasgates.Map(ctx, c, tokensasgates.Options{Mode: model.Softmax})
	}},
}

// runAll is the driver: for each (config, inputs file) pair it loads the
// model and writes its output bit strings to inputs file + ".out".
const runAll = `
import sys, torch, tcforge_torch
for cfg, inp in zip(sys.argv[1::2], sys.argv[2::2]):
    m = tcforge_torch.load(cfg)
    rows = [[int(c) for c in l.strip()] for l in open(inp) if l.strip()]
    out = m.run(torch.tensor(rows, dtype=torch.uint8))
    open(inp + ".out", "w").write("".join("".join(map(str, r)) + "\n" for r in out.tolist()))
`

// TestToyKeccak exports the paper's toy Keccak point (w = 2, one round,
// one block) with both layerers and all four mappers, reifier's models
// dense and fusion's CSR, and runs every model in PyTorch on random
// inputs, bit for bit against the layered circuit.
func TestToyKeccak(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "eight toy models exported and run in PyTorch (8–25 s)")
	ctx := context.Background()
	c := build(t, map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(1), "blocks": int64(1), "padding": "none"})
	dir := t.TempDir()
	// 8 random inputs; 4 for tokens-as-gates, whose T×T attention the
	// loader computes densely (reifier's model has 1,100 tokens).
	in := bitvec.Random(rand.New(rand.NewPCG(14, 15)), 8, len(c.Inputs))
	var args []string
	want := map[string]string{}
	for _, ly := range []struct {
		name  string
		dense int64
		layer func() (*layered.Circuit, error)
	}{
		{"reifier", 1 << 30, func() (*layered.Circuit, error) { return reifier.Compile(ctx, c) }},
		{"fusion", 0, func() (*layered.Circuit, error) { return fusion.Compile(ctx, c, fusion.Options{}) }},
	} {
		l, err := ly.layer()
		if err != nil {
			t.Fatal(err)
		}
		if ly.name == "fusion" && !l.HasForms() {
			t.Fatal("fusion's circuit has no forms")
		}
		out, err := bitvec.EvalSliced(in, l.NumInputs, l.Evaluator())
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		for s := range out {
			sb.WriteString(out[s].Text(l.NumOutputs()) + "\n")
		}
		for _, mp := range mappers {
			m, err := mp.mk(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			name := "toy." + ly.name + "." + mp.arch
			info, err := safetensors.Export(m, dir, name, ly.dense)
			if err != nil {
				t.Fatal(err)
			}
			if want := map[bool]string{true: safetensors.LayoutDense, false: safetensors.LayoutCSR}[ly.dense > 0]; info.Layout != want {
				t.Fatalf("%s: layout %s, want %s", name, info.Layout, want)
			}
			inFile := filepath.Join(dir, name+".in")
			n := len(in)
			if strings.HasPrefix(mp.arch, "tokens") {
				n = 4
			}
			writeInputs(t, inFile, in[:n], l.NumInputs)
			args = append(args, info.Config, inFile)
			want[inFile] = strings.Join(strings.SplitAfter(sb.String(), "\n")[:n], "")
		}
	}
	runPython(t, dir, runAll, args...)
	for inFile, w := range want {
		got, err := os.ReadFile(inFile + ".out")
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != w {
			t.Errorf("%s: PyTorch outputs\n%s\nlayered circuit\n%s", filepath.Base(inFile), got, w)
		}
	}
}

// writeInputs writes one bit string per sample.
func writeInputs(t *testing.T, path string, in []bitvec.Vec, n int) {
	t.Helper()
	var sb strings.Builder
	for _, v := range in {
		sb.WriteString(v.Text(n) + "\n")
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sha3Check loads a model and hashes every message of a file of hex
// messages with it, comparing each digest with hashlib.sha3_256.
const sha3Check = `
import sys, hashlib, torch, tcforge_torch
m = tcforge_torch.load(sys.argv[1])
msgs = [bytes.fromhex(l.strip()) for l in open(sys.argv[2]) if l.strip()]
out = m.run(torch.stack([tcforge_torch.bytes_to_bits(x) for x in msgs]))
equal = sum(tcforge_torch.bits_to_bytes(o) == hashlib.sha3_256(x).digest() for o, x in zip(out.tolist(), msgs))
print(f"{equal} of {len(msgs)} digests equal hashlib.sha3_256")
`

// TestSHA3_256 maps full SHA3-256 (one block, 135-byte messages) over
// fusion with both no-attention variants, exports the models as CSR and
// runs them in PyTorch on 64 random messages: every digest must equal
// Python's hashlib.sha3_256 (and Go's crypto/sha3, through the layered
// circuit), and likewise the tokens-as-states model in stock PyTorch
// modules. It also runs docs/export.md's tcforge_torch snippet on the mlp model.
func TestSHA3_256(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "full SHA3-256 models in PyTorch (half a minute)")
	ctx := context.Background()
	c := build(t, map[string]any{"preset": "sha3-256"})
	l, err := fusion.Compile(ctx, c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(256, 14))
	msgs := make([][]byte, 64)
	var hexes strings.Builder
	in := make([]bitvec.Vec, len(msgs))
	for i := range msgs {
		msgs[i] = make([]byte, 135)
		for j := range msgs[i] {
			msgs[i][j] = byte(rng.Uint32())
		}
		hexes.WriteString(hex.EncodeToString(msgs[i]) + "\n")
		in[i] = bitvec.NewVec(len(c.Inputs))
		for j := range 8 * len(msgs[i]) {
			in[i].Set(j, uint(msgs[i][j/8]>>(j%8)&1))
		}
	}
	// The layered circuit against crypto/sha3, so that PyTorch is checked
	// against both.
	out, err := bitvec.EvalSliced(in, l.NumInputs, l.Evaluator())
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range msgs {
		d := sha3.Sum256(m)
		for j := range 256 {
			if out[i].Get(j) != uint(d[j/8]>>(j%8)&1) {
				t.Fatalf("message %d: the layered circuit's digest differs from crypto/sha3 at bit %d", i, j)
			}
		}
	}
	dir := t.TempDir()
	models := filepath.Join(dir, "out", "models")
	msgFile := filepath.Join(dir, "messages.hex")
	if err := os.WriteFile(msgFile, []byte(hexes.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, mp := range mappers[:2] {
		m, err := mp.mk(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		info, err := safetensors.Export(m, models, "mappers-sha3-256.fusion."+mp.arch, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := strings.TrimSpace(runPython(t, dir, sha3Check, info.Config, msgFile))
		if want := fmt.Sprintf("%d of %d digests equal hashlib.sha3_256", len(msgs), len(msgs)); got != want {
			t.Errorf("%s: %s, want %s", mp.arch, got, want)
		}
	}
	// tokens-as-states (64 tokens, one a slice): stock nn.TransformerEncoder
	// modules loaded with strict=True.
	tas, err := tokensasstates.Map(ctx, l, tokensasstates.Config{Tokens: 64, Interleave: true})
	if err != nil {
		t.Fatal(err)
	}
	info, err := safetensors.Export(tas, models, "mappers-sha3-256.fusion.tokens-as-states-stock", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.TrimSpace(runPython(t, dir, sha3Check, info.Config, msgFile))
	if want := fmt.Sprintf("%d of %d digests equal hashlib.sha3_256", len(msgs), len(msgs)); got != want {
		t.Errorf("tokens-as-states: %s, want %s", got, want)
	}
	// docs/export.md's tcforge_torch snippet, on the mlp model.
	lines := strings.Fields(runPython(t, dir, docSnippet(t, "../docs/export.md", "pytorch")))
	if len(lines) != 2 || len(lines[0]) != 64 || lines[0] != lines[1] {
		t.Errorf("docs/export.md snippet printed %q, want the model's SHA3-256 and hashlib's, equal", lines)
	}
}

// TestMalformedExports checks that the loader refuses a missing tensor, a
// tensor of the wrong shape, an unknown format version, NaN and infinite
// weights, overlapping data offsets, a negative readout index, a missing
// key, a value of the wrong type, an input token out of range and a
// weights file outside the export folder, naming the file and the
// problem; and that the command line answers --help and reports a bad
// export in one line.
func TestMalformedExports(t *testing.T) {
	needTorch(t)
	ctx := context.Background()
	c := build(t, map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(1), "blocks": int64(1), "padding": "none"})
	l, err := fusion.Compile(ctx, c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := noattention.MLP(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	info, err := safetensors.Export(m, dir, "toy", 0)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(info.Config)
	if err != nil {
		t.Fatal(err)
	}
	weights, err := os.ReadFile(info.Weights)
	if err != nil {
		t.Fatal(err)
	}
	const load = `
import sys, tcforge_torch
for cfg in sys.argv[1:]:
    try:
        tcforge_torch.load(cfg)
        print("loaded")
    except tcforge_torch.FormatError as e:
        print(e)
`
	cases := []struct {
		name         string
		cfg, weights func() []byte
		want1, want2 string
	}{
		{"missing tensor", func() []byte { return cfg }, func() []byte {
			// Rename the first block's gate values in the header.
			return bytes.Replace(weights, []byte(`"blocks.0.ffn.gate.values"`), []byte(`"blocks.0.ffn.gate.valuez"`), 1)
		}, "bad.safetensors", "'blocks.0.ffn.gate.values' is missing"},
		{"wrong shape", func() []byte {
			return bytes.Replace(cfg, []byte(`"blocks.0.ffn.gate": {
   "rows": `), []byte(`"blocks.0.ffn.gate": {
   "rows": 1`), 1)
		}, func() []byte { return weights }, "bad.safetensors", "'blocks.0.ffn.gate.crow_indices': I32"},
		{"unknown version", func() []byte { return bytes.Replace(cfg, []byte(`"version": 1`), []byte(`"version": 7`), 1) },
			func() []byte { return weights }, "bad.json", "unknown format version 7"},
		// Issue 27 item 8: each of these loaded (all-zero outputs) or
		// raised a raw traceback.
		{"NaN weight", func() []byte { return cfg }, func() []byte {
			return editTensor(t, weights, "blocks.0.ffn.gate.values", func(d []byte) { binary.LittleEndian.PutUint32(d, 0x7fc00000) })
		}, "bad.safetensors", "'blocks.0.ffn.gate.values': 1 NaN or infinite values"},
		{"infinite weight", func() []byte { return cfg }, func() []byte {
			return editTensor(t, weights, "embed.input.values", func(d []byte) { binary.LittleEndian.PutUint32(d[4:], 0x7f800000) })
		}, "bad.safetensors", "'embed.input.values': 1 NaN or infinite values"},
		{"overlapping offsets", func() []byte { return cfg }, func() []byte {
			return editHeader(t, weights, func(h map[string]any) {
				h["blocks.0.ffn.gate.values"].(map[string]any)["data_offsets"] = h["blocks.0.ffn.gate.col_indices"].(map[string]any)["data_offsets"]
			})
		}, "bad.safetensors", "overlap"},
		{"negative readout index", func() []byte {
			return editConfig(t, cfg, func(c map[string]any) { c["readout"].(map[string]any)["dim"].([]any)[3] = -1 })
		}, func() []byte { return weights }, "bad.json", "readout.dim[3] is -1, want an index in [0, "},
		{"missing key", func() []byte { return editConfig(t, cfg, func(c map[string]any) { delete(c, "tokens") }) },
			func() []byte { return weights }, "bad.json", "config has no 'tokens'"},
		{"wrong type", func() []byte { return editConfig(t, cfg, func(c map[string]any) { c["d_model"] = "51" }) },
			func() []byte { return weights }, "bad.json", "config['d_model'] is str '51', want int"},
		{"input index out of range", func() []byte {
			return editConfig(t, cfg, func(c map[string]any) { c["embedding"].(map[string]any)["input_token"].([]any)[0] = 9999 })
		}, func() []byte { return weights }, "bad.json", "embedding.input_token[0] is 9999, want an index in [0, 1)"},
		{"weights outside the folder", func() []byte {
			return editConfig(t, cfg, func(c map[string]any) { c["weights"] = "/dev/zero" })
		}, func() []byte { return weights }, "bad.json", `"weights" is '/dev/zero': want a file name in the config's directory`},
		{"weights through a parent", func() []byte {
			return editConfig(t, cfg, func(c map[string]any) { c["weights"] = "../toy.safetensors" })
		}, func() []byte { return weights }, "bad.json", `"weights" is '../toy.safetensors'`},
	}
	var configs []string
	for _, tc := range cases {
		c, w := tc.cfg(), tc.weights()
		if bytes.Equal(c, cfg) && bytes.Equal(w, weights) {
			t.Fatalf("%s: the corruption changed nothing", tc.name)
		}
		// Each case in its own directory, as bad.json and bad.safetensors.
		sub := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
		if err := os.Mkdir(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		c = bytes.Replace(c, []byte(`"weights": "toy.safetensors"`), []byte(`"weights": "bad.safetensors"`), 1)
		c = bytes.Replace(c, []byte(`"weights":"toy.safetensors"`), []byte(`"weights":"bad.safetensors"`), 1)
		if err := os.WriteFile(filepath.Join(sub, "bad.json"), c, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(sub, "bad.safetensors"), w, 0o644); err != nil {
			t.Fatal(err)
		}
		configs = append(configs, filepath.Join(sub, "bad.json"))
	}
	got := strings.Split(strings.TrimSpace(runPython(t, dir, load, configs...)), "\n")
	if len(got) != len(cases) {
		t.Fatalf("loader printed %q for %d exports", got, len(cases))
	}
	for i, tc := range cases {
		if !strings.Contains(got[i], tc.want1) || !strings.Contains(got[i], tc.want2) {
			t.Errorf("%s: loader said %q, want it to name %q and %q", tc.name, got[i], tc.want1, tc.want2)
		}
	}
	// The command line: --help is help, not a file name; a bad export is
	// one line naming the problem and exit status 1, no traceback. -short
	// runs one refusal of each command (a process each, torch imported).
	for _, tc := range []struct {
		args  []string
		code  int
		want  string
		short bool // run under -short too
	}{
		{[]string{"--help"}, 0, "usage: python3 -m tcforge_torch", false},
		{[]string{"run", "--help"}, 0, "usage: python3 -m tcforge_torch run", false},
		{[]string{configs[len(configs)-2]}, 1, "tcforge_torch: ERROR: " + configs[len(configs)-2] + `: "weights" is '/dev/zero'`, true},
		{[]string{"module", configs[0]}, 1, "is missing", false},
		{[]string{"module", info.Config}, 1, "architecture 'no-attention/mlp' is not stock encoder layers", true},
	} {
		if testing.Short() && !tc.short {
			continue
		}
		cmd := exec.Command(python, append([]string{"-m", "tcforge_torch"}, tc.args...)...)
		pkg, _ := filepath.Abs(".")
		cmd.Env = append(os.Environ(), "PYTHONPATH="+pkg)
		cmd.Stdin = strings.NewReader("")
		out, _ := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != tc.code || !strings.Contains(string(out), tc.want) || strings.Contains(string(out), "Traceback") {
			t.Errorf("python3 -m tcforge_torch %s: exit %d, output %q; want exit %d naming %q", strings.Join(tc.args, " "), code, out, tc.code, tc.want)
		}
	}
}

// editTensor returns a copy of a safetensors file with tensor name's data
// changed by edit.
func editTensor(t *testing.T, file []byte, name string, edit func([]byte)) []byte {
	t.Helper()
	out := bytes.Clone(file)
	ts, _, err := safetensors.Read(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		if x.Name == name {
			edit(x.Data) // a slice of out
			return out
		}
	}
	t.Fatalf("no tensor %q", name)
	return nil
}

// editHeader returns a safetensors file with its JSON header changed by
// edit (the data unchanged).
func editHeader(t *testing.T, file []byte, edit func(map[string]any)) []byte {
	t.Helper()
	n := binary.LittleEndian.Uint64(file)
	var h map[string]any
	if err := json.Unmarshal(file[8:8+n], &h); err != nil {
		t.Fatal(err)
	}
	edit(h)
	hb, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	for len(hb)%8 != 0 {
		hb = append(hb, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(hb)))
	return append(append(out, hb...), file[8+n:]...)
}

// editConfig returns a JSON config changed by edit.
func editConfig(t *testing.T, cfg []byte, edit func(map[string]any)) []byte {
	t.Helper()
	var c map[string]any
	if err := json.Unmarshal(cfg, &c); err != nil {
		t.Fatal(err)
	}
	edit(c)
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
