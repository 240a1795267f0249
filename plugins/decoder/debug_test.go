package decoder

import (
	"context"
	"fmt"
	"os"
	"strings"
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

func TestDebugGroups(t *testing.T) {
	if os.Getenv("DBG") == "" {
		t.Skip()
	}
	ctx := context.Background()
	c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(12)})
	l, _ := reifier.CompileBounded(ctx, c, 1<<16)
	g, _ := buildDAG(ctx, l)
	lv := g.alap()
	k := 10
	var best *layout
	var bs *schedule
	var bw *working
	for first := k; first >= 1; first-- {
		sc := newSchedule(g, lv, k, first)
		w, _ := buildWorking(ctx, g, sc)
		lo := newLayout(g, sc, w, true)
		if best == nil || len(lo.gen) < len(best.gen) {
			best, bs, bw = lo, sc, w
		}
	}
	gs := groups(g, bs, bw, best)
	var cones []*cone
	for _, ts := range gs {
		cn, _ := buildCone(g, bs, bw, best, ts)
		cones = append(cones, cn)
	}
	pl, _ := newPlan(g, best, gs, cones)
	for gi, ts := range gs {
		fmt.Printf("step %d group %d: %d tokens, %d nodes, %d feats, %d fetch, kind %d\n", best.genStep[ts[0]], gi, len(ts), len(cones[gi].nodes), len(cones[gi].feats), len(cones[gi].fetch), pl.kind[gi])
	}
	// compare two middle groups
	a, b := pl.shape(best, 8), pl.shape(best, 9)
	pa, pb := strings.Split(a, "N"), strings.Split(b, "N")
	fmt.Println(len(pa), len(pb))
	for i := range min(len(pa), len(pb)) {
		if pa[i] != pb[i] {
			fmt.Println("A:", pa[i])
			fmt.Println("B:", pb[i])
			break
		}
	}
}
