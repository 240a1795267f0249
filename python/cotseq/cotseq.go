// Package cotseq writes the chain-of-thought training data of a decoder
// model (sdk/model.Decoder, the decoder mapper's "tokens as time"): for
// distinct random circuit inputs, the prompt tokens, the working tokens and
// the digest tokens the decoder must generate, as a sequence file
// ("tcforge-cot-sequences", version 1) that `python3 -m tcforge_torch train
// FILE.cot.json` trains a causal model on (docs/learnability.md).
//
// Every sequence is checked before it is written: its digest against the
// construction's reference on the same input (so the layered circuit whose
// values define the working is right there), and the decoder model itself
// generates the first Verify sequences token for token (internal/tokencheck,
// float32), so the working is what a verified model writes.
package cotseq

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/tcforge/tcforge/internal/tokencheck"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Format and Version name the sequence file format.
const (
	Format  = "tcforge-cot-sequences"
	Version = 1
)

// Shape is a decoder's shape as the sequence file records it.
type Shape struct {
	Layers int   `json:"layers"`
	DModel int   `json:"d_model"`
	Heads  int   `json:"heads"`
	FFN    []int `json:"ffn"`
}

// File is a sequence file.
type File struct {
	Format    string   `json:"format"`
	Version   int      `json:"version"`
	Source    string   `json:"source"`
	Instance  string   `json:"instance"`
	Prompt    int      `json:"prompt"`
	Working   int      `json:"working"`
	Digest    int      `json:"digest"`
	Vocab     int      `json:"vocab"`
	Step      []int32  `json:"step"`
	Shape     Shape    `json:"shape"`
	Verified  int      `json:"verified"`
	Seed      uint64   `json:"seed"`
	Names     []string `json:"names,omitempty"`
	Sequences []string `json:"sequences"`
}

// Options says what to write.
type Options struct {
	// Count is the number of sequences (distinct inputs).
	Count int
	// Seed seeds the inputs.
	Seed uint64
	// Verify is how many of them the model generates, token for token,
	// before anything is written (at most Count).
	Verify int
	// Source and Instance describe the pipeline in the file.
	Source, Instance string
}

// Reference computes a construction's outputs (sdk.Construction.Reference
// with its pass bound).
type Reference func(ctx context.Context, inputs []bitvec.Vec) ([]bitvec.Vec, error)

// Build checks and builds the sequence file of decoder m, mapped from
// layered circuit c of a construction with reference ref.
func Build(ctx context.Context, m *model.Model, c *layered.Circuit, ref Reference, opt Options) (*File, error) {
	d := m.Decoder
	if d == nil {
		return nil, fmt.Errorf("cotseq: model %q is not a decoder", m.Arch)
	}
	if opt.Count < 1 {
		return nil, fmt.Errorf("cotseq: count %d, want at least 1", opt.Count)
	}
	n := c.NumInputs
	if n < 63 && uint64(opt.Count) > uint64(1)<<n {
		return nil, fmt.Errorf("cotseq: %d distinct inputs asked of a circuit with %d input bits (%d inputs)", opt.Count, n, uint64(1)<<n)
	}
	ins := distinct(opt.Seed, opt.Count, n)
	want, err := ref(ctx, ins)
	if err != nil {
		return nil, fmt.Errorf("cotseq: reference: %w", err)
	}
	if v := min(opt.Verify, len(ins)); v > 0 {
		if _, err := tokencheck.Check(ctx, m, c, ins[:v], false); err != nil {
			return nil, fmt.Errorf("cotseq: the decoder does not generate its working: %w", err)
		}
	}
	f := &File{Format: Format, Version: Version, Source: opt.Source, Instance: opt.Instance, Prompt: d.Prompt, Working: d.Working,
		Digest: d.Digest, Vocab: d.Vocab, Verified: min(opt.Verify, len(ins)), Seed: opt.Seed, Sequences: make([]string, len(ins))}
	if d.Working > 0 {
		f.Step = make([]int32, d.Working)
		for t := range d.Working {
			f.Step[t] = d.Step[t] - d.Step[0]
		}
	}
	if len(d.Names) > 0 {
		f.Names = d.Names[:d.Working]
	}
	idx := m.TensorIndex()
	f.Shape = Shape{Layers: len(m.Blocks), DModel: m.DModel}
	for _, b := range m.Blocks {
		f.Shape.Heads = max(f.Shape.Heads, b.Layer.Heads)
		f.Shape.FFN = append(f.Shape.FFN, b.Layer.FFNWidth(idx))
	}
	buf := make([]byte, d.Prompt+d.Generated())
	for s, in := range ins {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		p := tokencheck.Prompt(d, in)
		g, err := tokencheck.Expected(d, c, in)
		if err != nil {
			return nil, fmt.Errorf("cotseq: sample %d: %w", s, err)
		}
		for j, t := range append(p, g...) {
			if t < 0 || t > 255 {
				return nil, fmt.Errorf("cotseq: sample %d: token %d is %d, not a byte", s, j, t)
			}
			buf[j] = byte(t)
		}
		// The digest tokens against the reference's outputs.
		for j := range d.Digest {
			for b := range 8 {
				o := d.DigestBits[8*j+b]
				bit := buf[d.Prompt+d.Working+j] >> b & 1
				if (o < 0 && bit != 0) || (o >= 0 && uint(bit) != want[s].Get(int(o))) {
					return nil, fmt.Errorf("cotseq: sample %d: digest token %d bit %d is %d, the construction's reference says otherwise", s, j, b, bit)
				}
			}
		}
		f.Sequences[s] = hex.EncodeToString(buf)
	}
	return f, nil
}

// Write writes f as JSON.
func (f *File) Write(w io.Writer) error {
	e := json.NewEncoder(w)
	return e.Encode(f)
}

// distinct returns count distinct random inputs of n bits.
func distinct(seed uint64, count, n int) []bitvec.Vec {
	rng := rand.New(rand.NewPCG(seed, 0x636f74))
	seen := make(map[string]bool, count)
	out := make([]bitvec.Vec, 0, count)
	for len(out) < count {
		v := bitvec.Random(rng, 1, n)[0]
		k := fmt.Sprint([]uint64(v))
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, v)
	}
	return out
}
