package report

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/internal/safefile"
)

// Section is what report.html shows of one pipeline.
type Section struct {
	Result *run.Result
	// Files are the pipeline's report files (CSV, JSON, Markdown),
	// relative to the output directory.
	Files []string
	// Charts and Plots are its charts and their files (SVG, PNG), relative.
	Charts []Chart
	Plots  []string
	// Drawings are circuit drawings of its small points.
	Drawings []Drawing
}

// Drawing is a circuit drawing shown in report.html.
type Drawing struct {
	Title string
	File  string // SVG, relative to the output directory
	// Levels is the per-level table shown beside the drawing: level,
	// width, kinds, provenance.
	Levels [][4]string
}

// WriteReports writes a pipeline's report files besides the CSV (which
// WriteFiles writes): DIR/<pipeline>.json, DIR/<pipeline>.md and the plots
// under DIR/plots/, as SVG and, if png is set, PNG. It returns the
// pipeline's Section of report.html.
func WriteReports(dir string, res *run.Result, png bool) (*Section, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating output directory: %w", err)
	}
	sec := &Section{Result: res}
	name := res.Pipeline.Name
	if _, err := os.Stat(filepath.Join(dir, name+".csv")); err == nil {
		sec.Files = append(sec.Files, name+".csv")
	}
	charts, plots, err := WritePlots(dir, res, png)
	if err != nil {
		return nil, err
	}
	sec.Charts, sec.Plots = charts, plots
	var jb, mb bytes.Buffer
	if err := WriteJSON(&jb, res); err != nil {
		return nil, err
	}
	if err := WriteMarkdown(&mb, res, plots); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{name + ".json", jb.Bytes()}, {name + ".md", mb.Bytes()}} {
		if err := WriteFileAtomic(dir, f.name, f.b); err != nil {
			return nil, fmt.Errorf("writing report: %w", err)
		}
		sec.Files = append(sec.Files, f.name)
	}
	return sec, nil
}

// svgHeader matches what precedes the <svg> element of an SVG file.
var svgHeader = regexp.MustCompile(`(?s)^.*?(<svg[\s>])`)

// inlineSVG returns an SVG file's <svg> element for inline use, sized to
// the page's width.
func inlineSVG(b []byte) template.HTML {
	s := svgHeader.ReplaceAllString(string(b), "$1")
	return template.HTML(s) // #nosec: our own rendering, not user input
}

type htmlPage struct {
	Generated string
	Summary   Summary
	OK        bool
	// Stopped says why the run stopped before every pipeline finished
	// ("" if it did not).
	Stopped  string
	Sections []htmlSection
	// Frontier is every pipeline's models in one shape comparison
	// (AllShapes) and its plot, when two or more pipelines have models.
	Frontier     []ShapeRow
	FrontierPlot template.HTML
	// FrontierTokens plots the frontier's layers against generated tokens
	// (TokensSVG; "" without decoders).
	FrontierTokens template.HTML
}

type htmlSection struct {
	ID, Name, Source string
	OK               bool
	// Incomplete describes an interrupted pipeline ("" if complete).
	Incomplete string
	// NotPlotted names the rows left out of the plots (they failed).
	NotPlotted   []string
	Summary      Summary
	Files        []string
	Expectations []Expectation
	Columns      []TableColumn
	Rows         [][]htmlCell
	Errors       []string
	Plots        []htmlPlot
	Drawings     []htmlDrawing
	// Shapes is the shape comparison (Shapes), nil without models.
	Shapes []ShapeRow
	// ShapesPlot is its plot (ShapesSVG); TokensPlot its layers against
	// generated tokens (TokensSVG, "" without decoders).
	ShapesPlot, TokensPlot template.HTML
	// Plugins are the pipeline's plugins (see provenancePlugins).
	Plugins []run.PluginInfo
}

type htmlCell struct{ Text, Class string }

type htmlPlot struct {
	Title, File, PNG string
	Mismatches       int
	SVG              template.HTML
}

type htmlDrawing struct {
	Title, File string
	Src         template.URL
	Levels      [][4]string
}

var idClean = regexp.MustCompile(`[^A-Za-z0-9_-]+`)

// maxEmbedded bounds a plot or drawing report.html embeds.
const maxEmbedded = 256 << 20

// WriteHTML writes DIR/report.html atomically: one self-contained page
// (inline CSS and SVG, no network) with a summary, and for every pipeline
// its expectations, its paper-style table (misses highlighted), its plots
// (failed rows left out, and named) and its circuit drawings, linking the
// CSV, JSON and Markdown files. status is how the run ended: "ok",
// "failed", or "stopped: why" for a run stopped before every pipeline
// finished (the page then says so at its top and shows what finished).
func WriteHTML(dir string, sections []*Section, status string) (string, error) {
	page := htmlPage{Generated: time.Now().Format("2006-01-02 15:04:05"), OK: status == "ok" || status == ""}
	if why, ok := strings.CutPrefix(status, "stopped: "); ok {
		page.Stopped = why
	}
	var results []*run.Result
	for _, sec := range sections {
		results = append(results, sec.Result)
	}
	d, err := safefile.OpenDir(dir, true)
	if err != nil {
		return "", err
	}
	defer d.Close()
	if page.Frontier = AllShapes(results); page.Frontier != nil {
		page.FrontierPlot = ShapesSVG(page.Frontier)
		page.FrontierTokens = TokensSVG(page.Frontier)
	}
	for _, sec := range sections {
		res := sec.Result
		hs := htmlSection{
			ID:           "p-" + idClean.ReplaceAllString(res.Pipeline.Name, "-"),
			Name:         res.Pipeline.Name,
			Source:       filepath.ToSlash(res.Pipeline.DefRange.Filename),
			OK:           res.OK() && res.Complete,
			Summary:      Summarize(res),
			Files:        sec.Files,
			Expectations: Expectations(res),
			NotPlotted:   NotPlotted(res),
			Plugins:      res.Plugins,
		}
		if !res.Complete {
			hs.Incomplete = incomplete(res)
		}
		cols, rows := PaperTable(res)
		hs.Columns = cols
		hs.Shapes = Shapes(res)
		hs.ShapesPlot = ShapesSVG(hs.Shapes)
		hs.TokensPlot = TokensSVG(hs.Shapes)
		for _, r := range rows {
			cells := make([]htmlCell, len(r))
			for i, c := range r {
				var class []string
				if i < len(cols) && cols[i].Right {
					class = append(class, "num")
				}
				if c.Bad {
					class = append(class, "bad")
				}
				cells[i] = htmlCell{Text: c.Text, Class: strings.Join(class, " ")}
			}
			hs.Rows = append(hs.Rows, cells)
		}
		for _, row := range res.Rows {
			if row.Err != nil {
				where := row.Layerer
				if pt := row.Point.String(); pt != "" {
					where = pt + ", " + where
				}
				hs.Errors = append(hs.Errors, where+": "+row.Err.Error())
			}
		}
		if n := len(Missing(res)); n > 0 {
			hs.Errors = append(hs.Errors, fmt.Sprintf("%d points %s", n, notRun(res)))
		}
		for _, ch := range sec.Charts {
			svgRel := filepath.Join("plots", ch.Name()+".svg")
			b, err := d.ReadFile(svgRel, maxEmbedded)
			if err != nil {
				return "", fmt.Errorf("reading plot for report.html: %w", err)
			}
			hp := htmlPlot{Title: ch.Title(), File: filepath.ToSlash(svgRel), Mismatches: ch.Mismatches(), SVG: inlineSVG(b)}
			pngRel := filepath.Join("plots", ch.Name()+".png")
			if _, err := os.Stat(filepath.Join(dir, pngRel)); err == nil {
				hp.PNG = filepath.ToSlash(pngRel)
			}
			hs.Plots = append(hs.Plots, hp)
		}
		for _, dr := range sec.Drawings {
			b, err := d.ReadFile(dr.File, maxEmbedded)
			if err != nil {
				return "", fmt.Errorf("reading circuit drawing for report.html: %w", err)
			}
			hs.Drawings = append(hs.Drawings, htmlDrawing{
				Title: dr.Title, File: filepath.ToSlash(dr.File), Levels: dr.Levels,
				// A data: URL keeps a large drawing out of the page's DOM.
				Src: template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(b)),
			})
		}
		page.Summary.Add(hs.Summary)
		page.OK = page.OK && hs.OK
		page.Sections = append(page.Sections, hs)
	}
	var buf bytes.Buffer
	if err := htmlTemplate.Execute(&buf, page); err != nil {
		return "", fmt.Errorf("rendering report.html: %w", err)
	}
	path := filepath.Join(dir, "report.html")
	if err := WriteFileAtomic(dir, "report.html", buf.Bytes()); err != nil {
		return "", err
	}
	return path, nil
}

var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{"inc": func(i int) int { return i + 1 }}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>tcforge report</title>
<style>
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, Helvetica, sans-serif; margin: 0 auto; max-width: 1280px; padding: 0 24px 48px; color: #1d1d1d; line-height: 1.4; }
h1 { margin: 20px 0 4px; }
h2 { margin-top: 40px; padding-top: 12px; border-top: 2px solid #ddd; }
.meta { color: #555; }
.badge { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 0.85em; font-weight: bold; color: #fff; background: #2e7d32; vertical-align: middle; }
.badge.fail { background: #c62828; }
nav ul { columns: 2; padding-left: 18px; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; }
th { background: #f2f2f2; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
td.bad { background: #ffd7d7; color: #a00000; font-weight: bold; }
code { background: #f4f4f4; padding: 1px 4px; border-radius: 3px; }
.plots { display: flex; flex-wrap: wrap; gap: 16px; }
figure { margin: 0; border: 1px solid #e2e2e2; padding: 8px; background: #fff; }
figure svg { width: 560px; max-width: 100%; height: auto; display: block; }
figcaption { font-size: 0.85em; color: #444; }
.drawing img { max-width: 100%; height: auto; border: 1px solid #e2e2e2; }
details { margin: 6px 0 18px; }
.errors { color: #a00000; }
.stopped { padding: 8px 12px; background: #fff3cd; border: 1px solid #e0c060; font-weight: bold; }
.notplotted { font-size: 0.85em; color: #a00000; }
</style>
</head>
<body>
<h1>tcforge report <span class="badge{{if not .OK}} fail{{end}}">{{if .Stopped}}INCOMPLETE{{else if .OK}}all ok{{else}}FAILED{{end}}</span></h1>
{{if .Stopped}}<p class="stopped">This run stopped early ({{.Stopped}}): the pipelines below are those that ran, with the points that finished; later pipelines did not run.</p>
{{end}}<p class="meta">{{len .Sections}} pipelines; {{.Summary}}. Generated {{.Generated}}.</p>
<nav><ul>
{{range .Sections}}<li><a href="#{{.ID}}">{{.Name}}</a> <span class="badge{{if not .OK}} fail{{end}}">{{if .Incomplete}}INCOMPLETE{{else if .OK}}ok{{else}}FAIL{{end}}</span> <span class="meta">{{.Summary.Rows}} rows, {{len .Plots}} plots{{if .Drawings}}, {{len .Drawings}} circuit drawings{{end}}</span></li>
{{end}}</ul></nav>
{{if .FrontierPlot}}<section id="frontier"><h2>The models of every pipeline beside well-known transformers</h2>
<table class="results shapes"><tr><th></th><th>model</th><th>tokens</th><th>d_model</th><th>blocks</th><th>heads</th><th>FFN width</th><th>params dense</th><th>params nonzero</th><th>verified</th></tr>
{{range $i, $r := .Frontier}}<tr{{if .Reference}} class="reference"{{end}}><td class="num">{{if not .Reference}}{{inc $i}}{{end}}</td><td>{{.Model}}</td><td class="num">{{.Tokens}}</td><td class="num">{{.DModel}}</td><td class="num">{{.Blocks}}</td><td class="num">{{.Heads}}</td><td class="num">{{.FFN}}</td><td class="num">{{.ParamsDense}}</td><td class="num">{{.ParamsNonzero}}</td><td>{{.Verified}}</td></tr>
{{end}}</table>
<figure class="plot">{{.FrontierPlot}}<figcaption>Blocks against FFN width, d_model and dense parameters: every verified model of the run (dots, numbered as in the table), the reference shapes (rings)</figcaption></figure>
{{if .FrontierTokens}}<figure class="plot">{{.FrontierTokens}}<figcaption>Layers against the tokens a model writes before its digest: decoders (blue) trade layers for generated tokens; single-pass models (orange) at one pass</figcaption></figure>{{end}}</section>
{{end}}
{{range .Sections}}
<section id="{{.ID}}">
<h2>{{.Name}} <span class="badge{{if not .OK}} fail{{end}}">{{if .Incomplete}}INCOMPLETE{{else if .OK}}ok{{else}}FAIL{{end}}</span></h2>
{{if .Incomplete}}<p class="stopped">{{.Incomplete}}.</p>{{end}}
<p class="meta">{{if .Source}}From <code>{{.Source}}</code>. {{end}}{{.Summary}}.{{if .Files}} Files: {{range $i, $f := .Files}}{{if $i}}, {{end}}<a href="{{$f}}">{{$f}}</a>{{end}}.{{end}}</p>
{{if .Expectations}}<h3>Expectations</h3>
<table class="expect"><tr><th>layerer</th><th>kind</th><th>figure</th><th>formula</th></tr>
{{range .Expectations}}<tr><td>{{.Layerer}}</td><td>{{.Kind}}</td><td>{{.Figure}}</td><td><code>{{.Formula}}</code></td></tr>
{{end}}</table>{{end}}
<h3>Formula verification</h3>
<table class="results">
<tr>{{range .Columns}}<th>{{.Name}}</th>{{end}}</tr>
{{range .Rows}}<tr>{{range .}}<td{{if .Class}} class="{{.Class}}"{{end}}>{{.Text}}</td>{{end}}</tr>
{{end}}</table>
{{if .Errors}}<ul class="errors">{{range .Errors}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Shapes}}<h3>Shapes beside well-known transformers</h3>
<table class="results shapes"><tr><th>model</th><th>tokens</th><th>d_model</th><th>blocks</th><th>heads</th><th>FFN width</th><th>params dense</th><th>params nonzero</th><th>verified</th></tr>
{{range .Shapes}}<tr{{if .Reference}} class="reference"{{end}}><td>{{.Model}}</td><td class="num">{{.Tokens}}</td><td class="num">{{.DModel}}</td><td class="num">{{.Blocks}}</td><td class="num">{{.Heads}}</td><td class="num">{{.FFN}}</td><td class="num">{{.ParamsDense}}</td><td class="num">{{.ParamsNonzero}}</td><td>{{.Verified}}</td></tr>
{{end}}</table>
<p class="meta">Reference rows are published shapes; their parameters are computed from the shapes (embeddings included).</p>
{{if .ShapesPlot}}<figure class="plot">{{.ShapesPlot}}<figcaption>Blocks against FFN width, d_model and dense parameters: the run's verified models numbered in the table's order (dots), the reference shapes (rings)</figcaption></figure>{{end}}{{if .TokensPlot}}<figure class="plot">{{.TokensPlot}}<figcaption>Layers against the tokens a model writes before its digest: decoders (blue), single-pass models (orange) at one pass</figcaption></figure>{{end}}{{end}}
{{template "plugins" .}}
{{if .Plots}}<h3>Plots</h3>
<div class="plots">
{{range .Plots}}<figure class="plot">{{.SVG}}<figcaption>{{.Title}}{{if .Mismatches}} — <b>{{.Mismatches}} points miss their expectation</b>{{end}} · <a href="{{.File}}">SVG</a>{{if .PNG}} · <a href="{{.PNG}}">PNG</a>{{end}}</figcaption></figure>
{{end}}</div>{{end}}
{{if .NotPlotted}}<p class="notplotted">Not plotted (failed): {{range $i, $p := .NotPlotted}}{{if $i}}; {{end}}{{$p}}{{end}}.</p>{{end}}
{{if .Drawings}}<h3>Circuits</h3>
{{range .Drawings}}<figure class="drawing"><img src="{{.Src}}" alt="{{.Title}}"><figcaption>{{.Title}} · <a href="{{.File}}">SVG</a></figcaption></figure>
<details><summary>Per-level table</summary>
<table><tr><th>level</th><th>width</th><th>kinds</th><th>provenance</th></tr>
{{range .Levels}}<tr><td class="num">{{index . 0}}</td><td class="num">{{index . 1}}</td><td>{{index . 2}}</td><td>{{index . 3}}</td></tr>
{{end}}</table></details>
{{end}}{{end}}
</section>
{{end}}
</body>
</html>
`))
