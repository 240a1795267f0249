// Command tcforge-plugin-sha2 serves the sha2 plugin on its own, for shipping
// it apart from the tcforge binary (which bundles it). On the plugin path
// it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(sha2.Plugin) }
