// Package builtin lists the plugins bundled into the tcforge binary. The
// host serves each of them in a subprocess of itself ("tcforge plugin serve
// NAME"), so bundled plugins cross the same RPC boundary as external ones.
package builtin

import (
	"github.com/tcforge/tcforge/plugins/ascon"
	"github.com/tcforge/tcforge/plugins/blake2s"
	"github.com/tcforge/tcforge/plugins/blake3"
	"github.com/tcforge/tcforge/plugins/bristol"
	"github.com/tcforge/tcforge/plugins/decoder"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/plugins/md5"
	"github.com/tcforge/tcforge/plugins/merkle"
	"github.com/tcforge/tcforge/plugins/noattention"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/sha1"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/tokensasgates"
	"github.com/tcforge/tcforge/plugins/tokensasstates"
	"github.com/tcforge/tcforge/sdk"
)

// Plugins returns the bundled plugins by name.
func Plugins() map[string]sdk.Plugin {
	out := map[string]sdk.Plugin{}
	for _, p := range []sdk.Plugin{
		ascon.Plugin,
		blake2s.Plugin,
		blake3.Plugin,
		bristol.Plugin,
		decoder.Plugin,
		fusion.Plugin,
		keccak.Plugin,
		md.Plugin,
		md5.Plugin,
		merkle.Plugin,
		noattention.Plugin,
		reifier.Plugin,
		sha1.Plugin,
		sha2.Plugin,
		tokensasgates.Plugin,
		tokensasstates.Plugin,
	} {
		out[p.Describe().Name] = p
	}
	return out
}
