// Command tcforge-plugin-blake2s serves the blake2s plugin on its own, for
// shipping it apart from the tcforge binary (which bundles it). On the
// plugin path it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/blake2s"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(blake2s.Plugin) }
