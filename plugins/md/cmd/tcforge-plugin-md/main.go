// Command tcforge-plugin-md serves the md plugin on its own, for shipping
// it apart from the tcforge binary (which bundles it). On the plugin path
// it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(md.Plugin) }
