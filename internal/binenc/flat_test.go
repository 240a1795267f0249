package binenc

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestFlatRoundTrip(t *testing.T) {
	w := NewFlatWriter("TEST", 7)
	w.Head().String("head")
	w.Head().I32s([]int32{1, -2})
	arrays := [][]int32{{1, -1, 1 << 30}, nil, {}, {5}}
	kinds := []byte{3, 1, 4}
	w.U8s(kinds)
	for _, a := range arrays {
		w.I32s(a)
	}
	data := w.Bytes()
	if !bytes.Equal(data, bytes.Join(w.Parts(), nil)) {
		t.Fatal("Bytes differs from the joined Parts")
	}
	if len(data)%8 != 0 {
		t.Errorf("blob of %d bytes", len(data))
	}
	if !IsFlat(data, "TEST", 7) || IsFlat(data, "TEST", 6) {
		t.Error("IsFlat does not tell the version")
	}
	r, err := NewFlatReader(data, "TEST", 7)
	if err != nil {
		t.Fatal(err)
	}
	if s, v := r.Head().String(), r.Head().I32s(); s != "head" || !reflect.DeepEqual(v, []int32{1, -2}) {
		t.Errorf("head %q %v", s, v)
	}
	if got := r.U8s(); !bytes.Equal(got, kinds) {
		t.Errorf("U8s = %v", got)
	}
	for i, want := range arrays {
		if got := r.I32s(); !reflect.DeepEqual(got, want) {
			t.Errorf("array %d = %#v, want %#v", i, got, want)
		}
	}
	if err := r.Done(); err != nil {
		t.Fatal(err)
	}
}

func TestFlatReaderErrors(t *testing.T) {
	w := NewFlatWriter("TEST", 1)
	w.U8s([]byte{1})
	w.I32s([]int32{2})
	data := w.Bytes()
	tests := []struct {
		name string
		read func(r *FlatReader)
		want string
	}{
		{"int32 read as bytes", func(r *FlatReader) { r.U8s(); r.U8s() }, "array 1 has 4-byte elements, want 1"},
		{"bytes read as int32", func(r *FlatReader) { r.I32s() }, "array 0 has 1-byte elements, want 4"},
		{"one too many", func(r *FlatReader) { r.U8s(); r.I32s(); r.I32s() }, "holds only 2 arrays"},
		{"one unread", func(r *FlatReader) { r.U8s() }, "holds 2 arrays, 1 read"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewFlatReader(data, "TEST", 1)
			if err != nil {
				t.Fatal(err)
			}
			tt.read(r)
			if err := r.Done(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Done = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := NewFlatReader(data, "TEST", 2); err == nil || !strings.Contains(err.Error(), "version 1, want 2") {
		t.Errorf("other version: %v", err)
	}
}
