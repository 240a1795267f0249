// Command tcforge-plugin-tokens-as-gates serves the tokens-as-gates mapper on
// its own, for shipping it apart from the tcforge binary (which bundles it).
// On the plugin path it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(tokensasgates.Plugin) }
