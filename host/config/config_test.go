package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/sdk"
)

// Test schemas standing in for the plugins' parameter declarations.
func keccakSchema() []sdk.Param {
	return []sdk.Param{
		{Name: "log_w", Type: sdk.Int, Default: int64(6), Min: sdk.Bound(0), Max: sdk.Bound(6)},
		{Name: "rate", Type: sdk.Int, Min: sdk.Bound(1)},
		{Name: "rounds", Type: sdk.Int, Min: sdk.Bound(1), Max: sdk.Bound(24)},
		{Name: "blocks", Type: sdk.Int, Min: sdk.Bound(1)},
		{Name: "padding", Type: sdk.String, Default: "sha3", Enum: []string{"none", "pad10*1", "sha3"}},
		{Name: "first_block", Type: sdk.String},
		{Name: "preset", Type: sdk.String},
		{Name: "message_bits", Type: sdk.Int, Min: sdk.Bound(0)},
		{Name: "output_bits", Type: sdk.Int, Min: sdk.Bound(1)},
	}
}

func reifierSchema() []sdk.Param { return []sdk.Param{{Name: "fuse", Type: sdk.Bool}} }

func fusionSchema() []sdk.Param {
	return []sdk.Param{
		{Name: "threshold", Type: sdk.Number, Required: true},
		{Name: "fuse", Type: sdk.Bool},
	}
}

func schemaFor(b *Block) []sdk.Param {
	switch b.Name {
	case "keccak":
		return keccakSchema()
	case "reifier":
		return reifierSchema()
	case "fusion":
		return fusionSchema()
	}
	return nil
}

func parseFixture(t *testing.T, name string) (*File, hcl.Diagnostics) {
	t.Helper()
	path := filepath.Join("testdata", name)
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return Parse(path, src)
}

func mustParse(t *testing.T, name string) *File {
	t.Helper()
	f, diags := parseFixture(t, name)
	if len(diags) > 0 {
		t.Fatalf("parse %s: %s", name, diags.Error())
	}
	return f
}

func pipeline(t *testing.T, f *File, name string) *Pipeline {
	t.Helper()
	for _, p := range f.Pipelines {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no pipeline %q in %s", name, f.Filename)
	return nil
}

func pointStrings(pts []Point) []string {
	out := make([]string, len(pts))
	for i, pt := range pts {
		out[i] = pt.String()
	}
	return out
}

func TestPoints(t *testing.T) {
	f := mustParse(t, "valid.hcl")
	tests := []struct {
		pipeline string
		samples  int
		jobs     int
		vars     []string
		points   []string
	}{
		{
			pipeline: "keccak-arbitrary-input",
			samples:  16,
			vars:     []string{"log_w", "blocks", "rounds"},
			points: []string{
				"log_w=1 blocks=1 rounds=1", "log_w=1 blocks=1 rounds=2",
				"log_w=1 blocks=2 rounds=1", "log_w=1 blocks=2 rounds=2",
				"log_w=1 blocks=4 rounds=1", "log_w=1 blocks=4 rounds=2",
				"log_w=2 blocks=1 rounds=1", "log_w=2 blocks=1 rounds=2",
				"log_w=2 blocks=2 rounds=1", "log_w=2 blocks=2 rounds=2",
				"log_w=2 blocks=4 rounds=1", "log_w=2 blocks=4 rounds=2",
			},
		},
		{
			pipeline: "union",
			samples:  DefaultSamples,
			vars:     []string{"preset", "message_bits", "output_bits"},
			points: []string{
				"preset=sha3-256 message_bits=2000", "preset=sha3-256 message_bits=4000",
				"preset=shake128 output_bits=3000", "preset=shake128 output_bits=6000",
			},
		},
		{pipeline: "single", samples: DefaultSamples, jobs: 1, vars: nil, points: []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.pipeline, func(t *testing.T) {
			p := pipeline(t, f, tt.pipeline)
			if p.Samples != tt.samples {
				t.Errorf("Samples = %d, want %d", p.Samples, tt.samples)
			}
			if p.Jobs != tt.jobs {
				t.Errorf("Jobs = %d, want %d", p.Jobs, tt.jobs)
			}
			if got := p.Vars(); !reflect.DeepEqual(got, tt.vars) {
				t.Errorf("Vars() = %q, want %q", got, tt.vars)
			}
			pts := p.Points()
			if got := pointStrings(pts); !reflect.DeepEqual(got, tt.points) {
				t.Errorf("Points() = %q, want %q", got, tt.points)
			}
			for i, pt := range pts {
				if pt.Index != i {
					t.Errorf("point %d has Index %d", i, pt.Index)
				}
			}
		})
	}
}

func TestPointValues(t *testing.T) {
	f := mustParse(t, "valid.hcl")
	pts := pipeline(t, f, "union").Points()
	pt := pts[2]
	if !reflect.DeepEqual(pt.Names, []string{"preset", "output_bits"}) {
		t.Errorf("Names = %q", pt.Names)
	}
	if _, ok := pt.Values["message_bits"]; ok {
		t.Error("message_bits is set at a point of the second matrix block")
	}
	if n, ok := pt.Int("output_bits"); !ok || n != 3000 {
		t.Errorf("Int(output_bits) = %d, %v", n, ok)
	}
	if _, ok := pt.Int("preset"); ok {
		t.Error("Int(preset) succeeded on a string")
	}
	if _, ok := pt.Int("message_bits"); ok {
		t.Error("Int(message_bits) succeeded on an absent variable")
	}
	if got := pt.Values["preset"]; !got.RawEquals(cty.StringVal("shake128")) {
		t.Errorf("preset = %#v", got)
	}
}

func TestDecode(t *testing.T) {
	f := mustParse(t, "valid.hcl")
	tests := []struct {
		pipeline string
		block    string // construction or a layerer name
		point    int
		want     map[string]any
	}{
		{"keccak-arbitrary-input", "construction", 0,
			map[string]any{"log_w": int64(1), "rate": int64(25), "rounds": int64(1), "blocks": int64(1), "padding": "none"}},
		{"keccak-arbitrary-input", "construction", 11,
			map[string]any{"log_w": int64(2), "rate": int64(50), "rounds": int64(2), "blocks": int64(4), "padding": "none"}},
		{"keccak-arbitrary-input", "reifier", 0, map[string]any{}},
		{"keccak-arbitrary-input", "fusion", 3, map[string]any{"threshold": 0.5, "fuse": true}},
		{"union", "construction", 1, map[string]any{"preset": "sha3-256", "message_bits": int64(4000)}},
		// message_bits is null at the second block's points: unset.
		{"union", "construction", 3, map[string]any{"preset": "shake128", "output_bits": int64(6000)}},
		{"single", "construction", 0, map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%d", tt.pipeline, tt.block, tt.point), func(t *testing.T) {
			p := pipeline(t, f, tt.pipeline)
			b := p.Construction
			if tt.block != "construction" {
				b = findBlock(p.Layerers, tt.block)
			}
			got, diags := b.Decode(p.Points()[tt.point], schemaFor(b))
			if len(diags) > 0 {
				t.Fatal(diags.Error())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Decode = %#v, want %#v", got, tt.want)
			}
			if _, err := sdk.NewParams(schemaFor(b), got); err != nil {
				t.Errorf("NewParams: %v", err)
			}
		})
	}
	if p := pipeline(t, f, "keccak-arbitrary-input"); len(p.Mappers) != 1 || p.Mappers[0].Name != "no-attention" || p.Mappers[0].Kind != sdk.KindMapper {
		t.Errorf("Mappers = %+v", p.Mappers)
	}
}

func TestExpect(t *testing.T) {
	f := mustParse(t, "valid.hcl")
	construction := map[string]cty.Value{
		"blocks": cty.NumberIntVal(1), "rounds": cty.NumberIntVal(24), "output_bits": cty.NumberIntVal(3000),
		"rate": cty.NumberIntVal(1344), "b": cty.NumberIntVal(1600), "preset": cty.StringVal("shake128"),
	}
	tests := []struct {
		pipeline     string
		point        int
		construction map[string]cty.Value
		names        []string
		want         map[string]int64
	}{
		{"keccak-arbitrary-input", 7, nil, []string{"width", "depth"},
			map[string]int64{"width": 1100, "depth": 16}},
		{"keccak-arbitrary-input", 11, nil, []string{"width", "depth"},
			map[string]int64{"width": 1100 + 3*50, "depth": 2 + 4*14}},
		{"union", 2, construction, []string{"depth", "squeezes", "log_b", "big", "named"},
			map[string]int64{"depth": 148, "squeezes": 2, "log_b": 6, "big": 6, "named": 0}},
		{"union", 1, construction, []string{"depth", "squeezes", "log_b", "big", "named"},
			map[string]int64{"depth": 148, "squeezes": 2, "log_b": 6, "big": 6, "named": 4000}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%d", tt.pipeline, tt.point), func(t *testing.T) {
			p := pipeline(t, f, tt.pipeline)
			e := p.Expects[0]
			if e.Layerer != "reifier" {
				t.Errorf("Layerer = %q", e.Layerer)
			}
			if !reflect.DeepEqual(e.Names, tt.names) {
				t.Errorf("Names = %q, want %q", e.Names, tt.names)
			}
			got, diags := e.Eval(p.Points()[tt.point], tt.construction)
			if len(diags) > 0 {
				t.Fatal(diags.Error())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Eval = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestExpectErrors(t *testing.T) {
	f := mustParse(t, "valid.hcl")
	p := pipeline(t, f, "union")
	pt := p.Points()[2]
	base := map[string]cty.Value{
		"blocks": cty.NumberIntVal(1), "rounds": cty.NumberIntVal(24), "output_bits": cty.NumberIntVal(3000),
		"rate": cty.NumberIntVal(1344), "b": cty.NumberIntVal(1600),
	}
	with := func(k string, v cty.Value) map[string]cty.Value {
		m := map[string]cty.Value{}
		for kk, vv := range base {
			m[kk] = vv
		}
		if v == cty.NilVal {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name         string
		construction map[string]cty.Value
		want         []wantDiag
	}{
		{"not whole", with("b", cty.NumberIntVal(1000)), []wantDiag{
			{"valid.hcl:54:16", `Expectation "log_b" is not a whole number`, "at matrix point preset=shake128 output_bits=3000"},
		}},
		{"missing construction value", with("rate", cty.NilVal), []wantDiag{
			{"valid.hcl:53:60", "Unsupported attribute", `"rate"`},
		}},
		{"string value", with("b", cty.StringVal("x")), []wantDiag{
			{"valid.hcl:54:21", "Invalid operand", "preset=shake128"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := p.Expects[0].Eval(pt, tt.construction)
			checkDiags(t, diags, tt.want)
		})
	}
}

// wantDiag is an expected error: "file:line:col", a substring of the
// summary and one of the detail.
type wantDiag struct {
	pos, summary, detail string
}

func checkDiags(t *testing.T, diags hcl.Diagnostics, want []wantDiag) {
	t.Helper()
	var errs hcl.Diagnostics
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			errs = append(errs, d)
		}
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d errors, want %d:\n%s", len(errs), len(want), dump(errs))
	}
	for i, w := range want {
		d := errs[i]
		pos := "(no subject)"
		if d.Subject != nil {
			pos = fmt.Sprintf("%s:%d:%d", filepath.Base(d.Subject.Filename), d.Subject.Start.Line, d.Subject.Start.Column)
		}
		if pos != w.pos || !strings.Contains(d.Summary, w.summary) || !strings.Contains(d.Detail, w.detail) {
			t.Errorf("error %d:\n got  %s %q: %q\n want %s %q: %q", i, pos, d.Summary, d.Detail, w.pos, w.summary, w.detail)
		}
	}
}

func dump(diags hcl.Diagnostics) string {
	var sb strings.Builder
	for _, d := range diags {
		fmt.Fprintf(&sb, "  %v: %s: %s\n", d.Subject, d.Summary, d.Detail)
	}
	return sb.String()
}

func TestDecodeErrors(t *testing.T) {
	f := mustParse(t, "decode_errors.hcl")
	const file = "decode_errors.hcl"
	tests := []struct {
		pipeline string
		point    int
		want     wantDiag
	}{
		{"typo", 0, wantDiag{file + ":3:5", `Unsupported parameter "rouns"`, `Did you mean "rounds"? Valid parameters: log_w, rate, rounds,`}},
		{"over-max", 1, wantDiag{file + ":13:13", `Invalid value for parameter "log_w"`, "must be at most 6, got 9 at matrix point log_w=9"}},
		{"under-min", 0, wantDiag{file + ":20:12", `Invalid value for parameter "rate"`, "must be at least 1, got 0"}},
		{"string-for-int", 0, wantDiag{file + ":27:14", `Invalid value for parameter "blocks"`, `must be a whole number, got string "two"`}},
		{"fraction-for-int", 0, wantDiag{file + ":34:14", `Invalid value for parameter "rounds"`, "must be a whole number, got number 2.5"}},
		{"bad-enum", 0, wantDiag{file + ":41:15", `Invalid value for parameter "padding"`, `must be one of "none", "pad10*1", "sha3", got "nope"`}},
		{"unknown-var", 0, wantDiag{file + ":51:19", "Unsupported attribute", "at matrix point log_w=1"}},
		{"unknown-func", 0, wantDiag{file + ":58:13", "Call to unknown function", "sqrt"}},
		{"layerer-param", 0, wantDiag{file + ":66:12", `Invalid value for parameter "fuse"`, "must be true or false, got number 1"}},
		{"list-for-int", 0, wantDiag{file + ":72:14", `Invalid value for parameter "blocks"`, "must be a whole number, got a list"}},
		{"missing-required", 0, wantDiag{file + ":79:3", `Missing required parameter "threshold"`, "a number"}},
	}
	for _, tt := range tests {
		t.Run(tt.pipeline, func(t *testing.T) {
			p := pipeline(t, f, tt.pipeline)
			pt := p.Points()[tt.point]
			var diags hcl.Diagnostics
			for _, b := range append([]*Block{p.Construction}, p.Layerers...) {
				_, d := b.Decode(pt, schemaFor(b))
				diags = append(diags, d...)
			}
			checkDiags(t, diags, []wantDiag{tt.want})
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		file string
		want []wantDiag
	}{
		{"unknown_block.hcl", []wantDiag{{"unknown_block.hcl:4:3", `Unsupported block type "mapers"`, `Did you mean "mapper"?`}}},
		{"unknown_attr.hcl", []wantDiag{{"unknown_attr.hcl:2:3", `Unsupported argument "sampels"`, `Did you mean "samples"?`}}},
		{"expect_label.hcl", []wantDiag{{"expect_label.hcl:4:10", `Unknown layerer "reifer"`, `has "reifier". Did you mean "reifier"?`}}},
		{"missing_construction.hcl", []wantDiag{{"missing_construction.hcl:2:1", "Missing construction block", `Pipeline "p"`}}},
		{"two_constructions.hcl", []wantDiag{{"two_constructions.hcl:4:3", "Duplicate construction block", "two_constructions.hcl:2,3-24"}}},
		{"duplicate_pipeline.hcl", []wantDiag{{"duplicate_pipeline.hcl:6:1", `Duplicate pipeline "p"`, "duplicate_pipeline.hcl:1,1-13"}}},
		{"duplicate_layerer.hcl", []wantDiag{{"duplicate_layerer.hcl:4:11", `Duplicate layerer "reifier"`, ""}}},
		{"syntax.hcl", []wantDiag{{"syntax.hcl:4:3", "Invalid expression", ""}}},
		{"samples_zero.hcl", []wantDiag{{"samples_zero.hcl:2:13", "Invalid samples", "at least 1; got number 0"}}},
		{"jobs_zero.hcl", []wantDiag{{"jobs_zero.hcl:2:10", "Invalid jobs", "points may run at once: a whole number, at least 1; got number 0"}}},
		{"matrix_var.hcl", []wantDiag{{"matrix_var.hcl:4:10", "Variables not allowed", ""}}},
		{"matrix_empty.hcl", []wantDiag{{"matrix_empty.hcl:3:9", `Invalid matrix variable "a"`, "empty list"}}},
		{"top_level.hcl", []wantDiag{
			{"top_level.hcl:1:1", `Unexpected attribute "samples"`, "Only pipeline blocks"},
			{"top_level.hcl:3:1", `Unsupported block type "pipline"`, `Did you mean "pipeline"?`},
		}},
		{"labels.hcl", []wantDiag{
			{"labels.hcl:2:3", "Missing name for construction block", `construction "keccak"`},
			{"labels.hcl:3:21", "Extraneous label for layerer block", ""},
			{"labels.hcl:6:10", `Invalid pipeline name "bad/name"`, ""},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			f, diags := parseFixture(t, tt.file)
			checkDiags(t, diags, tt.want)
			if f == nil {
				t.Fatal("nil File")
			}
			for _, p := range f.Pipelines {
				if p.Construction == nil || len(p.Layerers) == 0 {
					t.Errorf("incomplete pipeline %q returned", p.Name)
				}
			}
		})
	}
}

func TestParseFiles(t *testing.T) {
	valid := filepath.Join("testdata", "valid.hcl")
	other := filepath.Join("testdata", "duplicate_across.hcl")
	files, srcs, diags := ParseFiles(valid, other, valid)
	checkDiags(t, diags, []wantDiag{{"duplicate_across.hcl:6:3", `Duplicate pipeline "single"`, "valid.hcl:60,1-18"}})
	if len(files) != 2 || len(files[0].Pipelines) != 3 || files[1].Filename != other {
		t.Errorf("files = %+v", files)
	}
	if srcs[valid] == nil || srcs[other] == nil {
		t.Errorf("sources missing: %v", srcs)
	}

	_, _, diags = ParseFiles(filepath.Join("testdata", "no-such-file.hcl"))
	checkDiags(t, diags, []wantDiag{{"(no subject)", "Cannot read pipeline file", "no-such-file.hcl"}})
}

func TestParamDiag(t *testing.T) {
	f := mustParse(t, "valid.hcl")
	p := pipeline(t, f, "keccak-arbitrary-input")
	pt := p.Points()[4]
	tests := []struct {
		pe   sdk.ParamError
		want wantDiag
	}{
		{sdk.ParamError{Param: "rate", Msg: "must be below the width"},
			wantDiag{"valid.hcl:14:15", `Invalid value for parameter "rate"`, `rejected parameter "rate": must be below the width at matrix point log_w=1 blocks=4 rounds=1.`}},
		{sdk.ParamError{Param: "first_block", Msg: "is not supported here"},
			wantDiag{"valid.hcl:12:3", `Invalid value for parameter "first_block"`, "not set in this block"}},
	}
	for _, tt := range tests {
		t.Run(tt.pe.Param, func(t *testing.T) {
			checkDiags(t, hcl.Diagnostics{p.Construction.ParamDiag(pt, &tt.pe)}, []wantDiag{tt.want})
		})
	}
}

func TestFunctions(t *testing.T) {
	tests := []struct {
		expr string
		want string // formatted value, or "error: substring"
	}{
		{"pow(2, 10)", "1024"},
		{"pow(2, 100)", "1267650600228229401496703205376"},
		{"pow(3, 0)", "1"},
		{"pow(2, -1)", "0.5"},
		{"pow(4, 0.5)", "2"},
		{"pow(-8, 0.5)", "error: not a finite number"},
		{"ceil(7 / 2)", "4"},
		{"floor(7 / 2)", "3"},
		{"ceil(3000 / 1344) - 1", "2"},
		{"log2(1024)", "10"},
		{"log2(pow(2, 300))", "300"},
		{"log2(0.25)", "-2"},
		{"floor(log2(1000))", "9"},
		{"log2(0)", "error: positive"},
		{"max(1, 7, 3)", "7"},
		{"min(4, 2.5)", "2.5"},
		{"abs(-3)", "3"},
		{"length([1, 2, 3])", "3"},
		{"length(concat([1], [2, 3]))", "3"},
		{"length(range(5))", "5"},
		{`format("w%d", 8)`, "w8"},
		{"11 * 25 * pow(2, 2) + 3 * 25 * pow(2, 1)", "1250"},
	}
	ctx := &hcl.EvalContext{Functions: Functions()}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			expr, diags := hclsyntax.ParseExpression([]byte(tt.expr), "expr", hcl.InitialPos)
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			v, diags := expr.Value(ctx)
			if want, isErr := strings.CutPrefix(tt.want, "error: "); isErr {
				if !diags.HasErrors() || !strings.Contains(diags.Error(), want) {
					t.Errorf("got %v, %v; want error containing %q", v, diags, want)
				}
				return
			}
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if got := formatValue(v); got != tt.want {
				t.Errorf("= %s, want %s", got, tt.want)
			}
		})
	}
}

func TestWriteDiagnostics(t *testing.T) {
	path := filepath.Join("testdata", "decode_errors.hcl")
	files, srcs, diags := ParseFiles(path)
	if len(diags) > 0 {
		t.Fatal(diags.Error())
	}
	p := pipeline(t, files[0], "typo")
	_, diags = p.Construction.Decode(p.Points()[0], keccakSchema())
	p = pipeline(t, files[0], "over-max")
	_, d := p.Construction.Decode(p.Points()[1], keccakSchema())
	diags = append(diags, d...)

	var buf bytes.Buffer
	// Each diagnostic twice: printed once.
	if err := WriteDiagnostics(&buf, srcs, append(diags, diags...), false); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Error: Unsupported parameter \"rouns\"\n\n" +
			"  on " + path + ":3:5, in pipeline \"typo\":\n" +
			"     3:     rouns = 1\n" +
			"            ^^^^^\n\n" +
			"The construction \"keccak\" has no parameter \"rouns\". Did you mean \"rounds\"?",
		"  on " + path + ":13:13, in pipeline \"over-max\":\n" +
			"    13:     log_w = matrix.log_w\n" +
			"                    ^^^^^^^^^^^^\n\n" +
			"with matrix.log_w as 9.\n\n" +
			"Parameter \"log_w\" of construction \"keccak\" must be at most 6, got 9 at matrix point log_w=9.\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks\n%s\n--- output:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "Error: "); n != 2 {
		t.Errorf("%d diagnostics printed, want 2", n)
	}
	if strings.Contains(out, "\x1b") {
		t.Error("escape codes without color")
	}

	buf.Reset()
	if err := WriteDiagnostics(&buf, srcs, diags, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "\x1b[") {
		t.Error("no escape codes with color")
	}

	// Without the source, the position is still printed.
	buf.Reset()
	if err := WriteDiagnostics(&buf, nil, diags[:1], false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), path+":3:5") {
		t.Errorf("no position without source:\n%s", buf.String())
	}
}

func TestWriteDiagnosticsMultiline(t *testing.T) {
	src := "pipeline \"p\" {\n  matrix {\n    r = [1]\n  }\n  construction \"keccak\" {\n\trounds = (matrix.r +\n      2)\n  }\n  layerer \"reifier\" {}\n}\n"
	f, hf, diags := parse("m.hcl", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags.Error())
	}
	b := f.Pipelines[0].Construction
	d := b.ParamDiag(f.Pipelines[0].Points()[0], &sdk.ParamError{Param: "rounds", Msg: "must be even"})
	var buf bytes.Buffer
	if err := WriteDiagnostics(&buf, map[string]*hcl.File{"m.hcl": hf}, hcl.Diagnostics{d}, false); err != nil {
		t.Fatal(err)
	}
	want := "  on m.hcl:6:11, in pipeline \"p\":\n" +
		"     6: \trounds = (matrix.r +\n" +
		"        \t         ^^^^^^^^^^^\n" +
		"     7:       2)\n" +
		"              ^^\n\n" +
		"with matrix.r as 1.\n\n" +
		"The construction \"keccak\" rejected parameter \"rounds\": must be even at matrix point r=1.\n"
	if !strings.Contains(buf.String(), want) {
		t.Errorf("output lacks\n%s\n--- output:\n%s", want, buf.String())
	}
}

// TestPredict: predict blocks parse like expect blocks, are marked, may
// name a figure an expect block also names, and are checked the same way.
func TestPredict(t *testing.T) {
	src := `pipeline "p" {
  matrix {
    rounds = [13, 19]
  }
  construction "keccak" {
    rounds = matrix.rounds
  }
  layerer "reifier" {}
  expect "reifier" {
    depth = 6 * matrix.rounds
  }
  predict "reifier" {
    depth = 6 * matrix.rounds + 2
  }
}`
	f, diags := Parse("p.hcl", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	p := f.Pipelines[0]
	if len(p.Expects) != 2 || p.Expects[0].Predict || !p.Expects[1].Predict {
		t.Fatalf("expects %+v", p.Expects)
	}
	got, d := p.Expects[1].Eval(p.Points()[1], nil)
	if d.HasErrors() || got["depth"] != 116 {
		t.Errorf("predicted %v %v, want depth 116", got, d)
	}

	bad := strings.Replace(src, `predict "reifier" {`, `predict "reifer" {`, 1)
	_, diags = Parse("p.hcl", []byte(bad))
	if !diags.HasErrors() || !strings.Contains(diags.Error(), `Unknown layerer "reifer"`) {
		t.Errorf("a predict block naming no layerer: %v", diags)
	}
	dup := strings.Replace(src, `depth = 6 * matrix.rounds + 2`, "depth = 1\n    depth = 2", 1)
	if _, diags = Parse("p.hcl", []byte(dup)); !diags.HasErrors() {
		t.Error("a figure predicted twice in one block was accepted")
	}
}

// TestDecodePath checks that a relative Path parameter is resolved
// against the directory of the pipeline file, from a matrix value too,
// and that an absolute one is kept.
func TestDecodePath(t *testing.T) {
	src := `pipeline "p" {
  matrix {
    f = ["a.txt", "/abs/b.txt", "../c/d.txt"]
  }
  construction "bristol" {
    file = matrix.f
    name = "e.txt"
  }
  layerer "reifier" {}
}
`
	f, diags := Parse(filepath.Join("configs", "sub", "x.hcl"), []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	schema := []sdk.Param{{Name: "file", Type: sdk.Path, Required: true}, {Name: "name", Type: sdk.String}}
	p := f.Pipelines[0]
	for i, want := range []string{filepath.Join("configs", "sub", "a.txt"), "/abs/b.txt", filepath.Join("configs", "c", "d.txt")} {
		got, diags := p.Construction.Decode(p.Points()[i], schema)
		if diags.HasErrors() {
			t.Fatal(diags.Error())
		}
		if got["file"] != want || got["name"] != "e.txt" {
			t.Errorf("point %d: file %q, name %q; want %q, e.txt", i, got["file"], got["name"], want)
		}
	}
}
