package decoder

import (
	"context"
	"fmt"
	"os"
	"strconv"
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
	c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "mode": "block", "rounds": int64(64)})
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
		lo := newLayout(g, sc, w, "msb-first")
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
	bystep := map[int32][]int32{}
	for gi, ts := range gs {
		bystep[best.genStep[ts[0]]] = append(bystep[best.genStep[ts[0]]], pl.kind[gi])
	}
	for s := int32(1); s <= int32(bs.steps()); s++ {
		fmt.Print(s, bystep[s], " ")
	}
	fmt.Println()
	fmt.Println("H", pl.H, "heads", pl.heads, "modes", pl.mode, "work", pl.workDims, "feat", pl.nFeat, "d", pl.d)
	for k := 1; k < len(pl.rep); k++ {
		c := pl.cones[pl.rep[k]]
		fmt.Printf("kind %d: %d slots %d nodes %d feats\n", k, len(c.tokens), len(c.nodes), len(c.feats))
	}
}

func TestDebugDiff(t *testing.T) {
	if os.Getenv("DBG") == "" {
		t.Skip()
	}
	ctx := context.Background()
	c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "rounds": int64(40)})
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
		lo := newLayout(g, sc, w, "msb-first")
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
	var a, b int = -1, -1
	na, nb := 0, 0
	which, _ := strconv.Atoi(os.Getenv("W"))
	for gi, ts := range gs {
		st := best.genStep[ts[0]]
		if st == 19 {
			if na == which {
				a = gi
			}
			na++
		}
		if st == 21 {
			if nb == which {
				b = gi
			}
			nb++
		}
	}
	fmt.Println("groups", a, b, pl.kind[a], pl.kind[b], len(cones[a].nodes), len(cones[b].nodes))
	sa, sb := pl.shape(best, a, false), pl.shape(best, b, false)
	pa, pb := strings.Split(sa, "N"), strings.Split(sb, "N")
	for i := range min(len(pa), len(pb)) {
		if pa[i] != pb[i] {
			fmt.Println(i, "A:", pa[i])
			fmt.Println(i, "B:", pb[i])
			break
		}
	}
	// rows/cols of prompt tokens
	for j := range best.prompt {
		fmt.Print(j, ":", best.row[j], ",", best.col[j], " ")
	}
	fmt.Println()
}

func TestDebugUnits(t *testing.T) {
	if os.Getenv("DBG") == "" {
		t.Skip()
	}
	ctx := context.Background()
	c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "mode": "block", "rounds": int64(64)})
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
		lo := newLayout(g, sc, w, "msb-first")
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
	bd := &builder{plan: pl, lo: best, g: g, units: make([][]unit, pl.layers)}
	fmt.Println("families", len(pl.famRep), "kinds", len(pl.rep)-1)
	for f := range pl.famRep {
		before := 0
		for _, us := range bd.units {
			before += len(us)
		}
		bd.familyUnits(int32(f))
		after := 0
		for _, us := range bd.units {
			after += len(us)
		}
		nk := 0
		for k := range pl.rep {
			if k > 0 && pl.family[k] == int32(f) {
				nk++
			}
		}
		cn := pl.cones[pl.rep[pl.famRep[f]]]
		fmt.Printf("family %d: %d kinds, %d slots, %d nodes, %d units, step %d\n", f, nk, len(cn.tokens), len(cn.nodes), after-before, cn.step)
	}
}

func TestDebugSkel(t *testing.T) {
	if os.Getenv("DBG") == "" {
		t.Skip()
	}
	ctx := context.Background()
	c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "mode": "block", "rounds": int64(64)})
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
		lo := newLayout(g, sc, w, "msb-first")
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
	s1, _ := strconv.Atoi(os.Getenv("S1"))
	s2, _ := strconv.Atoi(os.Getenv("S2"))
	pick := func(st int) int {
		bestG, n := -1, 0
		for gi, c := range cones {
			if int(c.step) == st && len(c.nodes) > n {
				bestG, n = gi, len(c.nodes)
			}
		}
		return bestG
	}
	a, b := pick(s1), pick(s2)
	sa, sb := pl.shape(best, a, true), pl.shape(best, b, true)
	fmt.Println(len(sa), len(sb))
	pa, pb := strings.Split(sa, "N"), strings.Split(sb, "N")
	nd := 0
	for i := range min(len(pa), len(pb)) {
		if pa[i] != pb[i] {
			fmt.Println(i, "A:", pa[i])
			fmt.Println(i, "B:", pb[i])
			nd++
			if nd > 3 {
				break
			}
		}
	}
}

func TestDebugRetime(t *testing.T) {
	if os.Getenv("DBG") == "" {
		t.Skip()
	}
	ctx := context.Background()
	c := sdktest.Build(t, sha2.Plugin, map[string]any{"preset": "sha256", "mode": "block", "rounds": int64(64)})
	l, _ := reifier.CompileBounded(ctx, c, 1<<16)
	g, _ := buildDAG(ctx, l)
	alap := g.alap()
	n := g.nodes()
	asap := make([]int32, n)
	for v := g.nIn; v < n; v++ {
		src, _ := g.terms(v)
		m := int32(0)
		for _, u := range src {
			if !g.isConst(u) {
				m = max(m, asap[u])
			}
		}
		asap[v] = m + 1
	}
	k := int32(10)
	variant := func(name string, lv []int32) {
		bestTok := 1 << 30
		for first := k; first >= 1; first-- {
			sc := newSchedule(g, lv, int(k), int(first))
			w, _ := buildWorking(ctx, g, sc)
			lo := newLayout(g, sc, w, "msb-first")
			bestTok = min(bestTok, len(lo.gen))
		}
		fmt.Println(name, bestTok)
	}
	variant("alap", alap)
	stepped := make([]int32, n)
	for v := range n {
		stepped[v] = alap[v] - k*((alap[v]-asap[v])/k)
		if v < g.nIn {
			stepped[v] = 0
		}
	}
	for v := g.nIn; v < n; v++ {
		src, _ := g.terms(v)
		for _, u := range src {
			if !g.isConst(u) {
				stepped[v] = max(stepped[v], stepped[u]+1)
			}
		}
	}
	variant("alap-stepped", stepped)
}
