// Package model holds the transformer model IR that mapper plugins produce.
//
// This is the protocol-level skeleton: a model is a named architecture with
// integer attributes and named sparse tensors. The forward pass and the
// mappers arrive with the mapper issue.
package model

import (
	"fmt"
	"sort"

	"github.com/tcforge/tcforge/sdk/binenc"
)

// Tensor is a sparse tensor in COO form: entry k has value Values[k] at the
// row-major flat position Index[k] of a tensor of the given Shape.
type Tensor struct {
	Name   string
	Shape  []int32
	Index  []int32
	Values []float32
}

// Model is a transformer as a mapper built it.
type Model struct {
	Arch    string           // architecture name, e.g. "no-attention"
	Attrs   map[string]int64 // tokens, d_model, blocks, heads, ffn_hidden, …
	Tensors []Tensor
}

const (
	magic   = "TCMD"
	version = 1
)

// MarshalBinary encodes the model in tcforge's compact binary form.
func (m *Model) MarshalBinary() ([]byte, error) {
	w := binenc.NewWriter(magic, version, 0)
	w.String(m.Arch)
	keys := make([]string, 0, len(m.Attrs))
	for k := range m.Attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	w.U32(uint32(len(keys)))
	for _, k := range keys {
		w.String(k)
		w.I64(m.Attrs[k])
	}
	w.U32(uint32(len(m.Tensors)))
	for _, t := range m.Tensors {
		w.String(t.Name)
		w.I32s(t.Shape)
		w.I32s(t.Index)
		w.F32s(t.Values)
	}
	return w.Bytes(), nil
}

// UnmarshalBinary decodes a model written by MarshalBinary.
func (m *Model) UnmarshalBinary(data []byte) error {
	r := binenc.NewReader(data, magic, version)
	var d Model
	d.Arch = r.String()
	n := r.U32()
	for i := uint32(0); i < n && r.Err() == nil; i++ {
		if d.Attrs == nil {
			d.Attrs = map[string]int64{}
		}
		k := r.String()
		d.Attrs[k] = r.I64()
	}
	nt := r.U32()
	for i := uint32(0); i < nt && r.Err() == nil; i++ {
		t := Tensor{Name: r.String(), Shape: r.I32s(), Index: r.I32s(), Values: r.F32s()}
		if r.Err() == nil && len(t.Index) != len(t.Values) {
			return fmt.Errorf("decoding model: tensor %q has %d indices and %d values", t.Name, len(t.Index), len(t.Values))
		}
		d.Tensors = append(d.Tensors, t)
	}
	if err := r.Done(); err != nil {
		return fmt.Errorf("decoding model: %w", err)
	}
	*m = d
	return nil
}
