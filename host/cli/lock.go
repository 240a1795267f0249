package cli

import (
	"fmt"
	"slices"

	"github.com/spf13/cobra"

	"github.com/tcforge/tcforge/host/registry"
)

// newLockCmd is "tcforge plugins lock": pin every external plugin on the
// plugin path to its executable's SHA-256.
func newLockCmd(env *Env, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "lock",
		Short: "Pin the external plugins on the plugin path to their SHA-256 in the lock file",
		Long: "Write the plugin lock file (--lock, default " + registry.LockFile + ") with the SHA-256 of every external\n" +
			"plugin executable found on the plugin path. Once the file exists, an external plugin missing from it or\n" +
			"whose executable changed is refused. Bundled plugins are part of tcforge itself and are not pinned.",
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			log, err := g.logger(env.Stderr)
			if err != nil {
				return err
			}
			reg := g.registry(env, log)
			defer reg.Close()
			lock, err := registry.WriteLock(g.lockPath, reg.Externals())
			if err != nil {
				return err
			}
			names := make([]string, 0, len(lock.Plugins))
			for n := range lock.Plugins {
				names = append(names, n)
			}
			slices.Sort(names)
			for _, n := range names {
				fmt.Fprintf(env.Stdout, "%s  %s\n", lock.Plugins[n], n)
			}
			fmt.Fprintf(env.Stdout, "wrote %s (%d external plugins)\n", lock.Path, len(names))
			return nil
		},
	}
}
