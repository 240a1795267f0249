package config

import (
	"bytes"
	"hash/fnv"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/tcforge/tcforge/sdk"
)

// fuzzMaxPoints bounds the matrix points the fuzz target evaluates: a few
// short lists multiply into more points than a fuzz iteration should visit.
const fuzzMaxPoints = 64

// FuzzPipelineParse parses arbitrary bytes as a pipeline file. Parsing must
// never panic and always return a File; each pipeline it returns has a
// construction and a layerer. Beyond parsing, every later step a run takes
// on a parsed file must not panic either: matrix points, decoding each
// plugin block against a schema (derived from the block's own attribute
// names), expectation evaluation, parameter diagnostics and printing all
// diagnostics with source snippets.
//
// Seeds: the corpus in testdata/fuzz/FuzzPipelineParse (valid pipelines)
// and every testdata/*.hcl fixture.
func FuzzPipelineParse(f *testing.F) {
	fixtures, err := filepath.Glob(filepath.Join("testdata", "*.hcl"))
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range fixtures {
		src, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		const name = "fuzz.hcl"
		file, hf, diags := parse(name, src)
		if file == nil {
			t.Fatal("parse returned no File")
		}
		files := map[string]*hcl.File{}
		if hf != nil {
			files[name] = hf
		}
		all := append(hcl.Diagnostics(nil), diags...)
		for _, p := range file.Pipelines {
			if p.Construction == nil || len(p.Layerers) == 0 {
				t.Fatalf("pipeline %q returned without construction or layerer", p.Name)
			}
			if p.Samples < 1 {
				t.Fatalf("pipeline %q has %d samples", p.Name, p.Samples)
			}
			_ = p.Vars()
			if fuzzPointCount(p) > fuzzMaxPoints {
				continue
			}
			points := p.Points()
			blocks := append(append([]*Block{p.Construction}, p.Layerers...), p.Mappers...)
			for _, pt := range points {
				_ = pt.String()
				construction := map[string]cty.Value{"rate": cty.NumberIntVal(40), "unset": cty.NilVal}
				for _, b := range blocks {
					schema := fuzzSchema(b)
					vals, d := b.Decode(pt, schema)
					all = append(all, d...)
					if !d.HasErrors() {
						if _, err := sdk.NewParams(schema, vals); err != nil {
							t.Fatalf("Decode accepted %v for %s %q, NewParams refuses it: %v", vals, b.Kind, b.Name, err)
						}
					}
					for _, param := range schema {
						all = append(all, b.ParamDiag(pt, &sdk.ParamError{Param: param.Name, Msg: "fuzz"}))
					}
					all = append(all, b.ParamDiag(pt, &sdk.ParamError{Param: "not-set", Msg: "fuzz"}))
					if b == p.Construction {
						for k, v := range vals {
							if n, ok := v.(int64); ok {
								construction[k] = cty.NumberIntVal(n)
							}
						}
					}
				}
				for _, e := range p.Expects {
					_, d := e.Eval(pt, construction)
					all = append(all, d...)
				}
			}
		}
		var buf bytes.Buffer
		for _, color := range []bool{false, true} {
			buf.Reset()
			if err := WriteDiagnostics(&buf, files, all, color); err != nil {
				t.Fatal(err)
			}
		}
		// Without sources, diagnostics print without snippets.
		if err := WriteDiagnostics(&buf, nil, all, false); err != nil {
			t.Fatal(err)
		}
	})
}

// fuzzPointCount returns the number of points of p's matrix, saturating
// above fuzzMaxPoints.
func fuzzPointCount(p *Pipeline) int {
	total := 0
	for _, m := range p.matrix {
		n := 1
		for _, vs := range m.values {
			n *= len(vs)
			if n > fuzzMaxPoints {
				return fuzzMaxPoints + 1
			}
		}
		total += n
		if total > fuzzMaxPoints {
			return fuzzMaxPoints + 1
		}
	}
	return total
}

// fuzzSchema declares every attribute of b as a parameter whose type,
// bounds and required flag are picked by a hash of its name, and adds a
// required parameter, so that decoding meets every kind of value and
// error.
func fuzzSchema(b *Block) []sdk.Param {
	schema := []sdk.Param{{Name: "required_param", Type: sdk.Int, Required: true}}
	for _, a := range sortedAttrs(b.Attrs) {
		name := a.Name
		h := fnv.New32a()
		h.Write([]byte(name))
		k := h.Sum32()
		p := sdk.Param{Name: name, Doc: "fuzz"}
		switch k % 5 {
		case 0:
			p.Type = sdk.Int
			p.Min, p.Max = sdk.Bound(-3), sdk.Bound(100)
		case 1:
			p.Type = sdk.Int
		case 2:
			p.Type = sdk.Number
		case 3:
			p.Type = sdk.String
			if k&8 != 0 {
				p.Enum = []string{"a", "sha3"}
			}
		case 4:
			p.Type = sdk.Bool
		}
		p.Required = k&16 != 0
		schema = append(schema, p)
	}
	return schema
}
