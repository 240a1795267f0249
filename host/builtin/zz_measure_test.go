package builtin_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

func TestZZLaws(t *testing.T) {
	spec := os.Getenv("ZZ")
	for _, item := range strings.Split(spec, ";") {
		name, rest, _ := strings.Cut(item, ":")
		vals := map[string]any{}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			var n int
			if _, err := fmt.Sscan(v, &n); err == nil {
				vals[k] = n
			} else {
				vals[k] = v
			}
		}
		c := sdktest.Build(t, builtin.Plugins()[name].(*sdk.Construction), vals)
		t0 := time.Now()
		rl, err := reifier.Compile(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		rt := time.Since(t0)
		t0 = time.Now()
		fl, err := fusion.Compile(context.Background(), c, fusion.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ft := time.Since(t0)
		rs, fs := rl.Stats(), fl.Stats()
		fmt.Printf("%s %v: nodes %d | reifier depth %d width %d gates %d (%v) | fusion depth %d width %d gates %d (%v)\n", name, vals, len(c.Ops), rs.Depth, rs.Width, rs.Gates, rt.Round(time.Millisecond), fs.Depth, fs.Width, fs.Gates, ft.Round(time.Millisecond))
	}
}
