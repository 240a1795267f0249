// Command tcforge-plugin-decoder serves the decoder mapper on its own, for
// shipping it apart from the tcforge binary (which bundles it). On the
// plugin path it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/decoder"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(decoder.Plugin) }
