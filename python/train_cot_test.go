package python_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/plugins/decoder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/python/cotseq"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
)

// cotFile builds the decoder (levels_per_step 1) of toy Keccak-p[25]
// (rate 16, one round, one block without padding: configs/learnability.hcl's
// Keccak w=1 r=1) and its sequence file of count inputs, checked against
// the construction's reference and, for the first 16, the decoder's own
// greedy generation.
func cotFile(t *testing.T, count int, ref func(cotseq.Reference) cotseq.Reference) *cotseq.File {
	t.Helper()
	ctx := context.Background()
	values := map[string]any{"log_w": int64(0), "rate": int64(16), "rounds": int64(1), "blocks": int64(1), "padding": "none"}
	pass, err := sdk.NewPass(ctx, keccak.Plugin, values)
	if err != nil {
		t.Fatal(err)
	}
	c, err := keccak.Plugin.Build(ctx, pass)
	if err != nil {
		t.Fatal(err)
	}
	l, err := fusion.Compile(ctx, c, fusion.Options{MaxSum: decoder.Plugin.MaxWeight})
	if err != nil {
		t.Fatal(err)
	}
	m, err := decoder.Map(ctx, l, decoder.Config{LevelsPerStep: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := cotseq.Reference(func(ctx context.Context, in []bitvec.Vec) ([]bitvec.Vec, error) {
		return keccak.Plugin.Reference(ctx, pass, in)
	})
	if ref != nil {
		r = ref(r)
	}
	f, err := cotseq.Build(ctx, m, l, r, cotseq.Options{Count: count, Seed: 3, Verify: 16, Source: "test", Instance: "Keccak w=1 r=1"})
	if err != nil {
		if ref != nil {
			return nil
		}
		t.Fatal(err)
	}
	return f
}

// TestCoTSequences: the chain-of-thought data of toy Keccak-p[25]'s
// decoder (python/cotseq): 2 prompt bytes (the 16 message bits), the 41
// working tokens of its two steps (θ's parities, then χ), 2 digest bytes;
// distinct messages; every digest the reference's (a reference that lies
// about one bit is caught); and the trainer's reader takes the file and
// refuses, naming the file, one whose working is not the decoder's.
func TestCoTSequences(t *testing.T) {
	t.Parallel()
	f := cotFile(t, 300, nil)
	if f.Prompt != 2 || f.Working != 41 || f.Digest != 2 || f.Vocab < 256 || f.Verified != 16 {
		t.Fatalf("prompt %d, working %d, digest %d, vocab %d, verified %d; want 2, 41, 2, ≥ 256, 16", f.Prompt, f.Working, f.Digest, f.Vocab, f.Verified)
	}
	if len(f.Step) != 41 || f.Step[0] != 0 || f.Step[40] != 1 || f.Shape.Layers != 1 || len(f.Shape.FFN) != 1 {
		t.Errorf("steps %v, shape %+v: want steps 0…1, one layer", f.Step, f.Shape)
	}
	seen := map[string]bool{}
	for i, s := range f.Sequences {
		if len(s) != 2*45 {
			t.Fatalf("sequence %d: %d hex digits, want 90", i, len(s))
		}
		if seen[s[:4]] {
			t.Fatalf("sequence %d: message %s repeats", i, s[:4])
		}
		seen[s[:4]] = true
	}
	lie := func(r cotseq.Reference) cotseq.Reference {
		return func(ctx context.Context, in []bitvec.Vec) ([]bitvec.Vec, error) {
			out, err := r(ctx, in)
			if err == nil {
				out[7].Set(3, 1-out[7].Get(3))
			}
			return out, err
		}
	}
	if cotFile(t, 20, lie) != nil {
		t.Error("a reference that differs in one bit of one sample was not caught")
	}

	if why := torchMissing(); why != "" {
		t.Skip(why)
	}
	dir := t.TempDir()
	write := func(name string, edit func(*cotseq.File)) string {
		g := *f
		g.Sequences = append([]string(nil), f.Sequences...)
		g.Step = append([]int32(nil), f.Step...)
		if edit != nil {
			edit(&g)
		}
		var b bytes.Buffer
		if err := g.Write(&b); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".cot.json")
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good", nil)
	// The reader, the thinned working, and greedy decoding with the
	// key/value cache against one full forward pass a token.
	out := runPython(t, dir, `
import sys, torch
from tcforge_torch.cot import read_sequences, GPT
s = read_sequences(sys.argv[1])
print(tuple(s.tokens.shape), len(s.kept(1)), len(s.kept(2)), len(s.kept(0)))
torch.manual_seed(0)
g = GPT(s.vocab, s.tokens.shape[1], 40, 4, [64, 48])
p = s.tokens[:50, :s.prompt]
print(bool((g.generate(p, 43) == g.generate_slow(p, 43)).all()))
`, good)
	// 41 working tokens: 25 of step 0, 16 of step 1; --working 2 keeps step 1's.
	if strings.TrimSpace(out) != "(300, 45) 45 20 4\nTrue" {
		t.Errorf("reader and generation: %q, want (300, 45) 45 20 4 / True", out)
	}
	other := f.Sequences[0][:len(f.Sequences[0])-2]
	cases := []struct {
		name, path string
		args       []string
		code       int
		want       string
	}{
		{"working of another model", write("short", func(g *cotseq.File) { g.Sequences[5] = other }), nil, 1, "sequence 5 has 44 tokens, want prompt 2 + working 41 + digest 2 = 45"},
		{"repeated message", write("repeat", func(g *cotseq.File) { g.Sequences[9] = g.Sequences[8] }), nil, 1, "1 messages repeat"},
		{"steps", write("steps", func(g *cotseq.File) { g.Step[3] = 5 }), nil, 1, "step[4] is 0"},
		{"version", write("version", func(g *cotseq.File) { g.Version = 7 }), nil, 1, "unknown version 7"},
		{"vocabulary", write("vocab", func(g *cotseq.File) { g.Vocab = 16 }), nil, 1, "outside the vocabulary of 16"},
		{"fewer sequences than asked", good, []string{"--train", "290", "--heldout", "20"}, 1, "300 sequences, fewer than --train 290 + --heldout 20"},
		{"working", good, []string{"--working", "every"}, 2, "--working"},
		{"trace", good, []string{"--trace", "every"}, 2, "--trace"},
		{"width", good, []string{"--width", "2"}, 2, "--width"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var stderr bytes.Buffer
			args := append([]string{tc.path, "--out", "refused", "--name", strings.ReplaceAll(tc.name, " ", "-"), "--steps", "1",
				"--train", "200", "--heldout", "50", "--progress", "never"}, tc.args...)
			cmd := trainCmd(context.Background(), t, dir, args...)
			cmd.Stderr = &stderr
			err := cmd.Run()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != tc.code {
				t.Fatalf("%v: %v, want exit status %d\n%s", args, err, tc.code, stderr.String())
			}
			msg := strings.TrimSpace(stderr.String())
			line := msg[strings.LastIndex(msg, "\n")+1:]
			if !strings.Contains(line, tc.want) || (tc.code == 1 && !strings.Contains(line, filepath.Base(tc.path))) {
				t.Errorf("%v: last line %q, want it to name %s and say %q", args, line, filepath.Base(tc.path), tc.want)
			}
		})
	}
}

// TestTrainCoT trains a causal model on toy Keccak-p[25]'s working (50
// steps, a small shape) and checks the run's files: every log row's
// greedy-generation figures (digest exact, working exact) present, the
// shape and the thinned working in its JSON.
func TestTrainCoT(t *testing.T) {
	needTorch(t)
	f := cotFile(t, 600, nil)
	dir := t.TempDir()
	var b bytes.Buffer
	if err := f.Write(&b); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "toy.cot.json")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := trainCmd(context.Background(), t, dir, p, "--out", "runs", "--working", "2", "--d-model", "32", "--ffn", "64", "--heads", "4",
		"--steps", "50", "--log-every", "25", "--batch", "32", "--train", "500", "--heldout", "100", "--progress", "never")
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	rows, meta := readRun(t, filepath.Join(dir, "runs", "toy.cot-work2-d32-h4-f64.seed0"))
	if len(rows) != 4 {
		t.Fatalf("%d CSV rows, want the header and steps 0, 25, 50", len(rows))
	}
	for i := 1; i < len(rows); i++ {
		if w := column(t, rows, i, "working_exact"); w < 0 || w > 1 {
			t.Errorf("row %d: working exact %v", i, w)
		}
	}
	sh, _ := meta["shape"].(map[string]any)
	if meta["kind"] != "cot" || meta["working_kept"] != float64(16) || meta["working"] != float64(41) || meta["experiment"] != "CoT, working every 2 steps" ||
		sh["d_model"] != float64(32) || sh["blocks"] != float64(1) || sh["tokens"] != float64(2+16+2) {
		b, _ := json.Marshal(meta)
		t.Errorf("run JSON %s: want a CoT run keeping 16 of 41 working tokens at d_model 32, one layer, 20 positions", b)
	}
	if !strings.Contains(stderr.String(), "16 of 41 working tokens (--working 2)") {
		t.Errorf("stderr does not say what it keeps:\n%s", stderr.String())
	}
}
