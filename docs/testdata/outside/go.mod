// An out-of-tree plugin module (docs/plugins.md, "Out-of-tree modules"):
// copy this folder anywhere, point the replace at your tcforge checkout,
// then `go build -o ~/.tcforge/plugins/tcforge-plugin-parity .`.
module example.com/parity

go 1.26.8

require github.com/tcforge/tcforge v0.0.0

replace github.com/tcforge/tcforge => ../../..
