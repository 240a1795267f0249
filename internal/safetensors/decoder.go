package safetensors

import "github.com/tcforge/tcforge/sdk/model"

// Decoder is model.Decoder in the config: a causal language model over a
// byte vocabulary that writes the circuit's working, then its digest
// (docs/export.md, "Decoders"). Its blocks are stock encoder layers (each
// with its own dim_feedforward), run with a causal mask.
type Decoder struct {
	// Vocab is the vocabulary (256 byte values, then any special tokens);
	// Positions the context: Prompt + Working + Digest.
	Vocab     int `json:"vocab"`
	Positions int `json:"positions"`
	Prompt    int `json:"prompt"`
	Working   int `json:"working"`
	Digest    int `json:"digest"`
	// TokEmbed [vocab, d] and PosEmbed [positions, d] are the embeddings'
	// tensors (nn.Embedding weights).
	TokEmbed string `json:"tok_embed"`
	PosEmbed string `json:"pos_embed"`
	// Norm is the final LayerNorm (absent: none), Head the LM head
	// (weight [vocab, d], bias [1, vocab]).
	Norm *LayerNorm `json:"norm,omitempty"`
	Head Linear     `json:"head"`
	// PromptBits[8j+k] is the circuit input that is bit k of prompt token
	// j (−1: always 0); DigestBits[8j+k] the circuit output that is bit k
	// of digest token j (the last Digest tokens).
	PromptBits []int32 `json:"prompt_bits"`
	DigestBits []int32 `json:"digest_bits"`
	// Work defines the working tokens' bits over the layered circuit's
	// values.
	Work Work `json:"work"`
	// Step and Names give every generated token's step (the circuit
	// levels its layers end at) and label.
	Step  []int32  `json:"step"`
	Names []string `json:"names,omitempty"`
}

// LayerNorm is an nn.LayerNorm's tensors ([1, d] each) and epsilon.
type LayerNorm struct {
	Weight string  `json:"weight"`
	Bias   string  `json:"bias"`
	Eps    float64 `json:"eps"`
}

// Linear is an nn.Linear's tensors: weight [out, in], bias [1, out].
type Linear struct {
	Weight string `json:"weight"`
	Bias   string `json:"bias"`
}

// Work is model.Decoder's working map: bit i of the working (token
// ⌊i/8⌋, bit i mod 8) is Const[i] + Σ Coef[e]·value(Src[e]) over e in
// [Start[i], Start[i+1]), value(v) input v of the layered circuit for v
// below its inputs, else gate v − inputs (levels in order).
type Work struct {
	Start []int32 `json:"start"`
	Src   []int32 `json:"src"`
	Coef  []int32 `json:"coef"`
	Const []int32 `json:"const"`
}

// decoderNotes are the equations of a decoder config, in words.
var decoderNotes = map[string]string{
	"forward": "x_p = tok_embed[token_p] + pos_embed[p]; per block a stock layer with a causal mask (position p attends to 0..p); logits_p = head(norm(x_p)); token_{p+1} = argmax logits_p (greedy)",
	"layer":   "a block's \"layer\" is a stock torch.nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0, activation=\"relu\", batch_first=True, norm_first=True, layer_norm_eps), run with src_mask the causal mask; dim_feedforward may differ between blocks",
	"tokens":  "positions 0..prompt-1 are the prompt (bit k of token j is circuit input prompt_bits[8j+k], -1: 0), then working tokens, then digest tokens (bit k of digest token j is circuit output digest_bits[8j+k])",
}

func decoderOut(d *model.Decoder) *Decoder {
	c := &Decoder{Vocab: d.Vocab, Positions: d.Positions, Prompt: d.Prompt, Working: d.Working, Digest: d.Digest,
		TokEmbed: d.TokEmbed, PosEmbed: d.PosEmbed, Head: Linear{Weight: d.HeadW, Bias: d.HeadB},
		PromptBits: d.PromptBits, DigestBits: d.DigestBits,
		Work: Work{Start: d.WorkStart, Src: d.WorkSrc, Coef: d.WorkCoef, Const: d.WorkConst},
		Step: d.Step, Names: d.Names}
	if d.NormW != "" {
		c.Norm = &LayerNorm{Weight: d.NormW, Bias: d.NormB, Eps: d.NormEps}
	}
	return c
}

func decoderIn(c *Decoder) *model.Decoder {
	d := &model.Decoder{Vocab: c.Vocab, Positions: c.Positions, Prompt: c.Prompt, Working: c.Working, Digest: c.Digest,
		TokEmbed: c.TokEmbed, PosEmbed: c.PosEmbed, HeadW: c.Head.Weight, HeadB: c.Head.Bias,
		PromptBits: c.PromptBits, DigestBits: c.DigestBits,
		WorkStart: c.Work.Start, WorkSrc: c.Work.Src, WorkCoef: c.Work.Coef, WorkConst: c.Work.Const,
		Step: c.Step, Names: c.Names}
	if c.Norm != nil {
		d.NormW, d.NormB, d.NormEps = c.Norm.Weight, c.Norm.Bias, c.Norm.Eps
	}
	return d
}
