// Command tcforge-plugin-md5 serves the md5 plugin on its own, for shipping
// it apart from the tcforge binary (which bundles it). On the plugin path
// it overrides the bundled copy.
package main

import (
	"github.com/tcforge/tcforge/plugins/md5"
	"github.com/tcforge/tcforge/sdk/serve"
)

func main() { serve.Main(md5.Plugin) }
