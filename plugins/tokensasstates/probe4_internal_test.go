package tokensasstates

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

func TestProbe4(t *testing.T) {
	if os.Getenv("PROBE4") == "" {
		t.Skip()
	}
	ctx := context.Background()
	vals := map[string]any{"preset": os.Getenv("PROBE4")}
	if os.Getenv("BLOCKS") != "" {
		vals["blocks"] = int64(2)
	}
	c := sdktest.Build(t, sha2.Plugin, vals)
	ms := int64(1 << 16)
	if os.Getenv("MS") != "" {
		ms = 1 << 22
	}
	l, err := fusion.Compile(ctx, c, fusion.Options{MaxSum: ms})
	if err != nil {
		t.Fatal(err)
	}
	for _, nw := range []bool{false, true} {
		t0 := time.Now()
		m, err := Map(ctx, l, Config{NoWords: nw})
		if err != nil {
			fmt.Println("err", err)
			continue
		}
		s := m.Stats()
		fmt.Printf("nowords %v: d %d blocks %d heads %d ffn %d dense %d nonzero %d attrs %v (%v)\n", nw, s.DModel, s.Blocks, s.Heads, s.FFNHidden, s.ParamsDense, s.ParamsNonzero, m.Attrs, time.Since(t0))
	}
}
