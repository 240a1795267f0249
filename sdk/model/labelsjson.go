package model

import (
	"encoding/json"
	"fmt"
)

// LabelsFormat and LabelsVersion identify the export's label file
// (docs/labels.md).
const (
	LabelsFormat  = "tcforge-labels"
	LabelsVersion = 1
)

// LabelsFile is the export's label file: the model's labels in JSON,
// readable without tcforge (docs/labels.md).
type LabelsFile struct {
	Format       string      `json:"format"`
	Version      int         `json:"version"`
	Config       string      `json:"config"`
	Architecture string      `json:"architecture"`
	Tokens       int         `json:"tokens"`
	DModel       int         `json:"d_model"`
	Blocks       int         `json:"blocks"`
	Levels       []int32     `json:"levels"`
	Forms        []int32     `json:"forms"`
	Values       []valueJSON `json:"values"`
	Units        []unitJSON  `json:"units"`
	Notes        []string    `json:"notes"`
}

type valueJSON struct {
	Token int32   `json:"token"`
	Dim   int32   `json:"dim"`
	From  int32   `json:"from"`
	Until int32   `json:"until"`
	Kind  string  `json:"kind"`
	Level int32   `json:"level"`
	Index int32   `json:"index"`
	Const int32   `json:"const,omitempty"`
	Src   []int32 `json:"src,omitempty"`
	Coef  []int32 `json:"coef,omitempty"`
	Name  string  `json:"name"`
}

type unitJSON struct {
	Block int32  `json:"block"`
	Kind  string `json:"kind"`
	Index int32  `json:"index"`
	Name  string `json:"name"`
}

// LabelsJSON returns m's labels as the export's label file; config names
// the model's config file.
func (m *Model) LabelsJSON(config string) ([]byte, error) {
	l := m.Labels
	if l == nil {
		return nil, fmt.Errorf("labels of %s: the model has none", m.Arch)
	}
	f := LabelsFile{Format: LabelsFormat, Version: LabelsVersion, Config: config, Architecture: m.Arch,
		Tokens: m.Tokens, DModel: m.DModel, Blocks: len(m.Blocks), Levels: l.Levels, Forms: l.Forms,
		Values: make([]valueJSON, len(l.Values)), Units: make([]unitJSON, len(l.Units)),
		Notes: []string{
			"boundary 0 is the residual stream after the embedding, boundary b the stream after b blocks",
			"value label: x[token][dim] holds the named circuit value at boundaries from…until (token -1: every token)",
			"gate: gate index of level (level 0: input index); form: form index of level; partial: const + Σ coef·gate(src) over level's gates, a share of value index",
		}}
	for i, v := range l.Values {
		f.Values[i] = valueJSON{Token: v.Token, Dim: v.Dim, From: v.From, Until: v.Until, Kind: v.Kind.String(),
			Level: v.Level, Index: v.Index, Const: v.Const, Src: v.Src, Coef: v.Coef, Name: v.Name}
	}
	for i, u := range l.Units {
		f.Units[i] = unitJSON{Block: u.Block, Kind: u.Kind.String(), Index: u.Index, Name: u.Name}
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("labels of %s: %w", m.Arch, err)
	}
	return append(b, '\n'), nil
}
