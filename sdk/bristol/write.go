package bristol

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

// Write writes the netlist in Bristol Fashion: the three header lines, a
// blank line, one line per gate.
func (n *Netlist) Write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	buf := make([]byte, 0, 128)
	groups := func(sizes []int) {
		buf = strconv.AppendInt(buf[:0], int64(len(sizes)), 10)
		for _, s := range sizes {
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(s), 10)
		}
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	fmt.Fprintf(bw, "%d %d\n", len(n.Ops), n.NumWires)
	groups(n.Inputs)
	groups(n.Outputs)
	bw.WriteByte('\n')
	for g := range n.Ops {
		op, in, out := n.Gate(g)
		buf = strconv.AppendInt(buf[:0], int64(len(in)), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(len(out)), 10)
		for _, x := range n.Wire[n.Start[g]:n.Start[g+1]] {
			buf = append(buf, ' ')
			buf = strconv.AppendInt(buf, int64(x), 10)
		}
		buf = append(buf, ' ')
		buf = append(buf, op.String()...)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing Bristol Fashion netlist: %w", err)
	}
	return nil
}
