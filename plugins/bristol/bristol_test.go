package bristol_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/sha3"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/plugins/bristol"
	"github.com/tcforge/tcforge/plugins/fusion"
	"github.com/tcforge/tcforge/plugins/keccak"
	"github.com/tcforge/tcforge/plugins/md"
	"github.com/tcforge/tcforge/plugins/merkle"
	"github.com/tcforge/tcforge/plugins/reifier"
	"github.com/tcforge/tcforge/plugins/sha2"
	"github.com/tcforge/tcforge/plugins/sha2/sha2ref"
	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/bitvec"
	bf "github.com/tcforge/tcforge/sdk/bristol"
	"github.com/tcforge/tcforge/sdk/circuit"
	"github.com/tcforge/tcforge/sdk/keccak/keccakref"
	"github.com/tcforge/tcforge/sdk/layered"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

var update = flag.Bool("update", false, "rewrite testdata/"+exportedFile+" from the keccak plugin")

// layer compiles c with both backends, checks each layered circuit against
// c and returns their figures by backend name.
func layer(t *testing.T, c *circuit.Circuit) map[string]layered.Stats {
	t.Helper()
	ctx := context.Background()
	r, err := reifier.Compile(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	f, err := fusion.Compile(ctx, c, fusion.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sdktest.CheckLayered(t, c, r, 256)
	sdktest.CheckLayered(t, c, f, 256)
	return map[string]layered.Stats{"reifier": r.Stats(), "fusion": f.Stats()}
}

// TestHandWritten imports testdata/adder4.txt, a Bristol Fashion file
// written by hand (the format has no comments, so its description is
// here):
//
//	21 32            21 gates, 32 wires
//	2 4 4            two input groups: x (wires 0–3), y (wires 4–7), LSB first
//	2 5 1            two output groups: x + y (wires 26–30), x = y (wire 31)
//
//	s0 = x0 ⊕ y0 → 26, c1 = x0 ∧ y0 → 8
//	for bit i = 1, 2, 3: t = xi ⊕ yi; one MAND computes xi ∧ yi and t ∧ ci,
//	their XOR is c(i+1); si = t ⊕ ci → 26 + i; c4 is the sum's bit 4 (30)
//	x = y is ¬(x0⊕y0) ∧ ¬t1 ∧ ¬t2 ∧ ¬t3: four INVs and three ANDs → 31
//
// It checks the circuit against the netlist evaluator, and both against
// x + y and x = y computed in Go on all 256 inputs; then both backends'
// layered circuits, with their figures.
func TestHandWritten(t *testing.T) {
	tests := []struct {
		maxArity int
		want     map[string][2]int // backend → depth, width
	}{
		{2, map[string][2]int{"reifier": {12, 12}, "fusion": {5, 13}}},
		{16, map[string][2]int{"reifier": {12, 12}, "fusion": {5, 13}}},
	}
	for _, tt := range tests {
		values := map[string]any{"file": filepath.Join("testdata", "adder4.txt"), "max_arity": tt.maxArity}
		c := sdktest.CheckReference(t, bristol.Plugin, values, 256)
		wantRanges := func(rs []circuit.Range, names []string, lens []int) bool {
			if len(rs) != len(names) {
				return false
			}
			for i, r := range rs {
				if r.Name != names[i] || r.Len != lens[i] {
					return false
				}
			}
			return true
		}
		if !wantRanges(c.InputRanges, []string{"in1", "in2"}, []int{4, 4}) || !wantRanges(c.OutputRanges, []string{"out1", "out2"}, []int{5, 1}) {
			t.Fatalf("ranges %v, %v", c.InputRanges, c.OutputRanges)
		}
		in := sdktest.AllInputs(8)
		got, err := bitvec.EvalSliced(in, 8, c.Eval)
		if err != nil {
			t.Fatal(err)
		}
		for v := range in {
			x, y := v&15, v>>4
			sum, eq := 0, 0
			for j := range 5 {
				sum |= int(got[v].Get(j)) << j
			}
			eq = int(got[v].Get(5))
			if sum != x+y || (eq == 1) != (x == y) {
				t.Errorf("max_arity %d: x=%d y=%d: sum %d, eq %d", tt.maxArity, x, y, sum, eq)
			}
		}
		if c.Attrs["file_gates"] != 21 || c.Attrs["file_and_gates"] != 10 || c.Attrs["file_depth"] != 7 || c.Attrs["file_and_depth"] != 4 {
			t.Errorf("attrs %v", c.Attrs)
		}
		for name, st := range layer(t, c) {
			if w := tt.want[name]; st.Depth != w[0] || st.Width != w[1] {
				t.Errorf("max_arity %d, %s: depth %d, width %d; want %d, %d", tt.maxArity, name, st.Depth, st.Width, w[0], w[1])
			}
		}
	}
}

// exportedFile is the Bristol Fashion file written by tcforge: Keccak-f[50]
// (log_w = 1), one round, two blocks of 25 bits, no padding — the paper's
// first table's point (1, 1, 2), written by
//
//	tcforge inspect --pipeline keccak-arbitrary-input --point log_w=1,rounds=1,blocks=2 \
//	  --bristol plugins/bristol/testdata/keccak50-1round-2blocks.txt configs/paper/keccak.hcl
const exportedFile = "keccak50-1round-2blocks.txt"

var exportedParams = map[string]any{"log_w": 1, "rate": 25, "rounds": 1, "blocks": 2, "padding": "none"}

// TestTcforgeWritten checks that exporting the keccak plugin's circuit
// gives testdata/keccak50-1round-2blocks.txt byte for byte (go test
// -update rewrites it), and imports the file: against the netlist
// evaluator, against the keccak plugin's reference (keccakref), and
// layered by both backends, with their figures.
func TestTcforgeWritten(t *testing.T) {
	path := filepath.Join("testdata", exportedFile)
	kc := sdktest.CheckReference(t, keccak.Plugin, exportedParams, 64)
	nl, err := bf.FromCircuit(kc)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := nl.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, buf.Bytes()) {
		t.Errorf("exporting the keccak circuit no longer gives %s (go test -update rewrites it)", path)
	}
	for _, arity := range []int{2, 16} {
		values := map[string]any{"file": path, "max_arity": arity}
		c := sdktest.CheckReference(t, bristol.Plugin, values, 256)
		sameFunction(t, c, keccak.Plugin, exportedParams, 256)
		st := layer(t, c)
		want := map[int]map[string][2]int{
			2:  {"reifier": {30, 475}, "fusion": {5, 1860}},
			16: {"reifier": {18, 575}, "fusion": {5, 319}},
		}[arity]
		for name, s := range st {
			if w := want[name]; s.Depth != w[0] || s.Width != w[1] {
				t.Errorf("max_arity %d, %s: depth %d, width %d; want %d, %d", arity, name, s.Depth, s.Width, w[0], w[1])
			}
		}
	}
}

// sameFunction checks the imported circuit c against construction pl's
// reference on n random inputs, output bit for output bit.
func sameFunction(t *testing.T, c *circuit.Circuit, pl *sdk.Construction, values map[string]any, n int) {
	t.Helper()
	in := bitvec.Random(rand.New(rand.NewPCG(5, 6)), n, len(c.Inputs))
	want, err := pl.Reference(context.Background(), sdktest.Pass(t, pl, values), in)
	if err != nil {
		t.Fatal(err)
	}
	got, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
	if err != nil {
		t.Fatal(err)
	}
	for s := range in {
		if !bitvec.Equal(got[s], want[s], len(c.Outputs)) {
			t.Fatalf("%s %v: input %s: re-imported circuit %s, reference %s", pl.Name, values,
				in[s].Text(len(c.Inputs)), got[s].Text(len(c.Outputs)), want[s].Text(len(c.Outputs)))
		}
	}
}

// roundTrips are the circuits exported to Bristol Fashion, re-imported and
// compared bit for bit with the construction's reference (crypto/sha3 for
// the standard instances, keccakref otherwise) and with the original
// circuit. Adding a construction is one line; depths, where given, are the
// re-imported circuit's per backend (both backends are then run); stdlib,
// where given, checks the re-imported circuit against the standard library
// (for the SHA-256 compression, which crypto/sha256 does not expose alone).
var roundTrips = []struct {
	name   string
	plugin *sdk.Construction
	values map[string]any
	depth  map[string]int
	stdlib func(t *testing.T, c *circuit.Circuit)
}{
	{"keccak-f25-1round", keccak.Plugin, map[string]any{"log_w": 0, "rate": 17, "rounds": 1, "padding": "none"}, nil, nil},
	{"keccak-f200-3rounds-sha3-padding", keccak.Plugin, map[string]any{"log_w": 3, "rate": 72, "rounds": 3, "padding": "sha3", "message_bits": 60}, nil, nil},
	{"md-strengthened", md.Plugin, map[string]any{"log_w": 2, "rounds": 2, "block_bits": 16, "blocks": 2, "padding": "strengthened"}, nil, nil},
	{"merkle-5-leaves", merkle.Plugin, map[string]any{"log_w": 1, "rounds": 1, "rate": 12, "block_bits": 4, "leaves": 5}, nil, nil},
	{"shake128-squeeze", keccak.Plugin, map[string]any{"preset": "shake128", "message_bits": 800, "output_bits": 1500}, nil, nil},
	{"sha3-256", keccak.Plugin, map[string]any{"preset": "sha3-256"}, map[string]int{"reifier": 134, "fusion": 49}, nil},
	{"sha256-compress", sha2.Plugin, map[string]any{"preset": "sha256", "mode": "compress"}, nil, sha256FromCompression},
}

// TestRoundTrip exports each circuit of roundTrips, writes the netlist to
// a file, imports it with the plugin (checked against the netlist
// evaluator) and compares the result with the construction's reference
// and the original circuit on random inputs.
func TestRoundTrip(t *testing.T) {
	for _, tt := range roundTrips {
		t.Run(tt.name, func(t *testing.T) {
			orig := sdktest.CheckReference(t, tt.plugin, tt.values, 64)
			nl, err := bf.FromCircuit(orig)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), tt.name+".txt")
			var buf bytes.Buffer
			if err := nl.Write(&buf); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			c := sdktest.CheckReference(t, bristol.Plugin, map[string]any{"file": path}, 256)
			if len(c.Inputs) != len(orig.Inputs) || len(c.Outputs) != len(orig.Outputs) {
				t.Fatalf("re-imported: %d inputs, %d outputs; original %d, %d", len(c.Inputs), len(c.Outputs), len(orig.Inputs), len(orig.Outputs))
			}
			sameFunction(t, c, tt.plugin, tt.values, 512)
			in := bitvec.Random(rand.New(rand.NewPCG(7, 8)), 512, len(c.Inputs))
			a, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
			if err != nil {
				t.Fatal(err)
			}
			b, err := bitvec.EvalSliced(in, len(c.Inputs), orig.Eval)
			if err != nil {
				t.Fatal(err)
			}
			for s := range in {
				if !bitvec.Equal(a[s], b[s], len(c.Outputs)) {
					t.Fatalf("input %d: re-imported and original circuits differ", s)
				}
			}
			if tt.stdlib != nil {
				tt.stdlib(t, c)
			}
			if tt.depth == nil {
				return
			}
			for name, st := range layer(t, c) {
				if st.Depth != tt.depth[name] {
					t.Errorf("%s: depth %d, want %d", name, st.Depth, tt.depth[name])
				}
				t.Logf("%s: depth %d, width %d, gates %d, copies %d, edges %d", name, st.Depth, st.Width, st.Gates, st.Copies, st.Edges)
			}
		})
	}
}

// sha256FromCompression evaluates c, the SHA-256 compression (chain value
// and block in, MSB first), on SHA-256's initial value and the padded
// block of random messages of 0…55 bytes, and compares the result with
// crypto/sha256's digest of the message.
func sha256FromCompression(t *testing.T, c *circuit.Circuit) {
	t.Helper()
	if len(c.Inputs) != 768 || len(c.Outputs) != 256 {
		t.Fatalf("%d inputs, %d outputs; want 768 (chain, block), 256", len(c.Inputs), len(c.Outputs))
	}
	rng := rand.New(rand.NewPCG(13, 14))
	var in []bitvec.Vec
	var msgs [][]byte
	for k := range 100 {
		msg := make([]byte, k%56)
		for i := range msg {
			msg[i] = byte(rng.Uint32())
		}
		msgs = append(msgs, msg)
		var x []byte
		for _, w := range sha2ref.SHA256.IV {
			x = binary.BigEndian.AppendUint32(x, uint32(w))
		}
		// One block as FIPS 180-4 §5.1.1 pads it: the message, 0x80,
		// zeros, the length in bits (64-bit big-endian).
		x = append(x, msg...)
		x = append(x, 0x80)
		x = append(x, make([]byte, 56-len(msg)-1)...)
		x = binary.BigEndian.AppendUint64(x, uint64(8*len(msg)))
		in = append(in, bitvec.FromPackedMSB(x, 768))
	}
	out, err := bitvec.EvalSliced(in, 768, c.Eval)
	if err != nil {
		t.Fatal(err)
	}
	for k, msg := range msgs {
		if got, want := out[k].PackMSB(256), sha256.Sum256(msg); !bytes.Equal(got, want[:]) {
			t.Fatalf("%d-byte message: compression %x, crypto/sha256 %x", len(msg), got, want)
		}
	}
}

// TestSHA3_256AgainstStdlib hashes random 135-byte messages with the
// SHA3-256 circuit exported to Bristol Fashion and evaluated by the
// netlist evaluator alone (no tcforge circuit involved), against Go's
// crypto/sha3.
func TestSHA3_256AgainstStdlib(t *testing.T) {
	values := map[string]any{"preset": "sha3-256"}
	nl, err := bf.FromCircuit(sdktest.Build(t, keccak.Plugin, values))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := nl.Write(&buf); err != nil {
		t.Fatal(err)
	}
	nl, err = bf.Parse(&buf, "sha3-256.txt")
	if err != nil {
		t.Fatal(err)
	}
	if nl.NumInputs() != 1080 || nl.NumOutputs() != 256 {
		t.Fatalf("%d input bits, %d output bits; want 1080 (135 bytes), 256", nl.NumInputs(), nl.NumOutputs())
	}
	rng := rand.New(rand.NewPCG(9, 10))
	var in []bitvec.Vec
	var msgs [][]byte
	for range 100 {
		m := make([]byte, 135)
		for i := range m {
			m[i] = byte(rng.Uint32())
		}
		msgs = append(msgs, m)
		in = append(in, bitvec.FromBytes(keccakref.BytesToBits(m))) // bit i of byte k is input 8k + i
	}
	out, err := bitvec.EvalSliced(in, 1080, nl.Eval)
	if err != nil {
		t.Fatal(err)
	}
	for k, m := range msgs {
		want := sha3.Sum256(m)
		if got := keccakref.BitsToBytes(out[k].Bytes(256)); !bytes.Equal(got, want[:]) {
			t.Fatalf("message %x: netlist %x, crypto/sha3 %x", m, got, want)
		}
	}
	st := nl.Stats()
	t.Logf("SHA3-256 netlist: %d gates (%d XOR, %d AND, %d INV, %d EQ, %d EQW), %d wires, depth %d, AND depth %d",
		st.Gates, st.Count(bf.XOR), st.ANDs, st.Count(bf.INV), st.Count(bf.EQ), st.Count(bf.EQW), st.Wires, st.Depth, st.ANDDepth)
	// χ is one AND a state bit a round; in the last round only the 256
	// digest bits' are needed (the rest is dropped as dead logic).
	if st.ANDDepth != 24 || st.ANDs != 23*1600+256 {
		t.Errorf("%d ANDs, AND depth %d; want 23·1600 + 256 = 37056 and 24 (one χ a round)", st.ANDs, st.ANDDepth)
	}
}

// TestMalformed checks that each malformed file in testdata/bad is
// refused by Check (before anything is built), blamed on the file
// parameter, with the file's path and the line.
func TestMalformed(t *testing.T) {
	tests := []struct {
		file string
		line int
		msg  string
	}{
		{"header.txt", 1, `bad header: want "#gates #wires"`},
		{"groups.txt", 2, "2 input groups need 2 sizes after the count, got 3"},
		{"no_outputs.txt", 3, "no output groups"},
		{"used_before_set.txt", 7, "wire 9 is used before it is set (on line 9)"},
		{"never_set.txt", 6, "wire 10 is used but never set"},
		{"out_of_range.txt", 8, `wire "40" out of range: line 1 declares 14 wires (0…13)`},
		{"unknown_gate.txt", 6, `unknown gate "NAND"`},
		{"cycle.txt", 7, "cycle: this gate reads wire 10, which is computed from this gate's result (wires 9 → 10)"},
		{"arity.txt", 6, "wrong arity for AND: 3 inputs and 1 outputs, want 2 1"},
		{"wire_count.txt", 5, "XOR gate with 2 inputs and 1 outputs needs 3 wires, got 4"},
		{"set_twice.txt", 8, "wire 9 is set twice (first on line 6)"},
		{"trailing.txt", 12, `trailing content "end" after the 7 gates line 1 declares`},
		{"short.txt", 11, "file ends after 6 gates; line 1 declares 7"},
		{"output_unset.txt", 3, "output wire 13 is never set"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", "bad", tt.file)
			// Prepare reads the file: nothing else is called with it.
			_, err := sdk.NewPass(context.Background(), bristol.Plugin, map[string]any{"file": path})
			pe, ok := sdk.AsParamError(err)
			if !ok || pe.Param != "file" {
				t.Fatalf("error %v, want a parameter error blaming file", err)
			}
			if want := path + ":" + strconv.Itoa(tt.line) + ": "; !strings.HasPrefix(pe.Msg, want) || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("%q, want %s…%s…", pe.Msg, want, tt.msg)
			}
		})
	}
}

// sha3File writes the SHA3-256 circuit's netlist into a temporary file.
func sha3File(b *testing.B) (string, *circuit.Circuit) {
	b.Helper()
	c := sdktest.Build(b, keccak.Plugin, map[string]any{"preset": "sha3-256"})
	nl, err := bf.FromCircuit(c)
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "sha3-256.txt")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := nl.Write(f); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return path, c
}

// BenchmarkExportSHA3_256 lowers the full SHA3-256 logic circuit to
// Bristol Fashion and writes it (13 MB).
func BenchmarkExportSHA3_256(b *testing.B) {
	c := sdktest.Build(b, keccak.Plugin, map[string]any{"preset": "sha3-256"})
	b.ResetTimer()
	for b.Loop() {
		nl, err := bf.FromCircuit(c)
		if err != nil {
			b.Fatal(err)
		}
		if err := nl.Write(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkImportSHA3_256 parses and checks the exported SHA3-256 file
// and builds its logic circuit (the plugin's Prepare, then Build).
func BenchmarkImportSHA3_256(b *testing.B) {
	path, _ := sha3File(b)
	values := map[string]any{"file": path}
	b.ResetTimer()
	for b.Loop() {
		pass, err := sdk.NewPass(context.Background(), bristol.Plugin, values)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := bristol.Plugin.Build(context.Background(), pass); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEstimateSHA3_256 is the size guard's cost on the exported
// SHA3-256 file (the plugin's Estimate, after Prepare).
func BenchmarkEstimateSHA3_256(b *testing.B) {
	path, _ := sha3File(b)
	pass := sdktest.Pass(b, bristol.Plugin, map[string]any{"file": path})
	b.ResetTimer()
	for b.Loop() {
		if _, err := bristol.Plugin.Estimate(context.Background(), pass); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseSHA3_256 parses and checks the exported SHA3-256 file
// (the plugin's Check).
func BenchmarkParseSHA3_256(b *testing.B) {
	path, _ := sha3File(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := bf.ParseFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

// randomNetlist writes a random valid Bristol Fashion netlist: every gate
// type, MANDs of 1 to 3, INVs read by ANDs once or more (the ANDNOT
// folding), XOR and AND chains (the merging), outputs that are copies,
// inputs and constants.
func randomNetlist(rng *rand.Rand) string {
	nIn := 1 + rng.IntN(6)
	set := make([]int, nIn)
	for i := range set {
		set[i] = i
	}
	next := nIn
	var gates []string
	pick := func() int {
		// Favour recent wires, so chains form.
		if rng.IntN(2) == 0 {
			return set[len(set)-1-rng.IntN(min(3, len(set)))]
		}
		return set[rng.IntN(len(set))]
	}
	gate := func(nin, nout int, ins []int, op string) []int {
		line := fmt.Sprintf("%d %d", nin, nout)
		for _, w := range ins {
			line += " " + strconv.Itoa(w)
		}
		outs := make([]int, nout)
		for i := range outs {
			outs[i] = next
			line += " " + strconv.Itoa(next)
			next++
		}
		gates = append(gates, line+" "+op)
		set = append(set, outs...)
		return outs
	}
	for range 5 + rng.IntN(40) {
		switch rng.IntN(11) {
		case 0, 1:
			gate(2, 1, []int{pick(), pick()}, "XOR")
		case 2, 3:
			gate(2, 1, []int{pick(), pick()}, "AND")
		case 4, 5:
			inv := gate(1, 1, []int{pick()}, "INV")[0]
			gate(2, 1, []int{inv, pick()}, "AND")
		case 6:
			k := 1 + rng.IntN(3)
			ins := make([]int, 2*k)
			for i := range ins {
				ins[i] = pick()
			}
			gate(2*k, k, ins, "MAND")
		case 7:
			gate(1, 1, []int{rng.IntN(2)}, "EQ")
		case 8:
			gate(1, 1, []int{pick()}, "EQW")
		case 9:
			// ¬a ∧ ¬b: an AND with two negated operands.
			a := gate(1, 1, []int{pick()}, "INV")[0]
			b := gate(1, 1, []int{set[rng.IntN(len(set)-1)]}, "INV")[0]
			gate(2, 1, []int{a, b}, "AND")
		case 10:
			// (¬a ∧ b) ∧ ¬c: merging two ANDNOTs.
			x := gate(2, 1, []int{gate(1, 1, []int{pick()}, "INV")[0], pick()}, "AND")[0]
			gate(2, 1, []int{x, gate(1, 1, []int{pick()}, "INV")[0]}, "AND")
		}
	}
	// Outputs: the last wires, each a copy, a negation or an XOR.
	nOut := 1 + rng.IntN(5)
	var outs []int
	for range nOut {
		outs = append(outs, pick())
	}
	for _, w := range outs {
		switch rng.IntN(3) {
		case 0:
			gate(1, 1, []int{w}, "EQW")
		case 1:
			gate(1, 1, []int{w}, "INV")
		default:
			gate(2, 1, []int{w, pick()}, "XOR")
		}
	}
	return fmt.Sprintf("%d %d\n1 %d\n1 %d\n\n%s\n", len(gates), next, nIn, nOut, strings.Join(gates, "\n"))
}

// TestImportRandom imports random netlists with every max_arity regime
// and checks each circuit against the netlist evaluator on every input.
func TestImportRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	dir := t.TempDir()
	for i := range 300 {
		path := filepath.Join(dir, strconv.Itoa(i)+".txt")
		src := randomNetlist(rng)
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		nl, err := bf.ParseFile(path)
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		in := sdktest.AllInputs(nl.NumInputs())
		want, err := bitvec.EvalSliced(in, nl.NumInputs(), nl.Eval)
		if err != nil {
			t.Fatal(err)
		}
		for _, arity := range []int{2, 3, 16} {
			c := sdktest.Build(t, bristol.Plugin, map[string]any{"file": path, "max_arity": arity})
			for n := range c.NumNodes() {
				if args, _ := c.Operands(circuit.Node(n)); len(args) > arity {
					t.Fatalf("max_arity %d: node %d (%s) has %d operands", arity, n, c.Ops[n], len(args))
				}
			}
			got, err := bitvec.EvalSliced(in, len(c.Inputs), c.Eval)
			if err != nil {
				t.Fatal(err)
			}
			for s := range in {
				if !bitvec.Equal(got[s], want[s], nl.NumOutputs()) {
					t.Fatalf("max_arity %d, input %s: circuit %s, netlist %s\n%s", arity, in[s].Text(nl.NumInputs()),
						got[s].Text(nl.NumOutputs()), want[s].Text(nl.NumOutputs()), src)
				}
			}
		}
	}
}

// TestEstimate: the size the host's size guard sees is the size of the
// circuit Build returns, with and without merging.
func TestEstimate(t *testing.T) {
	for _, file := range []string{"testdata/adder4.txt", "testdata/keccak50-1round-2blocks.txt"} {
		for _, arity := range []int64{2, 16} {
			sdktest.CheckEstimate(t, bristol.Plugin, map[string]any{"file": file, "max_arity": arity}, 10_000)
		}
	}
}
