// Command tcforge-plugin-adder serves the example adder construction to a
// tcforge host. Put the binary on the plugin path (~/.tcforge/plugins,
// $TCFORGE_PLUGIN_PATH or --plugin-dir).
package main

import (
	"github.com/tcforge/tcforge/plugins/adder"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(adder.Plugin) }
