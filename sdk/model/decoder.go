package model

import (
	"fmt"
	"math"
)

// Decoder makes a model a causal language model that computes by writing
// tokens ("tokens as time"): a GPT-shaped stack of stock encoder layers
// (every block a Layer) run with a causal mask over a byte vocabulary.
//
//	x_p      = TokEmbed[token_p] + PosEmbed[p]                 p = 0 … Positions−1
//	x        = layers(x)                                      causal: p attends to 0 … p
//	logits_p = HeadW · LN_f(x_p) + HeadB                      LN_f: the final LayerNorm, when NormW is set
//	token_{p+1} = argmax logits_p                             greedy decoding
//
// The sequence is the prompt (Prompt tokens that carry the circuit's
// input bits), then Working tokens the model writes (the circuit's
// intermediate values), then Digest tokens (its outputs). Bit k of a token
// is bit k of its value (value = Σ 2ᵏ·bitₖ).
//
// Each working token bit is defined in terms of the layered circuit the
// mapper read, so that the host checks every generated token, not just the
// digest: bit i of the working bits (token ⌊i/8⌋, bit i mod 8) is
//
//	WorkConst[i] + Σ WorkCoef[e]·value(WorkSrc[e]),  e ∈ [WorkStart[i], WorkStart[i+1])
//
// where value(v) is input v for v < inputs and gate v − inputs (global gate
// index, levels in order) of the layered circuit otherwise; it must be 0 or
// 1 on every input.
type Decoder struct {
	// Vocab is the vocabulary: 256 byte values, then any special tokens.
	Vocab int
	// Positions is the context length: Prompt + Working + Digest.
	Positions int
	// TokEmbed (Vocab×DModel) and PosEmbed (Positions×DModel) name the
	// token and position embeddings (torch.nn.Embedding weights).
	TokEmbed, PosEmbed string
	// NormW and NormB (1×DModel), if NormW is set, are the final
	// LayerNorm's weight and bias (torch.nn.LayerNorm, epsilon NormEps).
	NormW, NormB string
	NormEps      float64
	// HeadW (Vocab×DModel) and HeadB (1×Vocab) are the LM head
	// (torch.nn.Linear).
	HeadW, HeadB string
	// Prompt is the number of prompt tokens; bit k of prompt token j is
	// circuit input PromptBits[8j+k] (−1: always 0).
	Prompt     int
	PromptBits []int32
	// Working and Digest count the generated tokens; bit k of digest token
	// j is circuit output DigestBits[8j+k] (−1: always 0).
	Working, Digest int
	DigestBits      []int32
	// WorkStart, WorkSrc, WorkCoef and WorkConst define the working bits
	// (8·Working of them) as above.
	WorkStart []int32
	WorkSrc   []int32
	WorkCoef  []int32
	WorkConst []int32
	// Step is the step of every generated token (Working + Digest): the
	// circuit levels a token's layers compute end at a step boundary.
	Step []int32
	// Names label every generated token ("block 1/round 5 · byte 2"), for
	// reports and the export.
	Names []string
}

// Generated returns the number of tokens a decoder writes.
func (d *Decoder) Generated() int { return d.Working + d.Digest }

// WorkBit returns working bit i's constant, sources and coefficients.
func (d *Decoder) WorkBit(i int) (int32, []int32, []int32) {
	a, b := d.WorkStart[i], d.WorkStart[i+1]
	return d.WorkConst[i], d.WorkSrc[a:b], d.WorkCoef[a:b]
}

// IsDecoder reports whether m is a causal decoder.
func (m *Model) IsDecoder() bool { return m.Decoder != nil }

// validateDecoder checks a decoder model: stock layers only, no encoder
// embedding or readout, the tensors' shapes, the prompt and working maps.
func (m *Model) validateDecoder(get func(where, name string, rows, cols int) (*Tensor, error)) error {
	d := m.Decoder
	if !m.IsStock() {
		return fmt.Errorf("model: a decoder's blocks must all be stock encoder layers")
	}
	if m.Embed.Base != "" || m.Embed.Input != "" || len(m.Embed.InputToken) > 0 || len(m.Readout.Token) > 0 {
		return fmt.Errorf("model: a decoder has no encoder embedding or readout (its tokens are its input and output)")
	}
	if d.Vocab < 256 || d.Vocab > 1<<16 {
		return fmt.Errorf("model: decoder vocabulary %d, want 256 byte tokens plus at most a few specials", d.Vocab)
	}
	if d.Prompt < 1 || d.Working < 0 || d.Digest < 1 {
		return fmt.Errorf("model: decoder with %d prompt, %d working and %d digest tokens", d.Prompt, d.Working, d.Digest)
	}
	if d.Positions != d.Prompt+d.Generated() || m.Tokens != d.Positions {
		return fmt.Errorf("model: decoder positions %d (tokens %d), want prompt + working + digest = %d", d.Positions, m.Tokens, d.Prompt+d.Generated())
	}
	if _, err := get("token embedding", d.TokEmbed, d.Vocab, m.DModel); err != nil {
		return err
	}
	if _, err := get("position embedding", d.PosEmbed, d.Positions, m.DModel); err != nil {
		return err
	}
	if d.NormW != "" {
		if _, err := get("final norm weight", d.NormW, 1, m.DModel); err != nil {
			return err
		}
		if _, err := get("final norm bias", d.NormB, 1, m.DModel); err != nil {
			return err
		}
		if !(d.NormEps > 0) || math.IsInf(d.NormEps, 0) {
			return fmt.Errorf("model: decoder final norm epsilon %v, want > 0", d.NormEps)
		}
	}
	if _, err := get("LM head", d.HeadW, d.Vocab, m.DModel); err != nil {
		return err
	}
	if _, err := get("LM head bias", d.HeadB, 1, d.Vocab); err != nil {
		return err
	}
	if len(d.PromptBits) != 8*d.Prompt {
		return fmt.Errorf("model: decoder prompt map has %d bits for %d prompt tokens", len(d.PromptBits), d.Prompt)
	}
	for i, b := range d.PromptBits {
		if b < -1 {
			return fmt.Errorf("model: decoder prompt bit %d maps to input %d", i, b)
		}
	}
	if len(d.DigestBits) != 8*d.Digest {
		return fmt.Errorf("model: decoder digest map has %d bits for %d digest tokens", len(d.DigestBits), d.Digest)
	}
	for i, b := range d.DigestBits {
		if b < -1 {
			return fmt.Errorf("model: decoder digest bit %d maps to output %d", i, b)
		}
	}
	nw := 8 * d.Working
	if len(d.WorkStart) != nw+1 || len(d.WorkConst) != nw || len(d.WorkSrc) != len(d.WorkCoef) {
		return fmt.Errorf("model: decoder working map: %d starts, %d constants, %d sources, %d coefficients for %d bits", len(d.WorkStart), len(d.WorkConst), len(d.WorkSrc), len(d.WorkCoef), nw)
	}
	if d.WorkStart[0] != 0 || int(d.WorkStart[nw]) != len(d.WorkSrc) {
		return fmt.Errorf("model: decoder working map: starts do not span the %d terms", len(d.WorkSrc))
	}
	for i := range nw {
		if d.WorkStart[i+1] < d.WorkStart[i] {
			return fmt.Errorf("model: decoder working map: bit %d: starts decrease", i)
		}
	}
	for e, v := range d.WorkSrc {
		if v < 0 {
			return fmt.Errorf("model: decoder working map: term %d reads value %d", e, v)
		}
	}
	if len(d.Step) != d.Generated() {
		return fmt.Errorf("model: decoder has %d token steps for %d generated tokens", len(d.Step), d.Generated())
	}
	if len(d.Names) != 0 && len(d.Names) != d.Generated() {
		return fmt.Errorf("model: decoder has %d token names for %d generated tokens", len(d.Names), d.Generated())
	}
	return nil
}

// CheckCircuit checks the decoder's maps against a circuit with inputs
// inputs, gates gates and outputs outputs: every prompt bit an input, every
// working term a value of the circuit, the digest as long as the outputs.
func (d *Decoder) CheckCircuit(inputs, gates, outputs int) error {
	for i, b := range d.PromptBits {
		if int(b) >= inputs {
			return fmt.Errorf("decoder: prompt bit %d maps to input %d, the circuit has %d", i, b, inputs)
		}
	}
	for e, v := range d.WorkSrc {
		if int(v) >= inputs+gates {
			return fmt.Errorf("decoder: working term %d reads value %d, the circuit has %d inputs and %d gates", e, v, inputs, gates)
		}
	}
	seen := make([]bool, outputs)
	for i, b := range d.DigestBits {
		if int(b) >= outputs {
			return fmt.Errorf("decoder: digest bit %d maps to output %d, the circuit has %d", i, b, outputs)
		}
		if b >= 0 {
			seen[b] = true
		}
	}
	for o, ok := range seen {
		if !ok {
			return fmt.Errorf("decoder: circuit output %d is in no digest token", o)
		}
	}
	return nil
}
