package ascon_test

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	asconplugin "github.com/tcforge/tcforge/plugins/ascon"
	"github.com/tcforge/tcforge/plugins/ascon/asconref"
	"github.com/tcforge/tcforge/sdk/sdktest"
)

// acvp is a test case of NIST's ACVP vectors for Ascon-Hash256
// (testdata/acvp_hash256.json): msg in SP 800-232's bit order.
type acvp struct {
	TcID int `json:"tcId"`
	Len  int
	Msg  string
	MD   string
}

func acvpVectors(t *testing.T) []acvp {
	t.Helper()
	b, err := os.ReadFile("testdata/acvp_hash256.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct{ Tests []acvp }
	if err := json.Unmarshal(b, &f); err != nil || len(f.Tests) < 10 {
		t.Fatalf("testdata/acvp_hash256.json: %v, %d tests", err, len(f.Tests))
	}
	return f.Tests
}

// kat is a case of the Ascon team's KAT files (testdata, LWC format).
type kat struct{ msg, md string }

func kats(t *testing.T, file string) []kat {
	t.Helper()
	f, err := os.Open("testdata/" + file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []kat
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), " =")
		v = strings.TrimSpace(v)
		switch k {
		case "Msg":
			out = append(out, kat{msg: v})
		case "MD":
			out[len(out)-1].md = v
		}
	}
	if err := sc.Err(); err != nil || len(out) != 51 {
		t.Fatalf("testdata/%s: %v, %d cases", file, err, len(out))
	}
	return out
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestACVP: NIST's ACVP vectors for Ascon-Hash256 (11 messages of 0 to
// 2774 bits: the empty message, bit lengths that end in a partial byte,
// one to 44 blocks) through the circuit and the reference.
func TestACVP(t *testing.T) {
	for _, v := range acvpVectors(t) {
		if testing.Short() && v.Len > 129 {
			continue
		}
		in := asconref.ToCircuit(unhex(t, v.Msg), v.Len)
		sdktest.CheckVectors(t, asconplugin.Plugin, map[string]any{"message_bits": v.Len},
			[]sdktest.Vector{{In: hex.EncodeToString(in), Want: v.MD, Bits: v.Len}})
	}
}

// TestKAT: the Ascon team's KATs of Ascon-Hash256 and Ascon-XOF128
// (512-bit output) through the circuit and the reference: 0 to 40 and 63
// to 65 bytes, and up to 1024 bytes (129 blocks) in the heavy tier.
func TestKAT(t *testing.T) {
	for _, f := range []struct {
		file   string
		values map[string]any
	}{
		{"LWC_HASH_KAT_128_256.txt", map[string]any{}},
		{"LWC_XOF_KAT_128_512.txt", map[string]any{"mode": "xof128", "output_bits": 512}},
	} {
		for i, k := range kats(t, f.file) {
			n := len(k.msg) / 2
			if !sdktest.IsHeavy() && n > 65 || testing.Short() && i%8 != 0 {
				continue
			}
			values := map[string]any{"message_bits": 8 * n}
			for p, v := range f.values {
				values[p] = v
			}
			sdktest.CheckVectors(t, asconplugin.Plugin, values, []sdktest.Vector{{In: k.msg, Want: k.md, Bits: 8 * n}})
		}
	}
}

// TestAsconRef: the independent reference at 12 rounds is every ACVP
// vector and every KAT case (0 to 1024 bytes), the bit-order conversions
// round-trip.
func TestAsconRef(t *testing.T) {
	for _, v := range acvpVectors(t) {
		msg := unhex(t, v.Msg)
		if got := hex.EncodeToString(asconref.Hash256(msg, v.Len, asconref.Rounds)); !strings.EqualFold(got, v.MD) {
			t.Errorf("ACVP tcId %d (%d bits): asconref %s, want %s", v.TcID, v.Len, got, v.MD)
		}
		if back := asconref.FromCircuit(asconref.ToCircuit(msg, v.Len), v.Len); hex.EncodeToString(back) != strings.ToLower(v.Msg) {
			t.Errorf("ACVP tcId %d: ToCircuit then FromCircuit gives %x", v.TcID, back)
		}
	}
	for _, k := range kats(t, "LWC_HASH_KAT_128_256.txt") {
		msg := unhex(t, k.msg)
		if got := hex.EncodeToString(asconref.Hash256(msg, 8*len(msg), asconref.Rounds)); !strings.EqualFold(got, k.md) {
			t.Errorf("Hash256 KAT, %d bytes: asconref %s, want %s", len(msg), got, k.md)
		}
	}
	for _, k := range kats(t, "LWC_XOF_KAT_128_512.txt") {
		msg := unhex(t, k.msg)
		if got := hex.EncodeToString(asconref.XOF128(msg, 8*len(msg), 512, asconref.Rounds)); !strings.EqualFold(got, k.md) {
			t.Errorf("XOF128 KAT, %d bytes: asconref %s, want %s", len(msg), got, k.md)
		}
	}
}

// TestReference: reduced rounds, bit lengths and XOF lengths that are not
// whole bytes, against asconref through the host's point pipeline.
func TestReference(t *testing.T) {
	for _, v := range []map[string]any{
		{"rounds": 1, "message_bits": 0},
		{"rounds": 1, "message_bits": 5},
		{"rounds": 2, "blocks": 1},
		{"rounds": 3, "message_bits": 64},
		{"rounds": 6, "message_bits": 131},
		{"rounds": 8, "blocks": 3},
		{"rounds": 11, "message_bits": 200},
		{"rounds": 2, "mode": "xof128", "output_bits": 13},
		{"rounds": 4, "mode": "xof128", "output_bits": 200, "message_bits": 70},
		{"mode": "xof128", "output_bits": 129, "message_bits": 9},
	} {
		sdktest.CheckReference(t, asconplugin.Plugin, v, 32)
	}
	c := sdktest.Build(t, asconplugin.Plugin, map[string]any{"blocks": 3, "mode": "xof128", "output_bits": 100})
	if len(c.Inputs) != 184 || len(c.Outputs) != 100 || c.Attrs["blocks"] != 3 {
		t.Errorf("blocks 3, 100 output bits: %d inputs, %d outputs, %d blocks; want 184 (23 bytes), 100, 3", len(c.Inputs), len(c.Outputs), c.Attrs["blocks"])
	}
}

// TestCallerPadding: with padding = "caller" the circuit reads the padded
// message (whole blocks): on the KATs' messages padded by asconref.Pad
// it gives their digests, and against the reference on random padded
// inputs (which need not be a valid padding) it agrees.
func TestCallerPadding(t *testing.T) {
	for i, k := range kats(t, "LWC_HASH_KAT_128_256.txt") {
		n := len(k.msg) / 2
		if n > 24 || testing.Short() && i%4 != 0 {
			continue
		}
		padded := asconref.Pad(unhex(t, k.msg), 8*n)
		sdktest.CheckVectors(t, asconplugin.Plugin, map[string]any{"padding": "caller", "blocks": len(padded) / 8},
			[]sdktest.Vector{{In: hex.EncodeToString(padded), Want: k.md}})
	}
	for _, v := range []map[string]any{
		{"padding": "caller", "blocks": 1, "rounds": 2},
		{"padding": "caller", "blocks": 3},
		{"padding": "caller", "mode": "xof128", "output_bits": 100, "rounds": 5},
	} {
		c := sdktest.CheckReference(t, asconplugin.Plugin, v, 32)
		if c.Attrs["padded_bits"] != c.Attrs["message_bits"] || c.Attrs["message_bits"] != 64*c.Attrs["blocks"] {
			t.Errorf("%v: attributes %v, want message_bits = padded_bits = 64·blocks", v, c.Attrs)
		}
	}
	sdktest.CheckEstimate(t, asconplugin.Plugin, map[string]any{"padding": "caller", "blocks": 2}, 100)
}

func TestEstimate(t *testing.T) {
	for _, v := range []map[string]any{{"rounds": 2}, {"message_bits": 0}, {"blocks": 3, "rounds": 5}, {"message_bits": 77, "mode": "xof128", "output_bits": 300}} {
		sdktest.CheckEstimate(t, asconplugin.Plugin, v, 100)
	}
}

func TestRefused(t *testing.T) {
	sdktest.CheckRefused(t, asconplugin.Plugin, map[string]any{"rounds": 13}, "rounds", "at most 12")
	sdktest.CheckRefused(t, asconplugin.Plugin, map[string]any{"output_bits": 512}, "output_bits", "256 bits")
	sdktest.CheckRefused(t, asconplugin.Plugin, map[string]any{"blocks": 2, "message_bits": 8}, "message_bits", "not both")
	sdktest.CheckRefused(t, asconplugin.Plugin, map[string]any{"blocks": 5000}, "blocks", "at most 4096 blocks")
	sdktest.CheckRefused(t, asconplugin.Plugin, map[string]any{"message_bits": 1 << 40}, "message_bits", "at most 4096 blocks")
	sdktest.CheckRefused(t, asconplugin.Plugin, map[string]any{"padding": "caller", "message_bits": 64}, "message_bits", "takes blocks")
}
