package circuit

import "fmt"

// Split cuts nodes into consecutive blocks of n nodes (the last may be
// shorter): a message into the blocks a construction absorbs.
func Split(nodes []Node, n int) [][]Node {
	if n <= 0 {
		panic(fmt.Sprintf("circuit.Split: block size %d is not positive", n))
	}
	var out [][]Node
	for len(nodes) > 0 {
		k := min(n, len(nodes))
		out = append(out, nodes[:k])
		nodes = nodes[k:]
	}
	return out
}

// ConstValue reports whether x is a constant node (Const, Zeros) and its
// value, so that a construction can treat the constants it padded with
// as known without keeping its own map of them.
func (b *Builder) ConstValue(x Node) (v int, ok bool) {
	if x < 0 || int(x) >= len(b.c.Ops) || b.c.Ops[x] != OpConst {
		return 0, false
	}
	return int(b.c.Param[x]), true
}
