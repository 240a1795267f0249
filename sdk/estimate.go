package sdk

import (
	"fmt"
	"math"
	"math/bits"
)

// Count is a non-negative size-estimate term summed with overflow
// checking: a construction's Estimate multiplies parameters (rounds,
// blocks, leaves) that a configuration may set near 2⁶³, and a product
// that wrapped would pass the host's --max-edges check as a small or
// negative number. Once a term overflows, the Count stays overflowed.
// The zero value is 0.
type Count struct {
	v    int64
	over bool
}

// Add adds the product of factors (each at least 0; a negative one
// counts as an overflow) and returns c for chaining.
func (c *Count) Add(factors ...int64) *Count {
	p, ok := Mul(factors...)
	if !ok || c.over {
		c.over = true
		return c
	}
	s, carry := bits.Add64(uint64(c.v), uint64(p), 0)
	if carry != 0 || s > math.MaxInt64 {
		c.over = true
		return c
	}
	c.v = int64(s)
	return c
}

// Value returns the sum, and false if it overflowed int64.
func (c Count) Value() (int64, bool) { return c.v, !c.over }

// Mul returns the product of factors, and false when one is negative or
// the product exceeds math.MaxInt64.
func Mul(factors ...int64) (int64, bool) {
	p := uint64(1)
	for _, f := range factors {
		if f < 0 {
			return 0, false
		}
		if f == 0 {
			p = 0 // and 0 it stays, but a later negative factor still fails
		}
	}
	if p == 0 {
		return 0, true
	}
	for _, f := range factors {
		hi, lo := bits.Mul64(p, uint64(f))
		if hi != 0 || lo > math.MaxInt64 {
			return 0, false
		}
		p = lo
	}
	return int64(p), true
}

// CheckedSize returns the Size of the counts nodes and edges, or, when
// either overflowed, a *ParamError blaming param (the parameter that
// makes the circuit this large) that says so: the host reports it at the
// parameter, as it does a --max-edges refusal.
func CheckedSize(nodes, edges Count, param string) (Size, error) {
	n, nok := nodes.Value()
	e, eok := edges.Value()
	if !nok || !eok {
		return Size{}, &ParamError{Param: param, Msg: fmt.Sprintf("the circuit's size overflows a 64-bit count (over %d nodes or edges): far too large to build", int64(math.MaxInt64))}
	}
	return Size{Nodes: n, Edges: e}, nil
}
