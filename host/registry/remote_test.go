package registry_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"
	"github.com/rs/zerolog"

	"github.com/tcforge/tcforge/host/registry"
	"github.com/tcforge/tcforge/internal/wire"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/model"
	"github.com/tcforge/tcforge/sdk/serve"
)

// serveEnv names the fixture a re-executed test binary serves.
const serveEnv = "TCFORGE_TEST_SERVE"

func TestMain(m *testing.M) {
	if name := os.Getenv(serveEnv); name != "" {
		serveFixture(name)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// serveFixture is the main of the plugin processes the tests launch.
func serveFixture(name string) {
	switch name {
	case "toy":
		serve.Main(toyPlugin())
	case "big":
		serve.Main(bigPlugin())
	case "tiny-mapper":
		serve.Main(tinyMapper())
	case "automtls":
		// A plugin built against an SDK before P-256 TLS: go-plugin's
		// AutoMTLS answers the host's certificate.
		cfg := wire.ServeConfig(describer{toyPlugin().Describe()}, sdk.ProtocolVersion)
		cfg.TLSProvider = nil
		plugin.Serve(cfg)
	case "badproto":
		plugin.Serve(wire.ServeConfig(describer{toyPlugin().Describe()}, sdk.ProtocolVersion+98))
	case "liar":
		d := toyPlugin().Describe()
		d.Protocol = sdk.ProtocolVersion + 1
		wire.Serve(describer{d}, sdk.ProtocolVersion)
	default:
		if names := strings.Split(name, ","); len(names) > 1 {
			// A group of the fixtures groupFixtures has (TestGroup).
			var ps []sdk.Plugin
			for _, n := range names {
				ps = append(ps, groupFixtures()[n])
			}
			serve.Group(ps...)
			return
		}
		fmt.Fprintf(os.Stderr, "no test fixture %q\n", name)
		os.Exit(2)
	}
}

// toyPlugin computes out = (a AND b) XOR c; its parameters trigger the
// failure modes under test.
func toyPlugin() *sdk.Construction {
	return &sdk.Construction{
		Name:    "toy",
		Version: "0.1.0",
		Doc:     "(a AND b) XOR c",
		Params: []sdk.Param{
			{Name: "n", Type: sdk.Int, Default: 1, Doc: "an odd number", Min: sdk.Bound(0), Max: sdk.Bound(100)},
			{Name: "mode", Type: sdk.String, Default: "ok", Doc: "failure to simulate",
				Enum: []string{"ok", "panic", "exit", "escaped-panic", "wait", "print"}},
			{Name: "scale", Type: sdk.Number, Default: 0.5, Doc: "unused"},
		},
		Prepare: func(context.Context, *sdk.Pass) (any, error) { return nil, nil },
		Build: func(ctx context.Context, pass *sdk.Pass) (*circuit.Circuit, error) {
			p := pass.Params
			pass.Log.Info().Str("k", "v").Int("n", p.Int("n")).Msg("building toy")
			switch p.String("mode") {
			case "panic":
				panic("boom")
			case "exit":
				os.Exit(3)
			case "escaped-panic":
				go panic("escaped")
				time.Sleep(time.Minute)
			case "wait":
				<-ctx.Done()
				return nil, ctx.Err()
			case "print":
				fmt.Println("hello on stdout")
				fmt.Fprintln(os.Stderr, "hello on stderr")
			}
			switch n := p.Int("n"); {
			case n == 4:
				return nil, fmt.Errorf("sizing the toy: %w", p.Errorf("n", "4 is unlucky"))
			case n%2 == 0:
				return nil, p.Errorf("n", "must be odd, got %d", n)
			}
			b := circuit.NewBuilder()
			in := b.Input("abc", 3)
			b.Output("out", []circuit.Node{b.Xor(b.And(in[0], in[1]), in[2])})
			b.SetAttr("n", int64(p.Int("n")))
			return b.Circuit(), nil
		},
		Reference: func(ctx context.Context, pass *sdk.Pass, inputs []bitvec.Vec) ([]bitvec.Vec, error) {
			out := make([]bitvec.Vec, len(inputs))
			for i, v := range inputs {
				out[i] = bitvec.NewVec(1)
				out[i].Set(0, v.Get(0)&v.Get(1)^v.Get(2))
			}
			return out, nil
		},
	}
}

// describer serves a description and nothing else: the fixtures that
// speak another protocol, in the handshake or in their description.
type describer struct{ d sdk.Description }

func (h describer) Describe() ([]byte, error) { return json.Marshal(h.d) }

func (h describer) Call(context.Context, string, []byte, []byte, *wire.Times) ([]byte, error) {
	return nil, errors.New("not served")
}

// Size of the big layered circuit: ≈ 2M gates, ≈ 3.6M edges, > 50 MB encoded.
const (
	bigLevels = 100
	bigWidth  = 20000
)

// bigLayered builds a large, deterministic layered circuit.
func bigLayered() *layered.Circuit {
	const inputs = 64
	b := layered.NewBuilder(inputs, []circuit.Range{{Name: "in", Start: 0, Len: inputs}})
	b.Grow(bigLevels*bigWidth, 2*bigLevels*bigWidth)
	tags := []int32{b.Tag("alpha"), b.Tag("beta/gamma"), b.Tag("delta")}
	prev := int32(inputs)
	for L := range int32(bigLevels) {
		for g := range int32(bigWidth) {
			if g%5 == 0 {
				b.Copy((g+L)%prev, tags[g%3])
				continue
			}
			src := []int32{(g*7 + L) % prev, (g*13 + 1) % prev}
			b.Gate(layered.KindGate, g%3-1, src, []int32{1 + g%4, -1 - L%3}, tags[(g+L)%3])
		}
		b.Level()
		prev = bigWidth
	}
	return b.Circuit([]circuit.Range{{Name: "out", Start: 0, Len: bigWidth}})
}

// bigPlugin is a layerer that ignores its input and returns bigLayered.
func bigPlugin() *sdk.Layerer {
	return &sdk.Layerer{
		Name:    "big",
		Doc:     "returns a large layered circuit",
		Prepare: func(context.Context, *sdk.Pass) (any, error) { return nil, nil },
		Layer: func(ctx context.Context, pass *sdk.Pass, c *circuit.Circuit) (*layered.Circuit, error) {
			if c.NumNodes() == 0 {
				return nil, errors.New("empty input circuit")
			}
			return bigLayered(), nil
		},
	}
}

// tinyMapper maps a layered circuit to a model recording its shape.
func tinyMapper() *sdk.Mapper {
	return &sdk.Mapper{
		Name:    "tiny-mapper",
		Doc:     "a model recording the circuit's shape",
		Params:  []sdk.Param{{Name: "scale", Type: sdk.Number, Default: 1.0, Doc: "weight scale"}},
		Prepare: func(context.Context, *sdk.Pass) (any, error) { return nil, nil },
		// MaxWeight crosses in the description (TestMapperOverRPC).
		MaxWeight: 1 << 16,
		Map: func(ctx context.Context, pass *sdk.Pass, c *layered.Circuit) (*model.Model, error) {
			p := pass.Params
			return &model.Model{
				Arch:  "test",
				Attrs: map[string]int64{"depth": int64(c.Depth()), "gates": int64(c.NumGates())},
				Tensors: []model.Tensor{{
					Name: "w", Rows: 2, Cols: 2, RowPtr: []int32{0, 1, 2}, Col: []int32{0, 1},
					Val: []float32{float32(p.Float("scale")), -1},
				}},
			}, nil
		},
	}
}

// syncBuffer is a goroutine-safe log sink that signals every write.
type syncBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	written chan struct{} // one pending signal at most
}

func (b *syncBuffer) signal() chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.written == nil {
		b.written = make(chan struct{}, 1)
	}
	return b.written
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	ch := b.signal()
	b.mu.Lock()
	n, err := b.buf.Write(p)
	b.mu.Unlock()
	select {
	case ch <- struct{}{}:
	default:
	}
	return n, err
}

// events returns the JSON log events written so far.
func (b *syncBuffer) events(t *testing.T) []map[string]any {
	t.Helper()
	b.mu.Lock()
	data := append([]byte(nil), b.buf.Bytes()...)
	b.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// waitEvent waits for a log event with the given message.
func (b *syncBuffer) waitEvent(t *testing.T, msg string) map[string]any {
	t.Helper()
	timeout := time.After(10 * time.Second)
	written := b.signal()
	for {
		for _, e := range b.events(t) {
			if m, _ := e["message"].(string); strings.Contains(m, msg) {
				return e
			}
		}
		select {
		case <-written: // look again
			continue
		case <-timeout:
		}
		break
	}
	t.Fatalf("no log event %q; log:\n%s", msg, b.buf.String())
	return nil
}

// launch starts the test binary serving fixture.
func launch(t testing.TB, fixture, name string, log zerolog.Logger) (*launched, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"="+fixture)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, pl, err := registry.Launch(ctx, name, cmd, nil, log)
	if err != nil {
		return nil, err
	}
	return &launched{c, pl}, nil
}

// launched is a plugin process and its plugin value.
type launched struct {
	*wire.Client
	pl sdk.Plugin
}

func (l *launched) Plugin() sdk.Plugin { return l.pl }

func (l *launched) Describe() sdk.Description { return l.pl.Describe() }

// mustLaunch launches fixture and closes it when the test ends.
func mustLaunch(t *testing.T, fixture, name string) (*launched, *syncBuffer) {
	t.Helper()
	buf := &syncBuffer{}
	c, err := launch(t, fixture, name, zerolog.New(buf).Level(zerolog.TraceLevel))
	if err != nil {
		t.Fatalf("launching %s: %v", fixture, err)
	}
	t.Cleanup(c.Close)
	return c, buf
}

// params is a pass of values for p, without asking the plugin (a call
// after the process is gone must fail in the call itself).
func params(t *testing.T, p sdk.Plugin, values map[string]any) *sdk.Pass {
	t.Helper()
	ps, err := sdk.NewParams(p.Describe().Params, values)
	if err != nil {
		t.Fatal(err)
	}
	return &sdk.Pass{Params: ps}
}

func TestDescribeRoundTrip(t *testing.T) {
	c, _ := mustLaunch(t, "toy", "toy")
	want := toyPlugin().Describe()
	want.Params[0].Default = int64(1) // JSON numbers come back as the Go types Params use
	if got := c.Describe(); !reflect.DeepEqual(got, want) {
		t.Errorf("Describe:\n got %+v\nwant %+v", got, want)
	}
	p, ok := c.Plugin().(*sdk.Construction)
	if !ok {
		t.Fatalf("Plugin() is %T, want *sdk.Construction", c.Plugin())
	}
	if !reflect.DeepEqual(p.Describe(), c.Describe()) {
		t.Errorf("Plugin().Describe() = %+v, want %+v", p.Describe(), c.Describe())
	}
	if p.Build == nil || p.Reference == nil {
		t.Error("remote construction lacks Build or Reference")
	}
	if c.Exited() {
		t.Error("Exited() = true for a live plugin")
	}
}

func TestConstructionOverRPC(t *testing.T) {
	c, logs := mustLaunch(t, "toy", "toy")
	p := c.Plugin().(*sdk.Construction)
	ctx := context.Background()
	ps := params(t, p, map[string]any{"n": int64(7)})

	circ, err := p.Build(ctx, ps)
	if err != nil {
		t.Fatal(err)
	}
	// The circuit came in its flat encoding, taken in place and checked.
	if e := logs.waitEvent(t, "call done"); e["call"] != "Build" || e["flat"] != true {
		t.Errorf("plugin's call log %v: want Build answered flat", e)
	}
	if got := circ.Attrs["n"]; got != 7 {
		t.Errorf("Attrs[n] = %d, want 7", got)
	}
	if len(circ.Inputs) != 3 || len(circ.Outputs) != 1 {
		t.Fatalf("circuit has %d inputs and %d outputs, want 3 and 1", len(circ.Inputs), len(circ.Outputs))
	}
	// All 8 assignments as bit-sliced words: sample s has a = bit 0 of s, ….
	in := make([]uint64, 3)
	var samples []bitvec.Vec
	for s := range 8 {
		v := bitvec.NewVec(3)
		for i := range 3 {
			bit := uint(s>>i) & 1
			in[i] |= uint64(bit) << s
			v.Set(i, bit)
		}
		samples = append(samples, v)
	}
	out, err := circ.Eval(in)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := p.Reference(ctx, ps, samples)
	if err != nil {
		t.Fatal(err)
	}
	if len(ref) != 8 {
		t.Fatalf("Reference returned %d vectors, want 8", len(ref))
	}
	for s := range 8 {
		a, b, cc := s&1, s>>1&1, s>>2&1
		want := uint((a & b) ^ cc)
		if got := uint(out[0]>>s) & 1; got != want {
			t.Errorf("circuit(%d,%d,%d) = %d, want %d", a, b, cc, got, want)
		}
		if got := ref[s].Get(0); got != want {
			t.Errorf("Reference(%d,%d,%d) = %d, want %d", a, b, cc, got, want)
		}
	}

	// Concurrent calls share the process.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			if _, err := p.Build(ctx, ps); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestLargeLayeredCircuit(t *testing.T) {
	c, _ := mustLaunch(t, "big", "big")
	l, ok := c.Plugin().(*sdk.Layerer)
	if !ok {
		t.Fatalf("Plugin() is %T, want *sdk.Layerer", c.Plugin())
	}
	b := circuit.NewBuilder()
	x := b.Input("x", 2)
	b.Output("y", []circuit.Node{b.Xor(x...)})

	want := bigLayered()
	wantBlob, err := want.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(wantBlob) < 16<<20 {
		t.Fatalf("fixture encodes to %d bytes, want ≥ 16 MiB (many chunks)", len(wantBlob))
	}
	start := time.Now()
	got, err := l.Layer(context.Background(), params(t, l, nil), b.Circuit())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d MB layered circuit crossed in %v", len(wantBlob)>>20, time.Since(start))
	if gs, ws := got.Stats(), want.Stats(); !reflect.DeepEqual(gs, ws) {
		t.Errorf("Stats differ: got %+v, want %+v", gs, ws)
	}
	gotBlob, err := got.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(gotBlob) != sha256.Sum256(wantBlob) {
		t.Error("the received circuit's encoding differs from the plugin's")
	}
}

func TestMapperOverRPC(t *testing.T) {
	c, _ := mustLaunch(t, "tiny-mapper", "tiny-mapper")
	m, ok := c.Plugin().(*sdk.Mapper)
	if !ok {
		t.Fatalf("Plugin() is %T, want *sdk.Mapper", c.Plugin())
	}
	if m.MaxWeight != 1<<16 {
		t.Errorf("MaxWeight %d over RPC, want 65536", m.MaxWeight)
	}
	lb := layered.NewBuilder(2, nil)
	lb.Gate(layered.KindGate, 2, []int32{0, 1}, []int32{1, 1}, lb.Tag("and"))
	lb.Level()
	mod, err := m.Map(context.Background(), params(t, m, map[string]any{"scale": 2.5}), lb.Circuit(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Model{
		Arch:    "test",
		Attrs:   map[string]int64{"depth": 1, "gates": 1},
		Tensors: []model.Tensor{{Name: "w", Rows: 2, Cols: 2, RowPtr: []int32{0, 1, 2}, Col: []int32{0, 1}, Val: []float32{2.5, -1}}},
	}
	if !reflect.DeepEqual(mod, want) {
		t.Errorf("Map = %+v, want %+v", mod, want)
	}
}

func TestParamErrorCrosses(t *testing.T) {
	c, _ := mustLaunch(t, "toy", "toy")
	p := c.Plugin().(*sdk.Construction)
	_, err := p.Build(context.Background(), params(t, p, map[string]any{"n": int64(2)}))
	pe, ok := sdk.AsParamError(err)
	if !ok {
		t.Fatalf("error %v (%T) is not a *ParamError", err, err)
	}
	if pe.Param != "n" || pe.Msg != "must be odd, got 2" {
		t.Errorf("ParamError = %+v", *pe)
	}
	if want := `plugin "toy": Build: parameter "n": must be odd, got 2`; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}

	// A wrapped ParamError keeps its context and stays reachable.
	_, err = p.Build(context.Background(), params(t, p, map[string]any{"n": int64(4)}))
	if pe, ok := sdk.AsParamError(err); !ok || pe.Param != "n" || pe.Msg != "4 is unlucky" {
		t.Fatalf("error %v: ParamError %+v, %v", err, pe, ok)
	}
	if want := `plugin "toy": Build: sizing the toy: parameter "n": 4 is unlucky`; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
}

func TestPanicIsRecovered(t *testing.T) {
	c, logs := mustLaunch(t, "toy", "toy")
	p := c.Plugin().(*sdk.Construction)
	ctx := context.Background()
	_, err := p.Build(ctx, params(t, p, map[string]any{"mode": "panic"}))
	if err == nil {
		t.Fatal("Build did not fail")
	}
	// The panic's file and line: the toy's Build above.
	if want := regexp.MustCompile(`^plugin "toy": Build: plugin panicked: boom \(at registry/remote_test\.go:\d+ in github\.com/tcforge/tcforge/host/registry_test\.toyPlugin\.func\d+\)$`); !want.MatchString(err.Error()) {
		t.Errorf("error = %q, want %s", err, want)
	}
	if e := logs.waitEvent(t, "Build panicked"); e["plugin"] != "toy" || e["level"] != "error" || e["panic"] != "boom" {
		t.Errorf("panic log event = %v", e)
	}
	if _, err := p.Build(ctx, params(t, p, nil)); err != nil {
		t.Errorf("call after a panic: %v", err)
	}
	if c.Exited() {
		t.Error("the plugin process exited after a recovered panic")
	}
}

func TestPluginExitMidCall(t *testing.T) {
	// An escaped panic ends the process with the runtime's report on its
	// stderr: the error is one line with the cause, the report its Detail
	// (and debug lines of the log, not a flood of errors).
	for _, tc := range []struct{ mode, status string }{
		{"exit", "exit status 3"},
		{"escaped-panic", "exit status 2: panic: escaped"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			c, logs := mustLaunch(t, "toy", "toy")
			p := c.Plugin().(*sdk.Construction)
			_, err := p.Build(context.Background(), params(t, p, map[string]any{"mode": tc.mode}))
			var ee *wire.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("error %v (%T) is not an *ExitError", err, err)
			}
			if want := `plugin "toy" exited during Build: ` + tc.status; err.Error() != want {
				t.Errorf("error = %q, want %q", err, want)
			}
			if !c.Exited() {
				t.Error("Exited() = false")
			}
			if tc.mode == "escaped-panic" {
				if e := logs.waitEvent(t, "panic: escaped"); e["plugin"] != "toy" || e["level"] != "debug" {
					t.Errorf("crash log event = %v", e)
				}
				if d := ee.Detail(); !strings.Contains(d, "panic: escaped") || !strings.Contains(d, "goroutine ") {
					t.Errorf("Detail() lacks the panic and its goroutine:\n%s", d)
				}
			}
			_, err = p.Build(context.Background(), params(t, p, nil))
			if want := `plugin "toy" exited before Build: ` + tc.status; err == nil || err.Error() != want {
				t.Errorf("call after exit: error = %v, want %q", err, want)
			}
		})
	}
}

func TestContextDeadline(t *testing.T) {
	c, _ := mustLaunch(t, "toy", "toy")
	p := c.Plugin().(*sdk.Construction)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, err := p.Build(ctx, params(t, p, map[string]any{"mode": "wait"}))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want a deadline error", err)
	}
	if !strings.Contains(err.Error(), `plugin "toy": Build`) {
		t.Errorf("error %q does not name the plugin and call", err)
	}
	if _, err := p.Build(context.Background(), params(t, p, nil)); err != nil {
		t.Errorf("call after a deadline: %v", err)
	}
}

// TestLaunchTLS checks which TLS a plugin's connection uses: P-256 keys
// with the plugin's certificate pinned through its blob directory, or
// go-plugin's AutoMTLS with a plugin built against an older SDK; both
// connect.
func TestLaunchTLS(t *testing.T) {
	tests := []struct{ fixture, want string }{
		{"toy", "p256-pinned"},
		{"automtls", "automtls"},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			c, buf := mustLaunch(t, tt.fixture, "toy")
			if c.Describe().Name != "toy" {
				t.Errorf("Describe().Name = %q, want toy", c.Describe().Name)
			}
			// Logic circuits go flat to a plugin of this SDK only.
			if want := tt.fixture == "toy"; c.Flat() != want {
				t.Errorf("Flat() = %v, want %v", c.Flat(), want)
			}
			if e := buf.waitEvent(t, "plugin launched"); e["tls"] != tt.want {
				t.Errorf("launch log %v: tls %v, want %q", e, e["tls"], tt.want)
			}
		})
	}
}

func TestProtocolMismatch(t *testing.T) {
	_, err := launch(t, "badproto", "toy", zerolog.Nop())
	if err == nil {
		t.Fatal("a plugin with handshake protocol 99 was accepted")
	}
	want := fmt.Sprintf(`plugin "toy" speaks tcforge plugin protocol %d, this host speaks %d`, sdk.ProtocolVersion+98, sdk.ProtocolVersion)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error = %q, want it to contain %q", err, want)
	}

	_, err = launch(t, "liar", "toy", zerolog.Nop())
	if err == nil {
		t.Fatal("a plugin describing protocol 2 was accepted")
	}
	want = fmt.Sprintf(`plugin "toy" speaks tcforge plugin protocol %d, this host speaks %d`, sdk.ProtocolVersion+1, sdk.ProtocolVersion)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error = %q, want it to contain %q", err, want)
	}
}

func TestNameMismatch(t *testing.T) {
	_, err := launch(t, "toy", "keccak", zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), `plugin "keccak"`) || !strings.Contains(err.Error(), `describes itself as "toy"`) {
		t.Fatalf("error = %v, want a name mismatch", err)
	}
	// An empty name accepts any plugin and takes its name.
	buf := &syncBuffer{}
	c, err := launch(t, "toy", "", zerolog.New(buf))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := c.Plugin().(*sdk.Construction)
	_, err = p.Build(context.Background(), params(t, p, map[string]any{"n": int64(2)}))
	if err == nil || !strings.HasPrefix(err.Error(), `plugin "toy": Build:`) {
		t.Errorf("error = %v, want it to name the plugin", err)
	}
	if e := buf.waitEvent(t, "building toy"); e["plugin"] != "toy" {
		t.Errorf("log event = %v, want plugin toy", e)
	}
}

func TestPluginLogsReachHost(t *testing.T) {
	c, logs := mustLaunch(t, "toy", "toy")
	p := c.Plugin().(*sdk.Construction)
	if _, err := p.Build(context.Background(), params(t, p, map[string]any{"n": int64(5)})); err != nil {
		t.Fatal(err)
	}
	e := logs.waitEvent(t, "building toy")
	want := map[string]any{"plugin": "toy", "level": "info", "message": "building toy", "k": "v", "n": 5.0, "call": "Build"}
	for k, v := range want {
		if e[k] != v {
			t.Errorf("log event field %s = %v, want %v (event %v)", k, e[k], v, e)
		}
	}

	// What the plugin prints to os.Stdout and os.Stderr is logged too.
	if _, err := p.Build(context.Background(), params(t, p, map[string]any{"mode": "print"})); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ msg, stream, level string }{
		{"hello on stdout", "stdout", "info"},
		{"hello on stderr", "stderr", "warn"},
	} {
		e := logs.waitEvent(t, tc.msg)
		if e["plugin"] != "toy" || e["stream"] != tc.stream || e["level"] != tc.level {
			t.Errorf("log event = %v, want plugin toy, stream %s, level %s", e, tc.stream, tc.level)
		}
	}
}

func TestPluginLogLevelFollowsHost(t *testing.T) {
	buf := &syncBuffer{}
	c, err := launch(t, "toy", "toy", zerolog.New(buf).Level(zerolog.WarnLevel))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := c.Plugin().(*sdk.Construction)
	if _, err := p.Build(context.Background(), params(t, p, map[string]any{"mode": "panic"})); err == nil {
		t.Fatal("Build did not fail")
	}
	buf.waitEvent(t, "Build panicked") // error level: passes
	for _, e := range buf.events(t) {
		if e["message"] == "building toy" {
			t.Errorf("info event reached a warn-level host logger: %v", e)
		}
	}
}

func TestCallAfterClose(t *testing.T) {
	buf := &syncBuffer{}
	c, err := launch(t, "toy", "toy", zerolog.New(buf))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Plugin().(*sdk.Construction)
	c.Close()
	_, err = p.Build(context.Background(), params(t, p, nil))
	if err == nil || !strings.Contains(err.Error(), `plugin "toy"`) {
		t.Fatalf("error = %v, want a closed-client error naming the plugin", err)
	}
}

func TestLaunchFailures(t *testing.T) {
	ctx := context.Background()
	_, _, err := registry.Launch(ctx, "ghost", exec.Command("/nonexistent/tcforge-plugin-ghost"), nil, zerolog.Nop())
	if err == nil || !strings.Contains(err.Error(), `plugin "ghost"`) {
		t.Errorf("missing executable: error = %v, want it to name the plugin", err)
	}
	// The fixture exits with status 2 before the handshake; the last line
	// it wrote to stderr is the error's cause, the whole its Detail (and
	// debug lines of the log).
	buf := &syncBuffer{}
	_, err = launch(t, "no-such-fixture", "ghost", zerolog.New(buf).Level(zerolog.DebugLevel))
	if want := `plugin "ghost" exited during startup: exit status 2: no test fixture "no-such-fixture"`; err == nil || err.Error() != want {
		t.Errorf("early exit: error = %v, want %q", err, want)
	}
	var ee *wire.ExitError
	if !errors.As(err, &ee) || !strings.Contains(ee.Detail(), `no test fixture "no-such-fixture"`) {
		t.Errorf("early exit: error %v has no Detail with the plugin's stderr", err)
	}
	if e := buf.waitEvent(t, `no test fixture "no-such-fixture"`); e["plugin"] != "ghost" || e["level"] != "debug" {
		t.Errorf("stderr log event = %v", e)
	}
	// A canceled context aborts the start.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), serveEnv+"=toy")
	_, _, err = registry.Launch(cctx, "toy", cmd, nil, zerolog.Nop())
	if !errors.Is(err, context.Canceled) {
		t.Errorf("canceled start: error = %v, want context.Canceled", err)
	}
}

// TestSocketInBlobDir: a plugin's socket is made in its private blob
// directory, not in the shared temporary directory, and goes with it when
// the plugin is closed: nothing of the plugin is left in TMPDIR.
func TestSocketInBlobDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	c, _ := mustLaunch(t, "toy", "toy")
	ents, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	var sockets []string
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "tcforge-blobs-") {
			t.Errorf("%s in TMPDIR, want only the plugin's blob directory", e.Name())
			continue
		}
		inner, err := os.ReadDir(filepath.Join(tmp, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range inner {
			if f.Type()&os.ModeSocket != 0 {
				sockets = append(sockets, f.Name())
			}
		}
	}
	if len(ents) != 1 || len(sockets) != 1 {
		t.Errorf("%d entries in TMPDIR, %d sockets in the blob directory; want 1 and 1", len(ents), len(sockets))
	}
	c.Close()
	if ents, err := os.ReadDir(tmp); err != nil || len(ents) != 0 {
		t.Errorf("TMPDIR after Close: %v %v, want empty", ents, err)
	}
}
