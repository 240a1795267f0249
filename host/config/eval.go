package config

import (
	"fmt"
	"math/big"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/sdk"
)

// EvalContext returns the evaluation context of expressions at pt: the
// variable matrix (every matrix variable of the pipeline, null where pt does
// not set it), Functions, and, if construction is non-nil, the variable
// construction.
func (pt Point) EvalContext(construction map[string]cty.Value) *hcl.EvalContext {
	vars := map[string]cty.Value{"matrix": pt.matrixObject()}
	if construction != nil {
		vars["construction"] = objectVal(construction)
	}
	return &hcl.EvalContext{Variables: vars, Functions: Functions()}
}

func objectVal(m map[string]cty.Value) cty.Value {
	attrs := make(map[string]cty.Value, len(m))
	for k, v := range m {
		if v == cty.NilVal {
			v = cty.NullVal(cty.DynamicPseudoType)
		}
		attrs[k] = v
	}
	return cty.ObjectVal(attrs)
}

// Decode evaluates the block's attributes at pt and checks them against the
// plugin's parameter schema. Attributes not in the schema, values of the
// wrong type (Int parameters take whole numbers only), values rejected by
// sdk.Param.Check and missing required parameters are reported as
// diagnostics located in the block. Attributes set to null are treated as
// unset. A relative Path is resolved against the directory of the file the
// attribute is written in. The result holds the set values as int64 (Int), float64 (Number),
// string or bool, ready for sdk.NewParams.
func (b *Block) Decode(pt Point, schema []sdk.Param) (map[string]any, hcl.Diagnostics) {
	ctx := pt.EvalContext(nil)
	out := map[string]any{}
	var diags hcl.Diagnostics
	for _, a := range sortedAttrs(b.Attrs) {
		p, ok := findParam(schema, a.Name)
		if !ok {
			diags = append(diags, b.unknownParam(a, schema))
			continue
		}
		v, d := a.Expr.Value(ctx)
		diags = append(diags, atPoint(d, pt)...)
		if d.HasErrors() {
			continue
		}
		if v.IsNull() {
			if p.Required {
				diags = append(diags, &hcl.Diagnostic{
					Severity:    hcl.DiagError,
					Summary:     fmt.Sprintf("Missing required parameter %q", a.Name),
					Detail:      fmt.Sprintf("Parameter %q of %s %q is required, but its value is null%s.", a.Name, b.Kind, b.Name, pt.at()),
					Subject:     a.Expr.Range().Ptr(),
					Expression:  a.Expr,
					EvalContext: ctx,
				})
			}
			continue
		}
		gv, reason := goValue(v, p)
		if path, ok := gv.(string); ok && p.Type == sdk.Path && path != "" && !filepath.IsAbs(path) {
			gv = filepath.Join(filepath.Dir(a.Expr.Range().Filename), path)
		}
		if reason == "" {
			if err := p.Check(gv); err != nil {
				reason = err.Error()
			}
		}
		if reason != "" {
			diags = append(diags, &hcl.Diagnostic{
				Severity:    hcl.DiagError,
				Summary:     fmt.Sprintf("Invalid value for parameter %q", a.Name),
				Detail:      fmt.Sprintf("Parameter %q of %s %q %s%s.", a.Name, b.Kind, b.Name, reason, pt.at()),
				Subject:     a.Expr.Range().Ptr(),
				Expression:  a.Expr,
				EvalContext: ctx,
			})
			continue
		}
		out[a.Name] = gv
	}
	for _, p := range schema {
		if _, set := out[p.Name]; p.Required && !set {
			if _, written := b.Attrs[p.Name]; written {
				continue // reported above
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Missing required parameter %q", p.Name),
				Detail:   fmt.Sprintf("The %s %q requires %q (%s).", b.Kind, b.Name, p.Name, paramHelp(p)),
				Subject:  b.DefRange.Ptr(),
			})
		}
	}
	return out, diags
}

// ParamDiag turns an *sdk.ParamError returned by the block's plugin at pt
// into a diagnostic located at the attribute it blames, or at the block's
// header if the block does not set that parameter.
func (b *Block) ParamDiag(pt Point, pe *sdk.ParamError) *hcl.Diagnostic {
	d := &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Invalid value for parameter %q", pe.Param),
	}
	if a, ok := b.Attrs[pe.Param]; ok {
		d.Detail = fmt.Sprintf("The %s %q rejected parameter %q: %s%s.", b.Kind, b.Name, pe.Param, pe.Msg, pt.at())
		d.Subject = a.Expr.Range().Ptr()
		d.Expression = a.Expr
		d.EvalContext = pt.EvalContext(nil)
	} else {
		d.Detail = fmt.Sprintf("The %s %q rejected parameter %q: %s%s. The parameter is not set in this block, so its default or derived value was used.", b.Kind, b.Name, pe.Param, pe.Msg, pt.at())
		d.Subject = b.DefRange.Ptr()
	}
	return d
}

func (b *Block) unknownParam(a *hcl.Attribute, schema []sdk.Param) *hcl.Diagnostic {
	names := make([]string, len(schema))
	for i, p := range schema {
		names[i] = p.Name
	}
	detail := fmt.Sprintf("The %s %q has no parameter %q.", b.Kind, b.Name, a.Name)
	if s := suggest(a.Name, names); s != "" {
		detail += fmt.Sprintf(" Did you mean %q?", s)
	}
	if len(names) == 0 {
		detail += " It takes no parameters."
	} else {
		detail += " Valid parameters: " + strings.Join(names, ", ") + "."
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Unsupported parameter %q", a.Name),
		Detail:   detail,
		Subject:  a.NameRange.Ptr(),
	}
}

func findParam(schema []sdk.Param, name string) (sdk.Param, bool) {
	for _, p := range schema {
		if p.Name == name {
			return p, true
		}
	}
	return sdk.Param{}, false
}

// goValue converts a known, non-null value for parameter p. Numbers become
// int64 for Int parameters when whole (float64 otherwise, which Check
// rejects with its reason) and float64 for Number parameters. The reason is
// non-empty if v has no Go counterpart.
func goValue(v cty.Value, p sdk.Param) (any, string) {
	switch v.Type() {
	case cty.Number:
		bf := v.AsBigFloat()
		if p.Type == sdk.Int && bf.IsInt() {
			n, acc := bf.Int64()
			if acc != big.Exact {
				return nil, fmt.Sprintf("must be a whole number in the 64-bit range, got %s", formatNumber(bf))
			}
			return n, ""
		}
		f, _ := bf.Float64()
		return f, ""
	case cty.String:
		return v.AsString(), ""
	case cty.Bool:
		return v.True(), ""
	}
	return nil, fmt.Sprintf("must be %s, got %s", typeWord(p.Type), describeValue(v))
}

func typeWord(t sdk.Type) string {
	switch t {
	case sdk.Int:
		return "a whole number"
	case sdk.Number:
		return "a number"
	case sdk.String:
		return "a string"
	case sdk.Bool:
		return "true or false"
	case sdk.Path:
		return "a file path (relative to the pipeline file)"
	}
	return string(t)
}

func paramHelp(p sdk.Param) string {
	s := typeWord(p.Type)
	if p.Doc != "" {
		s += ": " + p.Doc
	}
	return s
}

// atPoint adds the point to the details of evaluation diagnostics, since the
// same expression is evaluated at every point.
func atPoint(diags hcl.Diagnostics, pt Point) hcl.Diagnostics {
	at := pt.String()
	if at == "" {
		return diags
	}
	for _, d := range diags {
		if d.Detail != "" && !strings.HasSuffix(d.Detail, "\n") {
			d.Detail += " "
		}
		d.Detail += "(Evaluated at matrix point " + at + ".)"
	}
	return diags
}

// Eval evaluates the expectations at pt with matrix.* and construction.* in
// scope. construction maps the construction's parameter names (with
// defaults) and the built circuit's integer attributes to their values.
// Each expectation must evaluate to a whole number; the result maps the
// expectation names to their values.
func (e *Expect) Eval(pt Point, construction map[string]cty.Value) (map[string]int64, hcl.Diagnostics) {
	if construction == nil {
		construction = map[string]cty.Value{}
	}
	ctx := pt.EvalContext(construction)
	out := make(map[string]int64, len(e.Names))
	var diags hcl.Diagnostics
	for _, name := range e.Names {
		a := e.Attrs[name]
		v, d := a.Expr.Value(ctx)
		diags = append(diags, atPoint(d, pt)...)
		if d.HasErrors() {
			continue
		}
		n, ok := wholeInt(v)
		if !ok {
			diags = append(diags, &hcl.Diagnostic{
				Severity:    hcl.DiagError,
				Summary:     fmt.Sprintf("Expectation %q is not a whole number", name),
				Detail:      fmt.Sprintf("The expected %s for layerer %q evaluated to %s%s; expectations are compared with whole-number figures of the layered circuit.", name, e.Layerer, describeValue(v), pt.at()),
				Subject:     a.Expr.Range().Ptr(),
				Expression:  a.Expr,
				EvalContext: ctx,
			})
			continue
		}
		out[name] = n
	}
	return out, diags
}
