package cli_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// The fixtures' behaviour is chosen by their name and their HCL, never by
// the environment, so that the tests using them run in parallel: the
// "counting" construction's `log` names the file it appends its calls to,
// the "hangs" layerer's `mark` the file it creates when it starts hanging,
// the "diesonce" layerer's `died` the file its first Layer call creates
// before it exits; "neverstarts" and "chatty" misbehave before the
// handshake, where no HCL reaches them, so they are served only to the
// tests that name them (tcforgeWith, allBuiltins).

// logCall appends "what:rounds=N" to the file the pass's `log` names, if
// any.
func logCall(what string, pass *sdk.Pass) error {
	path := pass.Params.String("log")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = fmt.Fprintf(f, "%s:rounds=%d\n", what, pass.Params.Int("rounds"))
	return err
}

// testBuiltins are allBuiltins but the fixtures that misbehave before the
// start-up handshake (see TestMain): the plugins tcforge gives the host,
// so that only the tests that name those (tcforgeWith) start them.
func testBuiltins() map[string]sdk.Plugin {
	m := allBuiltins()
	delete(m, "neverstarts")
	delete(m, "chatty")
	return m
}

// pathParam is a fixture's string parameter naming a file.
func pathParam(name, doc string) []sdk.Param {
	return []sdk.Param{{Name: name, Type: sdk.String, Default: "", Doc: doc}}
}

// noPrepare is the Prepare of the test layerers: nothing to resolve.
func noPrepare(context.Context, *sdk.Pass) (any, error) { return nil, nil }

// allBuiltins are the bundled plugins plus misbehaving ones. They are
// served, like bundled plugins, by re-executing the test binary, so every
// misbehaviour happens in a real plugin process behind real RPC.
func allBuiltins() map[string]sdk.Plugin {
	m := builtin.Plugins()
	// reifierThen compiles with the real backend, then corrupts the result.
	reifierThen := func(corrupt func(*layered.Circuit)) func(context.Context, *sdk.Pass, *circuit.Circuit) (*layered.Circuit, error) {
		return func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
			lc, err := reifier.Compile(ctx, c)
			if err != nil {
				return nil, err
			}
			corrupt(lc)
			return lc, nil
		}
	}
	lastLevel := func(lc *layered.Circuit) int32 { return lc.LevelStart[len(lc.LevelStart)-2] }
	for _, p := range []*sdk.Layerer{
		{Name: "panics", Version: "0.0.1", Doc: "panics in Layer",
			Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
				panic("layering is hard")
			}},
		{Name: "dies", Version: "0.0.1", Doc: "exits in the middle of Layer",
			Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
				os.Exit(3)
				return nil, nil
			}},
		{Name: "diesonce", Version: "0.0.1", Doc: "exits in its first Layer call (the one that creates the file `died` names), then is reifier",
			Params: pathParam("died", "the file the first Layer call creates"),
			Layer: func(ctx context.Context, pass *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
				if f, err := os.OpenFile(pass.Params.String("died"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
					f.Close()
					os.Exit(3)
				}
				return reifier.Compile(ctx, c)
			}},
		{Name: "hangs", Version: "0.0.1", Doc: "never answers Layer (and ignores cancellation)",
			Params: pathParam("mark", "a file created when the call starts hanging"),
			Layer: func(ctx context.Context, pass *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
				if mark := pass.Params.String("mark"); mark != "" {
					os.WriteFile(mark, nil, 0o644) // tell the test we are stuck
				}
				time.Sleep(time.Hour)
				return nil, nil
			}},
		{Name: "holds", Version: "0.0.1", Doc: "waits while the file `while` names exists (creating `mark` as it starts waiting), then is reifier (slurm_test.go: a task held until its time limit or a signal)",
			Params: append(pathParam("while", "the file to wait on"), pathParam("mark", "a file created when the call starts waiting")...),
			Layer: func(ctx context.Context, pass *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
				for held := false; ; held = true {
					if _, err := os.Stat(pass.Params.String("while")); err != nil {
						break
					}
					if mark := pass.Params.String("mark"); mark != "" && !held {
						os.WriteFile(mark, nil, 0o644)
					}
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(50 * time.Millisecond):
					}
				}
				return reifier.Compile(ctx, c)
			}},
		{Name: "lies", Version: "0.0.1", Doc: "returns a well-formed circuit whose first output is stuck at 0",
			Layer: reifierThen(func(lc *layered.Circuit) { lc.Threshold[lastLevel(lc)] = 1 << 20 })},
		{Name: "bad-src", Version: "0.0.1", Doc: "an edge from beyond the previous level (index out of range: a level skipped)",
			Layer: reifierThen(func(lc *layered.Circuit) { lc.Src[lc.RowStart[lastLevel(lc)]] = 1 << 24 })},
		{Name: "bad-outputs", Version: "0.0.1", Doc: "one output too few",
			Layer: reifierThen(func(lc *layered.Circuit) {
				n := len(lc.Kind) - 1
				lc.Kind, lc.Threshold, lc.Tag = lc.Kind[:n], lc.Threshold[:n], lc.Tag[:n]
				if lc.Pos != nil {
					lc.Pos = lc.Pos[:n]
				}
				lc.RowStart = lc.RowStart[:n+1]
				lc.Src, lc.Weight = lc.Src[:lc.RowStart[n]], lc.Weight[:lc.RowStart[n]]
				lc.LevelStart[len(lc.LevelStart)-1]--
			})},
	} {
		p.Prepare = noPrepare
		m[p.Name] = p
	}
	// A construction whose circuit has a cycle: a node reading itself.
	m["cyclic"] = &sdk.Construction{Name: "cyclic", Version: "0.0.1", Doc: "returns a circuit with a cycle",
		Params:  keccak.Plugin.Params,
		Prepare: keccak.Plugin.Prepare,
		Build: func(ctx context.Context, p *sdk.Pass) (*circuit.Circuit, error) {
			c, err := keccak.Plugin.Build(ctx, p)
			if err != nil {
				return nil, err
			}
			last := len(c.Ops) - 1
			c.Args[c.ArgStart[last]] = circuit.Node(last)
			return c, nil
		},
		Reference: keccak.Plugin.Reference,
	}
	// keccak, logging every Prepare and Estimate call (one line each in
	// the file `log` names: "prepare:rounds=N", "estimate:rounds=N"). The plugin
	// process runs Prepare for every call it serves; the host asks for an
	// Estimate only while checking a distinct parameter set.
	m["counting"] = &sdk.Construction{Name: "counting", Version: "0.0.1", Doc: "keccak, logging every Prepare and Estimate call",
		Params: append(slices.Clip(keccak.Plugin.Params), pathParam("log", "the file every Prepare and Estimate call appends a line to")...),
		Build:  keccak.Plugin.Build, Reference: keccak.Plugin.Reference,
		Prepare: func(ctx context.Context, pass *sdk.Pass) (any, error) {
			if err := logCall("prepare", pass); err != nil {
				return nil, err
			}
			return keccak.Plugin.Prepare(ctx, pass)
		},
		Estimate: func(ctx context.Context, pass *sdk.Pass) (sdk.Size, error) {
			if err := logCall("estimate", pass); err != nil {
				return sdk.Size{}, err
			}
			return keccak.Plugin.Estimate(ctx, pass)
		}}
	// keccak whose Build grows without bound (to 4 GiB at most, 32 MiB
	// every 10 ms) and estimates nothing.
	m["hog"] = &sdk.Construction{Name: "hog", Version: "0.0.1", Doc: "keccak whose Build grows its memory without bound",
		Params: keccak.Plugin.Params, Prepare: keccak.Plugin.Prepare, Reference: keccak.Plugin.Reference,
		Build: func(ctx context.Context, p *sdk.Pass) (*circuit.Circuit, error) {
			var held [][]byte
			for range 128 {
				b := make([]byte, 32<<20)
				for i := 0; i < len(b); i += 4096 {
					b[i] = 1 // resident, not only reserved
				}
				held = append(held, b)
				time.Sleep(10 * time.Millisecond)
			}
			return nil, fmt.Errorf("still running with %d MiB", len(held)*32)
		}}
	// keccak whose Build runs the Go runtime out of memory: it reserves
	// ever larger blocks (touching one byte of each, so the resident size
	// stays small) until the address space or the kernel's overcommit
	// refuses one, and the runtime dies with "fatal error: out of memory"
	// and a dump of every goroutine, hundreds of lines on stderr.
	m["oom"] = &sdk.Construction{Name: "oom", Version: "0.0.1", Doc: "keccak whose Build runs the Go runtime out of memory",
		Params: keccak.Plugin.Params, Prepare: keccak.Plugin.Prepare, Reference: keccak.Plugin.Reference,
		Build: func(ctx context.Context, p *sdk.Pass) (*circuit.Circuit, error) {
			// Goroutines for the dump to list, as a real plugin has.
			for range 20 {
				go func() { <-ctx.Done() }()
			}
			var held [][]byte
			for shift := 36; shift < 48; shift++ {
				b := make([]byte, 1<<shift)
				b[0] = 1
				held = append(held, b)
			}
			return nil, fmt.Errorf("still running with %d blocks", len(held))
		}}
	m["neverstarts"] = &sdk.Layerer{Name: "neverstarts", Version: "0.0.1", Doc: "never completes its start-up handshake (see TestMain)",
		Prepare: noPrepare, Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
			return reifier.Compile(ctx, c)
		}}
	m["chatty"] = &sdk.Layerer{Name: "chatty", Version: "0.0.1", Doc: "writes to stdout before its start-up handshake (see TestMain)",
		Prepare: noPrepare, Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
			return reifier.Compile(ctx, c)
		}}
	// Served with another protocol version (see TestMain).
	m["oldproto"] = &sdk.Layerer{Name: "oldproto", Version: "0.0.1", Doc: "speaks protocol 0", Prepare: noPrepare,
		Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
			return reifier.Compile(ctx, c)
		}}
	addChaos(m) // chaos_test.go
	return m
}
