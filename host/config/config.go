// Package config parses and evaluates tcforge pipeline files.
//
// A pipeline file holds one or more pipeline blocks written in HCL:
//
//	pipeline "keccak-arbitrary-input" {
//	  samples = 256                  # optional, default 256, at least 1
//	  jobs    = 1                    # optional: at most this many points at once
//	  matrix {                       # optional, repeatable
//	    log_w  = [1, 2]
//	    blocks = [1, 2, 4]
//	  }
//	  construction "keccak" {        # exactly one
//	    log_w = matrix.log_w
//	    rate  = 25 * pow(2, matrix.log_w - 1)
//	  }
//	  layerer "reifier" {}           # one or more
//	  mapper "no-attention" {}       # zero or more
//	  expect "reifier" {             # zero or more, label names a layerer
//	    depth = 2 + matrix.blocks * 8
//	  }
//	}
//
// Parse and ParseFiles check the structure of a file; Block.Decode and
// Expect.Eval evaluate its expressions at one matrix Point. Every problem is
// reported as an hcl.Diagnostic located in the source, which
// WriteDiagnostics prints with file:line:column and a caret.
package config

import (
	"cmp"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/agext/levenshtein"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/internal/safefile"
	"github.com/tcforge/tcforge/sdk"
)

// DefaultSamples is the number of random verification inputs of a pipeline
// that does not set samples.
const DefaultSamples = 256

// Block types, as written in pipeline files, besides the plugin kinds
// (sdk.KindConstruction, sdk.KindLayerer, sdk.KindMapper).
const (
	KindExpect = "expect"
	// KindPredict is a predict block: like expect, but a miss is shown
	// (tables, plots), not a failure — for laws known to be approximate,
	// such as the paper's 6·rounds + 2 that zero round constants undercut.
	KindPredict = "predict"
	KindMatrix  = "matrix"
)

// File is one parsed pipeline file.
type File struct {
	Filename  string
	Pipelines []*Pipeline
}

// Pipeline is one pipeline block.
type Pipeline struct {
	Name     string
	DefRange hcl.Range // the `pipeline "name"` header
	// Samples is the number of random inputs used for verification.
	Samples int
	// Jobs, if positive, bounds how many of the pipeline's points run at
	// once, below the run's own bound (for points too heavy to run side
	// by side); 0: the run's bound.
	Jobs int

	Construction *Block
	Layerers     []*Block
	Mappers      []*Block
	Expects      []*Expect

	matrix []matrixBlock
}

// Block is a construction, layerer or mapper block: a plugin name and the
// plugin's parameters as unevaluated expressions.
type Block struct {
	Kind       sdk.Kind
	Name       string // the plugin name (the block's label)
	DefRange   hcl.Range
	LabelRange hcl.Range
	Attrs      hcl.Attributes
}

// Expect is an expect block: expected figures of the layered circuit built
// by one layerer, as expressions over matrix.* and construction.*.
type Expect struct {
	Layerer string // the label: the layerer block these apply to
	// Predict marks a predict block: its misses do not fail the row.
	Predict  bool
	DefRange hcl.Range
	// LabelRange locates the label.
	LabelRange hcl.Range
	Names      []string // attribute names in source order
	Attrs      hcl.Attributes
}

// Parse parses one pipeline file and checks its structure: syntax, blocks
// and their labels, pipeline-level attributes, duplicate pipeline names,
// matrix values (which may not reference variables), expect labels and
// samples. Expressions of plugin blocks and expectations are checked later,
// per point, by Block.Decode and Expect.Eval. File.Pipelines holds only the
// pipelines without errors, so each has a Construction and a Layerer.
func Parse(filename string, src []byte) (*File, hcl.Diagnostics) {
	f, _, diags := parse(filename, src)
	return f, diags
}

// MaxFileBytes bounds a pipeline file: ParseFiles reads it whole, so a
// FIFO, a device (/dev/zero) or a file of gigabytes named as one is
// refused before it is read (safefile.ReadFile).
const MaxFileBytes = 64 << 20

// ParseFiles reads and parses the named files like Parse and also rejects
// pipeline names defined in more than one file (a path given twice is read
// once). The returned map holds the
// source of every file that could be read, keyed by the path as given, for
// WriteDiagnostics.
func ParseFiles(paths ...string) ([]*File, map[string]*hcl.File, hcl.Diagnostics) {
	var files []*File
	srcs := map[string]*hcl.File{}
	var diags hcl.Diagnostics
	seen := map[string]*Pipeline{}
	for _, path := range paths {
		if _, again := srcs[path]; again {
			continue // the same file named twice is read once
		}
		src, err := safefile.ReadFile(path, MaxFileBytes)
		if err != nil {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Cannot read pipeline file",
				Detail:   err.Error(),
			})
			continue
		}
		f, hf, d := parse(path, src)
		diags = append(diags, d...)
		if !d.HasErrors() && len(f.Pipelines) == 0 {
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "No pipelines in " + path,
				Detail:   "A pipeline file holds pipeline blocks: pipeline \"name\" { construction \"keccak\" { ... } layerer \"reifier\" {} }.",
				Subject:  &hcl.Range{Filename: path, Start: hcl.InitialPos, End: hcl.InitialPos},
			})
		}
		if hf != nil {
			srcs[path] = hf
		}
		for _, p := range f.Pipelines {
			if prev, dup := seen[p.Name]; dup {
				diags = append(diags, duplicateDiag("pipeline", p.Name, p.DefRange, prev.DefRange))
				continue
			}
			seen[p.Name] = p
		}
		files = append(files, f)
	}
	return files, srcs, diags
}

func parse(filename string, src []byte) (*File, *hcl.File, hcl.Diagnostics) {
	out := &File{Filename: filename}
	if d := checkNesting(filename, src); d.HasErrors() {
		// Not parsed: the parser would recurse past the stack.
		return out, &hcl.File{Bytes: src}, d
	}
	hf, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() || hf == nil {
		// The structure of a file with syntax errors is not checked: the
		// recovered body would only add confusing follow-on errors.
		return out, hf, diags
	}
	body := hf.Body.(*hclsyntax.Body)
	boundFor(body)
	for _, a := range sortedSyntaxAttrs(body.Attributes) {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Unexpected attribute %q", a.Name),
			Detail:   "Only pipeline blocks are allowed at the top level of a pipeline file.",
			Subject:  a.NameRange.Ptr(),
		})
	}
	seen := map[string]*Pipeline{}
	for _, b := range body.Blocks {
		if b.Type != "pipeline" {
			detail := "Only pipeline blocks are allowed at the top level of a pipeline file."
			if s := suggest(b.Type, []string{"pipeline"}); s != "" {
				detail += fmt.Sprintf(" Did you mean %q?", s)
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Unsupported block type %q", b.Type),
				Detail:   detail,
				Subject:  b.TypeRange.Ptr(),
			})
			continue
		}
		p, d := parsePipeline(b)
		diags = append(diags, d...)
		if p == nil {
			continue
		}
		if prev, dup := seen[p.Name]; dup {
			diags = append(diags, duplicateDiag("pipeline", p.Name, p.DefRange, prev.DefRange))
			continue
		}
		seen[p.Name] = p
		if !d.HasErrors() {
			out.Pipelines = append(out.Pipelines, p)
		}
	}
	return out, hf, diags
}

func duplicateDiag(kind, name string, at, prev hcl.Range) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Duplicate %s %q", kind, name),
		Detail:   fmt.Sprintf("A %s named %q is already defined at %s.", kind, name, prev),
		Subject:  at.Ptr(),
	}
}

// pipelineBlocks and pipelineAttrs are what a pipeline body may contain.
func pipelineBlocks() []string {
	return []string{KindMatrix, string(sdk.KindConstruction), string(sdk.KindLayerer), string(sdk.KindMapper), KindExpect, KindPredict}
}

func pipelineAttrs() []string { return []string{"samples", "jobs"} }

func parsePipeline(b *hclsyntax.Block) (*Pipeline, hcl.Diagnostics) {
	name, diags := oneLabel(b, "pipeline")
	if diags.HasErrors() {
		return nil, diags
	}
	if !validPipelineName(name) {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Invalid pipeline name %q", name),
			Detail:   fmt.Sprintf("A pipeline name names its result files: use letters, digits, '-', '_' and '.', not starting with '.', at most %d characters (the files add a point, a layerer and a suffix, within the 255 bytes a file name may have).", MaxPipelineName),
			Subject:  b.LabelRanges[0].Ptr(),
		})
		return nil, diags
	}
	p := &Pipeline{Name: name, DefRange: b.DefRange(), Samples: DefaultSamples}

	for _, a := range sortedSyntaxAttrs(b.Body.Attributes) {
		switch a.Name {
		case "samples":
			n, d := evalCount(a, "samples", "the number of random inputs used to verify each point")
			diags = append(diags, d...)
			if !d.HasErrors() {
				p.Samples = n
			}
		case "jobs":
			n, d := evalCount(a, "jobs", "how many of the pipeline's points may run at once")
			diags = append(diags, d...)
			if !d.HasErrors() {
				p.Jobs = n
			}
		default:
			diags = append(diags, unsupportedAttr(a.Name, a.NameRange))
		}
	}

	// saw records block types present even if invalid, so that a bad label
	// does not also produce a "missing block" error.
	saw := map[string]bool{}
	for _, blk := range b.Body.Blocks {
		saw[blk.Type] = true
		switch blk.Type {
		case KindMatrix:
			m, d := parseMatrix(blk)
			diags = append(diags, d...)
			if !d.HasErrors() {
				p.matrix = append(p.matrix, m)
			}
		case string(sdk.KindConstruction), string(sdk.KindLayerer), string(sdk.KindMapper):
			pb, d := parsePluginBlock(blk)
			diags = append(diags, d...)
			if pb == nil {
				continue
			}
			switch blk.Type {
			case string(sdk.KindConstruction):
				if p.Construction != nil {
					diags = append(diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  "Duplicate construction block",
						Detail:   fmt.Sprintf("A pipeline has exactly one construction; the first is at %s.", p.Construction.DefRange),
						Subject:  pb.DefRange.Ptr(),
					})
					continue
				}
				p.Construction = pb
			case string(sdk.KindLayerer):
				if prev := findBlock(p.Layerers, pb.Name); prev != nil {
					diags = append(diags, &hcl.Diagnostic{
						Severity: hcl.DiagError,
						Summary:  fmt.Sprintf("Duplicate layerer %q", pb.Name),
						Detail:   fmt.Sprintf("Layerer %q is already used at %s; results and expect blocks are keyed by layerer name.", pb.Name, prev.DefRange),
						Subject:  pb.LabelRange.Ptr(),
					})
					continue
				}
				p.Layerers = append(p.Layerers, pb)
			case string(sdk.KindMapper):
				p.Mappers = append(p.Mappers, pb)
			}
		case KindExpect, KindPredict:
			label, d := oneLabel(blk, blk.Type)
			diags = append(diags, d...)
			if d.HasErrors() {
				continue
			}
			attrs, d := blk.Body.JustAttributes()
			diags = append(diags, d...)
			e := &Expect{Layerer: label, Predict: blk.Type == KindPredict, DefRange: blk.DefRange(), LabelRange: blk.LabelRanges[0], Attrs: attrs}
			for _, a := range sortedAttrs(attrs) {
				e.Names = append(e.Names, a.Name)
			}
			p.Expects = append(p.Expects, e)
		default:
			diags = append(diags, unsupportedBlock(blk))
		}
	}

	if !saw[string(sdk.KindConstruction)] {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing construction block",
			Detail:   fmt.Sprintf("Pipeline %q needs exactly one construction block, e.g. construction \"keccak\" { ... }.", p.Name),
			Subject:  p.DefRange.Ptr(),
		})
	}
	if !saw[string(sdk.KindLayerer)] {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Missing layerer block",
			Detail:   fmt.Sprintf("Pipeline %q needs at least one layerer block, e.g. layerer \"reifier\" {}.", p.Name),
			Subject:  p.DefRange.Ptr(),
		})
	}
	diags = append(diags, p.checkExpects()...)
	return p, diags
}

// checkExpects checks that expect labels name layerers of the pipeline and
// that no figure is expected twice for the same layerer.
func (p *Pipeline) checkExpects() hcl.Diagnostics {
	var diags hcl.Diagnostics
	names := make([]string, len(p.Layerers))
	for i, l := range p.Layerers {
		names[i] = l.Name
	}
	seen := map[[2]string]hcl.Range{}
	for _, e := range p.Expects {
		if findBlock(p.Layerers, e.Layerer) == nil {
			detail := fmt.Sprintf("An expect block's label names a layerer block of this pipeline; pipeline %q has %s.", p.Name, quotedList(names, "no layerer"))
			if s := suggest(e.Layerer, names); s != "" {
				detail += fmt.Sprintf(" Did you mean %q?", s)
			}
			diags = append(diags, &hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  fmt.Sprintf("Unknown layerer %q in expect block", e.Layerer),
				Detail:   detail,
				Subject:  e.LabelRange.Ptr(),
			})
			continue
		}
		for _, n := range e.Names {
			a := e.Attrs[n]
			key := [2]string{e.Layerer, n}
			if e.Predict {
				key[0] = "predict " + e.Layerer
			}
			if prev, dup := seen[key]; dup {
				diags = append(diags, &hcl.Diagnostic{
					Severity: hcl.DiagError,
					Summary:  fmt.Sprintf("Duplicate expectation %q for layerer %q", n, e.Layerer),
					Detail:   fmt.Sprintf("%q is already expected at %s.", n, prev),
					Subject:  a.NameRange.Ptr(),
				})
				continue
			}
			seen[key] = a.NameRange
		}
	}
	return diags
}

func findBlock(bs []*Block, name string) *Block {
	for _, b := range bs {
		if b.Name == name {
			return b
		}
	}
	return nil
}

func parsePluginBlock(b *hclsyntax.Block) (*Block, hcl.Diagnostics) {
	name, diags := oneLabel(b, b.Type)
	if diags.HasErrors() {
		return nil, diags
	}
	attrs, d := b.Body.JustAttributes()
	diags = append(diags, d...)
	return &Block{Kind: sdk.Kind(b.Type), Name: name, DefRange: b.DefRange(), LabelRange: b.LabelRanges[0], Attrs: attrs}, diags
}

// oneLabel checks that b has exactly one non-empty label and returns it.
func oneLabel(b *hclsyntax.Block, what string) (string, hcl.Diagnostics) {
	switch {
	case len(b.Labels) == 0:
		return "", hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Missing name for %s block", what),
			Detail:   fmt.Sprintf("A %s block has one label, e.g. %s.", what, labelExample(what)),
			Subject:  b.TypeRange.Ptr(),
		}}
	case len(b.Labels) > 1:
		return "", hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Extraneous label for %s block", what),
			Detail:   fmt.Sprintf("A %s block has exactly one label, e.g. %s.", what, labelExample(what)),
			Subject:  b.LabelRanges[1].Ptr(),
		}}
	case b.Labels[0] == "":
		return "", hcl.Diagnostics{{
			Severity: hcl.DiagError,
			Summary:  fmt.Sprintf("Empty name for %s block", what),
			Detail:   fmt.Sprintf("A %s block's label may not be empty, e.g. %s.", what, labelExample(what)),
			Subject:  b.LabelRanges[0].Ptr(),
		}}
	}
	return b.Labels[0], nil
}

func labelExample(what string) string {
	switch what {
	case "pipeline":
		return `pipeline "sha3" { ... }`
	case string(sdk.KindConstruction):
		return `construction "keccak" { ... }`
	case string(sdk.KindLayerer):
		return `layerer "reifier" {}`
	case string(sdk.KindMapper):
		return `mapper "no-attention" {}`
	case KindExpect:
		return `expect "reifier" { depth = ... }`
	case KindPredict:
		return `predict "reifier" { depth = ... }`
	}
	return what + ` "name" {}`
}

func unsupportedAttr(name string, rng hcl.Range) *hcl.Diagnostic {
	detail := fmt.Sprintf("A pipeline block has no attribute %q; valid attributes: %s.", name, quotedList(pipelineAttrs(), "none"))
	if isOneOf(name, pipelineBlocks()) {
		detail = fmt.Sprintf("%q is a block, not an attribute: write %s.", name, labelExample(name))
	} else if s := suggest(name, pipelineAttrs()); s != "" {
		detail += fmt.Sprintf(" Did you mean %q?", s)
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Unsupported argument %q", name),
		Detail:   detail,
		Subject:  rng.Ptr(),
	}
}

func unsupportedBlock(b *hclsyntax.Block) *hcl.Diagnostic {
	detail := fmt.Sprintf("A pipeline block contains %s blocks.", quotedList(pipelineBlocks(), ""))
	if isOneOf(b.Type, pipelineAttrs()) {
		detail = fmt.Sprintf("%q is an attribute, not a block: write %s = ...", b.Type, b.Type)
	} else if s := suggest(b.Type, pipelineBlocks()); s != "" {
		detail += fmt.Sprintf(" Did you mean %q?", s)
	}
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  fmt.Sprintf("Unsupported block type %q", b.Type),
		Detail:   detail,
		Subject:  b.TypeRange.Ptr(),
	}
}

// evalCount evaluates pipeline attribute a, named name and meaning what,
// as a whole number of at least 1.
func evalCount(a *hclsyntax.Attribute, name, what string) (int, hcl.Diagnostics) {
	v, diags := a.Expr.Value(&hcl.EvalContext{Functions: Functions()})
	if diags.HasErrors() {
		return 0, diags
	}
	n, ok := wholeInt(v)
	if !ok || n < 1 || n > 1<<31-1 {
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Invalid " + name,
			Detail:   fmt.Sprintf("%s is %s: a whole number, at least 1; got %s.", name, what, describeValue(v)),
			Subject:  a.Expr.Range().Ptr(),
		})
		return 0, diags
	}
	return int(n), diags
}

// wholeInt returns v as an int64 if it is a known, non-null whole number in
// the int64 range.
func wholeInt(v cty.Value) (int64, bool) {
	if v == cty.NilVal || !v.IsKnown() || v.IsNull() || v.Type() != cty.Number {
		return 0, false
	}
	bf := v.AsBigFloat()
	if !bf.IsInt() {
		return 0, false
	}
	n, acc := bf.Int64()
	return n, acc == big.Exact
}

// MaxPipelineName is the longest pipeline name: result files are named
// <pipeline>[.<point>].<layerer>.<arch>.safetensors and the like, and a
// file name has at most 255 bytes (a 300-character name passed the check
// and failed when the files were written).
const MaxPipelineName = 100

func validPipelineName(s string) bool {
	if s == "" || s[0] == '.' || len(s) > MaxPipelineName {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func sortedSyntaxAttrs(m hclsyntax.Attributes) []*hclsyntax.Attribute {
	out := slices.Collect(maps.Values(m))
	slices.SortFunc(out, func(a, b *hclsyntax.Attribute) int { return cmp.Compare(a.SrcRange.Start.Byte, b.SrcRange.Start.Byte) })
	return out
}

func sortedAttrs(m hcl.Attributes) []*hcl.Attribute {
	out := slices.Collect(maps.Values(m))
	slices.SortFunc(out, func(a, b *hcl.Attribute) int { return cmp.Compare(a.Range.Start.Byte, b.Range.Start.Byte) })
	return out
}

func isOneOf(s string, list []string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// quotedList formats names as `"a", "b" and "c"`, or none if empty.
func quotedList(names []string, none string) string {
	if len(names) == 0 {
		return none
	}
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " and " + q[len(q)-1]
}

// suggest returns the candidate closest to s if it is close enough to be a
// likely typo, or "".
func suggest(s string, candidates []string) string {
	best, bestDist := "", 3
	for _, c := range candidates {
		if d := levenshtein.Distance(s, c, nil); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}
