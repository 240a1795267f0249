// Command tcforge-plugin-merkle serves the merkle plugin on its own, for shipping
// it apart from the tcforge binary (which bundles it). On the plugin path
// it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/merkle"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(merkle.Plugin) }
