// Command tcforge-plugin-blake3 serves the blake3 plugin on its own, for
// shipping it apart from the tcforge binary (which bundles it). On the
// plugin path it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/blake3"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(blake3.Plugin) }
