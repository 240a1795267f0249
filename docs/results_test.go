// Package docs_test checks the figures of README.md and docs/results.md:
// each of their result tables sits between
//
//	<!-- results: NAME (go test ./docs -update) -->
//	…
//	<!-- end results -->
//
// and is rendered here, row by row, from a fresh in-process run of the
// configs it names (configs/results.hcl, configs/sha3.hcl; those that take
// minutes in the heavy tier, TCFORGE_HEAVY=1). A table that differs from
// what the run computes fails the test with both versions; `go test ./docs
// -update` (with TCFORGE_HEAVY=1 for the heavy tables) rewrites them.
package docs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/host/cli"
	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/report"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

var update = flag.Bool("update", false, "rewrite the result tables of README.md and docs/results.md from the run")

// files are the documents whose result tables are checked, from this
// package's folder.
func files() []string { return []string{"../README.md", "results.md", "mappers.md"} }

// rows are a run's JSON rows by pipeline.
type rows map[string][]report.JSONRow

// result is one run of a set of configs: its rows and what it printed.
type result struct {
	rows   rows
	stdout string
}

// table renders one result table (its Markdown lines) from the run of its
// configs.
type table struct {
	name    string
	configs []string // the configs it is computed from, run together
	heavy   bool
	render  func(result) ([]string, error)
}

// tables are every result table the documents may hold.
func tables() []table {
	sha3 := []string{"../configs/sha3.hcl"}
	res := []string{"../configs/results.hcl"}
	paper := []string{"../configs/paper/keccak.hcl", "../configs/paper/md.hcl", "../configs/paper/merkle.hcl"}
	return []table{
		{name: "paper-output", configs: paper, render: paperOutput},
		{name: "headline", configs: res, render: headline},
		{name: "sha3-256-backends", configs: res, render: backends},
		{name: "sha3-256-models", configs: res, render: models},
		{name: "sha3-instances", configs: sha3, render: sha3Instances},
		{name: "sha3-current", configs: sha3, render: sha3Current},
		{name: "sha2", configs: res, render: sha2},
		{name: "hashes", configs: res, render: hashes},
		{name: "md-merkle-full", configs: []string{"../configs/constructions.hcl"}, heavy: true, render: mdMerkle},
		{name: "transformers-sha3-256", configs: []string{"../configs/transformers.hcl"}, heavy: true, render: transformers},
		{name: "decoders", configs: []string{"../configs/decoders.hcl"}, render: decoders},
		{name: "decoders-full", configs: []string{"../configs/decoders-full.hcl"}, heavy: true, render: decoders},
	}
}

// TestResults checks the tables whose runs take seconds.
func TestResults(t *testing.T) {
	sdktest.Short(t, "runs full SHA3-256 and SHA-2 through every backend (15–30 s)")
	checkTables(t, false)
}

// TestResultsHeavy checks the tables whose runs take minutes.
func TestResultsHeavy(t *testing.T) {
	sdktest.Heavy(t, "full-size MD and Merkle trees and every transformer of full SHA3-256 (minutes)")
	checkTables(t, true)
}

// marker matches a result table's markers and what lies between them.
var marker = regexp.MustCompile(`(?s)<!-- results: ([a-z0-9-]+) \(go test ./docs -update\) -->\n(.*?)<!-- end results -->`)

// checkTables renders the tables of the tier (heavy or not) and compares
// them with the documents, or rewrites the documents under -update.
func checkTables(t *testing.T, heavy bool) {
	var want []table
	runs := map[string]result{} // by the configs, joined
	for _, tb := range tables() {
		if tb.heavy != heavy {
			continue
		}
		want = append(want, tb)
		key := strings.Join(tb.configs, " ")
		if _, ok := runs[key]; !ok {
			runs[key] = run(t, tb.configs)
		}
	}
	rendered := map[string]string{}
	for _, tb := range want {
		lines, err := tb.render(runs[strings.Join(tb.configs, " ")])
		if err != nil {
			t.Fatalf("table %s: %v", tb.name, err)
		}
		rendered[tb.name] = strings.Join(lines, "\n") + "\n"
	}
	seen := map[string]bool{}
	for _, f := range files() {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var firstErr bool
		out := marker.ReplaceAllFunc(src, func(m []byte) []byte {
			sub := marker.FindSubmatch(m)
			name, have := string(sub[1]), string(sub[2])
			r, ok := rendered[name]
			if !ok {
				if !known(name) && !firstErr {
					firstErr = true
					t.Errorf("%s: unknown result table %q", f, name)
				}
				return m // another tier's
			}
			seen[name] = true
			if have != r && !*update {
				t.Errorf("%s: table %s differs from the run (go test ./docs -update rewrites it)\nhave:\n%s\nthe run:\n%s", f, name, have, r)
			}
			begin, _, _ := bytes.Cut(m, []byte("\n"))
			return []byte(string(begin) + "\n" + r + "<!-- end results -->")
		})
		if *update && !bytes.Equal(out, src) {
			if err := os.WriteFile(f, out, 0o644); err != nil {
				t.Fatal(err)
			}
			t.Logf("rewrote %s", f)
		}
	}
	for _, tb := range want {
		if !seen[tb.name] {
			t.Errorf("no document holds result table %s", tb.name)
		}
	}
}

// known reports whether name is a table of either tier.
func known(name string) bool {
	for _, tb := range tables() {
		if tb.name == name {
			return true
		}
	}
	return false
}

// run runs the configs in process (bundled plugins called directly, few
// verification samples: the figures do not depend on them) and returns
// every pipeline's rows and what it printed; every row must verify and
// meet its expectations. flags go before the configs.
func run(t *testing.T, configs []string, flags ...string) result {
	t.Helper()
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := append(append([]string{"run", "--in-process", "--samples", "8", "--log-level", "warn", "--progress", "never", "--out", out}, flags...), configs...)
	if code := cli.Main(context.Background(), cli.Env{Stdout: &stdout, Stderr: &stderr, Builtins: builtin.Plugins()}, args); code != 0 {
		t.Fatalf("tcforge %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout.String(), stderr.String())
	}
	files, err := filepath.Glob(filepath.Join(out, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := rows{}
	for _, f := range files {
		if filepath.Base(f) == "tcforge-run.json" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rep report.JSONReport
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, r := range rep.Rows {
			if !r.OK {
				t.Fatalf("%s: a row failed: %+v", rep.Pipeline, r)
			}
		}
		got[rep.Pipeline] = rep.Rows
	}
	return result{got, stdout.String()}
}

// find returns the row of pipeline p whose point has the given values
// (compared as text) and, if layerer is not empty, that layerer.
func (rs rows) find(p, layerer string, point ...string) (report.JSONRow, error) {
	for _, r := range rs[p] {
		if layerer != "" && r.Layerer != layerer {
			continue
		}
		ok := true
		for i := 0; i+1 < len(point); i += 2 {
			ok = ok && fmt.Sprint(r.Point[point[i]]) == point[i+1]
		}
		if ok {
			return r, nil
		}
	}
	return report.JSONRow{}, fmt.Errorf("pipeline %q has no row %s %v", p, layerer, point)
}

// model returns row r's model of architecture arch.
func model(r report.JSONRow, arch string) (report.JSONModel, error) {
	for _, m := range r.Models {
		if m.Arch == arch {
			return m, nil
		}
	}
	return report.JSONModel{}, fmt.Errorf("row %v %s has no %s model", r.Point, r.Layerer, arch)
}

// n writes an integer with thousands separators: 17,600.
func n[T ~int | ~int64](v T) string {
	s := strconv.FormatInt(int64(v), 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// line joins cells into a Markdown table row.
func line(cells ...string) string { return "| " + strings.Join(cells, " | ") + " |" }

// backend is one way of compiling full SHA3-256 in configs/results.hcl.
type backend struct {
	label, pipeline, layerer, key, value string
}

// sha3Backends are the headline's rows.
func sha3Backends() []backend {
	return []backend{
		{"reifier, `mode = \"paper\"` (the paper's compiler)", "results-sha3-256-reifier", "reifier", "mode", "paper"},
		{"reifier, `mode = \"current\"` (today's Reifier)", "results-sha3-256-reifier", "reifier", "mode", "current"},
		{"fusion, `objective = \"size\"`", "results-sha3-256-fusion", "fusion", "objective", "size"},
		{"fusion, `objective = \"depth\"`", "results-sha3-256-fusion", "fusion", "objective", "depth"},
	}
}

// paperOutput: what `tcforge run` prints for the paper's configs, the
// start of its first table and its last line (without the time).
func paperOutput(res result) ([]string, error) {
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	if len(lines) < 5 || lines[0] != `pipeline "keccak-arbitrary-input"` {
		return nil, fmt.Errorf("the paper's run printed\n%s", res.stdout)
	}
	last := regexp.MustCompile(`, [0-9.]+[mµn]?s$`).ReplaceAllString(lines[len(lines)-1], "")
	out := []string{"```"}
	out = append(out, lines[:4]...)
	return append(out, "  ...", last, "```"), nil
}

// backendTable is a table of the headline's backends: header, alignment
// row, and the cells of each backend from its row and its MLP model.
func backendTable(rs rows, header []string, align string, cells func(r report.JSONRow, m report.JSONModel) []string) ([]string, error) {
	out := []string{line(header...), align}
	for _, b := range sha3Backends() {
		r, err := rs.find(b.pipeline, b.layerer, b.key, b.value)
		if err != nil {
			return nil, err
		}
		m, err := model(r, "no-attention/mlp")
		if err != nil {
			return nil, err
		}
		out = append(out, line(append([]string{b.label}, cells(r, m)...)...))
	}
	return out, nil
}

// headline: full SHA3-256 through each backend, and its no-attention MLP.
func headline(res result) ([]string, error) {
	return backendTable(res.rows, []string{"backend", "depth", "width", "gates", "edges", "MLP blocks", "MLP d_model", "MLP params (nonzero)"},
		"|---|---:|---:|---:|---:|---:|---:|---:|", func(r report.JSONRow, m report.JSONModel) []string {
			return []string{n(r.Depth), n(r.Width), n(r.Gates), n(r.Edges), n(m.Blocks), n(m.DModel), n(m.ParamsNonzero)}
		})
}

// backends: the circuits of the headline, every figure.
func backends(res result) ([]string, error) {
	return backendTable(res.rows, []string{"backend", "depth", "width", "gates", "copies", "edges", "forms", "nonzeros", "max fan-in", "max weight"},
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|", func(r report.JSONRow, _ report.JSONModel) []string {
			return []string{n(r.Depth), n(r.Width), n(r.Gates), n(r.Copies), n(r.Edges), n(r.Forms), n(r.Nonzeros), n(r.MaxFanIn), n(r.MaxWeight)}
		})
}

// models: the headline's no-attention MLPs, every figure.
func models(res result) ([]string, error) {
	return backendTable(res.rows, []string{"backend", "blocks", "d_model", "FFN width", "params (nonzero)", "params (dense)", "exact in"},
		"|---|---:|---:|---:|---:|---:|---|", func(_ report.JSONRow, m report.JSONModel) []string {
			return []string{n(m.Blocks), n(m.DModel), n(m.FFNHidden), n(m.ParamsNonzero), n(m.ParamsDense), m.ExactIn}
		})
}

// presetName is a keccak preset as the tables write it.
func presetName(p string) string {
	return strings.NewReplacer("sha3-", "SHA3-", "shake", "SHAKE").Replace(p)
}

// circuitRow is a table row of a circuit's figures: label, depth, width,
// gates, copies, edges.
func circuitRow(label string, r report.JSONRow) string {
	return line(label, n(r.Depth), n(r.Width), n(r.Gates), n(r.Copies), n(r.Edges))
}

// circuitHeader is the header of circuitRow's tables.
func circuitHeader() []string {
	return []string{line("instance", "depth", "width", "gates (copies incl.)", "copies", "edges"), "|---|---:|---:|---:|---:|---:|"}
}

// sha3Instances: configs/sha3.hcl's standard instances and longer
// messages, reifier in the paper's form.
func sha3Instances(res result) ([]string, error) {
	rs := res.rows
	out, err := presetRows(rs, "sha3")
	if err != nil {
		return nil, err
	}
	for _, m := range []struct{ preset, bits, label string }{
		{"sha3-256", "2000", "SHA3-256, 2000-bit message"},
		{"sha3-256", "4000", "SHA3-256, 4000-bit message"},
		{"shake128", "1000", "SHAKE128, 1000 bits in, 3000 out"},
	} {
		r, err := rs.find("sha3-multiblock", "reifier", "preset", m.preset, "message_bits", m.bits)
		if err != nil {
			return nil, err
		}
		out = append(out, circuitRow(m.label, r))
	}
	return out, nil
}

// sha3Current: the standard instances through today's Reifier.
func sha3Current(res result) ([]string, error) { return presetRows(res.rows, "sha3-current") }

// presetRows is the circuit table of pipeline p's standard SHA-3
// instances (configs/sha3.hcl), one block each.
func presetRows(rs rows, p string) ([]string, error) {
	out := circuitHeader()
	for _, preset := range []string{"sha3-224", "sha3-256", "sha3-384", "sha3-512", "shake128"} {
		r, err := rs.find(p, "reifier", "preset", preset)
		if err != nil {
			return nil, err
		}
		out = append(out, circuitRow(presetName(preset), r))
	}
	return out, nil
}

// sha2: SHA-256 and SHA-512, one block, both backends.
func sha2(res result) ([]string, error) {
	rs := res.rows
	out := []string{line("instance (one block)", "layerer", "depth", "width", "gates", "copies", "edges"), "|---|---|---:|---:|---:|---:|---:|"}
	for _, p := range []string{"sha256", "sha512"} {
		for _, l := range []string{"reifier", "fusion"} {
			r, err := rs.find("results-sha2", l, "preset", p)
			if err != nil {
				return nil, err
			}
			out = append(out, line(strings.ToUpper(p[:3])+"-"+p[3:], l, n(r.Depth), n(r.Width), n(r.Gates), n(r.Copies), n(r.Edges)))
		}
	}
	return out, nil
}

// hashes: BLAKE2s, BLAKE3 and Ascon-Hash256, one block each, both
// backends.
func hashes(res result) ([]string, error) {
	out := []string{line("instance (one block)", "layerer", "depth", "width", "gates", "copies", "edges"), "|---|---|---:|---:|---:|---:|---:|"}
	for _, h := range []struct{ pipeline, label string }{
		{"results-blake2s", "BLAKE2s-256, 64 bytes"},
		{"results-blake3", "BLAKE3, 64 bytes"},
		{"results-ascon", "Ascon-Hash256, 7 bytes"},
	} {
		for _, l := range []string{"reifier", "fusion"} {
			r, err := res.rows.find(h.pipeline, l)
			if err != nil {
				return nil, err
			}
			out = append(out, line(h.label, l, n(r.Depth), n(r.Width), n(r.Gates), n(r.Copies), n(r.Edges)))
		}
	}
	return out, nil
}

// mdMerkle: full-size MD and Merkle (configs/constructions.hcl).
func mdMerkle(res result) ([]string, error) {
	rs := res.rows
	out := []string{line("construction (Keccak-f[1600], 24 rounds)", "depth", "width", "gates", "edges"), "|---|---:|---:|---:|---:|"}
	for _, c := range []struct{ pipeline, label string }{
		{"md-keccak-f1600", "MD chain, 4 blocks of 1088 bits"},
		{"merkle-keccak-f1600", "Merkle tree, 8 leaves of 1088 bits"},
	} {
		r, err := rs.find(c.pipeline, "reifier")
		if err != nil {
			return nil, err
		}
		out = append(out, line(c.label, n(r.Depth), n(r.Width), n(r.Gates), n(r.Edges)))
	}
	return out, nil
}

// transformers: full SHA3-256's models (configs/transformers.hcl).
func transformers(res result) ([]string, error) {
	rs := res.rows
	out := []string{line("layerer", "model", "tokens", "d_model", "blocks", "heads", "FFN width", "params (nonzero)"), "|---|---|---:|---:|---:|---:|---:|---:|"}
	for _, l := range []string{"fusion", "reifier"} {
		r, err := rs.find("transformers-sha3-256", l)
		if err != nil {
			return nil, err
		}
		for _, m := range r.Models {
			out = append(out, line(l, m.Arch, n(m.Tokens), n(m.DModel), n(m.Blocks), n(m.Heads), n(m.FFNHidden), n(m.ParamsNonzero)))
		}
	}
	return out, nil
}

// TestReadmePipeline runs the README's pipeline example: it must parse,
// verify and meet its expectation at every point.
func TestReadmePipeline(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := bytes.Cut(readme, []byte("```hcl\n"))
	example, _, ok2 := bytes.Cut(rest, []byte("```"))
	if !ok || !ok2 {
		t.Fatal("README.md has no hcl block")
	}
	cfg := filepath.Join(t.TempDir(), "example.hcl")
	if err := os.WriteFile(cfg, example, 0o644); err != nil {
		t.Fatal(err)
	}
	res := run(t, []string{cfg})
	if len(res.rows) != 1 {
		t.Fatalf("%d pipelines, want 1", len(res.rows))
	}
	for p, rs := range res.rows {
		if len(rs) < 2 {
			t.Errorf("pipeline %s: %d rows", p, len(rs))
		}
		for _, r := range rs {
			if r.Layerer == "reifier" && len(r.Expect) == 0 {
				t.Errorf("pipeline %s: row %v has no expectation", p, r.Point)
			}
		}
	}
}

// TestReadmeFigures checks the README's figures outside its result
// tables against what they state: the default number of verification
// inputs, the paper's row count (the generated run summary's), and the
// Taskfile's default fuzzing count.
func TestReadmeFigures(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	task, err := os.ReadFile("../Taskfile.yml")
	if err != nil {
		t.Fatal(err)
	}
	fuzz := regexp.MustCompile(`FUZZTIME: '\{\{\.FUZZTIME \| default "([0-9]+x)"\}\}'`).FindStringSubmatch(string(task))
	rows := regexp.MustCompile(`\n4 pipelines, 64 points, ([0-9]+) rows: `).FindStringSubmatch(readme)
	if fuzz == nil || rows == nil {
		t.Fatalf("the Taskfile's FUZZTIME default (%v) or the paper run's summary in README.md (%v) not found", fuzz, rows)
	}
	for _, want := range []string{
		fmt.Sprintf("verifies (%d random inputs a point)", config.DefaultSamples),
		fmt.Sprintf("all %s rows equal the\npaper's CSV files", rows[1]),
		fmt.Sprintf("default %s)", fuzz[1]),
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md lacks %q", want)
		}
	}
}

// decoders: every decoder of the configs' pipelines (tokens as time), in
// pipeline and point order: its levels a step, layers, d_model, heads,
// widest FFN, vocabulary, generated tokens, parameters and the formats
// whose greedy generation reproduced every token.
func decoders(res result) ([]string, error) {
	out := []string{line("pipeline", "layers (levels a step)", "d_model", "heads", "FFN (widest)", "vocab", "prompt", "generated", "params (dense)", "params (nonzero)", "exact in"),
		"|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"}
	names := make([]string, 0, len(res.rows))
	for p := range res.rows {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		for _, r := range res.rows[p] {
			for _, m := range r.Models {
				if m.Generated == 0 {
					continue
				}
				out = append(out, line(p, n(m.Blocks), n(m.DModel), n(m.Heads), n(m.FFNHidden), n(m.Vocab),
					n(m.Tokens-m.Generated), n(m.Generated), n(m.ParamsDense), n(m.ParamsNonzero), m.ExactIn))
			}
		}
	}
	if len(out) == 2 {
		return nil, fmt.Errorf("no decoder in the run")
	}
	return out, nil
}
