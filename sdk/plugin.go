// Package sdk is all a tcforge plugin author imports: the three plugin kinds
// (construction, layerer, mapper) declared as struct values in the manner of
// golang.org/x/tools/go/analysis.Analyzer, their parameter schemas, the
// per-call Pass, and the helpers a construction's funcs and tests share.
// The main of a plugin executable is package sdk/serve (kept apart, so
// these declarations compile without the wire).
//
// A plugin is one value and one line of main:
//
//	var Plugin = &sdk.Construction{
//		Name:      "toy",
//		Doc:       "x AND y",
//		Params:    []sdk.Param{{Name: "n", Type: sdk.Int, Default: 1, Doc: "…"}},
//		Prepare:   prepare,   // resolves and checks the parameters, once per call
//		Build:     build,
//		Reference: reference,
//	}
//
//	func main() { serve.Main(Plugin) }
//
// The host runs every block's Prepare for every matrix point before the first
// point runs, so values the schema cannot rule out (a chain longer than the
// state, a tree of no leaves) are refused, located in the config, before any
// Build runs and before anything is written.
package sdk

import (
	"context"
	"fmt"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// ProtocolVersion is the plugin protocol version; host and plugin must agree.
const ProtocolVersion = 1

// Kind is a plugin kind.
type Kind string

// The plugin kinds.
const (
	KindConstruction Kind = "construction"
	KindLayerer      Kind = "layerer"
	KindMapper       Kind = "mapper"
)

// Description is what a plugin says about itself.
type Description struct {
	Name     string  `json:"name"`
	Kind     Kind    `json:"kind"`
	Version  string  `json:"version"`
	Protocol int     `json:"protocol"`
	Doc      string  `json:"doc"`
	Params   []Param `json:"params"`
	// Estimates says a construction implements Estimate.
	Estimates bool `json:"estimates,omitempty"`
	// MaxWeight is a mapper's Mapper.MaxWeight.
	MaxWeight int64 `json:"max_weight,omitempty"`
}

// Plugin is implemented by *Construction, *Layerer and *Mapper.
type Plugin interface {
	Describe() Description
}

// Pass is what one call of a plugin func gets from the host, in the spirit
// of analysis.Pass: fields are added here, never to the funcs' signatures,
// so a plugin keeps compiling when the host learns to hand it more.
type Pass struct {
	// Params are the block's parameter values, checked against the schema.
	Params Params
	// Prepared is what the plugin's Prepare returned for Params (its
	// resolved configuration); the funcs of a call always see it set.
	Prepared any
	// Log is the call's logger: inside a plugin process its lines reach
	// the host's log with the plugin's name and the call attached.
	Log *zerolog.Logger
}

// Construction builds the logic circuit of a hash construction and computes
// its reference outputs without the circuit.
type Construction struct {
	Name    string
	Version string
	Doc     string
	Params  []Param

	// Prepare resolves and checks the parameters without building
	// anything; what it returns is Pass.Prepared in the other funcs.
	// Required: the host runs it for every point before the first point
	// runs, so impossible values are refused before any Build.
	Prepare func(ctx context.Context, pass *Pass) (any, error)

	// Build returns the logic circuit.
	Build func(ctx context.Context, pass *Pass) (*circuit.Circuit, error)

	// Reference computes the construction's outputs for each input vector
	// (bit i of inputs[k] is circuit input i) independently of the circuit.
	Reference func(ctx context.Context, pass *Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error)

	// Estimate, if set, predicts the size of the circuit Build would
	// return, cheaply and without building it, so the host can refuse a
	// point over its size limit before spending the memory.
	Estimate func(ctx context.Context, pass *Pass) (Size, error)
}

// Describe implements Plugin.
func (c *Construction) Describe() Description {
	return Description{Name: c.Name, Kind: KindConstruction, Version: c.Version, Protocol: ProtocolVersion, Doc: c.Doc, Params: c.Params, Estimates: c.Estimate != nil}
}

// Layerer compiles a logic circuit into a layered threshold circuit.
type Layerer struct {
	Name    string
	Version string
	Doc     string
	Params  []Param

	// Prepare resolves and checks the options (required; see
	// Construction.Prepare).
	Prepare func(ctx context.Context, pass *Pass) (any, error)

	// Layer compiles c.
	Layer func(ctx context.Context, pass *Pass, c *circuit.Circuit) (*layered.Circuit, error)
}

// Describe implements Plugin.
func (l *Layerer) Describe() Description {
	return Description{Name: l.Name, Kind: KindLayerer, Version: l.Version, Protocol: ProtocolVersion, Doc: l.Doc, Params: l.Params}
}

// Mapper maps a layered threshold circuit onto transformer weights.
type Mapper struct {
	Name    string
	Version string
	Doc     string
	Params  []Param

	// Prepare resolves and checks the options (required; see
	// Construction.Prepare).
	Prepare func(ctx context.Context, pass *Pass) (any, error)

	// Map builds the model for c.
	Map func(ctx context.Context, pass *Pass, c *layered.Circuit) (*model.Model, error)

	// MaxWeight, if positive, is the max_weight (MaxWeightParam) the
	// mapper needs of a layerer to map circuits with modular additions
	// exactly, where the layerer's default bound gives gates whose sums
	// its number format cannot carry (tokens-as-states in float32: 2¹⁶,
	// 8-bit chunks). The host gives it to every layerer of the pipeline
	// that declares max_weight and whose block leaves it unset (the least
	// of the pipeline's mappers'), and says so in its log; a block that
	// sets max_weight keeps its value.
	MaxWeight int64
}

// Describe implements Plugin.
func (m *Mapper) Describe() Description {
	return Description{Name: m.Name, Kind: KindMapper, Version: m.Version, Protocol: ProtocolVersion, Doc: m.Doc, Params: m.Params, MaxWeight: m.MaxWeight}
}

// MaxWeightParam is the name of the layerer parameter that bounds the
// reachable sum of a modular addition (a SUMBIT node) before the layerer
// cuts it into chunks (circuit.SplitSums): fusion's and reifier's. A
// mapper's MaxWeight sets it where a block leaves it unset.
const MaxWeightParam = "max_weight"

// Size is a logic circuit's size, as Construction.Estimate predicts it.
type Size struct {
	Nodes int64 `json:"nodes"`
	Edges int64 `json:"edges"` // operand references
}

// SizeOf returns the size of a built circuit, the figure Estimate
// predicts (an Estimate that builds a smaller instance to extrapolate
// from measures it with SizeOf).
func SizeOf(c *circuit.Circuit) Size {
	return Size{Nodes: int64(len(c.Ops)), Edges: int64(len(c.Args))}
}

// NewPass checks values against pl's schema, runs pl's Prepare on them and
// returns the Pass the plugin's other funcs are called with: what the host
// does before every call, and what a plugin's own tests do (see sdktest).
// Its error is a *ParamError when one parameter is to blame.
func NewPass(ctx context.Context, pl Plugin, values map[string]any) (*Pass, error) {
	p, err := NewParams(pl.Describe().Params, values)
	if err != nil {
		return nil, err
	}
	return PassOf(ctx, pl, p)
}

// PassOf is NewPass for parameters already checked (by NewParams or
// ParseParams): it runs pl's Prepare on p. The Pass's Log is the logger of
// ctx (zerolog.Ctx).
func PassOf(ctx context.Context, pl Plugin, p Params) (*Pass, error) {
	log := *zerolog.Ctx(ctx) // a copy: zerolog's fallbacks are shared
	pass := &Pass{Params: p, Log: &log}
	var fn func(context.Context, *Pass) (any, error)
	switch v := pl.(type) {
	case *Construction:
		fn = v.Prepare
	case *Layerer:
		fn = v.Prepare
	case *Mapper:
		fn = v.Prepare
	}
	if fn == nil {
		return nil, fmt.Errorf("plugin %q has no Prepare", pl.Describe().Name)
	}
	var err error
	if pass.Prepared, err = fn(ctx, pass); err != nil {
		return nil, err
	}
	return pass, nil
}

// BlockLinear returns the size of a construction that is fixed plus
// blocks copies of perBlock (a chain of compressions: inputs and constants,
// then one block's nodes per block), the estimate of every Merkle–Damgård
// construction. Its error says the size overflows an int64 (a point no
// host can build, refused as such).
func BlockLinear(fixed, perBlock Size, blocks int64) (Size, error) {
	var n, e Count
	n.Add(perBlock.Nodes, blocks).Add(fixed.Nodes)
	e.Add(perBlock.Edges, blocks).Add(fixed.Edges)
	nv, ok1 := n.Value()
	ev, ok2 := e.Value()
	if !ok1 || !ok2 || fixed.Nodes < 0 || fixed.Edges < 0 {
		return Size{}, fmt.Errorf("circuit size %d + %d × (%d nodes, %d edges) overflows an int64", fixed.Nodes, blocks, perBlock.Nodes, perBlock.Edges)
	}
	return Size{Nodes: nv, Edges: ev}, nil
}
