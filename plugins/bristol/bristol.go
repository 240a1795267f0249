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
	"strconv"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bits"
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
			Doc: "XOR (AND) gates whose result only one XOR (AND) gate reads are merged into it, up to this many operands; 2: one node per gate"},
	},
	Build:     build,
	Reference: reference,
	Check:     check,
	Estimate:  estimate,
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

// check reads the whole file, so that a malformed one is a located
// diagnostic before anything runs.
func check(ctx context.Context, p sdk.Params) error {
	_, err := load(p)
	return err
}

// estimate counts the nodes and operands the circuit will have.
func estimate(ctx context.Context, p sdk.Params) (sdk.Size, error) {
	nl, err := load(p)
	if err != nil {
		return sdk.Size{}, err
	}
	s := nl.Stats()
	binary := int64(s.ANDs + s.Count(bf.XOR))
	return sdk.Size{
		Nodes: int64(nl.NumInputs()) + binary + int64(s.Count(bf.INV)+s.Count(bf.EQ)),
		Edges: 2*binary + int64(s.Count(bf.INV)),
	}, nil
}

// build returns the circuit: one node per INV and EQ gate, none for EQW
// (its result is its operand's node), and for XOR and AND (a MAND of k is
// k ANDs) one node per gate, except that a gate whose result is read by
// exactly one gate of the same kind, and is not an output, is merged into
// that reader, up to max_arity operands: a tree of binary XORs becomes the
// n-ary XOR the logic IR has (each backend then realises it its own way).
// Input group k is the input range "ink" and output group k the output
// range "outk"; each node is tagged with its gate's kind.
func build(ctx context.Context, p sdk.Params) (*circuit.Circuit, error) {
	nl, err := load(p)
	if err != nil {
		return nil, err
	}
	maxArity := p.Int("max_arity")
	s := nl.Stats()

	// EQW results are their operand's wire; then who reads each wire.
	src := make([]int32, nl.NumWires)
	for w := range src {
		src[w] = int32(w)
	}
	for g := range nl.Ops {
		if op, in, out := nl.Gate(g); op == bf.EQW {
			src[out[0]] = src[in[0]]
		}
	}
	const (
		unread = -1
		many   = -2
	)
	reader := make([]int8, nl.NumWires) // the op of the only gate reading the wire, or unread/many
	for w := range reader {
		reader[w] = unread
	}
	read := func(w int32, op bf.Op) {
		w = src[w]
		if op == bf.MAND {
			op = bf.AND
		}
		if reader[w] == unread {
			reader[w] = int8(op)
		} else {
			reader[w] = many
		}
	}
	for g := range nl.Ops {
		op, in, _ := nl.Gate(g)
		if op == bf.EQ || op == bf.EQW {
			continue
		}
		for _, w := range in {
			read(w, op)
		}
	}
	for w := nl.NumWires - nl.NumOutputs(); w < nl.NumWires; w++ {
		reader[src[w]] = many
	}

	b := circuit.NewBuilder()
	b.Grow(nl.NumInputs()+len(nl.Ops)+s.ANDs, 2*len(nl.Ops)+2*s.ANDs)
	node := make([]circuit.Node, nl.NumWires)
	pending := make([][]circuit.Node, nl.NumWires) // operands of a merged gate not built yet
	at := 0
	for k, n := range nl.Inputs {
		at += copy(node[at:], b.Input("in"+strconv.Itoa(k+1), n))
	}
	// binary adds x = a op b for op XOR or AND.
	binary := func(op bf.Op, a, c, x int32) {
		a, c = src[a], src[c]
		args := append(pending[a], pending[c]...)
		if pending[a] == nil {
			args = append([]circuit.Node{node[a]}, args...)
		}
		if pending[c] == nil {
			args = append(args, node[c])
		}
		pending[a], pending[c] = nil, nil
		if reader[x] == int8(op) && len(args) < maxArity {
			pending[x] = args
			return
		}
		if len(args) > maxArity {
			args = []circuit.Node{materialise(b, op, args[:len(args)/2]), materialise(b, op, args[len(args)/2:])}
		}
		node[x] = materialise(b, op, args)
	}
	// One scope a run of gates of the same kind.
	for g := 0; g < len(nl.Ops); {
		op, end := nl.Ops[g], g+1
		for end < len(nl.Ops) && nl.Ops[end] == op {
			end++
		}
		if op == bf.EQW {
			g = end
			continue
		}
		b.Scope(op.String(), func() {
			for ; g < end; g++ {
				_, in, out := nl.Gate(g)
				switch op {
				case bf.XOR, bf.AND:
					binary(op, in[0], in[1], out[0])
				case bf.INV:
					node[out[0]] = b.Not(node[src[in[0]]])
				case bf.EQ:
					node[out[0]] = b.Const(int(in[0]))
				case bf.MAND:
					k := len(out)
					for i := range k {
						binary(bf.AND, in[i], in[k+i], out[i])
					}
				}
			}
		})
	}
	at = nl.NumWires - nl.NumOutputs()
	for k, n := range nl.Outputs {
		outs := make([]circuit.Node, n)
		for i := range outs {
			outs[i] = node[src[at+i]]
		}
		b.Output("out"+strconv.Itoa(k+1), outs)
		at += n
	}
	b.SetAttr("file_gates", int64(s.Gates))
	b.SetAttr("file_wires", int64(s.Wires))
	b.SetAttr("file_and_gates", int64(s.ANDs))
	b.SetAttr("file_depth", int64(s.Depth))
	b.SetAttr("file_and_depth", int64(s.ANDDepth))
	return b.Circuit(), nil
}

func materialise(b *circuit.Builder, op bf.Op, args []circuit.Node) circuit.Node {
	if op == bf.XOR {
		return b.Xor(args...)
	}
	return b.And(args...)
}

// reference evaluates the netlist itself (sdk/bristol's evaluator), 64
// inputs at a time.
func reference(ctx context.Context, p sdk.Params, inputs []bits.Vec) ([]bits.Vec, error) {
	nl, err := load(p)
	if err != nil {
		return nil, err
	}
	return bits.EvalSliced(inputs, nl.NumInputs(), nl.Eval)
}
