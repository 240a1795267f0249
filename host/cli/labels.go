package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/tcforge/tcforge/host/run"
	"github.com/tcforge/tcforge/sdk/model"
)

// addLabelFlags adds inspect's --labels and --label-filter.
func addLabelFlags(fl *pflag.FlagSet, f *inspectFlags) {
	fl.IntVar(&f.labels, "labels", -1, "map the point with the pipeline's mappers, verify each model and print the labels of this block (0-based) of each: its heads and FFN units, and the residual dimensions after it (docs/labels.md); a model that fails is printed with where it first departs from its labels")
	fl.StringVar(&f.labelFilter, "label-filter", "", "with --labels, print only the labels whose line contains this text (e.g. \"round 5/chi\")")
}

// printLabels maps the inspected circuits and prints, per model, block
// f.labels's head and unit labels and the residual labels after it; a
// model that failed its check is printed too, after its error (which names
// the block and units where it departs from its labels), and a closing
// line counts the failed ones.
func printLabels(ctx context.Context, w io.Writer, runner *run.Runner, ins *run.Inspection, f *inspectFlags) error {
	models, err := runner.InspectModels(ctx, ins)
	if err != nil {
		return err
	}
	failed := 0
	for _, im := range models {
		m := im.Model
		verdict := "verified"
		if im.Err != nil {
			verdict, failed = "NOT verified", failed+1
		}
		fmt.Fprintf(w, "\nmapper %q on layerer %q: %s, %d tokens, d_model %d, %d blocks (%s)\n", im.Mapper, im.Layerer, m.Arch, m.Tokens, m.DModel, len(m.Blocks), verdict)
		if im.Err != nil {
			fmt.Fprintf(w, "  error: %v\n", im.Err)
		}
		if m.Labels == nil {
			fmt.Fprintln(w, "  (the model carries no labels)")
			continue
		}
		if f.labels >= len(m.Blocks) {
			return fmt.Errorf("%s has blocks 0…%d, not %d", m.Arch, len(m.Blocks)-1, f.labels)
		}
		writeBlockLabels(w, m, f.labels, f.labelFilter)
	}
	if failed > 0 {
		fmt.Fprintf(w, "\n%d of %d models NOT verified: their labels are what the mapper meant, the errors say where the pass leaves them\n", failed, len(models))
	}
	return nil
}

// writeBlockLabels prints block b's heads and FFN units and the residual
// labels after it (boundary b+1) that contain filter.
func writeBlockLabels(w io.Writer, m *model.Model, b int, filter string) {
	keep := func(s string) bool { return filter == "" || strings.Contains(s, filter) }
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	n := 0
	fmt.Fprintf(tw, "BLOCK %d\tKIND\tINDEX\tLABEL\n", b)
	for _, u := range m.Labels.Units {
		if int(u.Block) == b && keep(u.Name) {
			fmt.Fprintf(tw, "\t%s\t%d\t%s\n", u.Kind, u.Index, u.Name)
			n++
		}
	}
	fmt.Fprintf(tw, "AFTER BLOCK %d\tTOKEN\tDIM\tLABEL\n", b)
	for _, v := range m.Labels.Values {
		if v.From > int32(b+1) || int32(b+1) > v.Until {
			continue
		}
		tok := fmt.Sprint(v.Token)
		if v.Token < 0 {
			tok = "all"
		}
		if d := v.Describe(); keep(d) {
			fmt.Fprintf(tw, "\t%s\t%d\t%s\n", tok, v.Dim, d)
			n++
		}
	}
	tw.Flush()
	fmt.Fprintf(w, "%d labels", n)
	if filter != "" {
		fmt.Fprintf(w, " containing %q", filter)
	}
	fmt.Fprintln(w)
}
