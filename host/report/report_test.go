package report_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/report"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/sdk/layered"
)

// pipelineSrc has two swept variables, two layerers and expectations for
// one of them.
const pipelineSrc = `
pipeline "toy" {
  matrix {
    rounds = [1, 2, 3]
    log_w  = [1, 2]
  }
  construction "keccak" {
    rounds = matrix.rounds
  }
  layerer "reifier" {}
  layerer "fusion" {}
  expect "reifier" {
    depth = (6 * matrix.rounds +
             2)
    width = 275 * matrix.log_w
  }
}
`

// toyResult builds a result by hand: reifier's depth is 6·rounds + 2
// except at rounds = 2, log_w = 2, where it is one less (a miss); fusion
// has no expectations.
func toyResult(t *testing.T) *run.Result {
	t.Helper()
	path := filepath.Join(t.TempDir(), "toy.hcl")
	if err := os.WriteFile(path, []byte(pipelineSrc), 0o644); err != nil {
		t.Fatal(err)
	}
	files, _, diags := config.ParseFiles(path)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	p := files[0].Pipelines[0]
	res := &run.Result{Pipeline: p, Vars: p.Vars(), ExpectNames: []string{"depth", "width"}, Complete: true}
	for _, pt := range p.Points() {
		r, _ := pt.Int("rounds")
		lw, _ := pt.Int("log_w")
		depth := 6*r + 2
		if r == 2 && lw == 2 {
			depth--
		}
		width := 275 * lw
		res.Rows = append(res.Rows, run.Row{
			Point: pt, Layerer: "reifier", Verified: true, ExpectOK: depth == 6*r+2,
			Stats:  layered.Stats{Depth: int(depth), Width: int(width), Gates: int(depth * width), Widths: []int{int(width), 25}},
			Expect: map[string]int64{"depth": 6*r + 2, "width": 275 * lw},
			Actual: map[string]int64{"depth": depth, "width": width},
		})
		res.Rows = append(res.Rows, run.Row{
			Point: pt, Layerer: "fusion", Verified: true, ExpectOK: true,
			Stats: layered.Stats{Depth: int(2*r + 1), Width: int(100 * lw)},
		})
	}
	return res
}

func TestCharts(t *testing.T) {
	charts := report.Charts(toyResult(t))
	var names []string
	for _, c := range charts {
		names = append(names, c.Name())
	}
	want := []string{"toy.depth-vs-rounds", "toy.depth-vs-log_w", "toy.width-vs-rounds", "toy.width-vs-log_w"}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("charts %v, want %v", names, want)
	}
	type pt struct {
		x      float64
		act    int64
		exp    int64
		hasExp bool
	}
	tests := []struct {
		chart  string
		series []string // labels
		points map[string][]pt
		misses int
	}{
		{
			chart:  "toy.depth-vs-rounds",
			series: []string{"reifier, log_w=1", "fusion, log_w=1,2", "reifier, log_w=2"},
			points: map[string][]pt{
				"reifier, log_w=1":  {{1, 8, 8, true}, {2, 14, 14, true}, {3, 20, 20, true}},
				"reifier, log_w=2":  {{1, 8, 8, true}, {2, 13, 14, true}, {3, 20, 20, true}},
				"fusion, log_w=1,2": {{1, 3, 0, false}, {2, 5, 0, false}, {3, 7, 0, false}},
			},
			misses: 1,
		},
		{
			chart:  "toy.width-vs-log_w",
			series: []string{"reifier, rounds=1,2,3", "fusion, rounds=1,2,3"},
			points: map[string][]pt{
				"reifier, rounds=1,2,3": {{1, 275, 275, true}, {2, 550, 550, true}},
				"fusion, rounds=1,2,3":  {{1, 100, 0, false}, {2, 200, 0, false}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.chart, func(t *testing.T) {
			var ch *report.Chart
			for i := range charts {
				if charts[i].Name() == tt.chart {
					ch = &charts[i]
				}
			}
			if ch == nil {
				t.Fatalf("no chart %s", tt.chart)
			}
			var labels []string
			for _, s := range ch.Series {
				labels = append(labels, s.Label())
				var got []pt
				for _, p := range s.Points {
					got = append(got, pt{p.X, p.Actual, p.Expected, p.HasExpected})
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.points[s.Label()]) {
					t.Errorf("series %q: points %v, want %v", s.Label(), got, tt.points[s.Label()])
				}
			}
			if strings.Join(labels, "|") != strings.Join(tt.series, "|") {
				t.Errorf("series %q, want %q", labels, tt.series)
			}
			if got := ch.Mismatches(); got != tt.misses {
				t.Errorf("%d mismatches, want %d", got, tt.misses)
			}
		})
	}
}

func TestChartRendering(t *testing.T) {
	charts := report.Charts(toyResult(t))
	svg, err := charts[0].SVG()
	if err != nil {
		t.Fatal(err)
	}
	s := string(svg)
	for _, want := range []string{
		"<svg", ">toy: depth vs rounds</text>", ">rounds</text>", ">depth (gate levels)</text>",
		">reifier, log_w=1</text>", ">fusion, log_w=1,2</text>", ">expected</text>", ">actual</text>",
		">actual ≠ expected (1)</text>", "sans-serif",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
	// x ticks at the matrix values, integers only on the y axis.
	for _, want := range []string{">1</text>", ">2</text>", ">3</text>"} {
		if !strings.Contains(s, want) {
			t.Errorf("SVG lacks tick label %q", want)
		}
	}
	if regexp.MustCompile(`>\d+\.\d+</text>`).MatchString(s) {
		t.Errorf("SVG has fractional tick labels: %v", regexp.MustCompile(`>\d+\.\d+</text>`).FindAllString(s, 5))
	}
	png, err := charts[0].PNG()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 5000 {
		t.Errorf("PNG: %d bytes, prefix %q", len(png), png[:min(8, len(png))])
	}
	// A chart without mismatches has no mismatch legend.
	svg, err = charts[3].SVG()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(svg), "actual ≠ expected") {
		t.Errorf("%s: mismatch legend without mismatches", charts[3].Name())
	}
}

func TestJSON(t *testing.T) {
	res := toyResult(t)
	var buf bytes.Buffer
	if err := report.WriteJSON(&buf, res); err != nil {
		t.Fatal(err)
	}
	// Decode generically: matrix values must be JSON numbers.
	var raw struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(buf.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw.Rows) != 12 {
		t.Fatalf("%d rows, want 12", len(raw.Rows))
	}
	if v, ok := raw.Rows[0]["point"].(map[string]any)["rounds"].(float64); !ok || v != 1 {
		t.Errorf("point.rounds = %#v, want the number 1", raw.Rows[0]["point"])
	}
	var got report.JSONReport
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Pipeline != "toy" || got.OK || strings.Join(got.Vars, ",") != "rounds,log_w" {
		t.Errorf("header: pipeline %q ok %v vars %v", got.Pipeline, got.OK, got.Vars)
	}
	wantEx := []report.Expectation{
		{Layerer: "reifier", Figure: "depth", Formula: "(6 * matrix.rounds + 2)"},
		{Layerer: "reifier", Figure: "width", Formula: "275 * matrix.log_w"},
	}
	if len(got.Expectations) != 2 {
		t.Fatalf("expectations %+v", got.Expectations)
	}
	for i, e := range wantEx {
		g := got.Expectations[i]
		if g.Layerer != e.Layerer || g.Figure != e.Figure || g.Formula != e.Formula || !strings.Contains(g.At, "toy.hcl:") {
			t.Errorf("expectation %d = %+v, want %+v", i, g, e)
		}
	}
	tests := []struct {
		i                  int
		layerer            string
		depth, width       int
		expectOK, hasExpec bool
	}{
		{0, "reifier", 8, 275, true, true},
		{1, "fusion", 3, 100, true, false},
		{6, "reifier", 13, 550, false, true}, // rounds=2 log_w=2: the miss
	}
	for _, tt := range tests {
		r := got.Rows[tt.i]
		if r.Layerer != tt.layerer || r.Depth != tt.depth || r.Width != tt.width || r.ExpectOK != tt.expectOK || (r.Expect != nil) != tt.hasExpec {
			t.Errorf("row %d = %+v", tt.i, r)
		}
	}
	if r := got.Rows[6]; r.Expect["depth"] != 14 || r.Actual["depth"] != 13 || r.OK {
		t.Errorf("row 6 expect %v actual %v ok %v", r.Expect, r.Actual, r.OK)
	}
	if w := got.Rows[0].Widths; len(w) != 2 || w[0] != 275 {
		t.Errorf("level widths %v", w)
	}
}

func TestMarkdown(t *testing.T) {
	var buf bytes.Buffer
	if err := report.WriteMarkdown(&buf, toyResult(t), []string{"plots/toy.depth-vs-rounds.svg", "plots/toy.depth-vs-rounds.png"}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	formula := strings.Index(md, "| reifier | expect | depth | `(6 * matrix.rounds + 2)` |")
	table := strings.Index(md, "| rounds | log_w | layerer | Exp. depth | Actual depth | Exp. width | Actual width | gates | copies | edges | forms | nonzeros | verified | ok |")
	if formula < 0 || table < 0 || formula > table {
		t.Fatalf("want the formulas above the table, got:\n%s", md)
	}
	for _, want := range []string{
		"# toy\n",
		"6 points, 12 rows: 12 verified, 5/6 met their expectations; **some rows FAILED**",
		"| 1 | 1 | reifier | 8 | 8 | 275 | 275 | 2200 | 0 | 0 | 0 | 0 | true | ok |",
		"| 2 | 2 | reifier | 14 | **13** ✗ | 550 | 550 | 7150 | 0 | 0 | 0 | 0 | true | **FAIL** ✗ |",
		"| 1 | 1 | fusion | - | - | - | - | 0 | 0 | 0 | 0 | 0 | true | ok |",
		"![toy.depth-vs-rounds](plots/toy.depth-vs-rounds.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, ".png)") {
		t.Error("Markdown embeds the PNG as well as the SVG")
	}
}

func writeAll(t *testing.T) (string, *report.Section) {
	t.Helper()
	dir := t.TempDir()
	res := toyResult(t)
	if _, err := report.WriteFiles(dir, res); err != nil {
		t.Fatal(err)
	}
	sec, err := report.WriteReports(dir, res, true)
	if err != nil {
		t.Fatal(err)
	}
	// A circuit drawing, as `run --draw` adds.
	svg := `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>`
	if err := os.MkdirAll(filepath.Join(dir, "circuits"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "circuits", "toy.svg"), []byte(svg), 0o644); err != nil {
		t.Fatal(err)
	}
	sec.Drawings = []report.Drawing{{Title: "toy circuit", File: "circuits/toy.svg", Levels: [][4]string{{"1", "275", "275 gates", "275 round 1/theta counters"}}}}
	if _, err := report.WriteHTML(dir, []*report.Section{sec}, "ok"); err != nil {
		t.Fatal(err)
	}
	return dir, sec
}

func TestWriteReportsAndHTML(t *testing.T) {
	dir, sec := writeAll(t)
	wantFiles := []string{"toy.csv", "toy.json", "toy.md"}
	if strings.Join(sec.Files, " ") != strings.Join(wantFiles, " ") {
		t.Errorf("files %v, want %v", sec.Files, wantFiles)
	}
	if len(sec.Plots) != 8 { // 4 charts × svg, png
		t.Errorf("plots %v", sec.Plots)
	}
	for _, f := range append(append([]string{}, sec.Files...), sec.Plots...) {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(string(b)) // "+" is written &#43;
	for _, want := range []string{
		`<a href="#p-toy">toy</a>`,
		`<a href="toy.csv">toy.csv</a>`, `<a href="toy.json">toy.json</a>`, `<a href="toy.md">toy.md</a>`,
		`<code>(6 * matrix.rounds + 2)</code>`,
		`<th>Exp. depth</th><th>Actual depth</th>`,
		`<td class="num bad">13</td>`,
		`<td class="bad">FAIL</td>`,
		`toy: depth vs rounds — <b>1 points miss their expectation</b>`,
		`<img src="data:image/svg+xml;base64,`,
		`275 round 1/theta counters`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if n := strings.Count(page, "<svg"); n != 4 {
		t.Errorf("%d inline SVG plots, want 4", n)
	}
	if strings.Contains(page, "<?xml") {
		t.Error("inline SVG keeps its XML declaration")
	}
	// Self-contained: no network references.
	for _, m := range regexp.MustCompile(`(?:src|href)="(https?:[^"]*)"`).FindAllStringSubmatch(page, -1) {
		t.Errorf("report.html loads %s", m[1])
	}
	if n := strings.Count(page, "<tr>"); n != 1+2+1+12+1+1 { // expect header+2, results header+12, level table header+1
		t.Errorf("%d table rows", n)
	}
}

// TestHTMLInChromium renders report.html in headless Chromium, when it is
// installed, and checks the rendered DOM and a screenshot.
func TestHTMLInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a headless browser")
	}
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Skip("chromium not installed (apt-get install -y chromium)")
	}
	dir, _ := writeAll(t)
	page := "file://" + filepath.Join(dir, "report.html")
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + filepath.Join(dir, "chrome")}
	run := func(extra ...string) []byte {
		cmd := exec.Command(bin, append(append(args, extra...), page)...)
		var out, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &stderr
		done := make(chan error, 1)
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting chromium: %v", err)
		}
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("chromium %v: %v\n%s", extra, err, stderr.String())
			}
		case <-time.After(60 * time.Second):
			cmd.Process.Kill()
			t.Fatal("chromium timed out")
		}
		return out.Bytes()
	}
	dom := string(run("--dump-dom"))
	for _, want := range []string{"<table class=\"results\">", "<svg", "toy: depth vs rounds", "<td class=\"num bad\">13</td>"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	shot := filepath.Join(dir, "shot.png")
	run("--window-size=1280,1600", "--screenshot="+shot)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b, []byte("\x89PNG")) || len(b) < 20000 {
		t.Errorf("screenshot: %d bytes", len(b))
	}
}

// TestCSVComparison: a pipeline with two layerers gets layer_ms and the
// ratios to the first layerer in its CSV, empty in the first one's rows.
func TestCSVComparison(t *testing.T) {
	res := toyResult(t)
	for i := range res.Rows {
		res.Rows[i].LayerTime = time.Duration(10*(i%2+1)) * time.Millisecond // reifier 10 ms, fusion 20 ms
	}
	var buf bytes.Buffer
	if err := report.WriteCSV(&buf, res); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	wantHead := "rounds,log_w,layerer,depth,width,gates,copies,edges,forms,nonzeros,verified,expect_depth,actual_depth,expect_width,actual_width,expect_ok," +
		"layer_ms,depth_vs_reifier,width_vs_reifier,gates_vs_reifier,edges_vs_reifier,time_vs_reifier,plugins,error"
	if lines[0] != wantHead {
		t.Fatalf("header\n%s\nwant\n%s", lines[0], wantHead)
	}
	// rounds = 1, log_w = 1: reifier depth 8, width 275; fusion depth 3, width 100.
	if want := "1,1,reifier,8,275,2200,0,0,0,0,true,8,8,275,275,true,10.0,,,,,,,"; lines[1] != want {
		t.Errorf("reifier row %q, want %q", lines[1], want)
	}
	if want := "1,1,fusion,3,100,0,0,0,0,0,true,,,,,true,20.0,0.38,0.36,0.00,,2.00,,"; lines[2] != want {
		t.Errorf("fusion row %q, want %q", lines[2], want)
	}
}
