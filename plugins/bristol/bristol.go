// Package bristol is the Bristol Fashion construction plugin: any Boolean
// circuit written in Bristol Fashion, the netlist format the MPC community
// publishes its circuits in (AES-128, SHA-256, SHA-512, Keccak-f, adders,
// multipliers), becomes a tcforge logic circuit that every layerer and
// mapper takes. The format and the checks are in sdk/bristol; the
// reference evaluates the netlist itself, wire by wire, without the
// circuit this plugin builds.
package bristol

import (
	"context"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	bf "github.com/tcforge/tcforge/sdk/bristol"
	"github.com/tcforge/tcforge/sdk/circuit"
)

// Plugin is the bristol construction.
var Plugin = &sdk.Construction{
	Name:    "bristol",
	Version: "0.1.0",
	Doc:     "any Boolean circuit in Bristol Fashion (the MPC netlist format): input groups become inputs in1, in2, …, output groups outputs out1, out2, …",
	Params: []sdk.Param{
		{Name: "file", Type: sdk.Path, Required: true,
			Doc: "the Bristol Fashion file (a relative path is relative to the pipeline file); gates XOR, AND, INV, EQ, EQW, MAND"},
		{Name: "max_arity", Type: sdk.Int, Default: 16, Min: sdk.Bound(2), Max: sdk.Bound(1 << 16),
			Doc: "XOR (AND) gates whose result only one XOR (AND) gate reads are merged into it, up to this many operands (2: no merging)"},
	},
	Prepare:   prepare,
	Build:     build,
	Reference: reference,
	Estimate:  estimate,
}

// config is the resolved parameters: the parsed, checked netlist.
type config struct {
	nl       *bf.Netlist
	maxArity int
}

// load parses and checks the file; a malformed file is blamed on the
// parameter, with the file's path and line in the message.
func load(p sdk.Params) (*bf.Netlist, error) {
	nl, err := bf.ParseFile(p.String("file"))
	if err != nil {
		return nil, p.Errorf("file", "%v", err)
	}
	return nl, nil
}

// prepare reads and checks the whole file, so that a missing or malformed
// one is a located diagnostic before anything runs.
func prepare(_ context.Context, pass *sdk.Pass) (any, error) {
	nl, err := load(pass.Params)
	if err != nil {
		return nil, err
	}
	return config{nl: nl, maxArity: pass.Params.Int("max_arity")}, nil
}

// estimate returns the size of the circuit build makes, by making it:
// toCircuit is one pass over the netlist Prepare has already read and
// checked, as cheap as the parse (the merging of XOR and AND chains and
// the folding of INVs into ANDs leave no simpler exact count; the
// netlist's own gate count overstates the nodes up to fourfold).
func estimate(_ context.Context, pass *sdk.Pass) (sdk.Size, error) {
	cfg := pass.Prepared.(config)
	c := toCircuit(cfg.nl, cfg.maxArity)
	return sdk.SizeOf(c), nil
}

// build returns the netlist as a logic circuit (see toCircuit).
func build(_ context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
	cfg := pass.Prepared.(config)
	return toCircuit(cfg.nl, cfg.maxArity), nil
}

// reference evaluates the netlist itself (sdk/bristol's evaluator), 64
// inputs at a time.
func reference(_ context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
	nl := pass.Prepared.(config).nl
	return bitvec.EvalSliced(inputs, nl.NumInputs(), nl.Eval)
}
