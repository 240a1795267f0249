// Command tcforge-plugin-ascon serves the ascon plugin on its own, for
// shipping it apart from the tcforge binary (which bundles it). On the
// plugin path it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/ascon"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(ascon.Plugin) }
