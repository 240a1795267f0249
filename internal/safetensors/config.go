package safetensors

import (
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/model"
)

// Config is the JSON config written next to the safetensors file.
type Config struct {
	Format       string           `json:"format"`
	Version      int              `json:"version"`
	Architecture string           `json:"architecture"`
	Layout       string           `json:"layout"`
	Weights      string           `json:"weights"` // the safetensors file, relative to the config
	Tokens       int              `json:"tokens"`
	DModel       int              `json:"d_model"`
	Attrs        map[string]int64 `json:"attrs,omitempty"`
	Stats        model.Stats      `json:"stats"`
	// Embedding and Readout are absent in a decoder's config (Decoder
	// says how its tokens come in and go out).
	Embedding *Embedding `json:"embedding,omitempty"`
	Blocks    []Block    `json:"blocks"`
	// Stock, for a model whose every block is a stock encoder layer: the
	// nn.TransformerEncoder's hyper-parameters (layers, nhead,
	// dim_feedforward, layer_norm_eps; every layer has the same).
	Stock   *Stock   `json:"stock,omitempty"`
	Readout *Readout `json:"readout,omitempty"`
	// Decoder, for a causal decoder (tokens as time): its vocabulary,
	// positions, token maps and LM head (decoder.go).
	Decoder *Decoder          `json:"decoder,omitempty"`
	Tensors map[string]Shape  `json:"tensors"`
	Notes   map[string]string `json:"notes,omitempty"`
	// Computes says what function the model computes (absent in exports
	// of models built outside a pipeline run).
	Computes *Computes `json:"computes,omitempty"`
	// Precision maps each float format ("fp64", "fp32", "fp16", "bf16")
	// to what a pass in it gave on the verification samples: "exact" (a
	// pass ran and reproduced every output bit), "wrong" (a pass ran and
	// some bit differed) or "not checked" (no pass ran in that format).
	Precision map[string]string `json:"precision,omitempty"`
	// ExactIn lists the formats whose pass was exact, widest first.
	ExactIn []string `json:"exact_in,omitempty"`
	// Samples is the number of random inputs the passes ran on.
	Samples int `json:"samples,omitempty"`
	// TestVectors are some of those inputs with the construction's
	// outputs, as bit strings (character i is bit i), for a loader to
	// check itself against.
	TestVectors []TestVector `json:"test_vectors,omitempty"`
}

// TestVector is one input of a model with its expected output, and for
// a decoder its prompt and the tokens it must generate (working, then
// digest).
type TestVector struct {
	Input  string  `json:"input"`
	Output string  `json:"output"`
	Prompt []int32 `json:"prompt,omitempty"`
	Tokens []int32 `json:"tokens,omitempty"`
}

// Computes describes the function an exported model computes: the
// construction and its resolved parameters, how its input and output bits
// are laid out, and the layerer and mapper that built the model.
type Computes struct {
	// Construction is the construction plugin's name ("keccak", "sha2", …);
	// Params its resolved parameters and the circuit's attributes (e.g.
	// preset, rate, rounds, message_bits, padded_bits, output_bits).
	Construction string         `json:"construction"`
	Params       map[string]any `json:"params"`
	// Inputs and Outputs are the named runs of input and output bits, in
	// order (input bit i of the model is bit i of the concatenation).
	Inputs  []BitRange `json:"inputs"`
	Outputs []BitRange `json:"outputs"`
	// BitOrder says how a byte string maps to bits: "lsb-first" (bit i is
	// bit i mod 8 of byte ⌊i/8⌋, FIPS 202's order), "msb-first" (bit i is
	// bit 7 − i mod 8 of byte ⌊i/8⌋, FIPS 180-4's) or "bits" (the
	// construction has no byte interface).
	BitOrder string `json:"bit_order"`
	// Padding says who pads the message: "model" (the input is the
	// message, the model pads it), "caller" (the input is already padded
	// blocks) or "none".
	Padding string `json:"padding"`
	// Layerer and Mapper are the plugins (with their parameters) that
	// compiled the circuit and mapped it.
	Layerer      string         `json:"layerer"`
	LayerParams  map[string]any `json:"layerer_params,omitempty"`
	Mapper       string         `json:"mapper"`
	MapperParams map[string]any `json:"mapper_params,omitempty"`
}

// BitRange is a named run of a model's input or output bits.
type BitRange struct {
	Name  string `json:"name"`
	Start int    `json:"start"`
	Bits  int    `json:"bits"`
}

// Description is what Export adds to a config beside the model itself.
type Description struct {
	Computes *Computes
	// Exact maps each format whose pass ran to whether it reproduced every
	// output bit on Samples inputs; formats absent are "not checked".
	Exact   map[string]bool
	Samples int
	// Inputs and Outputs are test vectors: the first MaxTestVectors are
	// written (NumIn and NumOut bits each).
	Inputs, Outputs []bitvec.Vec
	NumIn, NumOut   int
	// Prompts and Tokens, for a decoder, are the prompt and the expected
	// generated tokens of each of the first inputs (test vectors).
	Prompts, Tokens [][]int32
}

// MaxTestVectors is the most test vectors a config holds.
const MaxTestVectors = 8

// Formats are the float formats a config's Precision covers, widest first.
var Formats = []string{"fp64", "fp32", "fp16", "bf16"}

// describe adds d to c.
func (c *Config) describe(d *Description) {
	if d == nil {
		return
	}
	c.Computes, c.Samples = d.Computes, d.Samples
	for i := range min(len(d.Inputs), len(d.Outputs), MaxTestVectors) {
		tv := TestVector{Input: d.Inputs[i].Text(d.NumIn), Output: d.Outputs[i].Text(d.NumOut)}
		if i < len(d.Prompts) && i < len(d.Tokens) {
			tv.Prompt, tv.Tokens = d.Prompts[i], d.Tokens[i]
		}
		c.TestVectors = append(c.TestVectors, tv)
	}
	c.Precision = map[string]string{}
	for _, f := range Formats {
		exact, ran := d.Exact[f]
		switch {
		case !ran:
			c.Precision[f] = "not checked"
		case exact:
			c.Precision[f] = "exact"
			c.ExactIn = append(c.ExactIn, f)
		default:
			c.Precision[f] = "wrong"
		}
	}
}

// Stock are the hyper-parameters of a stock nn.TransformerEncoder.
type Stock struct {
	Layers int     `json:"num_layers"`
	Heads  int     `json:"nhead"`
	FFN    int     `json:"dim_feedforward"`
	Eps    float64 `json:"layer_norm_eps"`
}

// Shape is an exported tensor's shape and stored entries.
type Shape struct {
	Rows int `json:"rows"`
	Cols int `json:"cols"`
	NNZ  int `json:"nnz"`
}

// Embedding is model.Embedding in the config.
type Embedding struct {
	Base       string  `json:"base"`
	Input      string  `json:"input"`
	InputToken []int32 `json:"input_token"`
}

// Norm is model.RMSNorm in the config.
type Norm struct {
	Weight string  `json:"weight"`
	Eps    float64 `json:"eps"`
}

// Head is model.Head in the config.
type Head struct {
	Q string `json:"q"`
	K string `json:"k"`
	V string `json:"v"`
	O string `json:"o"`
}

// Attention is model.Attention in the config.
type Attention struct {
	Mode     model.AttnMode `json:"mode"`
	Beta     float64        `json:"beta,omitempty"`
	Residual bool           `json:"residual"`
	Norm     *Norm          `json:"norm,omitempty"`
	Heads    []Head         `json:"heads"`
}

// FFN is model.FFN in the config.
type FFN struct {
	Gate     string `json:"w_gate"`
	Value    string `json:"w_value"`
	Out      string `json:"w_out"`
	Residual bool   `json:"residual"`
	Norm     *Norm  `json:"norm,omitempty"`
}

// Block is model.Block in the config.
type Block struct {
	Attention *Attention `json:"attention,omitempty"`
	FFN       *FFN       `json:"ffn,omitempty"`
	Layer     *Layer     `json:"layer,omitempty"`
}

// Layer is a stock model.EncoderLayer in the config: Tensors maps each
// PyTorch state-dict suffix (model.StockNames) to the tensor holding it (vectors
// are stored 1×n; PyTorch wants them flat).
type Layer struct {
	Heads int     `json:"nhead"`
	Eps   float64 `json:"layer_norm_eps"`
	// FFN is the layer's dim_feedforward (linear1's rows).
	FFN     int               `json:"dim_feedforward"`
	Tensors map[string]string `json:"tensors"`
}

// Readout is model.Readout in the config.
type Readout struct {
	Token     []int32   `json:"token"`
	Dim       []int32   `json:"dim"`
	Threshold []float32 `json:"threshold"`
}

// Info says what Export wrote.
type Info struct {
	Weights, Config string // file paths
	Layout          string
	Bytes           int64 // size of the safetensors file
	DenseBytes      int64 // size the dense float32 layout needs
	// Note explains a layout choice (dense refused over the limit).
	Note string
}

// DenseBytes returns the bytes of all of m's tensors as dense float32.
func DenseBytes(m *model.Model) int64 {
	var n int64
	for i := range m.Tensors {
		n += 4 * m.Tensors[i].Dense()
	}
	return n
}

func normOut(n *model.RMSNorm) *Norm {
	if n == nil {
		return nil
	}
	return &Norm{Weight: n.Weight, Eps: n.Eps}
}

func normIn(n *Norm) *model.RMSNorm {
	if n == nil {
		return nil
	}
	return &model.RMSNorm{Weight: n.Weight, Eps: n.Eps}
}

// NewConfig returns m's export config for the given layout and weights file.
func NewConfig(m *model.Model, layout, weights string) Config {
	c := Config{
		Format: Format, Version: 1, Architecture: m.Arch, Layout: layout, Weights: weights,
		Tokens: m.Tokens, DModel: m.DModel, Attrs: m.Attrs, Stats: m.Stats(),
		Tensors: map[string]Shape{},
		Notes: map[string]string{
			"forward": "x = base; x[input_token[b]] += input[b] for each input bit b = 1; per block: x = x + Attn(Norm(x)) (x = Attn(..) if not residual), then x = x + FFN(Norm(x)); bit k = x[readout.token[k], readout.dim[k]] >= readout.threshold[k]",
			"ffn":     "FFN(x) = w_out @ (silu(w_gate @ x) * (w_value @ x)), no biases",
			"norm":    "RMSNorm(x) = weight * x / sqrt(mean(x^2) + eps) over d_model",
			"attn":    "s_ij = (q @ x_i) . (k @ x_j); hard: a_ij = 1 iff |s_ij - 1| <= 1e-3 else 0 (unnormalised); softmax: a_ij = softmax_j(beta * s_ij) over all tokens; out_i = sum_heads o @ sum_j a_ij (v @ x_j)",
			"layer":   "a block with \"layer\" is a stock torch.nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0, activation=\"relu\", batch_first=True, norm_first=True, layer_norm_eps): its state-dict entries are the named tensors (vectors stored 1×n)",
			"csr":     "W.crow_indices int32 [rows+1], W.col_indices int32 [nnz], W.values float32 [nnz]: torch.sparse_csr_tensor(crow, col, values, size=(rows, cols))",
		},
	}
	if m.Decoder != nil {
		c.Decoder = decoderOut(m.Decoder)
		c.Notes = map[string]string{"csr": c.Notes["csr"]}
		for k, v := range decoderNotes {
			c.Notes[k] = v
		}
	} else {
		c.Embedding = &Embedding{Base: m.Embed.Base, Input: m.Embed.Input, InputToken: m.Embed.InputToken}
		c.Readout = &Readout{Token: m.Readout.Token, Dim: m.Readout.Dim, Threshold: m.Readout.Threshold}
	}
	for _, b := range m.Blocks {
		var eb Block
		if a := b.Attn; a != nil {
			ea := &Attention{Mode: a.Mode, Beta: a.Beta, Residual: a.Residual, Norm: normOut(a.Norm)}
			for _, h := range a.Heads {
				ea.Heads = append(ea.Heads, Head(h))
			}
			eb.Attention = ea
		}
		if f := b.FFN; f != nil {
			eb.FFN = &FFN{Gate: f.Gate, Value: f.Value, Out: f.Out, Residual: f.Residual, Norm: normOut(f.Norm)}
		}
		if l := b.Layer; l != nil {
			el := &Layer{Heads: l.Heads, Eps: l.Eps, Tensors: map[string]string{}}
			if t := m.Tensor(l.Linear1W); t != nil {
				el.FFN = t.Rows
			}
			for k, n := range l.Names() {
				el.Tensors[model.StockNames[k]] = n
			}
			eb.Layer = el
		}
		c.Blocks = append(c.Blocks, eb)
	}
	for i := range m.Tensors {
		t := &m.Tensors[i]
		c.Tensors[t.Name] = Shape{Rows: t.Rows, Cols: t.Cols, NNZ: t.NNZ()}
	}
	if len(c.Blocks) > 0 && c.Blocks[0].Layer != nil {
		l := c.Blocks[0].Layer
		c.Stock = &Stock{Layers: len(c.Blocks), Heads: l.Heads, FFN: l.FFN, Eps: l.Eps}
		for _, b := range c.Blocks {
			if b.Layer == nil || b.Layer.Heads != l.Heads || b.Layer.FFN != l.FFN || b.Layer.Eps != l.Eps {
				c.Stock = nil // not one repeated layer
				break
			}
		}
	}
	return c
}
