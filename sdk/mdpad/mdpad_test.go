package mdpad_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk"
	"github.com/tcforge/tcforge/sdk/mdpad"
)

// TestTail: the padding of "abc" (24 bits) to one 512-bit block: a 1, 423
// zeros, and the length 24 big-endian (SHA) or little-endian (MD5) in 64
// bits; and lengths around the block boundary (MD5, SHA-1 and SHA-2's
// vectors check the padding end to end).
func TestTail(t *testing.T) {
	for _, tc := range []struct {
		le     bool
		length string // the last 64 bits, as hex
	}{{false, "0000000000000018"}, {true, "1800000000000000"}} {
		p := mdpad.Padding{BlockBits: 512, LengthBits: 64, LittleEndian: tc.le}
		tail := p.Tail(24)
		if len(tail) != 488 || tail[0] != 1 || strings.Contains(string(tail[1:424]), "\x01") {
			t.Fatalf("little-endian %v: tail of %d bits starting %v", tc.le, len(tail), tail[:2])
		}
		var hex strings.Builder
		for i := 424; i < 488; i += 4 {
			fmt.Fprintf(&hex, "%x", tail[i]<<3|tail[i+1]<<2|tail[i+2]<<1|tail[i+3])
		}
		if hex.String() != tc.length {
			t.Errorf("little-endian %v: length field %s, want %s", tc.le, hex.String(), tc.length)
		}
	}
	p := mdpad.Padding{BlockBits: 1024, LengthBits: 128}
	for _, tc := range []struct{ bits, blocks, longest int }{{0, 1, 888}, {895, 1, 888}, {896, 2, 888}, {1000, 2, 888}} {
		if got := p.Blocks(tc.bits); got != tc.blocks {
			t.Errorf("Blocks(%d) = %d, want %d", tc.bits, got, tc.blocks)
		}
		if got := len(p.Tail(tc.bits)) + tc.bits; got != 1024*tc.blocks {
			t.Errorf("%d bits pad to %d, want %d", tc.bits, got, 1024*tc.blocks)
		}
	}
	if got := p.LongestMessage(1); got != 888 {
		t.Errorf("LongestMessage(1) = %d, want 888 (SHA-512: 111 bytes)", got)
	}
}

func message(t *testing.T, values map[string]any) (mdpad.Message, error) {
	t.Helper()
	p, err := sdk.NewParams(mdpad.Params(), values)
	if err != nil {
		t.Fatal(err)
	}
	return mdpad.Padding{BlockBits: 512, LengthBits: 64}.Message(p)
}

func TestMessage(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		want   mdpad.Message
		err    string
	}{
		{map[string]any{}, mdpad.Message{Bits: 440, Blocks: 1}, ""},
		{map[string]any{"blocks": 3}, mdpad.Message{Bits: 3*512 - 72, Blocks: 3}, ""},
		{map[string]any{"message_bits": 447}, mdpad.Message{Bits: 447, Blocks: 1}, ""},
		{map[string]any{"message_bits": 448}, mdpad.Message{Bits: 448, Blocks: 2}, ""},
		{map[string]any{"message_bits": 8, "blocks": 1}, mdpad.Message{}, `parameter "message_bits": give blocks or message_bits, not both`},
		{map[string]any{"blocks": 1025}, mdpad.Message{}, `parameter "blocks": at most 1024 blocks, got 1025`},
		{map[string]any{"message_bits": 1<<24 + 1}, mdpad.Message{}, `parameter "message_bits": at most 16777216 bits, got 16777217`},
	} {
		got, err := message(t, tc.values)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: error %v, want %q", tc.values, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %v, %v; want %v", tc.values, got, err, tc.want)
		}
	}
}

func TestBlockLinear(t *testing.T) {
	s, err := sdk.BlockLinear(sdk.Size{Nodes: 10, Edges: 1}, sdk.Size{Nodes: 100, Edges: 300}, 7)
	if err != nil || s != (sdk.Size{Nodes: 710, Edges: 2101}) {
		t.Errorf("got %v, %v", s, err)
	}
	if _, err := sdk.BlockLinear(sdk.Size{Nodes: 1}, sdk.Size{Nodes: 1 << 40, Edges: 1}, 1<<30); err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Errorf("2^70 nodes: %v", err)
	}
	if _, err := sdk.BlockLinear(sdk.Size{Nodes: 1 << 62}, sdk.Size{Nodes: 1 << 62}, 1); err == nil {
		t.Errorf("2^63 nodes: no error")
	}
}

// A hash plugin declares the message parameters and resolves them in one
// call; Pad appends the padding to the message's input bits.
func ExamplePadding_Message() {
	md5 := mdpad.Padding{BlockBits: 512, LengthBits: 64, LittleEndian: true}
	for _, v := range []map[string]any{{}, {"blocks": 2}, {"message_bits": 448}} {
		p, _ := sdk.NewParams(mdpad.Params(), v)
		m, err := md5.Message(p)
		fmt.Println(m, err)
	}
	// Output:
	// 440 bits, 1 blocks <nil>
	// 952 bits, 2 blocks <nil>
	// 448 bits, 2 blocks <nil>
}
