package layered

import "testing"

func TestFloatFormat(t *testing.T) {
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "bf16"}, {256, "bf16"}, {257, "fp16"}, {2048, "fp16"}, {2049, "fp32"},
		{1 << 24, "fp32"}, {1<<24 + 1, "fp64"}, {1 << 53, "fp64"}, {1<<53 + 1, "none"},
	} {
		if got := FloatFormat(tc.n); got != tc.want {
			t.Errorf("FloatFormat(%d) = %s, want %s", tc.n, got, tc.want)
		}
	}
}

func TestMaxPreActivation(t *testing.T) {
	b := NewBuilder(3, nil)
	tag := b.Tag("t")
	b.Gate(KindGate, 5, []int32{0, 1, 2}, []int32{4, -7, 2}, tag) // max(6, 7) + 5 = 12
	b.Gate(KindGate, -20, []int32{0}, []int32{1}, tag)            // 1 + 20 = 21
	b.Level()
	b.Copy(0, tag)
	b.Level()
	c := b.Circuit(nil)
	if got := c.MaxPreActivation(); got != 21 {
		t.Errorf("MaxPreActivation = %d, want 21", got)
	}
}
