package model

import "fmt"

// EncoderLayer is one stock PyTorch encoder layer,
//
//	torch.nn.TransformerEncoderLayer(d_model, Heads, dim_feedforward,
//	    dropout=0.0, activation="relu", batch_first=True, norm_first=True,
//	    layer_norm_eps=Eps)
//
// computing, for every token i,
//
//	x  = x + OutProjW·MHA(LN1(x)) + OutProjB
//	x  = x + Linear2W·relu(Linear1W·LN2(x) + Linear1B) + Linear2B
//	LN(x)ᵢ = NormW ⊙ (xᵢ − μᵢ)/sqrt(σᵢ² + Eps) + NormB   (over d_model; σ² biased)
//	MHA: [q; k; v] = InProjW·h + InProjB (3·d_model rows), split into Heads
//	     heads of d_model/Heads dimensions; head h attends with
//	     softmax_j(q_i·k_j / sqrt(d_model/Heads)) over every token.
//
// Its tensors are named by the mapper; vectors are 1×n tensors. A block with
// a Layer has neither Attn nor FFN.
type EncoderLayer struct {
	Heads              int
	Eps                float64
	Norm1W, Norm1B     string // 1×d
	InProjW, InProjB   string // 3d×d, 1×3d
	OutProjW, OutProjB string // d×d, 1×d
	Norm2W, Norm2B     string // 1×d
	Linear1W, Linear1B string // F×d, 1×F
	Linear2W, Linear2B string // d×F, 1×d
}

// StockNames are the PyTorch state-dict suffixes of an EncoderLayer's
// tensors, in the order of Names.
var StockNames = [...]string{
	"norm1.weight", "norm1.bias", "self_attn.in_proj_weight", "self_attn.in_proj_bias",
	"self_attn.out_proj.weight", "self_attn.out_proj.bias", "norm2.weight", "norm2.bias",
	"linear1.weight", "linear1.bias", "linear2.weight", "linear2.bias",
}

// Names returns the layer's tensor names in the order of StockNames.
func (l *EncoderLayer) Names() [12]string {
	return [12]string{l.Norm1W, l.Norm1B, l.InProjW, l.InProjB, l.OutProjW, l.OutProjB,
		l.Norm2W, l.Norm2B, l.Linear1W, l.Linear1B, l.Linear2W, l.Linear2B}
}

// SetNames sets the layer's tensor names from s, in the order of StockNames
// (the inverse of Names).
func (l *EncoderLayer) SetNames(s []string) {
	l.Norm1W, l.Norm1B, l.InProjW, l.InProjB, l.OutProjW, l.OutProjB = s[0], s[1], s[2], s[3], s[4], s[5]
	l.Norm2W, l.Norm2B, l.Linear1W, l.Linear1B, l.Linear2W, l.Linear2B = s[6], s[7], s[8], s[9], s[10], s[11]
}

// FFNWidth returns the layer's dim_feedforward given the model's tensors,
// or 0 if its linear1 is missing.
func (l *EncoderLayer) FFNWidth(idx map[string]*Tensor) int {
	if t := idx[l.Linear1W]; t != nil {
		return t.Rows
	}
	return 0
}

// validateLayer checks a stock layer's head count and tensor shapes.
func validateLayer(where string, l *EncoderLayer, d int, get func(where, name string, rows, cols int) (*Tensor, error)) error {
	if l.Heads < 1 || d%l.Heads != 0 {
		return fmt.Errorf("model: %s: %d heads do not divide d_model %d", where, l.Heads, d)
	}
	if !(l.Eps > 0) {
		return fmt.Errorf("model: %s: layer-norm epsilon %v, want > 0", where, l.Eps)
	}
	l1, err := get(where+" linear1", l.Linear1W, -1, d)
	if err != nil {
		return err
	}
	F := l1.Rows
	shapes := [12][2]int{{1, d}, {1, d}, {3 * d, d}, {1, 3 * d}, {d, d}, {1, d}, {1, d}, {1, d}, {F, d}, {1, F}, {d, F}, {1, d}}
	for k, name := range l.Names() {
		if _, err := get(where+" "+StockNames[k], name, shapes[k][0], shapes[k][1]); err != nil {
			return err
		}
	}
	return nil
}

// IsStock reports whether every block of m is a stock EncoderLayer (and
// there is at least one).
func (m *Model) IsStock() bool {
	for _, b := range m.Blocks {
		if b.Layer == nil {
			return false
		}
	}
	return len(m.Blocks) > 0
}
