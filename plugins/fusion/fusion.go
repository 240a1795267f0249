// Package fusion is the optimizing layerer. It compiles any logic circuit
// into a layered threshold circuit that is never deeper than the
// Reifier-style backend's on the same input, and on Keccak needs two
// threshold levels a round instead of five or six.
//
// Every value of the logic circuit is realised as an exact integer *linear
// form* over the threshold gates of one level, v = c + Σ aₖ·gₖ, rather than
// as one gate. Gates that read v fold the form into their own weights and
// threshold, so NOT, XOR with a constant, copies and the alternating sums
// below cost nothing. The rules (see docs/fusion.md for the proofs):
//
//  1. Constants fold into the thresholds of their readers; they never cost a
//     gate.
//  2. NOT, XOR with a constant and one-operand AND/OR are affine maps of a
//     form (v ↦ 1 − v, v ↦ v): no gate, no level.
//  3. A threshold op (AND, OR, ANDNOT, THRESHOLD) is one gate reading the
//     forms of its operands.
//  4. Switching functions: if a value is F(S) for an integer linear form S
//     of level-L values, it is the linear form F(S_min) + Σ ±[S ≥ s] over
//     the switch points s of F: one gate of level L+1 per switch point. The
//     parity of n values is F = odd over S = Σ xᵢ (n gates [S ≥ k]); a
//     threshold op is one switch point.
//  5. Cone fusion: a node whose operands are themselves pending switching
//     functions (a threshold op, a parity) of level-L forms is a function
//     of a short vector y of integer sums of level-L forms; a mixed-radix
//     projection S = Σ Mⱼ·yⱼ turns it into one switching function, realised
//     in one level (χ's a ⊕ (¬b ∧ c) is [2a−b+c ≥ 1] − [2a−b+c ≥ 3]).
//  6. Parity flattening: a XOR operand of a XOR contributes its own operands
//     to the outer sum (mod 2 duplicates cancel), so XORs of linear forms
//     fold into the next parity's sum.
//  7. Lifting: a form needed above its level is materialised once as a
//     gate [form ≥ 1−c] and carried by copies.
//  8. Scheduling: gates are moved off their as-soon-as-possible levels
//     (within the levels their inputs and readers allow) to minimise copy
//     gates.
//  9. (round objective) A value only parities read is needed modulo 2: a
//     parity read only by parities is the integer sum of its operands'
//     forms, no gate, no level (modular.go).
//  10. (round objective) A parity x ⊕ y of two switching functions of
//     level-T sums is x + y − 2·[x ∧ y], the AND one switching function of
//     their sums' projection: one level (Options.NoPair turns it off).
//
// The objective option picks the end of the depth/size trade-off:
// "depth" ranks candidate realisations by level, then gates, then edges;
// "size" ranks them by gates + edges and materialises multi-gate forms
// read by many gates, which cuts edges (weights) at the cost of levels;
// "round" is depth first with rules 9 and 10, trading width for depth.
// A width budget (max_width, Options.MaxWidth) picks the shallowest of
// the plans round, round without rule 10, depth first and size first
// (from the objective's on) whose widest level fits; a plan whose width
// bound, computed without realising it, is over the budget is not
// realised (budget.go).
package fusion

import (
	"context"
	"fmt"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// Objective selects the end of the depth/size trade-off.
type Objective uint8

// The objectives.
const (
	// Depth minimises depth first, then gates.
	Depth Objective = iota
	// Size minimises edges and gates within the Reifier depth bound.
	Size
	// Round minimises depth first, realising values that only parities
	// read as integer forms known modulo 2 (modular.go): one level where
	// the exact value needs two, at the cost of width.
	Round
)

// String returns the objective's parameter value.
func (o Objective) String() string {
	switch o {
	case Size:
		return "size"
	case Round:
		return "round"
	}
	return "depth"
}

// Options are the compiler's knobs.
type Options struct {
	// Objective is the end of the depth/size trade-off.
	Objective Objective
	// ASAP disables scheduling: every gate stays on its as-soon-as-possible
	// level (for comparison; more copies).
	ASAP bool
	// MaxSum bounds the sums of modular additions (SUMBIT nodes): wider
	// ones are split into chunks with carries first (circuit.SplitSums).
	// 0 means circuit.DefaultMaxSum.
	MaxSum int64
	// NoPair disables rule 10 (round objective): a parity of two
	// switching functions of level-T sums is then realised exactly one
	// level later, as the parity of the two forms, instead of as
	// x + y − 2·[x ∧ y] on level T+1. On Keccak the last round then takes
	// two levels (depth rounds·blocks + 2) but no level is wider than the
	// middle rounds' 286·25w.
	NoPair bool
	// MaxWidth, if positive, is a width budget: Compile returns the
	// shallowest of its plans whose widest level has at most MaxWidth
	// gates (copies included), or an error naming the narrowest plan. The
	// plans it tries are Objective's and the narrower ones after it: for
	// Round, the round objective, the round objective without rule 10
	// (NoPair), depth first and size first; for Depth, depth first and
	// size first; for Size, size first (budget.go).
	MaxWidth int
	// RoundLevels, if positive, confines the round objective's modular
	// forms (rules 9 and 10) to levels 1..RoundLevels: sums known modulo
	// 2 and rule 10's pairs whose form would sit higher are planned
	// exactly, as depth first plans them. On Keccak the first RoundLevels
	// rounds then take one level each and the rest two (depth
	// RoundLevels + 2·(rounds − RoundLevels) + 1 on one block, the last
	// round depth first), which gives the block counts between the round
	// objective's and depth first's. 0: no limit.
	RoundLevels int
}

// Plugin is the fusion layerer.
var Plugin = &sdk.Layerer{
	Name:    "fusion",
	Version: "0.1.0",
	Doc:     "Optimizing backend: values as linear forms of threshold gates, parity as switching functions, cone fusion, copy-minimising scheduling; never deeper than reifier.",
	Params: []sdk.Param{
		{Name: "objective", Type: sdk.String, Default: "depth", Enum: []string{"depth", "size", "round"},
			Doc: "\"depth\": fewest levels, then fewest gates, then edges; \"size\": fewest gates + edges, materialising multi-gate forms that many gates read (more levels, still never deeper than reifier); \"round\": fewest levels at any width, values only parities read kept as integer forms known modulo 2 (one level a Keccak round; never deeper than \"depth\")"},
		{Name: "schedule", Type: sdk.Bool, Default: true,
			Doc: "move gates off their as-soon-as-possible levels to minimise copy gates (false: as soon as possible)"},
		{Name: "max_width", Type: sdk.Int, Default: int64(0), Min: sdk.Bound(0),
			Doc: "width budget: the widest level (gates and copies) may have at most this many gates; fusion returns the shallowest of its plans that fits — for objective \"round\": the round objective, the round objective with the last round exact one level later (no rule 10), depth first, size first; for \"depth\": depth first, size first — and refuses if none does; 0: no budget"},
		{Name: "round_levels", Type: sdk.Int, Default: int64(0), Min: sdk.Bound(0),
			Doc: "objective \"round\" only: keep its modular forms (values known modulo 2, rules 9 and 10) on levels 1..round_levels and plan the rest depth first — on Keccak the first round_levels rounds take one level each, the others two; 0: no limit"},
		{Name: sdk.MaxWeightParam, Type: sdk.Int, Default: int64(circuit.DefaultMaxSum), Min: sdk.Bound(2), Max: sdk.Bound(1 << 27),
			Doc: "bound on the reachable sum of a modular addition (SUMBIT) before its operands' forms are substituted: wider additions are cut into chunks of b bits with carries (circuit.SplitSums), one more level per chunk; the default 2^22 keeps every pre-activation below 2^24, exact in float32; left unset under a mapper that needs less (tokens-as-states: 2^16, 8-bit chunks), the mapper's bound"},
	},
	Prepare: func(_ context.Context, pass *sdk.Pass) (any, error) {
		opts := Options{ASAP: !pass.Params.Bool("schedule"), MaxSum: int64(pass.Params.Int(sdk.MaxWeightParam)), MaxWidth: pass.Params.Int("max_width"), RoundLevels: pass.Params.Int("round_levels")}
		switch pass.Params.String("objective") {
		case "size":
			opts.Objective = Size
		case "round":
			opts.Objective = Round
		}
		return opts, nil
	},
	Layer: func(ctx context.Context, pass *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
		return Compile(ctx, c, pass.Prepared.(Options))
	},
}

// Compile lowers and layers c.
func Compile(ctx context.Context, c *circuit.Circuit, opts Options) (*layered.Circuit, error) {
	c, n, err := lower(ctx, c, opts)
	if err != nil {
		return nil, err
	}
	outputs := n.outputs(c)
	if opts.MaxWidth > 0 {
		return compileBudget(ctx, c, n, outputs, opts)
	}
	pl, err := plan(ctx, n, outputs, opts)
	if err != nil {
		return nil, fmt.Errorf("fusion: %w", err)
	}
	return buildPlan(ctx, c, n, pl, opts)
}

// lower validates c, cuts its wide sums (circuit.SplitSums) and
// normalises it (rules 1, 2).
func lower(ctx context.Context, c *circuit.Circuit, opts Options) (*circuit.Circuit, *normal, error) {
	if err := c.Validate(); err != nil {
		return nil, nil, fmt.Errorf("fusion: invalid logic circuit: %w", err)
	}
	maxSum := opts.MaxSum
	if maxSum == 0 {
		maxSum = circuit.DefaultMaxSum
	}
	c, err := circuit.SplitSums(c, maxSum)
	if err != nil {
		return nil, nil, fmt.Errorf("fusion: %w", err)
	}
	n, err := normalize(ctx, c)
	if err != nil {
		return nil, nil, fmt.Errorf("fusion: %w", err)
	}
	return c, n, nil
}

// plan runs the first pass with opts (for the round objective, the
// depth-first plan where that is as shallow: shallower).
func plan(ctx context.Context, n *normal, outputs []int32, opts Options) (*plans, error) {
	pl, err := planAll(ctx, n, outputs, opts)
	if err != nil {
		return nil, err
	}
	return shallower(ctx, n, outputs, opts, pl)
}

// buildPlan realises plan pl, schedules its gates and writes the layered
// circuit.
func buildPlan(ctx context.Context, c *circuit.Circuit, n *normal, pl *plans, opts Options) (*layered.Circuit, error) {
	g, err := realise(ctx, c, n, pl)
	if err != nil {
		return nil, fmt.Errorf("fusion: %w", err)
	}
	g.allocEdges()
	if !opts.ASAP {
		g.schedule()
	}
	l, err := g.emit(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("fusion: %w", err)
	}
	return l, nil
}
