package model_test

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/internal/modeltest"
	"github.com/tcforge/tcforge/sdk/model"
)

// labelled returns a random model with a small label table.
func labelled() *model.Model {
	m := modeltest.RandomModel(rand.New(rand.NewPCG(26, 1)), 0)
	m.Labels = &model.Labels{
		Levels: []int32{4, 3, 2},
		Forms:  []int32{4, 2, 2},
		Values: []model.ValueLabel{
			{Token: -1, Dim: 0, Until: int32(len(m.Blocks)), Name: "one"},
			{Token: 0, Dim: 1, Kind: model.Gate, Level: 0, Index: 3, Name: "input 3"},
			{Token: 0, Dim: 2, From: 1, Until: 1, Kind: model.Form, Level: 1, Index: 1, Name: "round 1/theta z=0"},
			{Token: 1, Dim: 1, From: 1, Until: 1, Kind: model.Partial, Level: 1, Index: 0, Const: -3, Src: []int32{0, 2}, Coef: []int32{1, -2}},
		},
		Units: []model.UnitLabel{{Block: 0, Kind: model.HeadUnit, Index: 0, Name: "head"}, {Block: 0, Kind: model.FFNUnit, Index: 2, Name: "unit"}},
	}
	return m
}

// TestLabelsEncoding: labels survive the model's binary encoding, and a
// model without labels encodes as before (version 3, no trailing
// section), so the mappers' pinned digests do not move.
func TestLabelsEncoding(t *testing.T) {
	m := labelled()
	if err := m.Validate(); err != nil {
		t.Fatal(err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var back model.Model
	if err := back.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back.Labels, m.Labels) {
		t.Fatalf("labels after a round trip:\n%+v\nwant\n%+v", back.Labels, m.Labels)
	}
	plain := *m
	plain.Labels = nil
	pb, err := plain.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if v := pb[4]; v != 3 {
		t.Errorf("a model without labels is written as version %d, want 3", v)
	}
	if b[4] != 4 || len(b) <= len(pb) || string(b[8:len(pb)]) != string(pb[8:]) {
		t.Errorf("a labelled model is not version 4 = version 3's bytes + a labels section")
	}
	var nb model.Model
	if err := nb.UnmarshalBinary(pb); err != nil || nb.Labels != nil {
		t.Errorf("version 3 decodes with labels %v, err %v", nb.Labels, err)
	}
}

// TestLabelsValidate: a label table that does not fit the model or the
// circuit's levels is refused, naming the label.
func TestLabelsValidate(t *testing.T) {
	tests := []struct {
		name string
		edit func(l *model.Labels)
		want string
	}{
		{"token", func(l *model.Labels) { l.Values[1].Token = 99 }, "value label 1 (input 3 \"input 3\"): token 99 outside"},
		{"dimension", func(l *model.Labels) { l.Values[2].Dim = -1 }, "value label 2"},
		{"unknown level", func(l *model.Labels) { l.Values[2].Level = 7 }, "unknown level 7 (the circuit has levels 0…2)"},
		{"form index", func(l *model.Labels) { l.Values[2].Index = 2 }, "form 2 outside level 1's 2"},
		{"boundary", func(l *model.Labels) { l.Values[3].Until = 99 }, "value label 3"},
		{"partial term", func(l *model.Labels) { l.Values[3].Src[1] = 3 }, "term gate 3 outside level 1's 3"},
		{"partial lengths", func(l *model.Labels) { l.Values[3].Coef = nil }, "2 sources but 0 coefficients"},
		{"unit block", func(l *model.Labels) { l.Units[1].Block = 40 }, "unit label 1: block 40"},
		{"levels", func(l *model.Labels) { l.Forms = l.Forms[:1] }, "3 levels but 1 form counts"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := labelled()
			tc.edit(m.Labels)
			err := m.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
