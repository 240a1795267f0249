package model_test

import (
	"bytes"
	"testing"

	"github.com/tcforge/tcforge/internal/modeltest"
	"github.com/tcforge/tcforge/sdk/model"
)

// FuzzModelUnmarshal: decoding arbitrary bytes never panics, and a blob
// that decodes re-encodes to one that decodes to the same model.
func FuzzModelUnmarshal(f *testing.F) {
	modeltest.FuzzSeeds(f, func(m *model.Model) []byte {
		data, err := m.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		return data
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m model.Model
		if err := m.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("a decoded model does not encode: %v", err)
		}
		var m2 model.Model
		if err := m2.UnmarshalBinary(again); err != nil {
			t.Fatalf("re-encoded model does not decode: %v", err)
		}
		third, _ := m2.MarshalBinary()
		if !bytes.Equal(again, third) {
			t.Fatal("encoding is not stable")
		}
	})
}
