package sdk

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// Type is a parameter's type.
type Type string

// Parameter types. HCL numbers map to Int (whole numbers only) or Number.
// A Path is a string naming a file: the host resolves a relative path
// against the directory of the pipeline file that sets it, so a config
// finds its files wherever it is run from.
const (
	Int    Type = "int"
	Number Type = "number"
	String Type = "string"
	Bool   Type = "bool"
	Path   Type = "path"
)

// Param declares one parameter of a plugin: the host decodes the plugin's
// HCL block against these, rejects unknown attributes, wrong types and
// out-of-bounds values with located diagnostics, and prints them as help.
type Param struct {
	Name    string   `json:"name"`
	Type    Type     `json:"type"`
	Default any      `json:"default,omitempty"` // nil: no default (optional unless Required)
	Doc     string   `json:"doc"`
	Min     *int64   `json:"min,omitempty"`  // Int only
	Max     *int64   `json:"max,omitempty"`  // Int only
	Enum    []string `json:"enum,omitempty"` // String only: allowed values
	// Required params must be set in the config.
	Required bool `json:"required,omitempty"`
}

// Bound returns a pointer to v, for Param.Min and Param.Max literals.
func Bound(v int64) *int64 { return &v }

// Check reports whether v (int64, float64, string or bool) is a valid value
// of the parameter, with the reason if not.
func (p Param) Check(v any) error {
	switch p.Type {
	case Int:
		n, ok := v.(int64)
		if !ok {
			return fmt.Errorf("must be a whole number, got %s", describe(v))
		}
		if p.Min != nil && n < *p.Min {
			return fmt.Errorf("must be at least %d, got %d", *p.Min, n)
		}
		if p.Max != nil && n > *p.Max {
			return fmt.Errorf("must be at most %d, got %d", *p.Max, n)
		}
	case Number:
		if _, ok := v.(float64); !ok {
			if _, ok := v.(int64); !ok {
				return fmt.Errorf("must be a number, got %s", describe(v))
			}
		}
	case String:
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("must be a string, got %s", describe(v))
		}
		if len(p.Enum) > 0 {
			for _, e := range p.Enum {
				if s == e {
					return nil
				}
			}
			return fmt.Errorf("must be one of %s, got %q", strings.Join(quoteAll(p.Enum), ", "), s)
		}
	case Bool:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("must be true or false, got %s", describe(v))
		}
	case Path:
		if s, ok := v.(string); !ok || s == "" {
			return fmt.Errorf("must be a file path, got %s", describe(v))
		}
	default:
		return fmt.Errorf("parameter has unknown type %q", p.Type)
	}
	return nil
}

func describe(v any) string {
	switch x := v.(type) {
	case string:
		return fmt.Sprintf("string %q", x)
	case float64:
		return fmt.Sprintf("number %v", x)
	case int64:
		return fmt.Sprintf("number %d", x)
	case bool:
		return fmt.Sprintf("bool %v", x)
	}
	return fmt.Sprintf("%T", v)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// Params are the parameter values a plugin is called with: the values the
// config set, backed by the schema's defaults.
type Params struct {
	schema []Param
	set    map[string]any
}

// NewParams checks values against schema (unknown names, types, bounds) and
// returns them as Params. Values are int64, float64, string or bool.
func NewParams(schema []Param, values map[string]any) (Params, error) {
	p := Params{schema: schema, set: map[string]any{}}
	for name, v := range values {
		d, ok := p.decl(name)
		if !ok {
			return Params{}, &ParamError{Param: name, Msg: "unknown parameter"}
		}
		if n, ok := normalize(d.Type, v); ok {
			v = n
		} else if f, isFloat := v.(float64); isFloat && d.Type == Int && f == math.Trunc(f) && math.Abs(f) < 1<<53 {
			v = int64(f)
		}
		if err := d.Check(v); err != nil {
			return Params{}, &ParamError{Param: name, Msg: err.Error()}
		}
		p.set[name] = v
	}
	for _, d := range schema {
		if d.Required {
			if _, ok := p.set[d.Name]; !ok {
				return Params{}, &ParamError{Param: d.Name, Msg: "is required"}
			}
		}
	}
	return p, nil
}

func (p Params) decl(name string) (Param, bool) {
	for _, d := range p.schema {
		if d.Name == name {
			return d, true
		}
	}
	return Param{}, false
}

// Has reports whether the config set the parameter explicitly.
func (p Params) Has(name string) bool {
	_, ok := p.set[name]
	return ok
}

// get returns parameter name's value (the set one, else the default, else
// nil) as the Go type of t. Asking for an undeclared parameter, or for a
// declared one as another type (but an Int as a Number, a Path as a
// String), is a bug in the plugin: it panics.
func (p Params) get(name string, t Type) any {
	d, ok := p.decl(name)
	if !ok {
		panic(fmt.Sprintf("sdk: parameter %q is not declared in the schema", name))
	}
	if d.Type != t && !(d.Type == Int && t == Number) && !(d.Type == Path && t == String) {
		panic(fmt.Sprintf("sdk: parameter %q is declared %s, read as %s", name, d.Type, t))
	}
	v, ok := p.set[name]
	if !ok {
		v = d.Default
	}
	v, _ = normalize(t, v)
	return v
}

// Int returns an Int parameter (its default if unset, 0 if it has none).
func (p Params) Int(name string) int {
	n, _ := p.get(name, Int).(int64)
	return int(n)
}

// Float returns a Number parameter (its default if unset, 0 if it has none).
func (p Params) Float(name string) float64 {
	f, _ := p.get(name, Number).(float64)
	return f
}

// String returns a String or Path parameter (its default if unset, "" if it
// has none).
func (p Params) String(name string) string {
	s, _ := p.get(name, String).(string)
	return s
}

// Bool returns a Bool parameter (its default if unset, false if it has none).
func (p Params) Bool(name string) bool {
	b, _ := p.get(name, Bool).(bool)
	return b
}

// Values returns the explicitly set values (a copy).
func (p Params) Values() map[string]any {
	return maps.Clone(p.set)
}

// Errorf returns a *ParamError blaming parameter name.
func (p Params) Errorf(name, format string, args ...any) error {
	return &ParamError{Param: name, Msg: fmt.Sprintf(format, args...)}
}

// MarshalJSON encodes the explicitly set values, sorted by name.
func (p Params) MarshalJSON() ([]byte, error) {
	keys := slices.Sorted(maps.Keys(p.set))
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(p.set[k])
		if err != nil {
			return nil, err
		}
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(vb)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// ParseParams decodes JSON written by Params.MarshalJSON (what the host
// sends a plugin process) against schema, checking the values as NewParams
// does; its error is a *ParamError when one parameter is to blame.
func ParseParams(schema []Param, data []byte) (Params, error) {
	raw := map[string]any{}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return Params{}, fmt.Errorf("decoding parameters: %w", err)
	}
	vals := map[string]any{}
	for k, v := range raw {
		if n, ok := v.(json.Number); ok {
			if i, err := n.Int64(); err == nil {
				vals[k] = i
			} else if f, err := n.Float64(); err == nil {
				vals[k] = f
			} else {
				return Params{}, &ParamError{Param: k, Msg: fmt.Sprintf("bad number %q", n)}
			}
			continue
		}
		vals[k] = v
	}
	return NewParams(schema, vals)
}

// ParamError blames one parameter for a failure; the host reports it at the
// attribute's location in the config.
type ParamError struct {
	Param string
	Msg   string
}

// Error implements error.
func (e *ParamError) Error() string { return fmt.Sprintf("parameter %q: %s", e.Param, e.Msg) }

// AsParamError returns the *ParamError in err's chain, if any.
func AsParamError(err error) (*ParamError, bool) {
	var pe *ParamError
	ok := errors.As(err, &pe)
	return pe, ok
}
