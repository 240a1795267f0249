package decoder

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

func TestDebugConst(t *testing.T) {
	if os.Getenv("DBG") == "" {
		t.Skip()
	}
	ctx := context.Background()
	c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(4)})
	l, _ := reifier.CompileBounded(ctx, c, 1<<16)
	g, _ := buildDAG(ctx, l)
	n0 := 0
	for v := g.nIn; v < g.nodes(); v++ {
		if s, _ := g.terms(v); len(s) == 0 {
			n0++
		}
	}
	fmt.Println("reifier sha256 r4: nodes", g.nodes()-g.nIn, "no-term nodes", n0, "depth", g.depth)
	l2, _ := fusion.Compile(ctx, c, fusion.Options{MaxSum: 1 << 16})
	g2, _ := buildDAG(ctx, l2)
	n0 = 0
	for v := g2.nIn; v < g2.nodes(); v++ {
		if s, _ := g2.terms(v); len(s) == 0 {
			n0++
		}
	}
	fmt.Println("fusion sha256 r4: nodes", g2.nodes()-g2.nIn, "no-term nodes", n0, "depth", g2.depth)
}
