// Package sdk is all a tcforge plugin author imports: the three plugin kinds
// (construction, layerer, mapper) declared as struct values, their parameter
// schemas, and Serve, which runs a plugin as a go-plugin gRPC server.
//
// A plugin is one value and one line of main:
//
//	var Plugin = &sdk.Construction{
//		Name:   "toy",
//		Doc:    "x AND y",
//		Params: []sdk.Param{{Name: "n", Type: sdk.Int, Default: 1, Doc: "…"}},
//		Build:  build,
//		Reference: reference,
//	}
//
//	func main() { sdk.Serve(Plugin) }
//
// The host talks to every plugin, bundled or external, through the same
// interface: the client side of the RPC returns values of these same types
// whose funcs call across the process boundary.
package sdk

import (
	"context"

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
}

// Plugin is implemented by *Construction, *Layerer and *Mapper.
type Plugin interface {
	Describe() Description
}

// Construction builds the logic circuit of a hash construction and computes
// its reference outputs without the circuit.
type Construction struct {
	Name    string
	Version string
	Doc     string
	Params  []Param

	// Build returns the logic circuit for the given parameters.
	Build func(ctx context.Context, p Params) (*circuit.Circuit, error)

	// Reference computes the construction's outputs for each input vector
	// (bit i of inputs[k] is circuit input i) independently of the circuit.
	Reference func(ctx context.Context, p Params, inputs []bitvec.Vec) ([]bitvec.Vec, error)

	// Estimate, if set, predicts the size of the circuit Build would
	// return, cheaply and without building it, so the host can refuse a
	// point over its size limit before spending the memory.
	Estimate func(ctx context.Context, p Params) (Size, error)

	// Check, if set, validates parameters without building anything, so
	// the host can reject impossible ones (with the reason) before a run
	// starts. Build must still reject what Check rejects.
	Check func(ctx context.Context, p Params) error
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

	// Layer compiles c with the given options.
	Layer func(ctx context.Context, c *circuit.Circuit, p Params) (*layered.Circuit, error)

	// Check, if set, validates parameters without building anything, so
	// the host can reject impossible ones (with the reason) before a run
	// starts. Build must still reject what Check rejects.
	Check func(ctx context.Context, p Params) error
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

	// Map builds the model for c with the given options.
	Map func(ctx context.Context, c *layered.Circuit, p Params) (*model.Model, error)

	// Check, if set, validates parameters without building anything, so
	// the host can reject impossible ones (with the reason) before a run
	// starts. Build must still reject what Check rejects.
	Check func(ctx context.Context, p Params) error
}

// Describe implements Plugin.
func (m *Mapper) Describe() Description {
	return Description{Name: m.Name, Kind: KindMapper, Version: m.Version, Protocol: ProtocolVersion, Doc: m.Doc, Params: m.Params}
}

// Size is a logic circuit's size, as Construction.Estimate predicts it.
type Size struct {
	Nodes int64 `json:"nodes"`
	Edges int64 `json:"edges"` // operand references
}

// CheckParams validates p against plugin pl: its schema, then its own
// Check func if it has one.
func CheckParams(ctx context.Context, pl Plugin, values map[string]any) (Params, error) {
	d := pl.Describe()
	p, err := NewParams(d.Params, values)
	if err != nil {
		return Params{}, err
	}
	var check func(context.Context, Params) error
	switch v := pl.(type) {
	case *Construction:
		check = v.Check
	case *Layerer:
		check = v.Check
	case *Mapper:
		check = v.Check
	}
	if check != nil {
		if err := check(ctx, p); err != nil {
			return Params{}, err
		}
	}
	return p, nil
}
