package bristol

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Error is a malformed netlist: the file, the line (1-based) and what is
// wrong there. It prints as "file:line: message".
type Error struct {
	File string
	Line int
	Msg  string
}

// Error implements error.
func (e *Error) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// maxWires bounds the header's wire count; freeWires bounds how many wires
// are not set by a gate line (the input bits and any wire left unset).
// Every other wire costs a gate line in the file, so together they keep a
// short, hostile header from making the parser (or Eval) allocate
// gigabytes: "0 1073741824\n1 1073741000\n1 1" is refused on its input
// line instead of allocating 4 GiB.
const (
	maxWires  = 1 << 30
	freeWires = 1 << 22
)

// ParseFile reads and checks the Bristol Fashion netlist at path; errors
// are *Error located in it (or the error opening it).
func ParseFile(path string) (*Netlist, error) {
	// Not a FIFO, a device or a directory: opening a FIFO waits for a
	// writer (the check before a run hung until --timeout), /dev/zero never
	// ends.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
		what := "not a regular file"
		switch {
		case fi.Mode()&os.ModeNamedPipe != 0:
			what = "a named pipe (FIFO), not a regular file"
		case fi.IsDir():
			what = "a directory, not a file"
		case fi.Mode()&os.ModeDevice != 0:
			what = "a device, not a regular file"
		}
		return nil, fmt.Errorf("reading Bristol Fashion netlist: %s is %s", path, what)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading Bristol Fashion netlist: %w", err)
	}
	defer f.Close()
	return Parse(f, path)
}

// Parse reads a Bristol Fashion netlist from r (name is the file name used
// in errors) and checks it completely: the header, every gate's arity,
// operation and wires (in range, set before use, set once, never an input
// wire), no cycle, every output wire set, no content after the declared
// gates. The first problem is returned as an *Error with its line.
func Parse(r io.Reader, name string) (*Netlist, error) {
	p := &parser{name: name, sc: bufio.NewScanner(r)}
	p.sc.Buffer(make([]byte, 64<<10), 16<<20)
	nl, err := p.parse()
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			err = fmt.Errorf("reading %s: %w", name, err)
		}
		return nil, err
	}
	return nl, nil
}

type parser struct {
	name string
	sc   *bufio.Scanner
	line int
	// headerLine is the line of "#gates #wires".
	headerLine int
	fields     []string
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return &Error{File: p.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// next returns the fields of the next non-blank line, or nil at the end.
// The slice is reused by the next call.
func (p *parser) next() ([]string, error) {
	for p.sc.Scan() {
		p.line++
		p.fields = fields(p.fields[:0], p.sc.Bytes())
		if len(p.fields) > 0 {
			return p.fields, nil
		}
	}
	if err := p.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, p.errorf(p.line+1, "line too long")
		}
		return nil, err
	}
	return nil, nil
}

// fields appends the fields of line, separated by ASCII white space, to
// dst: one string allocation for the whole line.
func fields(dst []string, line []byte) []string {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }
	start := -1
	for i, c := range line {
		if isSpace(c) {
			continue
		}
		start = i
		break
	}
	if start < 0 {
		return dst
	}
	s := string(line[start:])
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		dst = append(dst, s[i:j])
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		i = j
	}
	return dst
}

// count parses a non-negative decimal count.
func count(s string) (int, bool) {
	n, err := strconv.ParseUint(s, 10, 31)
	return int(n), err == nil
}

// groups reads one header line of the groups: n, then n group sizes.
func (p *parser) groups(what, example string) ([]int, int, error) {
	f, err := p.next()
	if err != nil {
		return nil, 0, err
	}
	if f == nil {
		return nil, 0, p.errorf(p.line+1, "file ends in the header: want the %s line %q", what, example)
	}
	n, ok := count(f[0])
	if !ok {
		return nil, 0, p.errorf(p.line, "bad %s line: %q is not a count of groups (want %q)", what, f[0], example)
	}
	if n == 0 && what == "output" {
		return nil, 0, p.errorf(p.line, "the circuit has no output groups")
	}
	if len(f) != n+1 {
		return nil, 0, p.errorf(p.line, "bad %s line: %d %s groups need %d sizes after the count, got %d", what, n, what, n, len(f)-1)
	}
	sizes := make([]int, n)
	total := 0
	for i := range sizes {
		s, ok := count(f[i+1])
		if !ok || s == 0 {
			return nil, 0, p.errorf(p.line, "bad %s line: %s group %d has size %q; want a positive number of bits", what, what, i+1, f[i+1])
		}
		sizes[i] = s
		total += s
		if total > maxWires {
			return nil, 0, p.errorf(p.line, "bad %s line: more than %d bits", what, maxWires)
		}
	}
	return sizes, p.line, nil
}

func (p *parser) parse() (*Netlist, error) {
	f, err := p.next()
	if err != nil {
		return nil, err
	}
	if f == nil {
		return nil, p.errorf(1, "empty file: want the header line \"#gates #wires\"")
	}
	if len(f) != 2 {
		return nil, p.errorf(p.line, "bad header: want \"#gates #wires\", got %d fields", len(f))
	}
	nGates, ok1 := count(f[0])
	nWires, ok2 := count(f[1])
	if !ok1 || !ok2 || nWires == 0 || nWires > maxWires {
		return nil, p.errorf(p.line, "bad header: want \"#gates #wires\" (whole numbers, 1 ≤ #wires ≤ %d), got %q", maxWires, strings.Join(f, " "))
	}
	headerLine := p.line
	p.headerLine = headerLine
	nl := &Netlist{NumWires: nWires, Start: []int32{0}}
	var inLine int
	if nl.Inputs, inLine, err = p.groups("input", "niv bits_1 … bits_niv"); err != nil {
		return nil, err
	}
	var outLine int
	if nl.Outputs, outLine, err = p.groups("output", "nov bits_1 … bits_nov"); err != nil {
		return nil, err
	}
	nIn, nOut := nl.NumInputs(), nl.NumOutputs()
	if nIn > freeWires {
		return nil, p.errorf(inLine, "bad input line: %d input bits; at most %d are supported", nIn, freeWires)
	}
	if nIn+nOut > nWires {
		return nil, p.errorf(outLine, "the header's %d input and %d output bits need at least %d wires, but line %d declares %d", nIn, nOut, nIn+nOut, headerLine, nWires)
	}

	// Syntax of each gate line; wires in range.
	lines := make([]int32, 0, min(nGates, 1<<20))
	for len(nl.Ops) < nGates {
		f, err := p.next()
		if err != nil {
			return nil, err
		}
		if f == nil {
			return nil, p.errorf(p.line+1, "file ends after %d gates; line %d declares %d", len(nl.Ops), headerLine, nGates)
		}
		if err := p.gate(nl, f); err != nil {
			return nil, err
		}
		lines = append(lines, int32(p.line))
	}
	if f, err := p.next(); err != nil {
		return nil, err
	} else if f != nil {
		return nil, p.errorf(p.line, "trailing content %q after the %d gates line %d declares", strings.Join(f, " "), nGates, headerLine)
	}
	if set := results(nl); nWires > set+freeWires {
		return nil, p.errorf(headerLine, "line %d declares %d wires, but the gates set only %d (at most %d wires may be inputs or left unset)", headerLine, nWires, set, freeWires)
	}
	return nl, p.check(nl, lines, outLine)
}

// results returns the number of wires the gates set.
func results(nl *Netlist) int {
	n := 0
	for g := range nl.Ops {
		_, _, out := nl.Gate(g)
		n += len(out)
	}
	return n
}

// gate parses one gate line's fields into nl.
func (p *parser) gate(nl *Netlist, f []string) error {
	if len(f) < 3 {
		return p.errorf(p.line, "bad gate %q: want \"nin nout inputs… outputs… OP\"", strings.Join(f, " "))
	}
	name := f[len(f)-1]
	op, ok := opOf(name)
	if !ok {
		return p.errorf(p.line, "unknown gate %q (Bristol Fashion gates: XOR, AND, INV, EQ, EQW, MAND)", name)
	}
	nin, ok1 := count(f[0])
	nout, ok2 := count(f[1])
	if !ok1 || !ok2 {
		return p.errorf(p.line, "bad %s gate: %q %q are not the counts nin nout", name, f[0], f[1])
	}
	switch op {
	case XOR, AND:
		ok = nin == 2 && nout == 1
	case INV, EQ, EQW:
		ok = nin == 1 && nout == 1
	case MAND:
		ok = nout >= 1 && nin == 2*nout
	}
	if !ok {
		want := map[Op]string{XOR: "2 1", AND: "2 1", INV: "1 1", EQ: "1 1", EQW: "1 1", MAND: "2k k (k ≥ 1)"}[op]
		return p.errorf(p.line, "wrong arity for %s: %d inputs and %d outputs, want %s", name, nin, nout, want)
	}
	if len(f) != 3+nin+nout {
		return p.errorf(p.line, "%s gate with %d inputs and %d outputs needs %d wires, got %d", name, nin, nout, nin+nout, len(f)-3)
	}
	for k, s := range f[2 : 2+nin+nout] {
		w, ok := count(s)
		if op == EQ && k == 0 {
			if !ok || w > 1 {
				return p.errorf(p.line, "EQ's operand is the constant 0 or 1, got %q", s)
			}
		} else if !ok || w >= nl.NumWires {
			return p.errorf(p.line, "wire %q out of range: line %d declares %d wires (0…%d)", s, p.headerLine, nl.NumWires, nl.NumWires-1)
		}
		nl.Wire = append(nl.Wire, int32(w))
	}
	nl.Ops = append(nl.Ops, op)
	nl.Start = append(nl.Start, int32(len(nl.Wire)))
	return nil
}

// check checks the wiring: each wire set once and never an input, every
// operand set by an earlier gate (a later setter is a cycle or a
// misordering, told apart), every output wire set.
func (p *parser) check(nl *Netlist, lines []int32, outLine int) error {
	const input = -1
	nIn := nl.NumInputs()
	setter := make([]int32, nl.NumWires) // gate+1 that sets the wire; input; 0: unset
	for w := range nIn {
		setter[w] = input
	}
	for g := range nl.Ops {
		_, _, out := nl.Gate(g)
		for _, w := range out {
			switch s := setter[w]; {
			case s == input:
				return p.errorf(int(lines[g]), "gate sets wire %d, an input wire (input bits are wires 0…%d)", w, nIn-1)
			case s > 0:
				return p.errorf(int(lines[g]), "wire %d is set twice (first on line %d)", w, lines[s-1])
			}
			setter[w] = int32(g + 1)
		}
	}
	for g := range nl.Ops {
		op, in, _ := nl.Gate(g)
		if op == EQ {
			continue
		}
		for _, w := range in {
			s := setter[w]
			switch {
			case s == 0:
				return p.errorf(int(lines[g]), "wire %d is used but never set", w)
			case s != input && int(s-1) >= g:
				if path := cycle(nl, setter, g, int(s-1)); path != nil {
					return p.errorf(int(lines[g]), "cycle: this gate reads wire %d, which is computed from this gate's result (wires %s → %d)", w, formatPath(path), w)
				}
				return p.errorf(int(lines[g]), "wire %d is used before it is set (on line %d); gates must be listed in evaluation order", w, lines[s-1])
			}
		}
	}
	for w := nl.NumWires - nl.NumOutputs(); w < nl.NumWires; w++ {
		if setter[w] == 0 {
			return p.errorf(outLine, "output wire %d is never set (the outputs are the last %d wires)", w, nl.NumOutputs())
		}
	}
	return nil
}

// cycle returns the wires of a path by which gate h depends on a result of
// gate g (h's operands back to g's result), or nil if it does not.
func cycle(nl *Netlist, setter []int32, g, h int) []int32 {
	seen := map[int]bool{}
	var path []int32
	var dfs func(x int) bool
	dfs = func(x int) bool {
		if seen[x] {
			return false
		}
		seen[x] = true
		op, in, _ := nl.Gate(x)
		if op == EQ {
			return false
		}
		for _, w := range in {
			s := int(setter[w]) - 1
			if s < 0 {
				continue
			}
			path = append(path, w)
			if s == g || dfs(s) {
				return true
			}
			path = path[:len(path)-1]
		}
		return false
	}
	if dfs(h) {
		return path
	}
	return nil
}

func formatPath(path []int32) string {
	s := make([]string, len(path))
	for i, w := range path {
		s[len(path)-1-i] = strconv.Itoa(int(w))
	}
	return strings.Join(s, " → ")
}
