package config

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
)

// matrixBlock is one evaluated matrix block: its variables in source order,
// each with its list of values.
type matrixBlock struct {
	names  []string
	values [][]cty.Value
	rng    hcl.Range // the block's header
}

// parseMatrix evaluates a matrix block. Each attribute is a list, tuple or
// set of numbers, strings or bools, or a single such value; expressions may
// use functions but no variables.
func parseMatrix(b *hclsyntax.Block) (matrixBlock, hcl.Diagnostics) {
	m := matrixBlock{rng: b.DefRange()}
	var diags hcl.Diagnostics
	if len(b.Labels) > 0 {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Unexpected label for matrix block",
			Detail:   "A matrix block has no label: matrix { name = [values...] }.",
			Subject:  b.LabelRanges[0].Ptr(),
		})
	}
	attrs, d := b.Body.JustAttributes()
	diags = append(diags, d...)
	ctx := &hcl.EvalContext{Functions: Functions()}
	for _, a := range sortedAttrs(attrs) {
		v, d := a.Expr.Value(ctx)
		diags = append(diags, d...)
		if d.HasErrors() {
			continue
		}
		vals, err := matrixValues(v)
		if err != "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Invalid matrix variable %q", a.Name),
				Detail:   err,
				Subject:  a.Expr.Range().Ptr(),
			})
			continue
		}
		m.names = append(m.names, a.Name)
		m.values = append(m.values, vals)
	}
	return m, diags
}

func matrixValues(v cty.Value) ([]cty.Value, string) {
	const what = "A matrix variable is a list of numbers, strings or bools, or a single such value"
	if v.IsNull() {
		return nil, what + "; got null."
	}
	ty := v.Type()
	var vals []cty.Value
	if ty.IsListType() || ty.IsTupleType() || ty.IsSetType() {
		for it := v.ElementIterator(); it.Next(); {
			_, e := it.Element()
			vals = append(vals, e)
		}
		if len(vals) == 0 {
			return nil, what + "; got an empty list, which would give no points."
		}
	} else {
		vals = []cty.Value{v}
	}
	for _, e := range vals {
		if e.IsNull() {
			return nil, what + "; got a null element."
		}
		if !e.Type().IsPrimitiveType() {
			return nil, fmt.Sprintf("%s; got an element of type %s.", what, e.Type().FriendlyName())
		}
	}
	return vals, ""
}

// Vars returns the matrix variables of the pipeline: the union of the
// variables of its matrix blocks, in order of first appearance.
func (p *Pipeline) Vars() []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range p.matrix {
		for _, n := range m.names {
			if !seen[n] {
				seen[n] = true
				out = append(out, n)
			}
		}
	}
	return out
}

// NumPoints returns the number of points of the pipeline's matrix, as
// Points would return them, without making them; it saturates at
// math.MaxInt64.
func (p *Pipeline) NumPoints() int64 {
	n, _ := p.numPoints()
	return n
}

// numPoints returns NumPoints and the header of the matrix block with the
// most points (the pipeline's header if it has no matrix).
func (p *Pipeline) numPoints() (int64, hcl.Range) {
	if len(p.matrix) == 0 {
		return 1, p.DefRange
	}
	var total, most int64
	at := p.matrix[0].rng
	for _, m := range p.matrix {
		n := int64(1)
		for _, vs := range m.values {
			if n > math.MaxInt64/int64(len(vs)) {
				n = math.MaxInt64
				break
			}
			n *= int64(len(vs))
		}
		if n > most {
			most, at = n, m.rng
		}
		if total > math.MaxInt64-n {
			total = math.MaxInt64
		} else {
			total += n
		}
	}
	return total, at
}

// CheckPointLimit refuses a run of pipelines with more than limit matrix
// points in all (limit <= 0: no limit), before any point is made: the
// diagnostic is located at the matrix block with the most points of the
// largest pipeline and gives each pipeline's count.
func CheckPointLimit(pipelines []*Pipeline, limit int64) hcl.Diagnostics {
	if limit <= 0 || len(pipelines) == 0 {
		return nil
	}
	var total, most int64
	var largest *Pipeline
	var at hcl.Range
	counts := make([]string, 0, len(pipelines))
	for _, p := range pipelines {
		n, rng := p.numPoints()
		if n > most || largest == nil {
			most, largest, at = n, p, rng
		}
		if total > math.MaxInt64-n {
			total = math.MaxInt64
		} else {
			total += n
		}
		counts = append(counts, fmt.Sprintf("%q %d", p.Name, n))
	}
	if total <= limit {
		return nil
	}
	if len(counts) > 5 {
		counts = append(counts[:5], fmt.Sprintf("%d more", len(counts)-5))
	}
	return hcl.Diagnostics{{
		Severity: hcl.DiagError,
		Summary:  "Too many points",
		Detail: fmt.Sprintf("The run has %d matrix points (pipelines: %s), over the limit of %d points per run (--max-points); pipeline %q alone has %d. Split the sweep, or raise the limit to run it anyway.",
			total, strings.Join(counts, ", "), limit, largest.Name, most),
		Subject: at.Ptr(),
	}}
}

// Points returns the points of the pipeline's matrix: for each matrix block
// in file order, the cross product of its variables with the first variable
// varying slowest. A pipeline without matrix blocks has a single point
// without variables.
func (p *Pipeline) Points() []Point {
	vars := p.Vars()
	if len(p.matrix) == 0 {
		return []Point{{Index: 0, Values: map[string]cty.Value{}, vars: vars}}
	}
	var out []Point
	for _, m := range p.matrix {
		n := 1
		for _, vs := range m.values {
			n *= len(vs)
		}
		for k := 0; k < n; k++ {
			vals := make(map[string]cty.Value, len(m.names))
			rest := k
			for i := len(m.names) - 1; i >= 0; i-- {
				vs := m.values[i]
				vals[m.names[i]] = vs[rest%len(vs)]
				rest /= len(vs)
			}
			pt := Point{Index: len(out), Values: vals, vars: vars}
			for _, v := range vars {
				if _, ok := vals[v]; ok {
					pt.Names = append(pt.Names, v)
				}
			}
			out = append(out, pt)
		}
	}
	return out
}

// Point is one point of a pipeline's matrix.
type Point struct {
	// Index is the position of the point in Pipeline.Points.
	Index int
	// Names are the variables set at this point, in Pipeline.Vars order.
	// Variables of other matrix blocks are absent (and null in expressions).
	Names []string
	// Values maps each name in Names to its value: a number, string or bool.
	Values map[string]cty.Value

	vars []string // all of the pipeline's variables
}

// String formats the point as "log_w=1 blocks=2" ("" for a point without
// variables). Strings are quoted only when they contain spaces or symbols.
func (pt Point) String() string {
	var sb strings.Builder
	for i, n := range pt.names() {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(n)
		sb.WriteByte('=')
		sb.WriteString(formatValue(pt.Values[n]))
	}
	return sb.String()
}

// names returns Names, or the sorted keys of Values for a Point built by hand.
func (pt Point) names() []string {
	if len(pt.Names) == len(pt.Values) {
		return pt.Names
	}
	out := make([]string, 0, len(pt.Values))
	for n := range pt.Values {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// Int returns variable name as an int64 if it is set at this point and is a
// whole number.
func (pt Point) Int(name string) (int64, bool) {
	v, ok := pt.Values[name]
	if !ok {
		return 0, false
	}
	return wholeInt(v)
}

// at formats the point for diagnostic details: " at matrix point x=1", or
// "" without variables.
func (pt Point) at() string {
	if s := pt.String(); s != "" {
		return " at matrix point " + s
	}
	return ""
}

// matrixObject is the value of `matrix` in expressions: every variable of
// the pipeline, null where the point does not set it.
func (pt Point) matrixObject() cty.Value {
	attrs := make(map[string]cty.Value, len(pt.vars)+len(pt.Values))
	for _, n := range pt.vars {
		attrs[n] = cty.NullVal(cty.DynamicPseudoType)
	}
	for n, v := range pt.Values {
		attrs[n] = v
	}
	return cty.ObjectVal(attrs)
}

// formatValue formats a matrix value compactly.
func formatValue(v cty.Value) string {
	if v == cty.NilVal || v.IsNull() {
		return "null"
	}
	if !v.IsKnown() {
		return "(unknown)"
	}
	switch v.Type() {
	case cty.Number:
		return formatNumber(v.AsBigFloat())
	case cty.String:
		s := v.AsString()
		if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.+/:", r))
		}) {
			return s
		}
		return strconv.Quote(s)
	case cty.Bool:
		return strconv.FormatBool(v.True())
	}
	return v.Type().FriendlyName()
}

func formatNumber(bf *big.Float) string {
	if bf.IsInt() {
		return bf.Text('f', 0)
	}
	return bf.Text('g', -1)
}

// describeValue describes a value for a diagnostic: "number 2.5",
// "string \"x\"", "null", "list of number".
func describeValue(v cty.Value) string {
	switch {
	case v == cty.NilVal:
		return "nothing"
	case !v.IsKnown():
		return "an unknown value"
	case v.IsNull():
		return "null"
	}
	switch v.Type() {
	case cty.Number:
		return "number " + formatNumber(v.AsBigFloat())
	case cty.String:
		return "string " + strconv.Quote(v.AsString())
	case cty.Bool:
		return "bool " + strconv.FormatBool(v.True())
	}
	switch ty := v.Type(); {
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		return "a list"
	case ty.IsObjectType() || ty.IsMapType():
		return "an object"
	default:
		return ty.FriendlyName()
	}
}
