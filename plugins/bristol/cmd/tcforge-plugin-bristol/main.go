// Command tcforge-plugin-bristol serves the Bristol Fashion construction
// to a tcforge host. It is also bundled into tcforge; a binary of this name
// on the plugin path overrides the bundled one.
package main

import (
	"github.com/tcforge/tcforge/plugins/bristol"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(bristol.Plugin) }
