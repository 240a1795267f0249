// Package tokensasstates is the tokens-as-states mapper: several tokens each
// hold a share of every circuit level, attention moves the values a token
// needs from other tokens, and each FFN sublayer computes one threshold
// level for every token at once. The model is a stack of stock PyTorch
// encoder layers (model.EncoderLayer: norm_first, ReLU, biases, softmax
// attention with 1/sqrt(head_dim) scaling), one a circuit level, the last
// level folded into the readout (a threshold on one residual dimension):
// a circuit of depth D gives D − 1 blocks (fusion's SHA3-256: 48).
//
// Tokens. A value belongs to the token of its position hint
// (layered.Circuit.InputPos, Pos, FormPos: Keccak's slice z; hints below T
// are tokens, else the distinct hints ranked, else hint mod T); without a
// hint, value i of a level of W goes to token ⌊i·T/W⌋, or with
// "interleave" to i mod T. A gate lives on one token, its home: its hint,
// else the token of the first value reading it.
//
// Partials. The residual stream holds, per level, the circuit's linear
// forms (the inputs on level 0) split by token: a form is the sum of its
// partials, one per token homing some of its gates, Σ coef·gate over the
// gates homed there; a form's constant is folded into the thresholds of
// the gates reading it. Partials alike on one token are one (Keccak's θ
// sum a + C[x−1] + C[x+1][z−1] is the partial a + C[x−1] on slice z and
// the column sum C[x+1] that slice z−1 holds once for five lanes). On the
// folded top level every output is one partial on its own token.
//
// Slots. Within its token a partial has a slot. Level 0 and the top level:
// its rank among the level's inputs or outputs on the token (the input map
// and the readout are nn.Linear layers shared by all tokens). Other levels:
// by structure — partials reading the same (offset, slot) pairs on many
// tokens share a slot, placed first; a rarer one takes the free slot whose
// common structure it overlaps most — so every token runs the same units
// in the same order (Keccak's first round, whose constant lanes drop
// sources on some slices, keeps the slices' layout).
// Partials that one rotation-like gate of the next level reads on
// several other tokens (SHA-2's Σ₀(a) on token z reads a on z+2, z+13,
// z+22) form a word, placed before the rest in one slot on all its
// tokens, so a rotation fetches one dimension an offset and word
// (words.go; full SHA-256: 213 fetched dimensions → 120).
//
// Residual stream of a token (d_model dimensions):
//
//	0        sink: always 0 (see LayerNorm below)
//	1, 2     +C, −C (position embedding): they pin LayerNorm's scale
//	3, 4     cos, sin of 2πz/T (position z): relative-offset attention
//	         (only when some level fetches)
//	P …      part indicators (position embedding): tokens on which every
//	         per-token constant agrees form a part; every part but the
//	         largest has a dimension, 1 on its tokens (none when all
//	         units are alike on all tokens)
//	R …      S slots: the current level's partials on this token
//	F …      fetched dimensions for one level
//	B        balance, only where LayerNorm's mean must be 0 (below)
//
// LayerNorm. Every sublayer reads LN(x) = γ(x − μ)/σ + β. The ±C pair
// makes σ = C·sqrt(2/d)·(1 + δ) with |δ| ≤ Σ data²/(4C²), and
// γ = C·sqrt(2/d), β = 0, so LN(x) ≈ x − μ;
// every row that reads LN(x) puts −(Σ of its other weights) on the sink,
// so μ cancels exactly and the row reads (1 + δ')·Σ wᵢxᵢ. C is the least
// power of two ≥ 2¹³ with C² ≥ 10·K·max|s|·Σ data² (bounds over the
// model), so K·max|s|·δ' < 1/40 (Keccak: C = 2¹³, |δ'| < 10⁻⁵; the
// 16-bit adder's carries need more).
//
// Float32. A row's terms are wᵢ(xᵢ − μ) rounded to 2⁻²⁴ of their size, so
// every gate's Σ|w·x| + |θ| must stay within MaxSum, with x bounded by
// what it is: gates of one row (same sources, same weights) are steps
// [s ≥ θ] of one sum, so their share of a partial runs through the prefix
// sums of its coefficients in threshold order (a parity counter
// Σ (−1)ᵏ[S ≥ k]: [0, 1]; the round objective's mixed-radix projections
// S_a + 23·S_b + 529·S_c: [0, 12166], where Σ|coef| gives 869,869). The
// mean μ adds |w|·|μ| to every term (|μ| ≤ Σ|x|/d); where that would
// break the budget, a balance dimension (after the fetched ones) holds
// minus the sum of the token's other dimensions — every write to the
// stream writes its negation there — so μ = 0 (fusion's round objective,
// SHA-2's additions). A partial's coefficients are stored divided by
// their gcd, which the weights of the gates reading it take (SHA-2's
// chunk sums Σ 2ⁱ·bitᵢ: token i holds its bit, not 2ⁱ times it, so one
// slot holds values of one size on every token).
//
// Block b (computing level b from level b−1):
//
//   - attention: a gate on token z reading partials of token z − r (r ≠ 0)
//     reads a fetched dimension: per offset, one per normalised combination
//     Σ w·slot the gates read (Keccak's θ: the five column sums, one head of
//     offset 1) or one per slot, whichever is fewer. A head carries up to
//     head_dim fetched dimensions of one offset; its query is
//     A·(cos, sin)(2π(z−r)/T) (a rotation of the position dimensions), its
//     key (cos, sin)(2πj/T): the score A·cos(2π(j−z+r)/T) peaks at j = z−r
//     with a gap ≥ Gap, so the softmax is one-hot to e^−Gap. Heads: of the
//     shapes that carry every level's fetches, the fewest heads among those
//     within 25% of the least d_model (Keccak: 24, one per ρ offset, which
//     are distinct mod 64); nhead divides d_model (padded).
//   - FFN: a gate s = Σ wᵢxᵢ ≥ θ (integer weights and values) is
//     relu(h) − relu(h − 1) with h = K(s − θ + ½), K = Steep: two hidden
//     units adding coef·step to its partials' slots. For integer s,
//     h ≤ −K/2 or h ≥ K/2 = 2, so the step saturates and small errors in
//     its inputs do not reach its output (with relu(s − θ + 1) − relu(s − θ)
//     they would grow by Σ|wᵢ| a level). Gates with the same weights over
//     the same slots and fetched dimensions and the same outputs share their
//     two units across tokens (a position-wise FFN: Keccak's 64 slices run
//     one slice's units). Their biases may differ per token — a threshold
//     (Keccak's ι round constants, folded into the forms' constants), or
//     −K·max|s| − 1 on a token without such a gate — through the part
//     indicators. Two units relu(x), relu(−x) per slot of the level below
//     and per fetched dimension write −x: the dead values are cleared.
//
// Readout: output k is its slot ≥ θₖ − ½ (the folded gate's threshold,
// form constants included; ½ when nothing is folded), one threshold per
// rank on a token: where a token's differs, the last FFN adds the
// difference through its part indicator (one unit a part). Every step's
// pre-activation is at least K/2 − 1 = 1 from its kinks and every readout ½
// from its threshold on exact values; the forward pass reports the
// measured margin.
package tokensasstates

import (
	"context"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Plugin is the tokens-as-states mapper.
var Plugin = &sdk.Mapper{
	Name:    "tokens-as-states",
	Version: "0.3.0",
	Doc:     "Several tokens each hold a share of every level's forms (by position hint: Keccak's slice z); attention moves values between tokens by relative position; one stock PyTorch encoder layer (LayerNorm, softmax MHA, ReLU FFN) per circuit level, units shared across tokens, the last level folded into the readout.",
	Params: []sdk.Param{
		{Name: "tokens", Type: sdk.Int, Default: 0, Min: sdk.Bound(0), Max: sdk.Bound(4096),
			Doc: "number of state tokens (at most the widest level); 0: one token a distinct position hint of the circuit (SHA3-256: its 64 slices, SHA-256: its 32 bit positions, MD and Merkle: their permutation's slices, the adder: its bits; at most 4096), or, for a circuit without hints, the one of 1, 2, 4, 8, 16 giving the fewest dense parameters (each mapped, at most the widest level)"},
		{Name: "assign", Type: sdk.String, Default: "chunks", Enum: []string{"chunks", "interleave"},
			Doc: "where values without a position hint go: \"chunks\" (value i of W to token ⌊iT/W⌋) or \"interleave\" (value i to token i mod T)"},
	},
	Prepare: func(_ context.Context, pass *sdk.Pass) (any, error) {
		return Config{Tokens: pass.Params.Int("tokens"), Interleave: pass.Params.String("assign") == "interleave"}, nil
	},
	MaxWeight: MaxWeight,
	Map: func(ctx context.Context, pass *sdk.Pass, c *layered.Circuit) (*model.Model, error) {
		cfg := pass.Prepared.(Config)
		cfg.Labels = true
		m, err := Map(ctx, c, cfg)
		if err == nil && cfg.Tokens == 0 && pass.Log != nil {
			how := "one a distinct position hint"
			if m.Attrs["tokens_searched"] > 0 {
				how = "the fewest dense parameters of 1, 2, 4, 8, 16 (no position hints)"
			}
			pass.Log.Info().Int("tokens", m.Tokens).Msg("tokens chosen: " + how)
		}
		return m, err
	},
}

// Config is the mapper's resolved parameters.
type Config struct {
	// Tokens is the number of state tokens; 0 chooses it (AutoTokens).
	Tokens     int
	Interleave bool
	// Labels attaches the model's labels (model.Labels; the plugin
	// always does).
	Labels bool
	// NoWords turns off the word alignment of slots (words.go), for
	// comparison.
	NoWords bool
	// MaxSum is the float32 budget a gate's Σ|w·x| + |θ| may reach before
	// the mapper adds a balance dimension and, past it with one, refuses
	// (0: the constant MaxSum, 2¹⁸). A larger one is for measurements,
	// not exact: full SHA-256 at 16-bit chunks with 2²¹ gets 1 of 64
	// digests wrong in stock PyTorch (docs/mappers.md, "Full SHA-256 in
	// stock modules").
	MaxSum int64
}

// maxSum is the mapping's float32 budget (Config.MaxSum, else MaxSum).
func (mp *mapping) maxSum() float64 {
	if mp.cfg.MaxSum > 0 {
		return float64(mp.cfg.MaxSum)
	}
	return MaxSum
}

// Constants of the construction (see the package doc).
const (
	// C is the least value of the ±C dimensions (see Map).
	C = 8192.0
	// Gap is the least score gap between the attended token and any other.
	Gap = 40.0
	// Steep is the slope of a step's ramp: K(s − θ + ½) is ±K/2 away from
	// the ramp's middle for integer s, and K/2 − 1 away from its kinks.
	Steep = 4.0
	// MaxWeight is the mapper's sdk.Mapper.MaxWeight: a layerer's
	// max_weight under which the gates of modular additions stay within
	// MaxSum, the bound a layerer block that leaves max_weight unset gets
	// (8-bit chunks; measured on fusion's circuits: SHA-256 176,103,
	// BLAKE2s 96,132 at 3 rounds; at the default 2²², 16-bit chunks:
	// 1,370,036 and 785,667,820).
	MaxWeight = 1 << 16
	// MaxSum bounds Σ|w·x| + |θ| over every gate: K·MaxSum·2⁻²⁴ stays
	// below 1/16 of a step's margin (the adder's carries reach 9,925 at
	// n = 32; SHA-256 at 8-bit chunks, 176,103; fusion's round objective
	// on toy Keccak, 24,332 to 89,946; Keccak's θ at depth first, 35).
	// Measured: full SHA-256 at 16-bit chunks (1,370,036 with words; C =
	// 2²⁹) passes the host's float32 pass on 64 messages (margin 0.469)
	// but gets 1 of 64 digests wrong in stock PyTorch (6 of 64 before
	// words, at 3,146,662 and C = 2³³; docs/mappers.md).
	MaxSum = 1 << 18
	// Eps is the layer-norm epsilon (PyTorch's default).
	Eps = 1e-5
	// Fixed dimensions.
	dimSink, dimPlus, dimMinus, dimCos, dimSin = 0, 1, 2, 3, 4
)
