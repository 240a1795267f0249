package report

import (
	"bufio"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tcforge/tcforge/host/run"
)

// Summary counts a result's rows.
type Summary struct {
	Points   int // matrix points run
	Rows     int // points × layerers
	Verified int // rows whose layered circuit matched the logic circuit
	// Expected counts rows with at least one expectation; Met those whose
	// expectations all held.
	Expected, Met int
	OK            int // rows verified and as expected, without error
	Errors        int // rows with an error
	// Models counts the models the rows' mappers built, or tried to (a
	// row has one per mapper block); ModelsVerified those whose check
	// passed. A row's circuit may verify while its models fail: the two
	// are counted apart.
	Models, ModelsVerified int
}

// Summarize counts the result's rows.
func Summarize(res *run.Result) Summary {
	var s Summary
	points := map[int]bool{}
	for _, row := range res.Rows {
		points[row.Point.Index] = true
		s.Rows++
		if row.Verified {
			s.Verified++
		}
		if len(row.Expect) > 0 {
			s.Expected++
			if row.ExpectOK && row.Err == nil {
				s.Met++
			}
		}
		if row.OK() {
			s.OK++
		}
		if row.Err != nil {
			s.Errors++
		}
		for _, m := range row.Models {
			s.Models++
			if m.OK() {
				s.ModelsVerified++
			}
		}
	}
	s.Points = len(points)
	return s
}

// Add adds t's counts to s.
func (s *Summary) Add(t Summary) {
	s.Points += t.Points
	s.Rows += t.Rows
	s.Verified += t.Verified
	s.Expected += t.Expected
	s.Met += t.Met
	s.OK += t.OK
	s.Errors += t.Errors
	s.Models += t.Models
	s.ModelsVerified += t.ModelsVerified
}

// String formats the counts: "12 points, 12 rows: 12 verified, 12/12 met
// their expectations".
func (s Summary) String() string {
	out := fmt.Sprintf("%s, %s: %s, %d/%d met their expectations",
		plural(s.Points, "point", "points"), plural(s.Rows, "row", "rows"), s.VerifiedText(), s.Met, s.Expected)
	if s.Errors > 0 {
		out += fmt.Sprintf(", %d with errors", s.Errors)
	}
	return out
}

// VerifiedText says what verified: "12 verified" (circuits), or with
// models "12 circuits verified, 0 of 12 models verified (12 failed)", so
// that failed models are never hidden behind verified circuits.
func (s Summary) VerifiedText() string {
	if s.Models == 0 {
		return fmt.Sprintf("%d verified", s.Verified)
	}
	out := fmt.Sprintf("%d circuits verified, %d of %s verified", s.Verified, s.ModelsVerified, plural(s.Models, "model", "models"))
	if failed := s.Models - s.ModelsVerified; failed > 0 {
		out += fmt.Sprintf(" (%d failed)", failed)
	}
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// TableColumn is one column of the paper-style table.
type TableColumn struct {
	Name  string
	Right bool // numbers align right
}

// TableCell is one cell of the paper-style table; Bad marks an actual
// value that differs from its expectation, or a failed verdict.
type TableCell struct {
	Text string
	Bad  bool
}

// PaperTable returns the formula-verification table in the paper's
// layout: the matrix variables, the layerer, Exp./Actual pairs for each
// expectation, the other figures, verified and the verdict; and, when a
// row failed, an error column (empty for the rows that are fine; a failed
// row's figures are "-").
func PaperTable(res *run.Result) ([]TableColumn, [][]TableCell) {
	var cols []TableColumn
	for _, v := range res.Vars {
		cols = append(cols, TableColumn{Name: v, Right: true})
	}
	cols = append(cols, TableColumn{Name: "layerer"})
	for _, n := range res.ExpectNames {
		cols = append(cols, TableColumn{Name: "Exp. " + n, Right: true}, TableColumn{Name: "Actual " + n, Right: true})
	}
	for _, n := range res.PredictNames {
		cols = append(cols, TableColumn{Name: "Pred. " + n, Right: true})
	}
	others := otherFigures(res)
	for _, f := range others {
		cols = append(cols, TableColumn{Name: f, Right: true})
	}
	cols = append(cols, TableColumn{Name: "verified"}, TableColumn{Name: "ok"})
	errCol := false
	for _, row := range res.Rows {
		errCol = errCol || row.Err != nil
	}
	if errCol {
		cols = append(cols, TableColumn{Name: "error"})
	}
	var rows [][]TableCell
	for _, row := range res.Rows {
		var cells []TableCell
		for _, v := range res.Vars {
			cells = append(cells, TableCell{Text: Value(row.Point.Values[v])})
		}
		cells = append(cells, TableCell{Text: row.Layerer})
		for _, n := range res.ExpectNames {
			e, ok := row.Expect[n]
			if !ok {
				cells = append(cells, TableCell{Text: "-"}, TableCell{Text: "-"})
				continue
			}
			a := row.Actual[n]
			cells = append(cells, TableCell{Text: strconv.FormatInt(e, 10)}, TableCell{Text: strconv.FormatInt(a, 10), Bad: a != e})
		}
		for _, n := range res.PredictNames {
			cells = append(cells, TableCell{Text: predictCell(row, n)})
		}
		for _, f := range others {
			v, _ := figureValue(row, f)
			text := strconv.FormatInt(v, 10)
			if !measured(row) {
				text = "-" // not data
			}
			cells = append(cells, TableCell{Text: text})
		}
		verdict := TableCell{Text: "ok"}
		if !row.OK() {
			verdict = TableCell{Text: "FAIL", Bad: true}
		}
		cells = append(cells, TableCell{Text: strconv.FormatBool(row.Verified), Bad: !row.Verified}, verdict)
		if errCol {
			msg := ""
			if row.Err != nil {
				msg = oneLine(row.Err.Error())
			}
			cells = append(cells, TableCell{Text: msg, Bad: msg != ""})
		}
		rows = append(rows, cells)
	}
	return cols, rows
}

// otherFigures are the figures shown without an expectation.
func otherFigures(res *run.Result) []string {
	var out []string
	for _, f := range run.Figures() {
		if f.Shown && !slices.Contains(res.ExpectNames, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

func mdEscape(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// WriteMarkdown writes DIR/<pipeline>.md's content: a summary, the
// expectations' formulas, the paper-style formula-verification table
// (actual values that miss their expectation in bold with ✗), errors, and
// links to the plot files (paths relative to the Markdown file).
func WriteMarkdown(w io.Writer, res *run.Result, plots []string) error {
	bw := bufio.NewWriter(w)
	p := func(format string, a ...any) { fmt.Fprintf(bw, format, a...) }
	p("# %s\n\n", res.Pipeline.Name)
	if src := res.Pipeline.DefRange.Filename; src != "" {
		p("Pipeline `%s` of `%s`. ", res.Pipeline.Name, filepath.ToSlash(src))
	}
	sum := Summarize(res)
	verdict := "**all rows verified and as expected**"
	if !res.OK() {
		verdict = "**some rows FAILED**"
	}
	if !res.Complete {
		verdict = "**" + incomplete(res) + "**; the rows are those of the finished points"
	}
	p("%s; %s.\n\n", sum, verdict)

	if ex := Expectations(res); len(ex) > 0 {
		p("## Expectations\n\n")
		p("Evaluated at every point with `matrix.*` and `construction.*` in scope.\n\n")
		p("| layerer | kind | figure | formula |\n|---|---|---|---|\n")
		for _, e := range ex {
			p("| %s | %s | %s | `%s` |\n", mdEscape(e.Layerer), e.Kind(), mdEscape(e.Figure), mdEscape(e.Formula))
		}
		p("\n")
	}

	p("## Formula verification\n\n")
	cols, rows := PaperTable(res)
	var head, rule []string
	for _, c := range cols {
		head = append(head, mdEscape(c.Name))
		if c.Right {
			rule = append(rule, "---:")
		} else {
			rule = append(rule, "---")
		}
	}
	p("| %s |\n| %s |\n", strings.Join(head, " | "), strings.Join(rule, " | "))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = mdEscape(c.Text)
			if c.Bad {
				cells[i] = "**" + cells[i] + "** ✗"
			}
		}
		p("| %s |\n", strings.Join(cells, " | "))
	}
	p("\n")

	var errs []string
	for _, row := range res.Rows {
		if row.Err != nil {
			where := row.Layerer
			if pt := row.Point.String(); pt != "" {
				where = pt + ", " + where
			}
			errs = append(errs, fmt.Sprintf("- `%s`: %s", where, strings.ReplaceAll(row.Err.Error(), "\n", " ")))
		}
	}
	if n := len(Missing(res)); n > 0 {
		errs = append(errs, fmt.Sprintf("- %d points %s", n, notRun(res)))
	}
	if len(errs) > 0 {
		p("## Errors\n\n%s\n\n", strings.Join(errs, "\n"))
	}

	var svgs []string
	for _, f := range plots {
		if strings.HasSuffix(f, ".svg") {
			svgs = append(svgs, f)
		}
	}
	if len(svgs) > 0 {
		p("## Plots\n\n")
		for _, f := range svgs {
			name := strings.TrimSuffix(path.Base(filepath.ToSlash(f)), ".svg")
			p("![%s](%s)\n\n", name, filepath.ToSlash(f))
		}
	}
	if np := NotPlotted(res); len(np) > 0 {
		p("Not plotted (failed): %s.\n", mdEscape(strings.Join(np, "; ")))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing Markdown for %s: %w", res.Pipeline.Name, err)
	}
	return nil
}
