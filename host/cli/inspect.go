package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/host/draw"
	"github.com/tcforge/tcforge/host/report"
	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/internal/point"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/bristol"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

type inspectFlags struct {
	pipeline string
	point    string
	layerers []string
	svg      string
	bristol  string
	asJSON   bool
	maxGates int
	samples  int
	seed     uint64
	// labels, if ≥ 0, prints the labels of that block of every mapper's
	// model (labels.go); labelFilter keeps those containing it.
	labels      int
	labelFilter string
}

func newInspectCmd(env *Env, g *globals) *cobra.Command {
	f := &inspectFlags{}
	cmd := &cobra.Command{
		Use:   "inspect [flags] FILE.hcl",
		Short: "Build and layer one pipeline point; print its per-level table and draw it as SVG",
		Long: "Build one matrix point of a pipeline, layer it with the pipeline's layerers (or those named), verify\n" +
			"every circuit like `run` does, and print a per-level table: level, width, gate kinds and provenance\n" +
			"tags (\"275 block 1/round 1/theta counters\"). With --svg, draw the layered circuit with levels as\n" +
			"rows, coloured by provenance (circuits of at most --max-gates gates). With --bristol, write the\n" +
			"logic circuit as a Bristol Fashion netlist (XOR, AND, INV, EQ, EQW gates; see docs/bristol.md),\n" +
			"verified against the logic circuit first.",
		Example: "  tcforge inspect --pipeline fig-keccak-circuit --point log_w=0 --svg keccak.svg configs/paper/figures.hcl\n" +
			"  tcforge inspect --pipeline keccak-arbitrary-input --point log_w=1,rounds=1,blocks=2 configs/paper/keccak.hcl\n" +
			"  tcforge inspect --pipeline sha3 --point preset=sha3-256 --bristol sha3-256.txt configs/sha3.hcl",
		Args: usageArgs(cobra.ExactArgs(1)),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("samples") {
				if err := atLeast("samples", int64(f.samples), 1, ""); err != nil {
					return err
				}
			}
			return atLeast("max-gates", int64(f.maxGates), 0, "")
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			log, err := g.logger(env.Stderr)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return inspect(ctx, env, g, log, args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.pipeline, "pipeline", "", "pipeline to inspect (needed when the file has several)")
	fl.Var(&onceString{v: &f.point}, "point", "matrix point as k=v,k=v (needed when the pipeline has several points; unnamed variables may take any value if that leaves one point)")
	fl.StringArrayVar(&f.layerers, "layerer", nil, "layerer to inspect (repeatable; default: every layerer of the pipeline)")
	fl.StringVar(&f.svg, "svg", "", "draw the layered circuit into this SVG file (with several layerers: FILE-<layerer>.svg)")
	fl.StringVar(&f.bristol, "bristol", "", "write the logic circuit into this file as a Bristol Fashion netlist")
	fl.BoolVar(&f.asJSON, "json", false, "print the per-level table as JSON")
	fl.IntVar(&f.maxGates, "max-gates", draw.MaxGates, "largest circuit drawn with --svg")
	fl.IntVar(&f.samples, "samples", 0, "random inputs for verification (overrides the pipeline's samples)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the random verification inputs")
	addLabelFlags(fl, f)
	return cmd
}

// parsePoint parses "k=v,k=v".
func parsePoint(s string) (map[string]string, error) {
	out := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return out, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("--point: %q is not k=v", kv)
		}
		out[k] = v
	}
	return out, nil
}

// findPipeline returns the pipeline named name, or the only one when name is "".
func findPipeline(files []*config.File, name string) (*config.Pipeline, error) {
	var all []*config.Pipeline
	for _, f := range files {
		all = append(all, f.Pipelines...)
	}
	var names []string
	for _, p := range all {
		if p.Name == name || (name == "" && len(all) == 1) {
			return p, nil
		}
		names = append(names, p.Name)
	}
	if name == "" {
		return nil, fmt.Errorf("the file has %d pipelines; choose one with --pipeline: %s", len(all), strings.Join(names, ", "))
	}
	return nil, fmt.Errorf("no pipeline %q; the file has %s", name, strings.Join(names, ", "))
}

func inspect(ctx context.Context, env *Env, g *globals, log zerolog.Logger, path string, f *inspectFlags) error {
	files, srcs, diags := config.ParseFiles(path)
	color := isTTY(env.Stderr)
	printDiags := func(d hcl.Diagnostics) {
		if len(d) > 0 {
			_ = config.WriteDiagnostics(env.Stderr, srcs, d, color)
		}
	}
	printDiags(diags)
	if diags.HasErrors() {
		return exitStatus{1}
	}
	p, err := findPipeline(files, f.pipeline)
	if err != nil {
		return err
	}
	want, err := parsePoint(f.point)
	if err != nil {
		return err
	}
	pt, err := run.SelectPoint(p, want)
	if err != nil {
		return err
	}
	reg := g.registry(env, log)
	defer reg.Close()
	runner := &run.Runner{Registry: reg, Log: log, Samples: f.samples, Seed: f.seed, Diagnostics: printDiags}
	ins, err := runner.Inspect(ctx, p, pt, f.layerers...)
	if err != nil {
		return fmt.Errorf("inspecting %s: %w", describePoint(p, pt), err)
	}
	if f.asJSON {
		if err := writeInspectJSON(env.Stdout, ins); err != nil {
			return err
		}
	} else {
		writeInspection(env.Stdout, ins)
	}
	if f.labels >= 0 {
		if err := printLabels(ctx, env.Stdout, runner, ins, f); err != nil {
			return fmt.Errorf("labels of %s: %w", describePoint(p, pt), err)
		}
	}
	if f.bristol != "" {
		if err := writeBristol(f.bristol, ins.Logic, f, p.Samples, log); err != nil {
			return fmt.Errorf("exporting %s: %w", describePoint(p, pt), err)
		}
	}
	if f.svg == "" {
		return nil
	}
	for _, l := range ins.Layered {
		out := f.svg
		if len(ins.Layered) > 1 {
			ext := filepath.Ext(out)
			out = strings.TrimSuffix(out, ext) + "-" + l.Layerer + ext
		}
		if n := l.Circuit.NumGates(); n > f.maxGates {
			return fmt.Errorf("not drawing %s [%s]: %d gates is more than --max-gates %d", describePoint(p, pt), l.Layerer, n, f.maxGates)
		}
		if err := drawFile(filepath.Dir(out), filepath.Base(out), l.Circuit, drawTitle(p, pt, l.Layerer)); err != nil {
			return err
		}
		log.Info().Str("file", out).Str("layerer", l.Layerer).Msg("wrote circuit drawing")
	}
	return nil
}

// writeBristol lowers the logic circuit to a Bristol Fashion netlist,
// checks the netlist against the circuit on random inputs (--samples, else
// the pipeline's, from --seed) and writes it to path.
func writeBristol(path string, c *circuit.Circuit, f *inspectFlags, pipelineSamples int, log zerolog.Logger) (err error) {
	nl, err := bristol.FromCircuit(c)
	if err != nil {
		return err
	}
	n := pipelineSamples
	if f.samples > 0 {
		n = f.samples
	}
	in := point.Samples(f.seed, n, len(c.Inputs))
	want, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
	if err != nil {
		return err
	}
	got, err := bitvec.EvalSliced(in, nl.NumInputs(), nl.Eval)
	if err != nil {
		return err
	}
	for s := range in {
		if !bitvec.Equal(got[s], want[s], len(c.Outputs)) {
			return fmt.Errorf("the Bristol Fashion netlist differs from the logic circuit on input %s", in[s].Text(len(c.Inputs)))
		}
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating the netlist's directory: %w", err)
		}
	}
	// Atomically: a write cut short (a full disk) leaves no partial netlist.
	var buf bytes.Buffer
	if err := nl.Write(&buf); err != nil {
		return err
	}
	if err := report.WriteFileAtomic(filepath.Dir(path), filepath.Base(path), buf.Bytes()); err != nil {
		return fmt.Errorf("writing Bristol Fashion netlist: %w", err)
	}
	st := nl.Stats()
	log.Info().Str("file", path).Int("gates", st.Gates).Int("wires", st.Wires).Int("and", st.ANDs).
		Int("xor", st.Count(bristol.XOR)).Int("inv", st.Count(bristol.INV)).Int("eq", st.Count(bristol.EQ)).Int("eqw", st.Count(bristol.EQW)).
		Int("depth", st.Depth).Int("and_depth", st.ANDDepth).Int("verified_on", n).Msg("wrote Bristol Fashion netlist")
	return nil
}

func describePoint(p *config.Pipeline, pt config.Point) string {
	if s := pt.String(); s != "" {
		return fmt.Sprintf("pipeline %q at %s", p.Name, s)
	}
	return fmt.Sprintf("pipeline %q", p.Name)
}

func drawTitle(p *config.Pipeline, pt config.Point, layerer string) string {
	t := p.Name
	if s := pt.String(); s != "" {
		t += " (" + s + ")"
	}
	return t + " — " + layerer
}

// drawFile draws c into the SVG file rel below dir (atomically, no link
// followed below dir), creating its directories.
func drawFile(dir, rel string, c *layered.Circuit, title string) error {
	var buf bytes.Buffer
	if err := draw.SVG(&buf, c, draw.Options{Title: title}); err != nil {
		return fmt.Errorf("drawing %s: %w", filepath.Join(dir, rel), err)
	}
	return report.WriteFileAtomic(dir, rel, buf.Bytes())
}

// levelRows returns the per-level table's rows: level, width, kinds,
// provenance.
func levelRows(c *layered.Circuit) [][4]string {
	var out [][4]string
	for _, l := range draw.Levels(c) {
		out = append(out, [4]string{strconv.Itoa(l.Level), strconv.Itoa(l.Width), l.Kinds(), l.Provenance(6)})
	}
	return out
}

// writeInspection prints the circuits' figures and per-level tables.
func writeInspection(w io.Writer, ins *run.Inspection) {
	ls := ins.Logic.Stats()
	fmt.Fprintf(w, "%s\n", describePoint(ins.Pipeline, ins.Point))
	fmt.Fprintf(w, "construction %q: %d inputs, %d outputs, %d logic nodes, logic depth %d\n",
		ins.Pipeline.Construction.Name, ls.Inputs, ls.Outputs, ls.Nodes, ls.Depth)
	for _, l := range ins.Layered {
		s := l.Circuit.Stats()
		fmt.Fprintf(w, "\nlayerer %q (verified): depth %d, width %d, %d gates (%d copies), %d edges, max fan-in %d, max |weight| %d\n",
			l.Layerer, s.Depth, s.Width, s.Gates, s.Copies, s.Edges, s.MaxFanIn, s.MaxWeight)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "LEVEL\tWIDTH\tKINDS\tPROVENANCE")
		for _, r := range levelRows(l.Circuit) {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r[0], r[1], r[2], r[3])
		}
		tw.Flush()
	}
}

type inspectJSON struct {
	Pipeline string         `json:"pipeline"`
	Point    map[string]any `json:"point"`
	Layered  []inspectLayer `json:"layered"`
}

type inspectLayer struct {
	Layerer string        `json:"layerer"`
	Stats   layered.Stats `json:"stats"`
	Levels  []draw.Level  `json:"levels"`
}

func writeInspectJSON(w io.Writer, ins *run.Inspection) error {
	out := inspectJSON{Pipeline: ins.Pipeline.Name, Point: map[string]any{}}
	for k, v := range ins.Point.Values {
		out.Point[k] = report.MatrixValue(v)
	}
	for _, l := range ins.Layered {
		out.Layered = append(out.Layered, inspectLayer{Layerer: l.Layerer, Stats: l.Circuit.Stats(), Levels: draw.Levels(l.Circuit)})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("encoding inspection: %w", err)
	}
	return nil
}
