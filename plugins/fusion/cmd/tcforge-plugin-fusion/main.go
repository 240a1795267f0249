// Command tcforge-plugin-fusion serves the fusion plugin on its own, for shipping
// it apart from the tcforge binary (which bundles it). On the plugin path
// it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(fusion.Plugin) }
