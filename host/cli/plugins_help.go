package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/sdk"
)

// pluginSchema is one plugin in `tcforge plugins --json`: its description
// (name, kind, version, protocol, doc, parameter schema) and where it was
// loaded from.
type pluginSchema struct {
	sdk.Description
	Source  string `json:"source"` // "bundled" or the executable's path
	Bundled bool   `json:"bundled"`
}

// writePluginsJSON writes the plugins' schemas as one JSON document keyed
// by plugin name, like `terraform providers schema -json`.
func writePluginsJSON(w io.Writer, schemas []pluginSchema) error {
	out := struct {
		FormatVersion string                  `json:"format_version"`
		Plugins       map[string]pluginSchema `json:"plugins"`
	}{FormatVersion: "1", Plugins: map[string]pluginSchema{}}
	for _, s := range schemas {
		if s.Params == nil {
			s.Params = []sdk.Param{}
		}
		out.Plugins[s.Name] = s
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("encoding plugin schemas: %w", err)
	}
	return nil
}

// paramConstraints describes a parameter's default and bounds:
// "default 6, range 0..6, required".
func paramConstraints(p sdk.Param) string {
	var extra []string
	if p.Default != nil && fmt.Sprint(p.Default) != "" {
		extra = append(extra, "default "+hclLiteral(p.Default))
	}
	if p.Min != nil || p.Max != nil {
		lo, hi := "", ""
		if p.Min != nil {
			lo = strconv.FormatInt(*p.Min, 10)
		}
		if p.Max != nil {
			hi = strconv.FormatInt(*p.Max, 10)
		}
		extra = append(extra, fmt.Sprintf("range %s..%s", lo, hi))
	}
	if len(p.Enum) > 0 {
		var vals []string
		for _, e := range p.Enum {
			if e == "" {
				e = `""`
			}
			vals = append(vals, e)
		}
		extra = append(extra, "one of "+strings.Join(vals, "|"))
	}
	if p.Required {
		extra = append(extra, "required")
	}
	return strings.Join(extra, ", ")
}

// hclLiteral formats a default value as it is written in HCL.
func hclLiteral(v any) string {
	switch x := v.(type) {
	case string:
		return strconv.Quote(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	return fmt.Sprint(v)
}

// exampleValue is a parameter's value in the usage example: its default,
// else a placeholder of its type.
func exampleValue(p sdk.Param) string {
	if p.Default != nil && fmt.Sprint(p.Default) != "" {
		return hclLiteral(p.Default)
	}
	switch {
	case len(p.Enum) > 0 && p.Enum[0] != "":
		return strconv.Quote(p.Enum[0])
	case len(p.Enum) > 1:
		return strconv.Quote(p.Enum[1])
	case p.Type == sdk.Int && p.Min != nil:
		return strconv.FormatInt(*p.Min, 10)
	case p.Type == sdk.Int || p.Type == sdk.Number:
		return "0"
	case p.Type == sdk.Bool:
		return "false"
	case p.Type == sdk.Path:
		return `"circuit.txt"`
	}
	return `""`
}

// writePluginFull prints one plugin in full: where it comes from, its
// protocol, each parameter with type, default, bounds and doc, and an
// HCL block that uses it.
func writePluginFull(w io.Writer, d sdk.Description, src registry.Source) {
	fmt.Fprintf(w, "%s (%s %s, %s)\n", d.Name, d.Kind, d.Version, src)
	fmt.Fprintf(w, "  %s\n\n", d.Doc)
	fmt.Fprintf(w, "  kind:      %s\n  version:   %s\n  protocol:  %d\n  source:    %s\n\n", d.Kind, d.Version, d.Protocol, src)
	if len(d.Params) == 0 {
		fmt.Fprintf(w, "  no parameters\n\n")
	} else {
		fmt.Fprintf(w, "  parameters:\n")
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "    NAME\tTYPE\tDEFAULT / CONSTRAINTS\tDOC\n")
		for _, p := range d.Params {
			c := paramConstraints(p)
			if c == "" {
				c = "-"
			}
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\n", p.Name, p.Type, c, p.Doc)
		}
		tw.Flush()
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  usage in a pipeline (optional parameters commented out):\n")
	fmt.Fprintf(w, "    %s %q {\n", d.Kind, d.Name)
	width := 0
	for _, p := range d.Params {
		width = max(width, len(p.Name))
	}
	for _, p := range d.Params {
		lead := "      "
		if !p.Required {
			lead = "      # "
		}
		fmt.Fprintf(w, "%s%-*s = %s\n", lead, width, p.Name, exampleValue(p))
	}
	fmt.Fprintf(w, "    }\n\n")
}
