// Command tcforge-plugin-tokens-as-states serves the tokens-as-states mapper
// on its own, for shipping it apart from the tcforge binary (which bundles
// it). On the plugin path it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(tokensasstates.Plugin) }
