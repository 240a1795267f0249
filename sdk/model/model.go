// Package model holds the transformer model IR that mapper plugins produce
// and its binary encoding (the forward pass is internal/forward, the
// safetensors export internal/safetensors).
//
// A Model is an encoder stack acting on a fixed number of tokens:
//
//	x      = embedding(input bits)                       Tokens × DModel
//	for each block:
//	  x    = x + Attn(Norm(x))      (or Attn(Norm(x)) without the residual)
//	  x    = x + FFN(Norm(x))       (or FFN(Norm(x)))
//	bit k  = x[Readout.Token[k]][Readout.Dim[k]] ≥ Readout.Threshold[k]
//
// with, for every token i (Norm optional, per sublayer):
//
//	Norm(x)ᵢ  = g ⊙ xᵢ / sqrt(mean(xᵢ²) + ε)                 (RMSNorm)
//	FFN(x)ᵢ   = W_out (SiLU(W_gate xᵢ) ⊙ (W_value xᵢ))      (SwiGLU, no biases)
//	Attn(x)ᵢ  = Σ_heads O_h Σ_j a^h_ij V_h x_j
//	s^h_ij    = (Q_h xᵢ)·(K_h x_j)
//	hard:      a_ij = 1 if |s_ij − 1| ≤ HardTol, else 0     (unnormalised, score-1 selection)
//	softmax:   a_ij = exp(β s_ij) / Σ_k exp(β s_ik)         (over all Tokens keys)
//
// A block may instead be one stock PyTorch encoder layer (EncoderLayer:
// LayerNorm with weight and bias, multi-head softmax attention with biased
// projections, a ReLU FFN with biases); a model is then all such layers.
//
// Every weight matrix is a sparse Tensor in CSR form; blocks refer to
// tensors by name, so blocks may share weights. The forward pass (forward.Compile,
// Program.Run) knows nothing of how a mapper made the weights: it multiplies
// sparse matrices, applies real SiLU and RMSNorm, and evaluates softmax
// over the implicit zero scores exactly in O(nonzeros):
//
//	Σ_j e^{β s_ij} v_j = Σ_{j: s_ij ≠ 0} (e^{β s_ij} − 1) v_j + Σ_all v_j.
package model

import (
	"fmt"
	"math"
	"slices"
)

// AttnMode selects how attention weights are formed from scores.
type AttnMode string

// Attention modes.
const (
	// Hard is unnormalised hard attention: a key is attended with weight 1
	// iff its score is 1 (within HardTol), else 0 — the paper's assumption.
	Hard AttnMode = "hard"
	// Softmax is standard normalised attention with inverse temperature β,
	// taken over every token (no mask).
	Softmax AttnMode = "softmax"
)

// HardTol is how far from 1 a score may be and still be selected by hard
// attention.
const HardTol = 1e-3

// Tensor is a named sparse matrix in CSR form: row r holds the entries
// Col[RowPtr[r]:RowPtr[r+1]] (strictly increasing) with values
// Val[RowPtr[r]:RowPtr[r+1]]. A vector (an RMSNorm weight) is a 1×n matrix.
type Tensor struct {
	Name   string
	Rows   int
	Cols   int
	RowPtr []int32 // len Rows+1, RowPtr[0] = 0
	Col    []int32
	Val    []float32
}

// NNZ returns the number of stored entries.
func (t *Tensor) NNZ() int { return len(t.Val) }

// Dense returns the number of entries of the dense matrix.
func (t *Tensor) Dense() int64 { return int64(t.Rows) * int64(t.Cols) }

// Row returns row r's columns and values.
func (t *Tensor) Row(r int) ([]int32, []float32) {
	a, b := t.RowPtr[r], t.RowPtr[r+1]
	return t.Col[a:b], t.Val[a:b]
}

// At returns entry (r, c) (0 where nothing is stored).
func (t *Tensor) At(r, c int) float32 {
	cols, vals := t.Row(r)
	k, _ := slices.BinarySearch(cols, int32(c))
	if k < len(cols) && cols[k] == int32(c) {
		return vals[k]
	}
	return 0
}

// Validate checks the CSR structure: lengths, monotone row pointers,
// strictly increasing in-range columns, finite values.
func (t *Tensor) Validate() error {
	if t.Rows < 0 || t.Cols < 0 {
		return fmt.Errorf("tensor %q: negative shape %d×%d", t.Name, t.Rows, t.Cols)
	}
	if len(t.RowPtr) != t.Rows+1 {
		return fmt.Errorf("tensor %q: %d row pointers for %d rows", t.Name, len(t.RowPtr), t.Rows)
	}
	if len(t.Col) != len(t.Val) {
		return fmt.Errorf("tensor %q: %d columns but %d values", t.Name, len(t.Col), len(t.Val))
	}
	if t.RowPtr[0] != 0 || int(t.RowPtr[t.Rows]) != len(t.Col) {
		return fmt.Errorf("tensor %q: row pointers do not span the %d entries", t.Name, len(t.Col))
	}
	for r := 0; r < t.Rows; r++ {
		a, b := t.RowPtr[r], t.RowPtr[r+1]
		if b < a {
			return fmt.Errorf("tensor %q: row %d: pointers decrease", t.Name, r)
		}
		prev := int32(-1)
		for k := a; k < b; k++ {
			c := t.Col[k]
			if c <= prev || int(c) >= t.Cols {
				return fmt.Errorf("tensor %q: row %d: column %d out of order or outside 0..%d", t.Name, r, c, t.Cols-1)
			}
			prev = c
			if v := float64(t.Val[k]); math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("tensor %q: entry (%d, %d) is %v", t.Name, r, c, v)
			}
		}
	}
	return nil
}

// RMSNorm is a pre-norm: Norm(x) = Weight ⊙ x / sqrt(mean(x²) + Eps) over
// all DModel dimensions of a token. Weight names a 1×DModel tensor.
type RMSNorm struct {
	Weight string
	Eps    float64
}

// Head is one attention head: Q, K name dk×DModel tensors, V a dv×DModel
// tensor and O a DModel×dv tensor.
type Head struct {
	Q, K, V, O string
}

// Attention is an attention sublayer.
type Attention struct {
	Mode AttnMode
	// Beta is the inverse temperature of softmax attention (scores are
	// multiplied by it; standard attention has β = 1/√d_k).
	Beta float64
	// Norm, if set, normalises the sublayer's input.
	Norm *RMSNorm
	// Residual adds the sublayer's output to x; otherwise it replaces x.
	Residual bool
	Heads    []Head
}

// FFN is a SwiGLU feed-forward sublayer: W_out (SiLU(W_gate x) ⊙ (W_value x)).
// Gate and Value name hidden×DModel tensors, Out a DModel×hidden tensor.
type FFN struct {
	Gate, Value, Out string
	// Norm, if set, normalises the sublayer's input.
	Norm *RMSNorm
	// Residual adds the sublayer's output to x; otherwise it replaces x.
	Residual bool
}

// Block is an encoder block: an optional attention sublayer, then an
// optional FFN sublayer.
type Block struct {
	Attn *Attention
	FFN  *FFN
	// Layer, if set, is a stock PyTorch encoder layer (see EncoderLayer);
	// then Attn and FFN are nil.
	Layer *EncoderLayer
}

// Embedding is how input bits enter the residual stream: x starts as the
// Base tensor (Tokens×DModel) and input bit b, when 1, adds row b of the
// Input tensor (inputs×DModel) to token InputToken[b].
type Embedding struct {
	Base       string
	Input      string
	InputToken []int32
}

// Readout says where each output bit is read: output k is 1 iff
// x[Token[k]][Dim[k]] ≥ Threshold[k] after the last block.
type Readout struct {
	Token     []int32
	Dim       []int32
	Threshold []float32
}

// Model is a transformer as a mapper built it.
type Model struct {
	// Arch names the architecture, e.g. "tokens-as-gates/softmax".
	Arch string
	// Attrs are integer facts the mapper reports (circuit depth, padding
	// tokens, …); the forward pass ignores them.
	Attrs   map[string]int64
	Tokens  int
	DModel  int
	Embed   Embedding
	Blocks  []Block
	Readout Readout
	Tensors []Tensor
	// Labels, optional, name what the residual dimensions, units and
	// heads hold (labels.go); the forward pass ignores them.
	Labels *Labels
	// Decoder, when set, makes the model a causal language model over
	// bytes that writes the circuit's working before its digest
	// (decoder.go); then Embed and Readout are empty.
	Decoder *Decoder
}

// NumInputs returns the number of input bits (rows of the input embedding),
// or 0 if the embedding is missing.
func (m *Model) NumInputs() int {
	if d := m.Decoder; d != nil {
		n := 0
		for _, b := range d.PromptBits {
			n = max(n, int(b)+1)
		}
		return n
	}
	if t := m.Tensor(m.Embed.Input); t != nil {
		return t.Rows
	}
	return 0
}

// NumOutputs returns the number of output bits.
func (m *Model) NumOutputs() int {
	if d := m.Decoder; d != nil {
		n := 0
		for _, b := range d.DigestBits {
			n = max(n, int(b)+1)
		}
		return n
	}
	return len(m.Readout.Token)
}

// Tensor returns the tensor of that name, or nil.
func (m *Model) Tensor(name string) *Tensor {
	for i := range m.Tensors {
		if m.Tensors[i].Name == name {
			return &m.Tensors[i]
		}
	}
	return nil
}

// TensorIndex maps names to tensors.
func (m *Model) TensorIndex() map[string]*Tensor {
	idx := make(map[string]*Tensor, len(m.Tensors))
	for i := range m.Tensors {
		idx[m.Tensors[i].Name] = &m.Tensors[i]
	}
	return idx
}

// Validate checks the model: every tensor's CSR structure, unique tensor
// names, every reference resolving to a tensor of the right shape, modes
// and temperatures, embedding and readout indices.
func (m *Model) Validate() error {
	if m.Tokens < 1 || m.DModel < 1 {
		return fmt.Errorf("model: %d tokens and d_model %d", m.Tokens, m.DModel)
	}
	idx := map[string]*Tensor{}
	for i := range m.Tensors {
		t := &m.Tensors[i]
		if t.Name == "" {
			return fmt.Errorf("model: tensor %d has no name", i)
		}
		if _, dup := idx[t.Name]; dup {
			return fmt.Errorf("model: two tensors named %q", t.Name)
		}
		if err := t.Validate(); err != nil {
			return fmt.Errorf("model: %w", err)
		}
		idx[t.Name] = t
	}
	get := func(where, name string, rows, cols int) (*Tensor, error) {
		t, ok := idx[name]
		if !ok {
			return nil, fmt.Errorf("model: %s: no tensor named %q", where, name)
		}
		if (rows >= 0 && t.Rows != rows) || (cols >= 0 && t.Cols != cols) {
			return nil, fmt.Errorf("model: %s: tensor %q is %d×%d, want %s×%s", where, name, t.Rows, t.Cols, dimStr(rows), dimStr(cols))
		}
		return t, nil
	}
	if m.Decoder != nil {
		if err := m.validateDecoder(get); err != nil {
			return err
		}
		for bi, b := range m.Blocks {
			if err := validateLayer(fmt.Sprintf("block %d layer", bi), b.Layer, m.DModel, get); err != nil {
				return err
			}
		}
		if m.Labels != nil {
			return m.Labels.Validate(m)
		}
		return nil
	}
	if _, err := get("embedding base", m.Embed.Base, m.Tokens, m.DModel); err != nil {
		return err
	}
	in, err := get("input embedding", m.Embed.Input, -1, m.DModel)
	if err != nil {
		return err
	}
	if len(m.Embed.InputToken) != in.Rows {
		return fmt.Errorf("model: input embedding has %d rows but %d input tokens", in.Rows, len(m.Embed.InputToken))
	}
	for b, tok := range m.Embed.InputToken {
		if tok < 0 || int(tok) >= m.Tokens {
			return fmt.Errorf("model: input bit %d goes to token %d, outside 0..%d", b, tok, m.Tokens-1)
		}
	}
	norm := func(where string, n *RMSNorm) error {
		if n == nil {
			return nil
		}
		if _, err := get(where+" norm", n.Weight, 1, m.DModel); err != nil {
			return err
		}
		if n.Eps < 0 || math.IsNaN(n.Eps) || math.IsInf(n.Eps, 0) {
			return fmt.Errorf("model: %s norm: bad epsilon %v", where, n.Eps)
		}
		return nil
	}
	for bi, b := range m.Blocks {
		if l := b.Layer; l != nil {
			if b.Attn != nil || b.FFN != nil {
				return fmt.Errorf("model: block %d has a stock layer and an attention or FFN sublayer", bi)
			}
			if err := validateLayer(fmt.Sprintf("block %d layer", bi), l, m.DModel, get); err != nil {
				return err
			}
		}
		if a := b.Attn; a != nil {
			where := fmt.Sprintf("block %d attention", bi)
			switch a.Mode {
			case Hard:
			case Softmax:
				if !(a.Beta > 0) || math.IsInf(a.Beta, 0) {
					return fmt.Errorf("model: %s: softmax needs a finite β > 0, got %v", where, a.Beta)
				}
			default:
				return fmt.Errorf("model: %s: unknown mode %q", where, a.Mode)
			}
			if err := norm(where, a.Norm); err != nil {
				return err
			}
			for hi, h := range a.Heads {
				hw := fmt.Sprintf("%s head %d", where, hi)
				q, err := get(hw+" Q", h.Q, -1, m.DModel)
				if err != nil {
					return err
				}
				if _, err := get(hw+" K", h.K, q.Rows, m.DModel); err != nil {
					return err
				}
				v, err := get(hw+" V", h.V, -1, m.DModel)
				if err != nil {
					return err
				}
				if _, err := get(hw+" O", h.O, m.DModel, v.Rows); err != nil {
					return err
				}
			}
		}
		if f := b.FFN; f != nil {
			where := fmt.Sprintf("block %d FFN", bi)
			if err := norm(where, f.Norm); err != nil {
				return err
			}
			g, err := get(where+" gate", f.Gate, -1, m.DModel)
			if err != nil {
				return err
			}
			if _, err := get(where+" value", f.Value, g.Rows, m.DModel); err != nil {
				return err
			}
			if _, err := get(where+" out", f.Out, m.DModel, g.Rows); err != nil {
				return err
			}
		}
	}
	r := m.Readout
	if len(r.Dim) != len(r.Token) || len(r.Threshold) != len(r.Token) {
		return fmt.Errorf("model: readout has %d tokens, %d dims, %d thresholds", len(r.Token), len(r.Dim), len(r.Threshold))
	}
	for k := range r.Token {
		if r.Token[k] < 0 || int(r.Token[k]) >= m.Tokens || r.Dim[k] < 0 || int(r.Dim[k]) >= m.DModel {
			return fmt.Errorf("model: readout %d reads token %d dim %d, outside %d×%d", k, r.Token[k], r.Dim[k], m.Tokens, m.DModel)
		}
		if t := float64(r.Threshold[k]); math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("model: readout %d: threshold %v", k, t)
		}
	}
	if m.Labels != nil {
		return m.Labels.Validate(m)
	}
	return nil
}

func dimStr(n int) string {
	if n < 0 {
		return "any"
	}
	return fmt.Sprint(n)
}

// Stats are the size figures of a model.
type Stats struct {
	Tokens int `json:"tokens"`
	DModel int `json:"d_model"`
	Blocks int `json:"blocks"`
	// Heads is the largest number of attention heads in one block.
	Heads int `json:"heads"`
	// FFNHidden is the largest FFN hidden width (rows of W_gate).
	FFNHidden int `json:"ffn_hidden"`
	// ParamsNonzero counts the stored entries of all tensors (each shared
	// tensor once), embeddings included.
	ParamsNonzero int64 `json:"params_nonzero"`
	// ParamsDense counts the entries of all tensors as dense matrices
	// (each shared tensor once).
	ParamsDense int64 `json:"params_dense"`
	// Vocab and Generated are a decoder's vocabulary and the number of
	// tokens it writes (working and digest); 0 for other models.
	Vocab     int `json:"vocab,omitempty"`
	Generated int `json:"generated_tokens,omitempty"`
}

// Stats computes the model's figures.
func (m *Model) Stats() Stats {
	s := Stats{Tokens: m.Tokens, DModel: m.DModel, Blocks: len(m.Blocks)}
	if d := m.Decoder; d != nil {
		s.Vocab, s.Generated = d.Vocab, d.Generated()
	}
	idx := m.TensorIndex()
	for _, b := range m.Blocks {
		if b.Attn != nil && len(b.Attn.Heads) > s.Heads {
			s.Heads = len(b.Attn.Heads)
		}
		if b.FFN != nil {
			if t := idx[b.FFN.Gate]; t != nil && t.Rows > s.FFNHidden {
				s.FFNHidden = t.Rows
			}
		}
		if l := b.Layer; l != nil {
			s.Heads = max(s.Heads, l.Heads)
			s.FFNHidden = max(s.FFNHidden, l.FFNWidth(idx))
		}
	}
	for i := range m.Tensors {
		s.ParamsNonzero += int64(m.Tensors[i].NNZ())
		s.ParamsDense += m.Tensors[i].Dense()
	}
	return s
}

// SoftmaxBeta returns the inverse temperature of the first softmax
// attention sublayer whose β matters — one with a head whose Q, K, V and O
// all have entries (with Q or K empty every score is 0 and softmax is
// uniform at any β; with V or O empty the head adds nothing) — and whether
// there is one.
func (m *Model) SoftmaxBeta() (float64, bool) {
	idx := m.TensorIndex()
	nz := func(name string) bool { t := idx[name]; return t != nil && t.NNZ() > 0 }
	for _, b := range m.Blocks {
		if b.Attn == nil || b.Attn.Mode != Softmax {
			continue
		}
		for _, h := range b.Attn.Heads {
			if nz(h.Q) && nz(h.K) && nz(h.V) && nz(h.O) {
				return b.Attn.Beta, true
			}
		}
	}
	return 0, false
}
