package model

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// fuzzSeeds adds a few valid encodings of random models (and prefixes of
// them) to a fuzz target.
func fuzzSeeds(f *testing.F, encode func(*Model) []byte) {
	rng := rand.New(rand.NewPCG(11, 12))
	for variant := range 3 {
		data := encode(randomModel(rng, variant))
		f.Add(data)
		f.Add(data[:len(data)/2])
	}
	f.Add([]byte{})
}

// FuzzModelUnmarshal: decoding arbitrary bytes never panics, and a blob
// that decodes re-encodes to one that decodes to the same model.
func FuzzModelUnmarshal(f *testing.F) {
	fuzzSeeds(f, func(m *Model) []byte {
		data, err := m.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		return data
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		var m Model
		if err := m.UnmarshalBinary(data); err != nil {
			return
		}
		again, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("a decoded model does not encode: %v", err)
		}
		var m2 Model
		if err := m2.UnmarshalBinary(again); err != nil {
			t.Fatalf("re-encoded model does not decode: %v", err)
		}
		third, _ := m2.MarshalBinary()
		if !bytes.Equal(again, third) {
			t.Fatal("encoding is not stable")
		}
	})
}

// FuzzReadSafetensors: reading arbitrary bytes as safetensors never
// panics (every offset and shape in the header is checked against the data).
func FuzzReadSafetensors(f *testing.F) {
	fuzzSeeds(f, func(m *Model) []byte {
		dir := f.TempDir()
		if _, err := Export(m, dir, "m", 0); err != nil {
			f.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(dir, "m.safetensors"))
		if err != nil {
			f.Fatal(err)
		}
		return data
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _, _ = ReadSafetensors(data)
	})
}
