// Command tcforge-plugin-sha1 serves the sha1 plugin on its own, for shipping
// it apart from the tcforge binary (which bundles it). On the plugin path
// it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/sha1"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(sha1.Plugin) }
