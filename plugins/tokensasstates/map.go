package tokensasstates

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// Map builds the model. It runs the phases below in order, each reading
// what the ones before it left in a mapping: where values sit (tokens,
// partials, slots, bounds: partials.go), what the FFNs compute (fetched
// combinations, unit classes, per-token constants: classes.go), how the
// residual stream is laid out (dimensions, LayerNorm's budget, heads:
// layout.go) and the weights (embedding, blocks, readout: weights.go).
func Map(ctx context.Context, c *layered.Circuit, cfg Config) (*model.Model, error) {
	if c.Depth() < 1 {
		return nil, fmt.Errorf("tokens-as-states: the circuit has no gate level")
	}
	if cfg.Tokens <= 0 {
		return mapAuto(ctx, c, cfg)
	}
	return mapTokens(ctx, c, cfg)
}

// MaxAutoSearch is the largest token count Map tries (1, 2, 4, … up to
// it), keeping the model with the fewest dense parameters, for a circuit
// without position hints and Config.Tokens 0.
const MaxAutoSearch = 16

// AutoTokens returns the number of tokens Map gives a circuit with
// Config.Tokens 0: the number of distinct position hints of its inputs,
// gates and forms (at most 4096), or 0 when it has none (Map then tries 1, 2, 4, …
// MaxAutoSearch tokens).
func AutoTokens(c *layered.Circuit) int {
	seen := map[int32]bool{}
	for _, hs := range [][]int32{c.InputPos, c.Pos, c.FormPos} {
		for _, h := range hs {
			if h >= 0 {
				seen[h] = true
			}
		}
	}
	return min(len(seen), 4096)
}

// mapAuto maps c with the tokens AutoTokens gives, or, without hints,
// with each of 1, 2, 4, … MaxAutoSearch tokens (up to the widest level), keeping the
// model with the fewest dense parameters (the fewer tokens on a tie). The
// model's attrs say how: tokens_from_hints 1, or tokens_searched, the
// number of candidates mapped.
func mapAuto(ctx context.Context, c *layered.Circuit, cfg Config) (*model.Model, error) {
	if n := AutoTokens(c); n > 0 {
		cfg.Tokens = n
		m, err := mapTokens(ctx, c, cfg)
		if err != nil {
			return nil, err
		}
		m.Attrs["tokens_from_hints"] = 1
		return m, nil
	}
	widest := c.NumInputs
	for L := 1; L <= c.Depth(); L++ {
		widest = max(widest, c.LevelWidth(L))
	}
	var best *model.Model
	var firstErr error
	tried := 0
	for T := 1; T <= MaxAutoSearch; T *= 2 {
		if T > 1 && T > widest {
			break
		}
		cfg.Tokens = T
		m, err := mapTokens(ctx, c, cfg)
		tried++
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			if firstErr == nil {
				firstErr = fmt.Errorf("tokens-as-states: %d tokens: %w", T, err)
			}
			continue
		}
		if best == nil || m.Stats().ParamsDense < best.Stats().ParamsDense {
			best = m
		}
	}
	if best == nil {
		return nil, firstErr
	}
	best.Attrs["tokens_searched"] = int64(tried)
	return best, nil
}

// mapTokens builds the model with cfg.Tokens ≥ 1 tokens.
func mapTokens(ctx context.Context, c *layered.Circuit, cfg Config) (*model.Model, error) {
	mp := &mapping{c: c, cfg: cfg, D: c.Depth()}
	mp.placeTokens()
	if err := mp.levels(ctx); err != nil {
		return nil, err
	}
	mp.tokenParts()
	mp.readoutItems()
	mp.dimensions()
	mp.meanBudget()
	mp.heads()
	if err := mp.pinScale(); err != nil {
		return nil, err
	}
	mp.embedding()
	mp.blocks()
	mp.padFFN()
	m, err := mp.readout()
	if err != nil || !cfg.Labels {
		return m, err
	}
	return mp.label(m)
}

// mapping is the state Map's phases share; each phase fills its own
// fields from those of the phases before it.
type mapping struct {
	c   *layered.Circuit
	cfg Config
	D   int // the circuit's depth
	top int // the top level in the residual stream (D − 1: folded)
	T   int // tokens

	// Tokens (placeTokens).
	vals    [][]value
	outThr  []int64
	width   []int     // values a level
	tok     [][]int32 // level L's value i → its token
	gatePos []int32   // the gates' position hints (nil: none)
	toToken func(h int32) int32

	// Partials, slots, bounds and unit classes, level by level (levels:
	// partialsAt, slotsAt, placeOutputs, boundsAt, classesAt).
	parts   [][]partial
	partsOf [][][]int32 // level L's value i → its partials
	partF   [][][]int64 // level L's value i → its partials' factors (nil: 1)
	gs      [][]gate    // level L's gates over level L−1's partials
	slot    [][]int32   // level L's partial q → its slot
	nSlots  []int
	S       int // slots: the most of any level
	nOut    int
	outThrF []float64 // output k's threshold on its slot
	bound   [][]float64

	// Unit classes (levels) and per-token constants (tokenParts, readoutItems).
	lv       []level
	anyFetch bool
	part     []int32 // token → its part
	nPart    int
	rep      []int32 // part → a token of it
	basePart int32
	readThr  []float64           // readout item j → its threshold
	corr     map[int32][]float64 // part p → what it adds to each readout item

	// Layout (dimensions, meanBudget, heads).
	indDim       []int // part → its indicator dimension (−1: the base part)
	dimR, dimF   int   // the first slot and fetched dimensions
	nF, dNeed    int
	sumAbs       []float64
	mu           float64
	dimBal       int // the balance dimension (−1: none)
	nhead, hd, d int

	// Weights (pinScale, embedding, blocks, padFFN, readout).
	m          *model.Model
	tensors    []*tensor
	cv, sigma0 float64
	F          int // FFN width: the widest level's units
}
