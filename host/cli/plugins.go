package cli

// The plugins and plugin commands: listing what is installed, and a
// bundled plugin served as a process.

import (
	"fmt"
	"io"
	"os/signal"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/serve"
)

func newPluginsCmd(env *Env, g *globals) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "plugins [NAME]",
		Short: "List installed plugins with their parameters",
		Long: "List every plugin (bundled and external) with kind, version, source and parameters (type, default, doc).\n" +
			"With NAME, show that plugin in full, with an HCL block using it. --json prints the schemas as JSON.",
		Example: "  tcforge plugins\n  tcforge plugins keccak\n  tcforge plugins --json",
		Args:    usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			log, err := g.logger(env.Stderr)
			if err != nil {
				return err
			}
			reg := g.registry(env, log)
			defer reg.Close()
			names := reg.Names()
			if len(args) == 1 {
				names = args
			}
			bad := 0
			var schemas []pluginSchema
			for _, n := range names {
				p, src, err := reg.Open(cmd.Context(), n)
				if err != nil {
					fmt.Fprintf(env.Stderr, "%s: %v\n", n, err)
					bad++
					continue
				}
				switch {
				case asJSON:
					schemas = append(schemas, pluginSchema{Description: p.Describe(), Source: src.String(), Bundled: src.Bundled})
				case len(args) == 1:
					writePluginFull(env.Stdout, p.Describe(), src)
				default:
					writePlugin(env.Stdout, p.Describe(), src)
				}
			}
			if asJSON {
				if err := writePluginsJSON(env.Stdout, schemas); err != nil {
					return err
				}
			}
			if bad > 0 {
				return exitStatus{1}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the plugins' schemas as JSON")
	cmd.AddCommand(newLockCmd(env, g))
	return cmd
}

func writePlugin(w io.Writer, d sdk.Description, src registry.Source) {
	fmt.Fprintf(w, "%s (%s %s, %s)\n  %s\n", d.Name, d.Kind, d.Version, src, d.Doc)
	if len(d.Params) == 0 {
		fmt.Fprintf(w, "  no parameters\n\n")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, p := range d.Params {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", p.Name, p.Type, paramConstraints(p), p.Doc)
	}
	tw.Flush()
	fmt.Fprintln(w)
}

func newPluginCmd(env *Env) *cobra.Command {
	plugin := &cobra.Command{Use: "plugin", Short: "Internal plugin commands", Hidden: true}
	plugin.AddCommand(&cobra.Command{
		Use:   "serve NAME [NAME...]",
		Short: "Serve bundled plugins over go-plugin gRPC, one or a group in one process (started by the host)",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			ps := make([]sdk.Plugin, len(args))
			for i, name := range args {
				p, ok := env.Builtins[name]
				if !ok {
					return fmt.Errorf("no bundled plugin named %q", name)
				}
				ps[i] = p
			}
			// A plugin keeps the default SIGPIPE action Main turned off:
			// writing to the pipes of a host that is gone ends it.
			signal.Reset(syscall.SIGPIPE)
			if len(ps) == 1 {
				serve.Main(ps[0])
			} else {
				serve.Group(ps...)
			}
			return nil
		},
	})
	return plugin
}
