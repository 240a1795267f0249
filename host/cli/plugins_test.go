package cli_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tcforge/tcforge/host/builtin"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// hangMarkEnv names a file the "hangs" layerer creates when it starts
// hanging.
const hangMarkEnv = "TCFORGE_TEST_HANG_MARK"

// checkLogEnv names a file the "counting" construction appends a line to
// at every Prepare and Estimate call.
const checkLogEnv = "TCFORGE_TEST_CHECK_LOG"

// logCall appends "what:rounds=N" to the file $checkLogEnv names, if set.
func logCall(what string, pass *sdk.Pass) error {
	path := os.Getenv(checkLogEnv)
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

// diesOnceEnv names a file: the "diesonce" layerer's first Layer call
// creates it and exits the process; later calls (the file exists) are
// reifier's.
const diesOnceEnv = "TCFORGE_TEST_DIES_ONCE"

// neverStartsEnv, set to 1, makes the "neverstarts" layerer's process
// never complete the go-plugin handshake (see TestMain); unset, it is
// reifier.
const neverStartsEnv = "TCFORGE_TEST_NEVER_STARTS"

// chattyEnv, set to 1, makes the "chatty" layerer's process write a line
// to its standard output before the go-plugin handshake (see TestMain);
// unset, it is reifier.
const chattyEnv = "TCFORGE_TEST_CHATTY"

// noPrepare is the Prepare of the test layerers: nothing to resolve.
func noPrepare(context.Context, *sdk.Pass) (any, error) { return nil, nil }

// testBuiltins are the bundled plugins plus misbehaving ones. They are
// served, like bundled plugins, by re-executing the test binary, so every
// misbehaviour happens in a real plugin process behind real RPC.
func testBuiltins() map[string]sdk.Plugin {
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
		{Name: "diesonce", Version: "0.0.1", Doc: "exits in its first Layer call (the one that creates $" + diesOnceEnv + "), then is reifier",
			Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
				if f, err := os.OpenFile(os.Getenv(diesOnceEnv), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
					f.Close()
					os.Exit(3)
				}
				return reifier.Compile(ctx, c)
			}},
		{Name: "hangs", Version: "0.0.1", Doc: "never answers Layer (and ignores cancellation)",
			Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
				if mark := os.Getenv(hangMarkEnv); mark != "" {
					os.WriteFile(mark, nil, 0o644) // tell the test we are stuck
				}
				time.Sleep(time.Hour)
				return nil, nil
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
	// $checkLogEnv: "prepare:rounds=N", "estimate:rounds=N"). The plugin
	// process runs Prepare for every call it serves; the host asks for an
	// Estimate only while checking a distinct parameter set.
	m["counting"] = &sdk.Construction{Name: "counting", Version: "0.0.1", Doc: "keccak, logging every Prepare and Estimate call",
		Params: keccak.Plugin.Params, Build: keccak.Plugin.Build, Reference: keccak.Plugin.Reference,
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
	m["neverstarts"] = &sdk.Layerer{Name: "neverstarts", Version: "0.0.1", Doc: "with $" + neverStartsEnv + "=1, never completes its start-up handshake",
		Prepare: noPrepare, Layer: func(ctx context.Context, _ *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
			return reifier.Compile(ctx, c)
		}}
	m["chatty"] = &sdk.Layerer{Name: "chatty", Version: "0.0.1", Doc: "with $" + chattyEnv + "=1, writes to stdout before its start-up handshake",
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
