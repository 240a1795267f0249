package config

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// TestBoundedEvaluation: pipeline files that would crash the host (a stack
// overflow in the parser) or exhaust its memory (for expressions over 10⁸
// elements) get one located diagnostic instead, quickly; long values are
// clipped in what is printed.
func TestBoundedEvaluation(t *testing.T) {
	wrap := func(attr string) string {
		return "pipeline \"p\" {\n  matrix {\n    r = [1]\n  }\n  construction \"keccak\" {\n    rounds = " + attr + "\n  }\n  layerer \"reifier\" {}\n}\n"
	}
	matrix := func(expr string) string {
		return "pipeline \"p\" {\n  matrix {\n    r = " + expr + "\n  }\n  construction \"keccak\" {}\n  layerer \"reifier\" {}\n}\n"
	}
	deep := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	tests := []struct {
		name, src string
		summary   string // "" when accepted
		at        string // file:line:column of the diagnostic
	}{
		{"200k parentheses", wrap(deep("(", ")", 200_000)), "Nested too deeply", "b.hcl:6:268"},
		{"200k brackets", wrap(deep("[", "]", 200_000)), "Nested too deeply", "b.hcl:6:268"},
		{"nested templates", wrap(deep(`"${`, `}"`, 1000)), "Nested too deeply", "b.hcl:6:"},
		{"200k unary minus", wrap(strings.Repeat("- ", 200_000) + "1"), "Nested too deeply", "b.hcl:6:"},
		{"parentheses at the limit", wrap(deep("(", ")", MaxNesting-3)), "", ""},
		{"for over 10⁸ elements", matrix("[for a in range(1000) : [for b in range(1000) : [for c in range(100) : a*b*c]]]"), "Too many elements", "b.hcl:3:"},
		{"for within the budget", matrix("flatten([for a in range(300) : [for b in range(300) : a*b]])"), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, hf, diags := parse("b.hcl", []byte(tt.src))
			if tt.summary == "" {
				if diags.HasErrors() {
					t.Fatalf("refused: %v", diags)
				}
				return
			}
			if len(diags) == 0 || diags[0].Summary != tt.summary {
				t.Fatalf("diagnostics %v, want %q", diags, tt.summary)
			}
			var buf bytes.Buffer
			if err := WriteDiagnostics(&buf, map[string]*hcl.File{"b.hcl": hf}, diags[:1], false); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), "on "+tt.at) {
				t.Errorf("not located at %s:\n%s", tt.at, buf.String())
			}
			if buf.Len() > 4000 {
				t.Errorf("%d bytes of diagnostic", buf.Len())
			}
		})
	}
}

// TestClippedDiagnostics: a 10 MB value is not echoed whole (it was
// three times: 30 MB on stderr).
func TestClippedDiagnostics(t *testing.T) {
	long := strings.Repeat("x", 10<<20)
	src := "pipeline \"p\" {\n  construction \"keccak\" {\n    padding = \"" + long + "\"\n  }\n  layerer \"reifier\" {}\n}\n"
	_, hf, diags := parse("c.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	a := hf.Body.(*hclsyntax.Body).Blocks[0].Body.Blocks[0].Body.Attributes["padding"]
	d := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Invalid value", Detail: "got " + long, Subject: a.Expr.Range().Ptr()}
	var buf bytes.Buffer
	if err := WriteDiagnostics(&buf, map[string]*hcl.File{"c.hcl": hf}, hcl.Diagnostics{d}, false); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > 4000 || !strings.Contains(buf.String(), "more bytes)") {
		t.Errorf("%d bytes:\n%.600s", buf.Len(), buf.String())
	}
}
