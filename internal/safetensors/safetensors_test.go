package safetensors_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/modeltest"
	"github.com/tcforge/tcforge/internal/safetensors"
	"github.com/tcforge/tcforge/sdk/model"
)

// FuzzRead: reading arbitrary bytes as safetensors never
// panics (every offset and shape in the header is checked against the data).
func FuzzRead(f *testing.F) {
	modeltest.FuzzSeeds(f, func(m *model.Model) []byte {
		dir := f.TempDir()
		if _, err := safetensors.Export(m, dir, "m", 0); err != nil {
			f.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "m.safetensors"))
		if err != nil {
			f.Fatal(err)
		}
		return data
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = safetensors.Read(data)
	})
}

// TestReadRejects: headers whose lengths, shapes or offsets do
// not fit the file are errors naming what is wrong, not panics or
// tensors with bogus shapes (regressions kept from fuzzing).
func TestReadRejects(t *testing.T) {
	blob := func(header string, body int) []byte {
		b := make([]byte, 8, 8+len(header)+body)
		b[0] = byte(len(header))
		b = append(b, header...)
		return append(b, make([]byte, body)...)
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"short", []byte{1, 2, 3}, "shorter than its header length"},
		{"header past end", []byte("\xff\x00\x00\x00\x00\x00\x00\x00{}"), "header of 255 bytes"},
		{"bad json", blob(`{"a":`, 0), "header"},
		{"unknown dtype", blob(`{"a":{"dtype":"Q7","shape":[1],"data_offsets":[0,1]}}`, 1), `unknown dtype "Q7"`},
		{"negative dim", blob(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,0]}}`, 0), "negative dimension"},
		// 2^32 × 2^32 × 4 bytes wraps to 0 in int64 arithmetic.
		{"shape overflow", blob(`{"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`, 0), "does not fit"},
		{"offsets past body", blob(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}`, 4), "data offsets [0, 8)"},
		{"size mismatch", blob(`{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}}`, 8), "do not fit 2 × 4 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := safetensors.Read(tt.data)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Read: got %v, want an error containing %q", err, tt.want)
			}
		})
	}
}
