package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/host/report"
)

const figures = "../../configs/paper/figures.hcl"

// levelTable parses inspect's per-level table into rows of
// (level, width, kinds, provenance).
func levelTable(t *testing.T, out string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	re := regexp.MustCompile(`^(\d+)\s+(\d+)\s+(.*?)\s{2,}(.*)$`)
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "LEVEL") {
			in = true
			continue
		}
		if !in || line == "" {
			continue
		}
		m := re.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("bad table line %q", line)
		}
		rows = append(rows, m[1:])
	}
	return rows
}

// TestInspectKeccakCircuit checks the per-level tables of the paper's
// "Keccak, w = 1, one round" circuit (both readings of w) and the drawing.
func TestInspectKeccakCircuit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		point  string
		header string
		rows   [][]string // level, width, kinds, provenance
	}{
		{"log_w=0", `layerer "reifier" (verified): depth 7, width 275, 467 gates (42 copies)`, [][]string{
			{"0", "17", "17 inputs", "17 input msg"},
			{"1", "25", "25 gates", "25 block 1/state"},
			{"2", "275", "275 gates", "275 block 1/round 1/theta counters"},
			{"3", "25", "25 gates", "25 block 1/round 1/theta"},
			{"4", "50", "25 gates + 25 copies", "25 block 1/round 1/chi, 25 copies of block 1/round 1/theta"},
			{"5", "50", "50 gates", "50 block 1/round 1/chi counters"},
			{"6", "25", "25 gates", "25 block 1/round 1/chi"},
			{"7", "17", "17 copies", "17 copies of block 1/round 1/chi"},
		}},
		{"log_w=1", `layerer "reifier" (verified): depth 8, width 550, 967 gates (67 copies)`, [][]string{
			{"0", "17", "17 inputs", "17 input msg"},
			{"1", "50", "50 gates", "50 block 1/state"},
			{"2", "550", "550 gates", "550 block 1/round 1/theta counters"},
			{"3", "50", "50 gates", "50 block 1/round 1/theta"},
			{"4", "100", "50 gates + 50 copies", "50 block 1/round 1/chi, 50 copies of block 1/round 1/theta"},
			{"5", "100", "100 gates", "100 block 1/round 1/chi counters"},
			{"6", "50", "50 gates", "50 block 1/round 1/chi"},
			{"7", "50", "50 gates", "50 block 1/round 1/iota"},
			{"8", "17", "17 copies", "17 copies of block 1/round 1/iota"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.point, func(t *testing.T) {
			svg := filepath.Join(t.TempDir(), "k.svg")
			r := tcforge(t, "inspect", "--log-level", "warn", "--pipeline", "fig-keccak-circuit", "--point", tt.point, "--svg", svg, figures)
			if r.code != 0 {
				t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout, tt.header) {
				t.Errorf("output lacks %q:\n%s", tt.header, r.stdout)
			}
			got := levelTable(t, r.stdout)
			if len(got) != len(tt.rows) {
				t.Fatalf("%d levels, want %d:\n%s", len(got), len(tt.rows), r.stdout)
			}
			for i := range tt.rows {
				if strings.Join(got[i], "|") != strings.Join(tt.rows[i], "|") {
					t.Errorf("level %d: %q, want %q", i, got[i], tt.rows[i])
				}
			}
			b, err := os.ReadFile(svg)
			if err != nil {
				t.Fatal(err)
			}
			s := string(b)
			last := len(tt.rows) - 1
			for _, want := range []string{"<svg", ">level " + tt.rows[last][0] + "</text>", ">theta counters</text>", "fig-keccak-circuit (" + tt.point + ") — reifier"} {
				if !strings.Contains(s, want) {
					t.Errorf("SVG lacks %q", want)
				}
			}
		})
	}
}

func TestInspectJSONAndErrors(t *testing.T) {
	t.Parallel()
	r := tcforge(t, "inspect", "--log-level", "warn", "--json", "--pipeline", "fig-keccak-circuit", "--point", "log_w=0", figures)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var got struct {
		Point   map[string]any `json:"point"`
		Layered []struct {
			Layerer string `json:"layerer"`
			Levels  []struct {
				Width  int `json:"width"`
				Groups []struct {
					Tag   string `json:"tag"`
					Count int    `json:"count"`
				} `json:"groups"`
			} `json:"levels"`
		} `json:"layered"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v\n%s", err, r.stdout)
	}
	if len(got.Layered) != 1 || len(got.Layered[0].Levels) != 8 || got.Layered[0].Levels[2].Width != 275 ||
		got.Layered[0].Levels[2].Groups[0].Tag != "block 1/round 1/theta counters" || got.Point["log_w"] != 0.0 {
		t.Errorf("JSON %+v", got)
	}

	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--point", "log_w=0", figures}, "choose one with --pipeline: fig-keccak-circuit, fig-keccak-depth, fig-keccak-width"},
		{[]string{"--pipeline", "fig-keccak-circuit", figures}, "2 points of pipeline \"fig-keccak-circuit\" match"},
		{[]string{"--pipeline", "fig-keccak-circuit", "--point", "log_w", figures}, `--point: "log_w" is not k=v`},
		{[]string{"--pipeline", "fig-keccak-circuit", "--point", "log_w=0", "--layerer", "fusion", figures}, `has no layerer "fusion"`},
		{[]string{"--pipeline", "fig-keccak-depth", "--point", "log_w=3,rounds=24", "--svg", filepath.Join(t.TempDir(), "x.svg"), figures}, "gates is more than --max-gates 5000"},
	}
	for _, tt := range tests {
		r := tcforge(t, append([]string{"inspect", "--log-level", "warn"}, tt.args...)...)
		if r.code == 0 || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("inspect %v: exit %d, stderr %q, want %q", tt.args, r.code, r.stderr, tt.want)
		}
	}
}

// TestRunReports runs figures.hcl (the paper's figures) with --out and
// --draw and checks the report files' contents.
func TestRunReports(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := tcforge(t, "run", "--log-level", "warn", "--progress", "always", "--png=false", "--draw=fig-*-circuit", "--out", dir, figures)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "7 pipelines, 112 points, 112 rows: 112 verified, 112/112 met their expectations, 0 failed pipelines, ") {
		t.Errorf("summary line missing:\n%s", r.stdout)
	}
	// The bar ran through every point, on stderr only.
	if !strings.Contains(r.stderr, "] 112/112 ") || !strings.Contains(r.stderr, "fig-keccak-depth log_w=3 rounds=24") || strings.Contains(r.stdout, "\x1b[K") {
		t.Errorf("progress bar: stderr %q", r.stderr[max(0, len(r.stderr)-300):])
	}

	var js report.JSONReport
	b, err := os.ReadFile(filepath.Join(dir, "fig-keccak-depth.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Rows) != 48 || !js.OK || js.Expectations[0].Formula != "6 * matrix.rounds + 2 - construction.zero_rc_rounds" {
		t.Fatalf("fig-keccak-depth.json: %d rows, ok %v, %+v", len(js.Rows), js.OK, js.Expectations)
	}
	// The paper's deviations: log_w = 2 loses one ι level at 13 rounds, two at 19.
	for _, row := range js.Rows {
		lw, rounds := row.Point["log_w"].(float64), row.Point["rounds"].(float64)
		switch {
		case lw == 2 && rounds == 13 && row.Depth != 79, lw == 2 && rounds == 19 && row.Depth != 114, lw == 3 && rounds == 15 && row.Depth != 91:
			t.Errorf("depth at log_w=%v rounds=%v is %d", lw, rounds, row.Depth)
		}
	}

	md, err := os.ReadFile(filepath.Join(dir, "fig-keccak-width.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| reifier | expect | width | `11 * 25 * pow(2, matrix.log_w) + (matrix.blocks - 1) * 25 * pow(2, matrix.log_w - 1)` |",
		"| 2 | 4 | 1 | reifier | 34 | 34 | 1250 | 1250 |",
		"![fig-keccak-width.width-vs-blocks](plots/fig-keccak-width.width-vs-blocks.svg)",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("fig-keccak-width.md lacks %q", want)
		}
	}

	plot, err := os.ReadFile(filepath.Join(dir, "plots", "fig-keccak-depth.depth-vs-rounds.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">reifier, log_w=2</text>", ">reifier, log_w=3</text>", ">rounds</text>", ">depth (gate levels)</text>"} {
		if !strings.Contains(string(plot), want) {
			t.Errorf("depth plot lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "plots", "fig-keccak-depth.depth-vs-rounds.png")); err == nil {
		t.Error("--png=false wrote a PNG")
	}

	circuits, _ := filepath.Glob(filepath.Join(dir, "circuits", "*.svg"))
	var names []string
	for _, c := range circuits {
		names = append(names, filepath.Base(c))
	}
	if strings.Join(names, " ") != "fig-keccak-circuit.log_w-0.reifier.svg fig-keccak-circuit.log_w-1.reifier.svg fig-md-circuit.reifier.svg fig-merkle-circuit.reifier.svg" {
		t.Errorf("circuit drawings %v", names)
	}

	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	for _, want := range []string{
		`<a href="#p-fig-keccak-circuit">fig-keccak-circuit</a>`, `<a href="#p-fig-keccak-depth">`, `<a href="#p-fig-keccak-width">`,
		`7 pipelines; 112 points, 112 rows: 112 verified, 112/112 met their expectations.`,
		`<img src="data:image/svg+xml;base64,`, `275 block 1/round 1/theta counters`,
		`550 leaf 1/round 1/theta counters, 550 leaf 2/round 1/theta counters`, `8 block 2/absorb counters`,
	} {
		if !strings.Contains(strings.ReplaceAll(page, "&#43;", "+"), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	// Depth and width against each swept variable: keccak circuit log_w;
	// keccak depth log_w, rounds; keccak width log_w, blocks (rounds is
	// fixed); MD log_w, rounds, block_bits, blocks; Merkle log_w, rounds,
	// leaves. Single-point pipelines have no plots.
	if n := strings.Count(page, "<svg"); n != 2+4+4+8+6 {
		t.Errorf("%d inline plots", n)
	}
}
