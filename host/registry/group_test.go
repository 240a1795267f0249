package registry_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/internal/wire"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
)

// groupFixtures are the fixtures a test binary serves as a group
// (serveFixture, "NAME,NAME…").
func groupFixtures() map[string]sdk.Plugin {
	return map[string]sdk.Plugin{"toy": toyPlugin(), "tiny-mapper": tinyMapper(), "big": bigPlugin()}
}

// fixtureCommand is the command that serves the fixtures names (one, or
// a group): this test binary, re-executed (serveFixture).
func fixtureCommand(names ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"="+strings.Join(names, ","))
	return cmd
}

// TestGroup: the plugins of Options.Group that a run starts together
// share one process (one launch, serving both), while a plugin outside
// the group gets its own; every call reaches its own plugin. A crash ends
// the process under both plugins, and each one's error names it and the
// plugin it shared the process with; the next Open starts the plugin
// again, alone.
func TestGroup(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var launches []string
	buf := &syncBuffer{}
	reg := registry.New(registry.Options{
		Builtins: groupFixtures(),
		Group:    []string{"toy", "tiny-mapper"},
		SelfCommand: func(names ...string) (*exec.Cmd, error) {
			mu.Lock()
			launches = append(launches, strings.Join(names, ","))
			mu.Unlock()
			return fixtureCommand(names...), nil
		},
		Log: zerolog.New(buf).Level(zerolog.InfoLevel),
	})
	defer reg.Close()
	ctx := context.Background()
	reg.Start(ctx, []string{"toy", "big", "tiny-mapper", "toy"})
	open := func(name string) sdk.Plugin {
		t.Helper()
		pl, src, err := reg.Open(ctx, name)
		if err != nil {
			t.Fatalf("Open(%q): %v", name, err)
		}
		if !src.Bundled || src.InProcess {
			t.Fatalf("Open(%q): source %+v, want bundled, in a process", name, src)
		}
		return pl
	}
	toy := open("toy").(*sdk.Construction)
	mapper := open("tiny-mapper").(*sdk.Mapper)
	if _, ok := open("big").(*sdk.Layerer); !ok {
		t.Fatal("big is not a layerer")
	}
	mu.Lock()
	got := slices.Sorted(slices.Values(launches))
	mu.Unlock()
	if want := []string{"big", "tiny-mapper,toy"}; !slices.Equal(got, want) {
		t.Fatalf("launches %q, want %q: the group's two plugins in one process, big alone", got, want)
	}

	// Each call reaches its own plugin: the toy's circuit and reference,
	// the mapper's model.
	pass := params(t, toy, map[string]any{"n": 3})
	circ, err := toy.Build(ctx, pass)
	if err != nil {
		t.Fatal(err)
	}
	if circ.Attrs["n"] != 3 || len(circ.Inputs) != 3 || len(circ.Outputs) != 1 {
		t.Errorf("toy's circuit: attrs %v, %d inputs, %d outputs; want n = 3, 3 inputs, 1 output", circ.Attrs, len(circ.Inputs), len(circ.Outputs))
	}
	// Its log line names it, though its process serves two plugins.
	if e := buf.waitEvent(t, "building toy"); e["plugin"] != "toy" || e["tcforge_plugin"] != nil || e["n"] != 3.0 {
		t.Errorf("the toy's log line: %v, want plugin toy, n 3 and no tcforge_plugin field", e)
	}
	in := bitvec.NewVec(3)
	in.Set(0, 1)
	in.Set(1, 1)
	ref, err := toy.Reference(ctx, pass, []bitvec.Vec{in})
	if err != nil || len(ref) != 1 || ref[0].Get(0) != 1 {
		t.Errorf("toy's Reference on 110 = %v, %v; want [1]", ref, err)
	}
	lb := layered.NewBuilder(2, nil)
	lb.Gate(layered.KindGate, 2, []int32{0, 1}, []int32{1, 1}, lb.Tag("and"))
	lb.Level()
	lc := lb.Circuit(nil)
	mod, err := mapper.Map(ctx, params(t, mapper, map[string]any{"scale": 2.5}), lc)
	if err != nil {
		t.Fatal(err)
	}
	if mod.Arch != "test" || !reflect.DeepEqual(mod.Attrs, map[string]int64{"depth": 1, "gates": 1}) || mod.Tensors[0].Val[0] != 2.5 {
		t.Errorf("tiny-mapper's model: %+v", mod)
	}

	// The toy's process exits in Build: both plugins' calls fail, each
	// naming itself and the other.
	_, err = toy.Build(ctx, params(t, toy, map[string]any{"mode": "exit"}))
	var ee *wire.ExitError
	if !errors.As(err, &ee) || ee.Plugin != "toy" || !slices.Equal(ee.Shared, []string{"tiny-mapper"}) {
		t.Fatalf("Build that exits: %v, want an *ExitError of toy shared with tiny-mapper", err)
	}
	if want := `plugin "toy" exited (its process, shared with tiny-mapper) during Build: exit status 3`; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Build that exits: %q, want it to begin %q", err, want)
	}
	_, err = mapper.Map(ctx, params(t, mapper, nil), lc)
	if !errors.As(err, &ee) || ee.Plugin != "tiny-mapper" || !ee.Before || !slices.Equal(ee.Shared, []string{"toy"}) {
		t.Fatalf("Map after the crash: %v, want an *ExitError of tiny-mapper, before the call, shared with toy", err)
	}

	// Opened again, the toy starts alone and answers.
	toy = open("toy").(*sdk.Construction)
	if _, err := toy.Build(ctx, pass); err != nil {
		t.Fatalf("Build after the restart: %v", err)
	}
	mu.Lock()
	got = slices.Clone(launches)
	mu.Unlock()
	if len(got) != 3 || got[2] != "toy" {
		t.Errorf("launches %q, want the toy alone third", got)
	}
}

// TestMappedAnswers: a bundled layerer's large answer is mapped from its
// blob file (and sent flat) within Options.MapBudget, read as before
// without one, and decodes to the same circuit either way.
func TestMappedAnswers(t *testing.T) {
	t.Parallel()
	want := bigLayered()
	for _, tt := range []struct {
		budget int64
		mapped bool
	}{{1 << 30, true}, {0, false}, {1 << 20, false}} {
		reg := registry.New(registry.Options{
			Builtins:    groupFixtures(),
			SelfCommand: func(names ...string) (*exec.Cmd, error) { return fixtureCommand(names...), nil },
			MapBudget:   tt.budget,
			Log:         zerolog.Nop(),
		})
		pl, _, err := reg.Open(context.Background(), "big")
		if err != nil {
			t.Fatal(err)
		}
		l := pl.(*sdk.Layerer)
		b := circuit.NewBuilder()
		x := b.Input("x", 2)
		b.Output("y", []circuit.Node{b.Xor(x...)})
		got, err := l.Layer(context.Background(), params(t, l, nil), b.Circuit())
		if err != nil {
			t.Fatalf("budget %d: %v", tt.budget, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("budget %d: the circuit differs from the plugin's", tt.budget)
		}
		// The flat blob of the circuit's arrays, over 50 MB, or nothing.
		if m := reg.Mapped(); tt.mapped != (m > 50<<20) || !tt.mapped && m != 0 {
			t.Errorf("budget %d: %d bytes mapped, want mapped %v", tt.budget, m, tt.mapped)
		}
		reg.Close()
	}
}

// TestGroupFallsBack: a group whose process does not start (here it exits
// before the handshake) leaves its plugins to start alone when opened,
// each in its own process, rather than failing them.
func TestGroupFallsBack(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var launches []string
	reg := registry.New(registry.Options{
		Builtins: groupFixtures(),
		Group:    []string{"toy", "tiny-mapper"},
		SelfCommand: func(names ...string) (*exec.Cmd, error) {
			mu.Lock()
			launches = append(launches, strings.Join(names, ","))
			mu.Unlock()
			if len(names) > 1 {
				return exec.Command("sh", "-c", "exit 3"), nil
			}
			return fixtureCommand(names...), nil
		},
		Log: zerolog.Nop(),
	})
	defer reg.Close()
	ctx := context.Background()
	reg.Start(ctx, []string{"toy", "tiny-mapper"})
	for _, name := range []string{"toy", "tiny-mapper"} {
		pl, _, err := reg.Open(ctx, name)
		if err != nil {
			t.Fatalf("Open(%q) after the group failed to start: %v", name, err)
		}
		if got := pl.Describe().Name; got != name {
			t.Errorf("Open(%q) gave %q", name, got)
		}
	}
	toy, _, _ := reg.Open(ctx, "toy")
	if _, err := toy.(*sdk.Construction).Build(ctx, params(t, toy, map[string]any{"n": 3})); err != nil {
		t.Errorf("the toy, started alone: %v", err)
	}
	mu.Lock()
	got := slices.Clone(launches)
	mu.Unlock()
	slices.Sort(got)
	if want := []string{"tiny-mapper", "tiny-mapper,toy", "toy"}; !slices.Equal(got, want) {
		t.Errorf("launches %q, want %q: the group once, then each alone", got, want)
	}
}
