package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"path/filepath"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/rs/zerolog"
	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/host/config"
	"github.com/tcforge/tcforge/internal/safefile"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/internal/tokencheck"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
)

// computes describes what the models of one point's logic circuit c
// compute (safetensors.Describe), from the construction's resolved
// parameters and attributes (scope).
func computes(name string, scope map[string]cty.Value, c *circuit.Circuit) *safetensors.Computes {
	return safetensors.Describe(name, plainValues(scope), c)
}

// blockParams returns a plugin block's resolved parameters at one point.
func blockParams(schema []sdk.Param, pass *sdk.Pass) map[string]any {
	if pass == nil {
		return nil
	}
	return plainValues(constructionScope(schema, pass.Params, nil))
}

// plainValues converts cty numbers, strings and bools to int64, float64,
// string and bool.
func plainValues(vs map[string]cty.Value) map[string]any {
	out := make(map[string]any, len(vs))
	for k, v := range vs {
		if v.IsNull() || !v.IsKnown() {
			continue
		}
		switch v.Type() {
		case cty.Number:
			bf := v.AsBigFloat()
			if i, acc := bf.Int64(); acc == big.Exact {
				out[k] = i
			} else {
				f, _ := bf.Float64()
				out[k] = f
			}
		case cty.String:
			out[k] = v.AsString()
		case cty.Bool:
			out[k] = v.True()
		}
	}
	return out
}

// ModuleWriter writes an exported model's byte module beside its config
// (python.ModuleWriter: TorchScript and ONNX through tcforge_torch) and
// returns the files written. An error wrapping an error whose
// Unavailable method returns true (no interpreter or no PyTorch) has been
// logged by the writer already.
type ModuleWriter interface {
	WriteModule(ctx context.Context, config string) ([]string, error)
	// ClearModule removes config's earlier byte module if the writer
	// wrote it, leaving a file of that name it did not write (a user's
	// own model, a link, a directory) alone with an error saying so.
	ClearModule(config string) ([]string, error)
}

// ByteInterface reports whether a model of architecture arch computing cp
// gets a byte module: a stock model (tokens-as-states, every block a
// torch.nn.TransformerEncoderLayer) or a decoder (tokens as time) whose
// construction reads and writes whole bytes in a bit order
// (docs/export.md, "The byte module").
func ByteInterface(arch string, cp *safetensors.Computes) bool {
	if (arch != "tokens-as-states/stock" && arch != "decoder/stock") || cp == nil || (cp.BitOrder != "lsb-first" && cp.BitOrder != "msb-first") {
		return false
	}
	for _, rs := range [][]safetensors.BitRange{cp.Inputs, cp.Outputs} {
		n := 0
		for _, r := range rs {
			n += r.Bits
		}
		if n == 0 || n%8 != 0 {
			return false
		}
	}
	return true
}

// description is what an export of model m of row mr adds to its config
// (safetensors.Description): what it computes, the formats it was checked
// in, and test vectors from the verification inputs in with the layered
// circuit l's outputs want — for a decoder also each vector's prompt and
// the tokens it must generate (tokencheck).
func description(m *model.Model, l *layered.Circuit, in, want []bitvec.Vec, cp *safetensors.Computes, mr *ModelRow) (*safetensors.Description, error) {
	d := &safetensors.Description{Computes: cp, Exact: mr.Exact, Samples: mr.Samples, Inputs: in, Outputs: want, NumIn: l.NumInputs, NumOut: l.NumOutputs()}
	if m.Decoder == nil {
		return d, nil
	}
	for _, x := range in[:min(len(in), safetensors.MaxTestVectors)] {
		tok, err := tokencheck.Expected(m.Decoder, l, x)
		if err != nil {
			return nil, fmt.Errorf("export: a test vector's tokens: %w", err)
		}
		d.Prompts, d.Tokens = append(d.Prompts, tokencheck.Prompt(m.Decoder, x)), append(d.Tokens, tok)
	}
	return d, nil
}

// unavailable is an error that says the module writer cannot run at all
// (python.ErrUnavailable's wrapper).
type unavailable interface{ Unavailable() bool }

// writeModule writes config's byte module with r.Modules, logging the
// files or, as a warning, why not; it never fails the model.
func (r *Runner) writeModule(ctx context.Context, config string, log zerolog.Logger) {
	files, err := r.Modules.WriteModule(ctx, config)
	var u unavailable
	switch {
	case errors.As(err, &u) && u.Unavailable():
		// The writer said why, once.
	case err != nil:
		log.Warn().Err(err).Msg("byte module not written (the model is exported)")
	default:
		log.Info().Strs("files", files).Msg("wrote the byte module")
	}
}

// maxExportName bounds an export name: with ".labels.json" and an atomic
// write's temporary-file affixes it stays within the 255 bytes of a file
// name.
const maxExportName = 220

// exportStem names the files of a pipeline's models at a point on a
// layerer, before the architecture: pipeline[.point].layerer, each part
// made safe for a file name (safeName), none dropped: a matrix value
// "a/b" gives "a_b", not "b".
func exportStem(p *config.Pipeline, pt config.Point, layerer string) string {
	parts := []string{p.Name}
	if s := pt.String(); s != "" {
		parts = append(parts, strings.NewReplacer("=", "-", " ", "_").Replace(s))
	}
	parts = append(parts, layerer)
	for i := range parts {
		parts[i] = safeName(parts[i])
	}
	return strings.Join(parts, ".")
}

// exportName names a model's files: pipeline[.point].layerer.arch.
func exportName(p *config.Pipeline, pt config.Point, layerer, arch string) string {
	return exportStem(p, pt, layerer) + "." + safeName(strings.ReplaceAll(arch, "/", "-"))
}

// describeModel names a model of a run in a message: its pipeline, point,
// layerer and mapper block.
func describeModel(p *config.Pipeline, pt config.Point, layerer string, b *config.Block) string {
	at := ""
	if s := pt.String(); s != "" {
		at = " at " + s
	}
	return fmt.Sprintf("pipeline %q%s, layerer %q, mapper %q (%s:%d)", p.Name, at, layerer, b.Name, b.DefRange.Filename, b.DefRange.Start.Line)
}

// CheckExportNames checks, before anything runs, that --export gives the
// models of pipelines distinct file names (exportName): two points,
// layerers or pipelines whose names differ only in what a file name
// cannot hold would otherwise export under one name, and one model would
// overwrite the other. It returns a located error for each collision and
// for a name too long for a file. The architecture, the name's last part,
// is known only once a model is built; Check refuses mapper blocks that
// would build the same model twice, and a collision left (two mappers
// returning one architecture) fails the later model's row (claimExport).
func CheckExportNames(pipelines []*config.Pipeline) hcl.Diagnostics {
	type owner struct {
		p       *config.Pipeline
		pt      config.Point
		layerer string
	}
	var diags hcl.Diagnostics
	seen := map[string]owner{}
	for _, p := range pipelines {
		if len(p.Mappers) == 0 {
			continue
		}
		for _, pt := range p.Points() {
			for _, l := range p.Layerers {
				stem := exportStem(p, pt, l.Name)
				if len(stem) > maxExportName-40 {
					diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Export name too long",
						Detail:  fmt.Sprintf("--export names the models of %s %s.<architecture>.json: %d bytes before the architecture, over the %d a file name leaves it. Shorten the pipeline name or the matrix values.", describeAt(p, pt, l.Name), stem, len(stem), maxExportName-40),
						Subject: p.DefRange.Ptr()})
					continue
				}
				if prev, dup := seen[stem]; dup {
					diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Export names collide",
						Detail: fmt.Sprintf("--export would write the models of %s and of %s (%s:%d) under one name, %s.<architecture>.json: one would overwrite the other. Rename a pipeline or change a matrix value (file names keep letters, digits, '-', '_' and '.'; every other character becomes '_').",
							describeAt(p, pt, l.Name), describeAt(prev.p, prev.pt, prev.layerer), prev.p.DefRange.Filename, prev.p.DefRange.Start.Line, stem),
						Subject: p.DefRange.Ptr()})
					continue
				}
				seen[stem] = owner{p, pt, l.Name}
			}
		}
	}
	return diags
}

// describeAt names a pipeline's point on a layerer in a message.
func describeAt(p *config.Pipeline, pt config.Point, layerer string) string {
	at := ""
	if s := pt.String(); s != "" {
		at = " at " + s
	}
	return fmt.Sprintf("pipeline %q%s on layerer %q", p.Name, at, layerer)
}

// sameMappers returns a located error for each mapper block of p that
// repeats an earlier one of the same plugin with the same values at some
// point: with --export both would write one model under one name.
func sameMappers(p *config.Pipeline, pl *plugins) hcl.Diagnostics {
	var diags hcl.Diagnostics
	for j, bj := range p.Mappers {
	pairs:
		for i := range j {
			if p.Mappers[i].Name != bj.Name {
				continue
			}
			for k, pt := range p.Points() {
				if k >= len(pl.passes) {
					break
				}
				a, b := pl.passes[k].mappers[i], pl.passes[k].mappers[j]
				if a == nil || b == nil {
					continue
				}
				// The values the plugin sees, defaults included.
				ja, erra := json.Marshal(blockParams(pl.mappers[i].Params, a))
				jb, errb := json.Marshal(blockParams(pl.mappers[j].Params, b))
				if erra == nil && errb == nil && string(ja) == string(jb) {
					at := ""
					if s := pt.String(); s != "" {
						at = " at " + s
					}
					diags = append(diags, &hcl.Diagnostic{Severity: hcl.DiagError, Summary: "Mapper block repeats another",
						Detail:  fmt.Sprintf("This mapper %q block has the values of the one at %s:%d%s: with --export both would write the same model under one name. Remove one, or give them different values.", bj.Name, p.Mappers[i].DefRange.Filename, p.Mappers[i].DefRange.Start.Line, at),
						Subject: bj.DefRange.Ptr()})
					break pairs
				}
			}
		}
	}
	return diags
}

// claimExport takes the export name for the model owner describes, or
// says which model of the run has it already: no model overwrites
// another's files.
func (r *Runner) claimExport(name, owner string) error {
	if len(name) > maxExportName {
		return fmt.Errorf("export name %s is %d bytes, over the %d a file name leaves it", name, len(name), maxExportName)
	}
	r.exportMu.Lock()
	defer r.exportMu.Unlock()
	if prev, ok := r.exported[name]; ok && prev != owner {
		return fmt.Errorf("export: %s would write %s.json, which %s wrote in this run: not exported (give the mappers different architectures, or the models different pipelines)", owner, name, prev)
	}
	if r.exported == nil {
		r.exported = map[string]string{}
	}
	r.exported[name] = owner
	return nil
}

// exportSiblings are the files beside an export's config that belong to
// it and go with it: its labels. Its byte modules go through the module
// writer (ModuleWriter.ClearModule), which knows which it wrote.
var exportSiblings = []string{".labels.json"}

// export writes model m (owner names it for claimExport) to --export as
// name: its weights, config and labels, atomically and whole, confined to
// the directory (safetensors.ExportContext, safefile.Dir). The files an
// earlier export of the name left go first: the config (so that no
// config names weights of two exports), then its labels and byte modules
// (which would describe another model: those the module writer wrote); the config is written last. It
// stops, leaving no file half-written, when ctx ends.
func (r *Runner) export(ctx context.Context, m *model.Model, name, owner string, d *safetensors.Description) (safetensors.Info, error) {
	if err := r.claimExport(name, owner); err != nil {
		return safetensors.Info{}, err
	}
	dir, err := safefile.OpenDir(r.Export, true)
	if err != nil {
		return safetensors.Info{}, fmt.Errorf("export: %w", err)
	}
	defer dir.Close()
	for _, suffix := range append([]string{".json"}, exportSiblings...) {
		if _, err := dir.Remove(name + suffix); err != nil {
			return safetensors.Info{}, fmt.Errorf("export: removing the earlier export's file: %w", err)
		}
	}
	if r.Modules != nil {
		// A file of a module's name that tcforge did not write stays; the
		// module writer says so when it comes to write the module.
		_, _ = r.Modules.ClearModule(filepath.Join(r.Export, name+".json"))
	}
	if m.Labels != nil {
		b, err := m.LabelsJSON(name + ".json")
		if err != nil {
			return safetensors.Info{}, fmt.Errorf("export: %w", err)
		}
		if err := dir.WriteFile(name+".labels.json", b); err != nil {
			return safetensors.Info{}, fmt.Errorf("export: %w", err)
		}
	}
	return safetensors.ExportContext(ctx, m, r.Export, name, r.ExportDenseLimit, d)
}
