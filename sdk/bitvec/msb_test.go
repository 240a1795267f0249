package bitvec

import "testing"

func TestPackMSB(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []byte
	}{
		{"", []byte{}},
		{"1", []byte{0x80}},
		{"01100001", []byte{'a'}},
		{"0110000101100010 011", []byte{'a', 'b', 0x60}},
	} {
		v, n, err := Parse(tc.text)
		if err != nil {
			t.Fatal(err)
		}
		got := v.PackMSB(n)
		if string(got) != string(tc.want) {
			t.Errorf("PackMSB(%q) = %x, want %x", tc.text, got, tc.want)
		}
		if back := FromPackedMSB(got, n); back.Text(n) != v.Text(n) {
			t.Errorf("FromPackedMSB(%x, %d) = %s, want %s", got, n, back.Text(n), v.Text(n))
		}
	}
}
