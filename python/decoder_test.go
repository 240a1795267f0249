package python_test

import (
	"context"
	"crypto/sha256"
	"crypto/sha3"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/internal/tokencheck"
	"github.com/tcforge/tcforge/plugins/decoder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/sha2/sha2ref"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// decPoint is a decoder the tests map: a construction point (SHA-256's
// block mode over the reifier with max_weight 2¹⁶ and the digest MSB
// first, or Keccak over fusion), k levels a step — the points of
// configs/decoders.hcl and the full-size ones.
type decPoint struct {
	name   string
	sha2   bool // else keccak
	values map[string]any
	k      int
}

// decToys are configs/decoders.hcl's points: SHA-256 at two rounds (k =
// 1, 2, 4) and toy Keccak (w = 2, rate 32: 4-byte messages, three rounds;
// k = 1, 2, 3).
var decToys = []decPoint{
	{"sha256-r2-k1", true, map[string]any{"preset": "sha256", "mode": "block", "rounds": int64(2)}, 1},
	{"sha256-r2-k2", true, map[string]any{"preset": "sha256", "mode": "block", "rounds": int64(2)}, 2},
	{"sha256-r2-k4", true, map[string]any{"preset": "sha256", "mode": "block", "rounds": int64(2)}, 4},
	{"keccak-w2-r3-k1", false, map[string]any{"log_w": int64(1), "rate": int64(32), "rounds": int64(3)}, 1},
	{"keccak-w2-r3-k2", false, map[string]any{"log_w": int64(1), "rate": int64(32), "rounds": int64(3)}, 2},
	{"keccak-w2-r3-k3", false, map[string]any{"log_w": int64(1), "rate": int64(32), "rounds": int64(3)}, 3},
}

// decFull are the full-size decoders of issue 35, configs/decoders-full.hcl's:
// SHA-256 (one block, 64 rounds) and SHA3-256 (one padded block), each
// with the mapper's default levels a step (0: a round's).
var decFull = []decPoint{
	{"sha256", true, map[string]any{"preset": "sha256", "mode": "block"}, 0},
	{"sha3-256", false, map[string]any{"preset": "sha3-256", "padding": "none", "message_bits": int64(1088)}, 0},
}

// decCase is a decoder exported with its checks: messages, their circuit
// inputs, the prompts and every token the model must write (tokencheck:
// the working from its definitions over the layered circuit's values, the
// digest from its outputs), and each message's digest from a reference
// apart from the circuit (sha2ref, crypto/sha256, crypto/sha3, the keccak
// plugin's Reference).
type decCase struct {
	p       decPoint
	config  string
	stats   string // layers, d_model, positions, generated
	layers  int
	n       int // the byte interface's input bytes (the message region)
	msgs    [][]byte
	prompts [][]int32
	tokens  [][]int32
	digests []string
}

// exportDecoder maps p, exports it into dir (the export's test vectors
// carry prompts and tokens, as tcforge run --export writes them) and
// makes its checks on count random messages (rng).
func exportDecoder(t *testing.T, p decPoint, dir string, count int, rng *rand.Rand) *decCase {
	t.Helper()
	ctx := context.Background()
	var pl *sdk.Construction
	var l *layered.Circuit
	var err error
	construction, layerer := "keccak", "fusion"
	if p.sha2 {
		pl, construction, layerer = sha2.Plugin, "sha2", "reifier"
	} else {
		pl = keccak.Plugin
	}
	c := sdktest.Build(t, pl, p.values)
	if p.sha2 {
		l, err = reifier.CompileBounded(ctx, c, 1<<16)
	} else {
		l, err = fusion.Compile(ctx, c, fusion.Options{})
	}
	if err != nil {
		t.Fatal(err)
	}
	m, err := decoder.Map(ctx, l, decoder.Config{LevelsPerStep: p.k})
	if err != nil {
		t.Fatalf("%s: %v", p.name, err)
	}
	dc := &decCase{p: p, n: l.NumInputs / 8, layers: len(m.Blocks)}
	s := m.Stats()
	dc.stats = fmt.Sprintf("%d layers, d_model %d, %d positions (%d prompt, %d generated)", s.Blocks, s.DModel, s.Tokens, m.Decoder.Prompt, s.Generated)
	rounds := 0
	if r, ok := c.Attrs["rounds"]; ok {
		rounds = int(r)
	}
	var in []bitvec.Vec
	for i := range count {
		var msg []byte
		var bits bitvec.Vec
		switch {
		case p.sha2: // one block: 0 … 55 bytes, FIPS 180-4's padding, MSB first
			n := []int{0, 55}[min(i, 1)]
			if i >= 2 {
				n = rng.IntN(56)
			}
			msg = randBytes(rng, n)
			bits = bitvec.NewVec(l.NumInputs)
			for j, b := range sha2ref.SHA256.Pad(sha2ref.BytesToBits(msg)) {
				bits.Set(j, uint(b))
			}
			d := sha2ref.BitsToBytes(sha2ref.SHA256.Sum(sha2ref.BytesToBits(msg), rounds))
			if rounds == 64 {
				if sum := sha256.Sum256(msg); hex.EncodeToString(sum[:]) != hex.EncodeToString(d) {
					t.Fatalf("sha2ref and crypto/sha256 differ on %x", msg)
				}
			}
			dc.digests = append(dc.digests, hex.EncodeToString(d))
		case p.values["preset"] == "sha3-256": // one block: 0 … 135 bytes, SHA-3's padding, LSB first
			n := []int{0, 135}[min(i, 1)]
			if i >= 2 {
				n = rng.IntN(136)
			}
			msg = randBytes(rng, n)
			block := append(slices.Clone(msg), 0x06)
			block = append(block, make([]byte, 136-len(block))...)
			block[135] |= 0x80
			bits = lsbBits(block)
			d := sha3.Sum256(msg)
			dc.digests = append(dc.digests, hex.EncodeToString(d[:]))
		default: // toy Keccak: exactly n bytes the caller supplies, LSB first
			msg = randBytes(rng, dc.n)
			bits = lsbBits(msg)
		}
		dc.msgs, in = append(dc.msgs, msg), append(in, bits)
		dc.prompts = append(dc.prompts, tokencheck.Prompt(m.Decoder, bits))
		tok, err := tokencheck.Expected(m.Decoder, l, bits)
		if err != nil {
			t.Fatal(err)
		}
		dc.tokens = append(dc.tokens, tok)
	}
	if !p.sha2 && p.values["preset"] == nil {
		ref, err := keccak.Plugin.Reference(ctx, sdktest.Pass(t, keccak.Plugin, p.values), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range ref {
			d := make([]byte, len(c.Outputs)/8)
			for j := range 8 * len(d) {
				d[j/8] |= byte(r.Get(j) << (j % 8))
			}
			dc.digests = append(dc.digests, hex.EncodeToString(d))
		}
	}
	want, err := bitvec.EvalSliced(in, l.NumInputs, l.Evaluator())
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]any{}
	for k, v := range c.Attrs {
		params[k] = v
	}
	for k, v := range p.values {
		params[k] = v
	}
	cp := safetensors.Describe(construction, params, c)
	cp.Layerer, cp.Mapper = layerer, "decoder"
	d := &safetensors.Description{Computes: cp, Inputs: in, Outputs: want, NumIn: l.NumInputs, NumOut: l.NumOutputs(),
		Prompts: dc.prompts, Tokens: dc.tokens}
	info, err := safetensors.ExportDescribed(m, dir, p.name, 256<<20, d)
	if err != nil {
		t.Fatal(err)
	}
	dc.config = info.Config
	// The digest tokens against the reference: the circuit's expected
	// tokens, which the model is checked against, must hash right.
	for i := range dc.msgs {
		if got := digestOfTokens(dc.tokens[i], m.Decoder.Working, m.Decoder.DigestBits, cp.BitOrder == "msb-first"); got != dc.digests[i] {
			t.Fatalf("%s: message %d: the circuit's digest tokens give %s, the reference %s", p.name, i, got, dc.digests[i])
		}
	}
	return dc
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for j := range b {
		b[j] = byte(rng.Uint32())
	}
	return b
}

// lsbBits are data's bits in FIPS 202's order (bit i is bit i mod 8 of
// byte ⌊i/8⌋).
func lsbBits(data []byte) bitvec.Vec {
	v := bitvec.NewVec(8 * len(data))
	for j := range 8 * len(data) {
		v.Set(j, uint(data[j/8]>>(j%8)&1))
	}
	return v
}

// digestOfTokens packs generated tokens' digest bits (digestBits: output
// bit of each digest token's bit) into bytes in the bit order.
func digestOfTokens(tok []int32, working int, digestBits []int32, msb bool) string {
	n := 0
	for _, o := range digestBits {
		n = max(n, int(o)+1)
	}
	out := make([]byte, n/8)
	for i, o := range digestBits {
		if o < 0 || tok[working+i/8]>>(i%8)&1 == 0 {
			continue
		}
		if msb {
			out[o/8] |= 0x80 >> (o % 8)
		} else {
			out[o/8] |= 1 << (o % 8)
		}
	}
	return hex.EncodeToString(out)
}

// decoderCheck is the PyTorch side of a decoder's checks: for each job
// (a JSON file: the config, the prompts and expected tokens, how many to
// decode greedily, the formats to measure) it loads the export as stock
// modules (strict=True), runs the teacher-forced pass over every case in
// float32 and in each format (bfloat16: the module .to(torch.bfloat16);
// float16 emulated; each format's pass one message a batch, ending at
// the first with a wrong token), diagnosing the first wrong token of
// each, and greedy
// decoding with the KV cache on the first cases, and writes the job's
// file + ".out": the argmax tokens of every pass, margins, diagnoses and
// times. One thread: the passes' rounding must not depend on the split.
const decoderCheck = `
import sys, json, time, torch, tcforge_torch
from tcforge_torch import decoder
torch.set_num_threads(1)
num = lambda x: float(x) if torch.isfinite(torch.as_tensor(x)) else str(float(x))  # JSON has no NaN or inf
for path in sys.argv[1:]:
    job = json.load(open(path))
    t0 = time.perf_counter()
    m = tcforge_torch.load(job["config"])
    mod = m.module()
    out = {"load_seconds": time.perf_counter() - t0}
    out["modules"] = sorted({type(x).__module__ + "." + type(x).__name__ for x in [mod.tok_embed, mod.pos_embed, mod.norm_f, mod.lm_head, *mod.layers]})
    out["layers"] = [[l.self_attn.num_heads, l.linear1.out_features, l.norm1.eps] for l in mod.layers]
    fresh = decoder.StockDecoder(m.vocab, m.positions, m.d, m.layers, m.norm_eps)
    res = fresh.load_state_dict(m.state_dict(), strict=True)
    out["strict"] = [len(res.missing_keys), len(res.unexpected_keys), len(fresh.state_dict())]
    sd = m.state_dict()
    out["max_embedding"] = max(float(sd[k].abs().max()) for k in ("tok_embed.weight", "pos_embed.weight"))
    out["max_layer_weight"] = max(float(v.abs().max()) for k, v in sd.items() if k.startswith("layers."))
    seqs = torch.tensor([p + t for p, t in zip(job["prompts"], job["tokens"])])
    want = seqs[:, m.prompt:]
    out["passes"] = {}
    for f in ["fp32"] + job["formats"]:
        dt = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}[f]
        t0 = time.perf_counter()
        pred, margin = m.teacher_forced(seqs, dt, batch=4 if f == "fp32" else 1, stop=f != "fp32")
        r = {"tokens": pred.tolist(), "seconds": time.perf_counter() - t0, "min_margin": num(margin.min())}
        bad = (pred != want[:len(pred)]).nonzero().tolist()
        if bad:
            s, i = bad[0]
            dev, first = m.diagnose(seqs[s], dt, m.prompt - 1 + i)
            r["first"] = {"sample": s, "token": i, "position": m.prompt + i, "name": m.names[i], "step": m.steps[i],
                          "margin": num(margin[s, i]), "deviation": [num(x) for x in dev], "layer": first}
        out["passes"][f] = r
        if f == "fp32":
            out["min_margin"] = r["min_margin"]
    g = job["greedy"]
    t0 = time.perf_counter()
    with torch.no_grad():
        out["greedy"] = mod.generate(seqs[:g, :m.prompt], m.generated).tolist()
    out["greedy_seconds"] = (time.perf_counter() - t0) / max(g, 1)
    json.dump(out, open(path + ".out", "w"))
`

// decPass is one teacher-forced pass of decoderCheck's output.
type decPass struct {
	Tokens    [][]int32 `json:"tokens"`
	Seconds   float64   `json:"seconds"`
	MinMargin any       `json:"min_margin"` // a number, or "nan", "inf", "-inf"
	First     *struct {
		Sample, Token, Position, Step int
		Name                          string
		Margin                        any
		Deviation                     []any
		Layer                         *int
	} `json:"first"`
}

// decResult is decoderCheck's output for one job.
type decResult struct {
	LoadSeconds   float64            `json:"load_seconds"`
	Modules       []string           `json:"modules"`
	Layers        [][3]float64       `json:"layers"`
	Strict        [3]int             `json:"strict"`
	MaxEmbedding  float64            `json:"max_embedding"`    // the largest |weight| of the embeddings
	MaxLayer      float64            `json:"max_layer_weight"` // … and of the layers
	Passes        map[string]decPass `json:"passes"`
	MinMargin     any                `json:"min_margin"`
	Greedy        [][]int32          `json:"greedy"`
	GreedySeconds float64            `json:"greedy_seconds"`
}

// runDecoderChecks runs decoderCheck on the cases (greedy decoding on the
// first greedy messages of each; formats: "bf16", "fp16" or none) in one
// python process and returns each case's result.
func runDecoderChecks(t *testing.T, dir string, cases []*decCase, greedy int, formats []string) []decResult {
	t.Helper()
	var args []string
	for i, dc := range cases {
		job := map[string]any{"config": dc.config, "prompts": dc.prompts, "tokens": dc.tokens, "greedy": min(greedy, len(dc.msgs)), "formats": formats}
		b, err := json.Marshal(job)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, fmt.Sprintf("job%d.json", i))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, path)
	}
	runPython(t, dir, decoderCheck, args...)
	var res []decResult
	for _, path := range args {
		b, err := os.ReadFile(path + ".out")
		if err != nil {
			t.Fatal(err)
		}
		var r decResult
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		res = append(res, r)
	}
	return res
}

// checkDecoderResult fails unless r shows dc's model as stock modules
// loaded strictly whose float32 teacher-forced pass writes every expected
// token and whose greedy decoding writes every token of its messages;
// it returns the formats' cells for the precision table.
func checkDecoderResult(t *testing.T, dc *decCase, r decResult) map[string]string {
	t.Helper()
	name := dc.p.name
	stock := []string{"torch.nn.modules.linear.Linear", "torch.nn.modules.normalization.LayerNorm", "torch.nn.modules.sparse.Embedding", "torch.nn.modules.transformer.TransformerEncoderLayer"}
	if !slices.Equal(r.Modules, stock) || len(r.Layers) != dc.layers {
		t.Errorf("%s: modules %q and %d layers, want %q and %d", name, r.Modules, len(r.Layers), stock, dc.layers)
	}
	if r.Strict[0] != 0 || r.Strict[1] != 0 || r.Strict[2] != 4+2+12*dc.layers {
		t.Errorf("%s: load_state_dict(strict=True): %d missing, %d unexpected of %d keys", name, r.Strict[0], r.Strict[1], r.Strict[2])
	}
	cells := map[string]string{}
	for f, pass := range r.Passes {
		wrong := 0
		if len(pass.Tokens) == 0 || (f == "fp32" && len(pass.Tokens) != len(dc.tokens)) {
			t.Fatalf("%s %s: the pass wrote %d sequences for %d messages", name, f, len(pass.Tokens), len(dc.tokens))
		}
		for s := range pass.Tokens {
			for i, w := range dc.tokens[s] {
				if pass.Tokens[s][i] != w {
					wrong++
				}
			}
		}
		if (wrong == 0) != (pass.First == nil) {
			t.Errorf("%s %s: %d wrong tokens, python's diagnosis %+v", name, f, wrong, pass.First)
		}
		cells[f] = "exact"
		if wrong > 0 {
			fi := pass.First
			layer := "the embeddings"
			if fi.Layer != nil && *fi.Layer > 0 {
				layer = fmt.Sprintf("layer %d", *fi.Layer-1)
			} else if fi.Layer == nil {
				layer = "no layer over 0.25"
			}
			cells[f] = fmt.Sprintf("wrong: token %d (%s), margin %s; first deviation > 0.25: %s", fi.Token, fi.Name, num3(fi.Margin), layer)
			var dev []string
			for _, x := range fi.Deviation {
				dev = append(dev, num3(x))
			}
			t.Logf("%s %s: %d of %d tokens wrong (the pass stops at the first message with one); first: message %d token %d (position %d, step %d, %s) margin %s, the residual's largest deviation from float32 after the embeddings and each layer %s",
				name, f, wrong, len(pass.Tokens)*len(dc.tokens[0]), fi.Sample, fi.Token, fi.Position, fi.Step, fi.Name, num3(fi.Margin), strings.Join(dev, " "))
		}
	}
	if cells["fp32"] != "exact" {
		t.Errorf("%s: the float32 teacher-forced pass is not exact: %s", name, cells["fp32"])
	}
	for s, got := range r.Greedy {
		if !slices.Equal(got, dc.tokens[s]) {
			i := 0
			for i < len(got) && got[i] == dc.tokens[s][i] {
				i++
			}
			t.Errorf("%s: greedy decoding of message %d: token %d is %d, want %d", name, s, i, got[i], dc.tokens[s][i])
		}
	}
	return cells
}

// TestDecoderToys exports configs/decoders.hcl's six decoders (SHA-256 at
// two rounds with 1, 2 and 4 levels a step, toy Keccak with 1, 2 and 3;
// -short and the default tier: one of each) and runs each in PyTorch as stock modules loaded
// with strict=True: the teacher-forced pass over 16 random messages (64
// with TCFORGE_HEAVY=1, which also runs all six and checks
// docs/export.md's table; one pass with the causal mask over the prompt and
// the expected tokens) must write every expected token, working and
// digest, and greedy decoding with the KV cache the same on 2 of them (8);
// the expected digests equal a
// reference apart from the circuit (sha2ref's two-round SHA-256, the
// keccak plugin's). The same passes in bfloat16 (the module
// .to(torch.bfloat16)) and float16 (emulated: PyTorch 1.13 has no CPU
// float16 kernels) give docs/export.md's decoder precision table.
func TestDecoderToys(t *testing.T) {
	needTorch(t)
	// -short and the default tier: one of each hash (the python package's
	// time under load); TCFORGE_HEAVY=1 all six and the precision table.
	points := []decPoint{decToys[0], decToys[3]}
	if sdktest.IsHeavy() {
		points = decToys
	}
	msgs, greedy := decToySizes()
	dir := t.TempDir()
	t0 := time.Now()
	var cases []*decCase
	for i, p := range points {
		cases = append(cases, exportDecoder(t, p, dir, msgs, rand.New(rand.NewPCG(35, uint64(i)))))
	}
	t.Logf("mapped and exported %d decoders in %v", len(cases), time.Since(t0).Round(time.Millisecond))
	t0 = time.Now()
	res := runDecoderChecks(t, dir, cases, greedy, []string{"bf16", "fp16"})
	t.Logf("PyTorch %v", time.Since(t0).Round(time.Millisecond))
	var rows []string
	for i, dc := range cases {
		cells := checkDecoderResult(t, dc, res[i])
		r := res[i]
		t.Logf("%s: %s; load %.2f s, teacher-forced fp32 %.3f s for %d messages (min margin %s), bf16 %.3f s, fp16 %.3f s, greedy %.3f s a message",
			dc.p.name, dc.stats, r.LoadSeconds, r.Passes["fp32"].Seconds, len(dc.msgs), num3(r.MinMargin), r.Passes["bf16"].Seconds, r.Passes["fp16"].Seconds, r.GreedySeconds)
		rows = append(rows, fmt.Sprintf("| %s | %s | %.3g | %.3g | %s | %s | %s |", dc.p.name, dc.stats, r.MaxEmbedding, r.MaxLayer, cells["fp32"], cells["bf16"], cells["fp16"]))
	}
	if sdktest.IsHeavy() {
		checkPrecisionTable(t, "decoder-precision", rows)
	}
}

// decToySizes are the messages TestDecoderToys teacher-forces and how
// many of them it decodes greedily: 16 and 2 (the default tier: about
// 20 s of one core for the six toys), 64 and 8 with TCFORGE_HEAVY=1. The
// messages are the first of one random stream in both tiers.
func decToySizes() (msgs, greedy int) {
	if sdktest.IsHeavy() {
		return 64, 8
	}
	return 16, 2
}

// num3 prints a number of decoderCheck's JSON (or its "nan", "inf").
func num3(x any) string {
	if f, ok := x.(float64); ok {
		return fmt.Sprintf("%.3g", f)
	}
	return fmt.Sprint(x)
}

// checkPrecisionTable fails unless docs/export.md's table marked name
// lists rows (after its two header lines).
func checkPrecisionTable(t *testing.T, name string, rows []string) {
	t.Helper()
	doc, err := os.ReadFile("../docs/export.md")
	if err != nil {
		t.Fatal(err)
	}
	marker := "<!-- table: " + name + " -->\n"
	_, rest, ok := strings.Cut(string(doc), marker)
	table, _, ok2 := strings.Cut(rest, "\n\n")
	if !ok || !ok2 {
		t.Fatalf("docs/export.md has no %q table", strings.TrimSpace(marker))
	}
	lines := strings.Split(table, "\n")
	if len(lines) < 2 || !slices.Equal(lines[2:], rows) {
		t.Errorf("docs/export.md's %s table:\n%s\nthe passes give\n%s", name, strings.Join(lines[min(2, len(lines)):], "\n"), strings.Join(rows, "\n"))
	}
}

// decoderJIT hashes with decoder byte modules through torch.jit.load
// alone (no tcforge on the path): its arguments are (module, messages
// file, working count) triples; for each it prints one JSON line: the
// digests (hex) of every message, the working (every generated token) of
// the first messages (m.working, their digests m.digest_of the working:
// one greedy pass each; the rest m's own call), 16 messages a call, the
// seconds per message and of torch.jit.load. Then the first module's answers to bad input, one
// line each ("name | the error's last line").
const decoderJIT = `
import sys, json, time, torch
assert "tcforge_torch" not in sys.modules
args = sys.argv[1:]
for module, messages, g in zip(args[0::3], args[1::3], args[2::3]):
    t0 = time.perf_counter()
    m = torch.jit.load(module)
    load = time.perf_counter() - t0
    msgs = [bytes.fromhex(l.strip()) for l in open(messages).read().split("\n")[:-1]]
    n = max(len(x) for x in msgs)
    batch = torch.zeros(len(msgs), n, dtype=torch.uint8)
    for i, x in enumerate(msgs):
        batch[i, :len(x)] = torch.tensor(list(x), dtype=torch.uint8)
    lengths = torch.tensor([len(x) for x in msgs])
    g, chunk = int(g), 16  # 16 a call: a full-size decoder's KV cache is 16 × positions × d_model × 4 layers' worth
    work, out = [], []
    with torch.no_grad():
        t0 = time.perf_counter()
        for lo in range(0, g, chunk):
            w = m.working(batch[lo:min(lo + chunk, g)], lengths[lo:min(lo + chunk, g)])
            work += w.tolist()
            out += list(m.digest_of(w))
        for lo in range(g, len(msgs), chunk):
            out += list(m(batch[lo:lo + chunk], lengths[lo:lo + chunk]))
        secs = (time.perf_counter() - t0) / len(msgs)
    print(json.dumps({"digests": [r.numpy().tobytes().hex() for r in out], "working": work, "seconds_per_message": secs, "load_seconds": load}))
m = torch.jit.load(args[0])
P = m.decoder.positions
for name, call in [
    ("int64", lambda: m(torch.tensor([1, 2]))),
    ("float", lambda: m(torch.zeros(3))),
    ("3-d", lambda: m(torch.zeros(1, 1, 2, dtype=torch.uint8))),
    ("too long", lambda: m(torch.zeros(m.max_len + 1, dtype=torch.uint8))),
    ("working too long", lambda: m.working(torch.zeros(1, m.max_len + 1, dtype=torch.uint8))),
    ("lengths float", lambda: m(torch.zeros(2, 4, dtype=torch.uint8), torch.tensor([1.0, 2.0]))),
    ("lengths shape", lambda: m(torch.zeros(2, 4, dtype=torch.uint8), torch.tensor([1]))),
    ("length past columns", lambda: m(torch.zeros(1, 3, dtype=torch.uint8), torch.tensor([5]))),
    ("empty batch", lambda: list(m(torch.zeros(0, 8, dtype=torch.uint8), torch.zeros(0, dtype=torch.long)).shape)),
    ("past positions", lambda: m.decoder.generate(torch.zeros(1, P, dtype=torch.long), 1)),
    ("forward past positions", lambda: m.decoder(torch.zeros(1, P + 1, dtype=torch.long))),
    ("vocabulary", lambda: m.decoder.generate(torch.full((1, 2), 256, dtype=torch.long), 1)),
    ("forward vocabulary", lambda: m.decoder(torch.full((1, 2), -1, dtype=torch.long))),
    ("context dtype", lambda: m.decoder.generate(torch.zeros(1, 2, dtype=torch.int32), 1)),
    ("context 1-d", lambda: m.decoder(torch.zeros(2, dtype=torch.long))),
]:
    try:
        print(name, "| no error", call())
    except Exception as e:
        print(name, "|", str(e).strip().splitlines()[-1])
`

// jitDecoderRun is one line of decoderJIT's output.
type jitDecoderRun struct {
	Digests           []string  `json:"digests"`
	Working           [][]int32 `json:"working"`
	SecondsPerMessage float64   `json:"seconds_per_message"`
	LoadSeconds       float64   `json:"load_seconds"`
}

// runDecoderJIT runs decoderJIT on each case's .pt (beside its config)
// with its messages, the working of the first working of them; it returns
// each case's run and the bad inputs' answers (of the first case's
// module).
func runDecoderJIT(t *testing.T, dir string, cases []*decCase, msgs, working int) ([]jitDecoderRun, map[string]string) {
	t.Helper()
	var args []string
	for _, dc := range cases {
		var sb strings.Builder
		for _, m := range dc.msgs[:min(msgs, len(dc.msgs))] {
			sb.WriteString(hex.EncodeToString(m) + "\n")
		}
		file := strings.TrimSuffix(dc.config, ".json") + ".messages"
		if err := os.WriteFile(file, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, strings.TrimSuffix(dc.config, ".json")+".pt", file, fmt.Sprint(working))
	}
	cmd := exec.Command(python, append([]string{"-c", decoderJIT}, args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("torch.jit.load: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < len(cases) {
		t.Fatalf("torch.jit.load: %d lines for %d modules:\n%s", len(lines), len(cases), out)
	}
	runs := make([]jitDecoderRun, len(cases))
	for i := range cases {
		if err := json.Unmarshal([]byte(lines[i]), &runs[i]); err != nil {
			t.Fatalf("%v in %q", err, lines[i])
		}
	}
	errs := map[string]string{}
	for _, l := range lines[len(cases):] {
		if name, msg, ok := strings.Cut(l, " | "); ok {
			errs[name] = msg
		}
	}
	return runs, errs
}

// checkDecoderModule fails unless the byte module's digests of dc's
// messages are the reference's and its working every expected token.
func checkDecoderModule(t *testing.T, what string, dc *decCase, digests []string, working [][]int32) {
	t.Helper()
	checkDigests(t, what, digests, dc.digests[:len(digests)])
	for s, w := range working {
		if !slices.Equal(w, dc.tokens[s]) {
			t.Errorf("%s: the working of message %d differs from the circuit's tokens", what, s)
		}
	}
}

// onnxCheck runs onnx.checker.check_model on each file (full check: the
// graph, its Loop body and the opset's operators) and prints "ok" each.
const onnxCheck = `
import sys, onnx
for path in sys.argv[1:]:
    onnx.checker.check_model(onnx.load(path), full_check=True)
    print("ok")
`

// TestDecoderModules writes the byte modules of two toy decoders
// (SHA-256 at two rounds, two levels a step: messages of 0 … 55 bytes the
// module pads; toy Keccak, w = 2: 4-byte messages) with the writer
// `tcforge run --export` runs (python -m tcforge_torch module), checks
// the .onnx with onnx.checker, and hashes 8 random messages (64 with
// TCFORGE_HEAVY=1) with each .pt through torch.jit.load alone and 4 (16)
// in ONNX Runtime, digests against the references (sha2ref, the keccak
// plugin's) and the working of 2 (8) in PyTorch and all in ONNX Runtime
// against the circuit's tokens. Bad input is an error naming it, never a
// digest: in TorchScript a ValueError (a wrong dtype or shape of msg,
// lengths or the context, a message too long, a length past msg's
// columns, a context past the model's positions or outside its
// vocabulary); in ONNX Runtime, which has no exceptions, valid false with
// an all-zero digest and tokens. An empty batch gives empty outputs.
func TestDecoderModules(t *testing.T) {
	needTorch(t)
	sdktest.Short(t, "writes two decoders' TorchScript and ONNX modules and runs them")
	jitMsgs, working, ortMsgs := 8, 2, 4
	if sdktest.IsHeavy() {
		jitMsgs, working, ortMsgs = 64, 8, 16
	}
	dir := t.TempDir()
	cases := []*decCase{
		exportDecoder(t, decToys[1], dir, jitMsgs, rand.New(rand.NewPCG(35, 100))),
		exportDecoder(t, decToys[3], dir, jitMsgs, rand.New(rand.NewPCG(35, 101))),
	}
	t0 := time.Now()
	var configs, onnxFiles []string
	for _, dc := range cases {
		configs = append(configs, dc.config)
		onnxFiles = append(onnxFiles, strings.TrimSuffix(dc.config, ".json")+".onnx")
	}
	buildModules(t, configs...)
	t.Logf("wrote the modules in %v", time.Since(t0).Round(time.Millisecond))
	if out := runPython(t, dir, onnxCheck, onnxFiles...); strings.Count(out, "ok") != len(onnxFiles) {
		t.Errorf("onnx.checker: %s", out)
	}
	runs, errs := runDecoderJIT(t, dir, cases, jitMsgs, working)
	for i, dc := range cases {
		checkDecoderModule(t, dc.p.name+".pt", dc, runs[i].Digests, runs[i].Working)
		t.Logf("%s.pt: %.3f s a message (batch of %d), torch.jit.load %.2f s", dc.p.name, runs[i].SecondsPerMessage, len(runs[i].Digests), runs[i].LoadSeconds)
	}
	// docs/export.md's decoder snippet, on the module it names (the same
	// mapping: configs/decoders.hcl's SHA-256, two rounds, k = 2).
	models := filepath.Join(dir, "out", "models")
	if err := os.MkdirAll(models, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(strings.TrimSuffix(cases[0].config, ".json")+".pt", filepath.Join(models, "decoder-sha256.k-2.reifier.decoder-stock.pt")); err != nil {
		t.Fatal(err)
	}
	abc := hex.EncodeToString(sha2ref.BitsToBytes(sha2ref.SHA256.Sum(sha2ref.BytesToBits([]byte("abc")), 2)))
	if got, want := strings.Fields(runPython(t, dir, docSnippet(t, "../docs/export.md", "decoder"))), []string{abc, fmt.Sprint(len(cases[0].tokens[0])), abc}; !slices.Equal(got, want) {
		t.Errorf("docs/export.md's decoder snippet printed %q, want %q (sha2ref's two-round SHA-256 of b\"abc\")", got, want)
	}
	P := len(cases[0].prompts[0]) + len(cases[0].tokens[0])
	for _, tc := range []struct{ name, want string }{
		{"int64", "ValueError: digest module: msg must be a uint8 tensor of message bytes, got dtype int64"},
		{"float", "ValueError: digest module: msg must be a uint8 tensor of message bytes, got dtype float32"},
		{"3-d", "ValueError: digest module: msg must be uint8 [batch, bytes] or [bytes], got 3 dimensions"},
		{"too long", "ValueError: digest module: a message of 56 bytes; this model hashes 0 to 55 bytes"},
		{"working too long", "ValueError: digest module: a message of 56 bytes; this model hashes 0 to 55 bytes"},
		{"lengths float", "ValueError: digest module: lengths must be an integer tensor (int64: bytes a message), got dtype float32"},
		{"lengths shape", "ValueError: digest module: lengths must be [2] (one length a message), got shape [1]"},
		{"length past columns", "ValueError: digest module: a length of 5 bytes exceeds msg's 3 columns"},
		{"empty batch", "no error [0, 32]"},
		{"past positions", fmt.Sprintf("ValueError: decoder: a context of %d positions and 1 to generate is past the model's %d positions", P, P)},
		{"forward past positions", fmt.Sprintf("ValueError: decoder: a context of %d positions and 0 to generate is past the model's %d positions", P+1, P)},
		{"vocabulary", "ValueError: decoder: a context token outside the vocabulary 0 … 255"},
		{"forward vocabulary", "ValueError: decoder: a context token outside the vocabulary 0 … 255"},
		{"context dtype", "ValueError: decoder: the context must be int64 [batch, tokens], got dtype int32"},
		{"context 1-d", "ValueError: decoder: the context must be int64 [batch, tokens], got 1 dimensions"},
	} {
		if !strings.Contains(errs[tc.name], tc.want) {
			t.Errorf("bad input %s: the module said %q, want %q", tc.name, errs[tc.name], tc.want)
		}
	}
	if why := ortMissing(); why != "" {
		t.Skip(why)
	}
	for _, dc := range cases {
		// The messages, then one of a length the model does not hash
		// (SHA-256's block: 56 bytes; toy Keccak: 3 of its 4): ONNX has
		// no exceptions, so valid must say false and its digest and
		// tokens be zeros (check.mjs fails on anything else).
		bad := make([]byte, 56)
		if !dc.p.sha2 {
			bad = bad[:dc.n-1]
		}
		msgs := append(slices.Clone(dc.msgs[:ortMsgs]), bad)
		onnx := strings.TrimSuffix(dc.config, ".json") + ".onnx"
		r := runORT(t, onnx, dc.n, msgs)
		if len(r.Tokens) != len(msgs) || len(r.Valid) != len(msgs) {
			t.Fatalf("%s.onnx: %d token lists and %d valid flags for %d messages", dc.p.name, len(r.Tokens), len(r.Valid), len(msgs))
		}
		checkDecoderModule(t, dc.p.name+".onnx in ONNX Runtime "+r.Version, dc, r.Digests[:ortMsgs], r.Tokens[:ortMsgs])
		if slices.Contains(r.Valid[:ortMsgs], false) || r.Valid[ortMsgs] || strings.Trim(r.Digests[ortMsgs], "0") != "" ||
			slices.ContainsFunc(r.Tokens[ortMsgs], func(x int32) bool { return x != 0 }) {
			t.Errorf("%s.onnx: valid %v, the %d-byte message's digest %s; want every message valid but the last, its digest and tokens zero",
				dc.p.name, r.Valid, len(bad), r.Digests[ortMsgs])
		}
		t.Logf("%s.onnx: ONNX Runtime %s, %.3f s a message (batch of %d), session %.2f s", dc.p.name, r.Version, r.SecondsPerMessage, len(msgs), r.LoadSeconds)
		if e := runORT(t, onnx, dc.n, nil); len(e.Digests) != 0 || len(e.Valid) != 0 || len(e.Tokens) != 0 {
			t.Errorf("%s.onnx: an empty batch gave %v, %v, %v", dc.p.name, e.Digests, e.Valid, e.Tokens)
		}
	}
}

// TestDecoderFull (heavy) runs issue 35's full-size decoders
// (configs/decoders-full.hcl's SHA-256, one block of 0 … 55 bytes, and
// SHA3-256, one block of 0 … 135 bytes; the mapper's default steps) in
// PyTorch and ONNX Runtime: the export as stock modules (strict=True),
// teacher-forced on 2 messages in float32 (every token) and in bfloat16
// and float16 (the first wrong token, its margin and layer, logged for
// the closing note); the byte modules written as `tcforge run --export`
// writes them, 64 random messages greedily decoded by the .pt through
// torch.jit.load alone with every generated token against the circuit's
// and every digest against crypto/sha256 and crypto/sha3, and 16 the same
// in ONNX Runtime. TCFORGE_DECODER_FULL=sha256 (or sha3-256) runs one.
func TestDecoderFull(t *testing.T) {
	needTorch(t)
	sdktest.Heavy(t, "full SHA-256 and SHA3-256 decoders in PyTorch and ONNX Runtime: thousands of generated tokens a message, 64 messages (an hour of CPU and more)")
	for i, p := range decFull {
		t.Run(p.name, func(t *testing.T) {
			if only := os.Getenv("TCFORGE_DECODER_FULL"); only != "" && only != p.name {
				t.Skipf("TCFORGE_DECODER_FULL=%s", only)
			}
			dir := t.TempDir()
			t0 := time.Now()
			dc := exportDecoder(t, p, dir, 64, rand.New(rand.NewPCG(35, 200+uint64(i))))
			t.Logf("%s: %s; mapped and exported in %v", p.name, dc.stats, time.Since(t0).Round(time.Millisecond))
			forced := *dc
			forced.msgs, forced.prompts, forced.tokens, forced.digests = dc.msgs[:2], dc.prompts[:2], dc.tokens[:2], dc.digests[:2]
			t0 = time.Now()
			r := runDecoderChecks(t, dir, []*decCase{&forced}, 0, []string{"bf16", "fp16"})[0]
			cells := checkDecoderResult(t, &forced, r)
			t.Logf("%s: teacher-forced (2 messages) fp32 %s (min margin %s, %.1f s), bf16 %s, fp16 %s; largest |embedding| %.3g, |layer weight| %.3g; PyTorch %v",
				p.name, cells["fp32"], num3(r.MinMargin), r.Passes["fp32"].Seconds, cells["bf16"], cells["fp16"], r.MaxEmbedding, r.MaxLayer, time.Since(t0).Round(time.Second))
			t0 = time.Now()
			buildModules(t, dc.config)
			base := strings.TrimSuffix(dc.config, ".json")
			t.Logf("%s: wrote the modules in %v: %s", p.name, time.Since(t0).Round(time.Second), fileSizes(t, base+".safetensors", base+".pt", base+".onnx"))
			runs, _ := runDecoderJIT(t, dir, []*decCase{dc}, 64, 64)
			checkDecoderModule(t, p.name+".pt", dc, runs[0].Digests, runs[0].Working)
			if len(runs[0].Digests) != 64 || len(runs[0].Working) != 64 {
				t.Errorf("%s.pt: %d digests and %d workings for 64 messages", p.name, len(runs[0].Digests), len(runs[0].Working))
			}
			t.Logf("%s.pt: 64 messages, every token: %.2f s a message (16 a call), torch.jit.load %.2f s", p.name, runs[0].SecondsPerMessage, runs[0].LoadSeconds)
			if why := ortMissing(); why != "" {
				t.Skip(why)
			}
			o := runORT(t, base+".onnx", dc.n, dc.msgs[:16])
			checkDecoderModule(t, p.name+".onnx in ONNX Runtime "+o.Version, dc, o.Digests, o.Tokens)
			if len(o.Tokens) != 16 || slices.Contains(o.Valid, false) {
				t.Errorf("%s.onnx: %d token lists, valid %v for 16 messages", p.name, len(o.Tokens), o.Valid)
			}
			t.Logf("%s.onnx: ONNX Runtime %s, 16 messages, every token: %.2f s a message, session %.1f s", p.name, o.Version, o.SecondsPerMessage, o.LoadSeconds)
		})
	}
}

// fileSizes says the files' sizes ("name 1.2 MB, …").
func fileSizes(t *testing.T, paths ...string) string {
	t.Helper()
	var parts []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, fmt.Sprintf("%s %.1f MB", filepath.Base(p), float64(st.Size())/1e6))
	}
	return strings.Join(parts, ", ")
}
