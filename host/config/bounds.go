package config

import (
	"fmt"
	"sync/atomic"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// MaxNesting bounds how deeply a pipeline file may nest brackets,
// parentheses, braces, templates and unary operators. HCL's parser and
// evaluator recurse once per level: 200 000 nested parentheses overflowed
// the Go stack (a fatal error, not a diagnostic). Real pipeline files nest
// a few levels.
const MaxNesting = 256

// MaxElements bounds the elements one expression's evaluation may make:
// each range() result, and all the elements every for expression in it
// iterates over together (a for expression nested in another runs once per
// outer element). Nested for expressions over range(10000) made 10⁸
// values and ran the host out of memory; 10⁵ cty values take about a second.
const MaxElements = 100_000

// checkNesting refuses src, before it is parsed, if it nests deeper than
// MaxNesting, located at the token that goes past it. It lexes the file
// (a flat scan) and counts opening and closing tokens.
func checkNesting(filename string, src []byte) hcl.Diagnostics {
	toks, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	depth, unary := 0, 0
	for i, t := range toks {
		switch t.Type {
		case hclsyntax.TokenOParen, hclsyntax.TokenOBrack, hclsyntax.TokenOBrace, hclsyntax.TokenOQuote,
			hclsyntax.TokenOHeredoc, hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
			depth++
		case hclsyntax.TokenCParen, hclsyntax.TokenCBrack, hclsyntax.TokenCBrace, hclsyntax.TokenCQuote,
			hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
			depth--
		}
		// A run of unary operators (- - - x, !!!x) nests as deeply.
		if (t.Type == hclsyntax.TokenMinus || t.Type == hclsyntax.TokenBang) && i > 0 &&
			(toks[i-1].Type == hclsyntax.TokenMinus || toks[i-1].Type == hclsyntax.TokenBang) {
			unary++
		} else {
			unary = 0
		}
		if depth > MaxNesting || unary > MaxNesting {
			return hcl.Diagnostics{{
				Severity: hcl.DiagError,
				Summary:  "Nested too deeply",
				Detail:   fmt.Sprintf("This expression nests brackets, parentheses, braces, templates or unary operators more than %d levels deep; pipeline files are not read past that depth.", MaxNesting),
				Subject:  t.Range.Ptr(),
			}}
		}
	}
	return nil
}

// budgetFunc is the name under which an evaluation context carries its
// element budget (see boundFor): a name no expression can call, as it is
// not an identifier.
const budgetFunc = "tcforge element budget"

// elementBudget returns a fresh budget of MaxElements elements, as a
// function spending its argument: it fails once the elements spent exceed
// the budget. Each evaluation context gets its own (Functions), so
// concurrent evaluations do not share one.
func elementBudget() function.Function {
	var left atomic.Int64
	left.Store(MaxElements)
	return function.New(&function.Spec{
		Params: []function.Parameter{{Name: "n", Type: cty.Number}},
		Type:   function.StaticReturnType(cty.Bool),
		Impl: func(args []cty.Value, _ cty.Type) (cty.Value, error) {
			n, _ := args[0].AsBigFloat().Int64()
			if left.Add(-n) < 0 {
				return cty.False, fmt.Errorf("for expressions here iterate over more than %d elements in all", MaxElements)
			}
			return cty.True, nil
		},
	})
}

// boundFor makes every for expression in body charge the elements it
// iterates over to its evaluation context's budget (elementBudget): an
// expression whose for expressions, nested ones counted once per outer
// element, iterate over more than MaxElements fails with a located
// diagnostic instead of exhausting memory.
func boundFor(body *hclsyntax.Body) {
	hclsyntax.VisitAll(body, func(n hclsyntax.Node) hcl.Diagnostics {
		if f, ok := n.(*hclsyntax.ForExpr); ok {
			if _, done := f.CollExpr.(chargedColl); !done {
				f.CollExpr = chargedColl{f.CollExpr}
			}
		}
		return nil
	})
}

// chargedColl is a for expression's collection, charged to the budget.
type chargedColl struct{ hclsyntax.Expression }

// Value implements hclsyntax.Expression.
func (c chargedColl) Value(ctx *hcl.EvalContext) (cty.Value, hcl.Diagnostics) {
	v, diags := c.Expression.Value(ctx)
	if diags.HasErrors() || !v.IsKnown() || v.IsNull() || !v.CanIterateElements() {
		return v, diags
	}
	for e := ctx; e != nil; e = e.Parent() {
		fn, ok := e.Functions[budgetFunc]
		if !ok {
			continue
		}
		if _, err := fn.Call([]cty.Value{cty.NumberIntVal(int64(v.LengthInt()))}); err != nil {
			return cty.DynamicVal, append(diags, &hcl.Diagnostic{
				Severity:    hcl.DiagError,
				Summary:     "Too many elements",
				Detail:      err.Error() + ": pipeline files are not evaluated past that.",
				Subject:     c.Range().Ptr(),
				Expression:  c.Expression,
				EvalContext: ctx,
			})
		}
		break
	}
	return v, diags
}

// clip shortens s to at most max runes, saying how much it left out: a
// 10 MB value must not be echoed whole in a diagnostic.
func clip(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max {
			return s[:i] + fmt.Sprintf("… (%d more bytes)", len(s)-i)
		}
		n++
	}
	return s
}

// clipLeft is clip from the left: it keeps the last max runes of s (the
// source just before a diagnostic's subject).
func clipLeft(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	i := len(s)
	for n := 0; n < max; n++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return fmt.Sprintf("(%d bytes) …", i) + s[i:]
}
