package run

import (
	"path/filepath"
	"strings"

	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/sdk"
)

// PluginInfo says which plugin served one block of a pipeline: the
// provenance of every row it took part in.
type PluginInfo struct {
	Kind    sdk.Kind `json:"kind"`
	Name    string   `json:"name"`
	Version string   `json:"version"` // "" for a plugin that did not start
	// Source is "bundled" or the path of an external plugin's executable.
	Source string `json:"source"`
	// SHA256 is the hex SHA-256 of an external plugin's executable as it
	// was started ("" for a bundled plugin).
	SHA256 string `json:"sha256,omitempty"`
}

// String is the plugin in one phrase: "keccak 0.1.0 bundled",
// "reifier 0.1.0 /path/tcforge-plugin-reifier sha256:…" (without the
// version for a plugin that did not start).
func (p PluginInfo) String() string {
	parts := []string{p.Name}
	if p.Version != "" {
		parts = append(parts, p.Version)
	}
	if p.Source != "" {
		parts = append(parts, p.Source)
	}
	if p.SHA256 != "" {
		parts = append(parts, "sha256:"+p.SHA256)
	}
	return strings.Join(parts, " ")
}

// pluginInfo is the provenance of plugin name opened from src (pl nil if
// it did not start).
func pluginInfo(kind sdk.Kind, name string, pl sdk.Plugin, src registry.Source) PluginInfo {
	pi := PluginInfo{Kind: kind, Name: name, Source: src.String(), SHA256: src.SHA256}
	switch {
	case src == (registry.Source{}):
		pi.Source = ""
	case !src.Bundled:
		if abs, err := filepath.Abs(src.Path); err == nil {
			pi.Source = abs
		}
	}
	if pl != nil {
		pi.Version = pl.Describe().Version
	}
	return pi
}

// RowPlugins returns the plugins that produced row: the pipeline's
// construction, the row's layerer and the pipeline's mappers, in that
// order (nil when the result has no provenance, as a merged one from an
// older shard).
func (r *Result) RowPlugins(row Row) []PluginInfo {
	var out []PluginInfo
	for _, p := range r.Plugins {
		if p.Kind != sdk.KindLayerer || p.Name == row.Layerer {
			out = append(out, p)
		}
	}
	return out
}

// PluginsCell is RowPlugins as one CSV cell: the plugins' phrases joined
// by "; ".
func (r *Result) PluginsCell(row Row) string {
	ps := r.RowPlugins(row)
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}
