package config

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"
)

// WriteDiagnostics prints diags in the style of Terraform (and of hcl's
// DiagnosticTextWriter), adding the position as file:line:column and a caret
// line under the offending source:
//
//	Error: Unsupported parameter "rouns"
//
//	  on pipelines.hcl:7:5, in pipeline "p":
//	     7:     rouns = 1
//	            ^^^^^
//
//	The construction "keccak" has no parameter "rouns". Did you mean "rounds"? ...
//
// Identical diagnostics (as from a check repeated at every matrix point) are
// printed once, and at most MaxDiagnostics of them, followed by a count of
// the rest (a binary file named by mistake gives hundreds). Control bytes
// and invalid UTF-8 in messages and source lines are escaped (\x1b, \xff),
// so the terminal shows them rather than obeys them. files (from ParseFiles) supplies the source lines;
// diagnostics about files not in it are printed without source. color
// enables ANSI colors, for terminals only.
func WriteDiagnostics(w io.Writer, files map[string]*hcl.File, diags hcl.Diagnostics, color bool) error {
	bw := bufio.NewWriter(w)
	seen := map[string]bool{}
	shown, errs, warns := 0, 0, 0
	for _, d := range diags {
		if d == nil {
			continue
		}
		// The same check repeated at every matrix point gives identical
		// diagnostics: print each once.
		key := fmt.Sprintf("%d\x00%s\x00%s\x00%v", d.Severity, d.Summary, d.Detail, d.Subject)
		if seen[key] {
			continue
		}
		seen[key] = true
		if shown < MaxDiagnostics {
			shown++
			writeDiagnostic(bw, files, d, color)
		} else if d.Severity == hcl.DiagError {
			errs++
		} else {
			warns++
		}
	}
	if errs+warns > 0 {
		fmt.Fprintf(bw, "… and %s (not shown; the first %d are above).\n\n", countWords(errs, warns), MaxDiagnostics)
	}
	return bw.Flush()
}

// MaxDiagnostics is how many diagnostics WriteDiagnostics prints at most.
const MaxDiagnostics = 10

func countWords(errs, warns int) string {
	word := func(n int, one string) string {
		if n == 1 {
			return "1 more " + one
		}
		return fmt.Sprintf("%d more %ss", n, one)
	}
	switch {
	case warns == 0:
		return word(errs, "error")
	case errs == 0:
		return word(warns, "warning")
	}
	return word(errs, "error") + " and " + word(warns, "warning")
}

// printable escapes what a terminal would interpret rather than show:
// control characters other than tab and newline, DEL, C1 controls and
// bytes that are not UTF-8, as \xNN (or \u00NN).
func printable(s string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || (r < 0x20 && r != '\t' && r != '\n') || (r >= 0x7f && r < 0xa0) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			fmt.Fprintf(&sb, "\\x%02x", s[i])
		case (r < 0x20 && r != '\t' && r != '\n') || r == 0x7f:
			fmt.Fprintf(&sb, "\\x%02x", r)
		case r >= 0x80 && r < 0xa0:
			fmt.Fprintf(&sb, "\\u%04x", r)
		default:
			sb.WriteString(s[i : i+size])
		}
		i += size
	}
	return sb.String()
}

const (
	ansiReset     = "\x1b[0m"
	ansiBold      = "\x1b[1m"
	ansiRed       = "\x1b[1;31m"
	ansiYellow    = "\x1b[1;33m"
	ansiHighlight = "\x1b[1;4m"
)

func writeDiagnostic(w *bufio.Writer, files map[string]*hcl.File, d *hcl.Diagnostic, color bool) {
	paint := func(code, s string) string {
		if !color || s == "" {
			return s
		}
		return code + s + ansiReset
	}
	sev, sevColor := "Error", ansiRed
	if d.Severity == hcl.DiagWarning {
		sev, sevColor = "Warning", ansiYellow
	}
	fmt.Fprintf(w, "%s: %s\n\n", paint(sevColor, sev), paint(ansiBold, printable(clip(d.Summary, 300))))

	if d.Subject != nil {
		subj := *d.Subject
		pos := fmt.Sprintf("%s:%d:%d", printable(subj.Filename), subj.Start.Line, subj.Start.Column)
		file := files[subj.Filename]
		if file == nil || file.Bytes == nil {
			fmt.Fprintf(w, "  on %s:\n  (source code not available)\n\n", pos)
		} else {
			where := ""
			if cs, ok := file.Nav.(interface{ ContextString(int) string }); ok {
				if s := cs.ContextString(subj.Start.Byte); s != "" {
					where = ", in " + printable(s)
				}
			}
			fmt.Fprintf(w, "  on %s%s:\n", pos, where)
			writeSnippet(w, file.Bytes, d, paint)
			w.WriteByte('\n')
		}
		writeValues(w, d)
	}

	if d.Detail != "" {
		fmt.Fprintf(w, "%s\n\n", printable(clip(d.Detail, 2000)))
	}
}

// writeSnippet prints the source lines of the subject (and context) with a
// caret line under the subject's part of each line.
func writeSnippet(w *bufio.Writer, src []byte, d *hcl.Diagnostic, paint func(string, string) string) {
	hl := *d.Subject
	snip := hl
	if d.Context != nil {
		snip = hcl.RangeOver(snip, *d.Context)
	}
	// An empty range still deserves one caret.
	if hl.Empty() {
		hl.End.Byte++
		hl.End.Column++
	}
	if snip.Empty() {
		snip.End.Byte++
		snip.End.Column++
	}
	sc := hcl.NewRangeScanner(src, hl.Filename, bufio.ScanLines)
	for sc.Scan() {
		line := sc.Range()
		if !line.Overlaps(snip) && !(line.Start.Line == hl.Start.Line) {
			continue
		}
		text := printable(clip(string(sc.Bytes()), 240))
		before, mid, after := line.PartitionAround(hl)
		if mid.Empty() {
			fmt.Fprintf(w, "%6d: %s\n", line.Start.Line, text)
			continue
		}
		pre, hi := printable(clipLeft(string(before.SliceBytes(src)), 60)), printable(clip(string(mid.SliceBytes(src)), 120))
		if line.Start.Line != hl.Start.Line {
			// Continuation lines: no carets under the indentation.
			t := strings.TrimLeft(hi, " \t")
			pre, hi = pre+hi[:len(hi)-len(t)], t
		}
		fmt.Fprintf(w, "%6d: %s%s%s\n", line.Start.Line, pre, paint(ansiHighlight, hi), printable(clip(string(after.SliceBytes(src)), 120)))
		// Align the carets under the highlighted text, copying tabs.
		var indent strings.Builder
		for _, r := range pre {
			if r == '\t' {
				indent.WriteByte('\t')
			} else {
				indent.WriteByte(' ')
			}
		}
		n := max(utf8.RuneCountInString(strings.TrimRight(hi, " \t")), 1)
		fmt.Fprintf(w, "        %s%s\n", indent.String(), paint(ansiRed, strings.Repeat("^", n)))
	}
}

// writeValues prints the values of the variables an expression refers to,
// like hcl's writer: "with matrix.log_w as 9."
func writeValues(w *bufio.Writer, d *hcl.Diagnostic) {
	if d.Expression == nil || d.EvalContext == nil {
		return
	}
	var stmts []string
	seen := map[string]bool{}
	for _, tr := range d.Expression.Variables() {
		v, diags := tr.TraverseAbs(d.EvalContext)
		if diags.HasErrors() || !v.IsKnown() {
			continue
		}
		name := traversalString(tr)
		if seen[name] {
			continue
		}
		seen[name] = true
		if v.IsNull() {
			stmts = append(stmts, name+" set to null")
		} else {
			stmts = append(stmts, name+" as "+shortValue(v))
		}
	}
	if len(stmts) == 0 {
		return
	}
	slices.Sort(stmts)
	fmt.Fprintf(w, "with %s.\n\n", strings.Join(stmts, ",\n     "))
}

func traversalString(tr hcl.Traversal) string {
	var sb strings.Builder
	for _, step := range tr {
		switch s := step.(type) {
		case hcl.TraverseRoot:
			sb.WriteString(s.Name)
		case hcl.TraverseAttr:
			sb.WriteString("." + s.Name)
		case hcl.TraverseIndex:
			if s.Key.Type() == cty.String {
				fmt.Fprintf(&sb, "[%q]", s.Key.AsString())
			} else if s.Key.Type() == cty.Number {
				sb.WriteString("[" + formatNumber(s.Key.AsBigFloat()) + "]")
			} else {
				sb.WriteString("[...]")
			}
		}
	}
	return sb.String()
}

func shortValue(v cty.Value) string {
	switch v.Type() {
	case cty.Number:
		return formatNumber(v.AsBigFloat())
	case cty.String:
		return fmt.Sprintf("%q", clip(v.AsString(), 100))
	case cty.Bool:
		if v.True() {
			return "true"
		}
		return "false"
	}
	ty := v.Type()
	switch {
	case ty.IsObjectType() || ty.IsMapType():
		return fmt.Sprintf("an object with %d attributes", v.LengthInt())
	case ty.IsListType() || ty.IsTupleType() || ty.IsSetType():
		return fmt.Sprintf("a list of %d elements", v.LengthInt())
	}
	return "a " + ty.FriendlyName()
}
