package sdk_test

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/tcforge/tcforge/sdk"
)

// paramSchema declares one parameter of every type, with bounds, an enum,
// defaults and a required parameter.
func paramSchema() []sdk.Param {
	return []sdk.Param{
		{Name: "log_w", Type: sdk.Int, Default: int64(6), Min: sdk.Bound(0), Max: sdk.Bound(6), Doc: "lane size exponent"},
		{Name: "rounds", Type: sdk.Int, Default: 24, Min: sdk.Bound(1)}, // a Go int default
		{Name: "blocks", Type: sdk.Int}, // no default
		{Name: "scale", Type: sdk.Number, Default: 0.5},
		{Name: "padding", Type: sdk.String, Default: "sha3", Enum: []string{"none", "sha3"}},
		{Name: "label", Type: sdk.String},
		{Name: "fuse", Type: sdk.Bool, Default: true},
		{Name: "rate", Type: sdk.Int, Required: true, Min: sdk.Bound(1)},
	}
}

// TestParamCheck checks Param.Check for every type, bound and enum.
func TestParamCheck(t *testing.T) {
	intP := sdk.Param{Name: "n", Type: sdk.Int, Min: sdk.Bound(-2), Max: sdk.Bound(10)}
	for _, tc := range []struct {
		p    sdk.Param
		v    any
		want string // "" = valid
	}{
		{intP, int64(-2), ""},
		{intP, int64(10), ""},
		{intP, int64(-3), "must be at least -2, got -3"},
		{intP, int64(11), "must be at most 10, got 11"},
		{intP, 3.5, "must be a whole number, got number 3.5"},
		{intP, 3.0, "must be a whole number, got number 3"}, // Check itself takes int64 only
		{intP, "3", `must be a whole number, got string "3"`},
		{intP, true, "must be a whole number, got bool true"},
		{intP, 3, "must be a whole number, got int"},
		{sdk.Param{Type: sdk.Int}, int64(math.MinInt64), ""},
		{sdk.Param{Type: sdk.Number}, 1.5, ""},
		{sdk.Param{Type: sdk.Number}, int64(2), ""},
		{sdk.Param{Type: sdk.Number}, "x", `must be a number, got string "x"`},
		{sdk.Param{Type: sdk.String}, "anything", ""},
		{sdk.Param{Type: sdk.String}, int64(1), "must be a string, got number 1"},
		{sdk.Param{Type: sdk.String, Enum: []string{"a", "b"}}, "b", ""},
		{sdk.Param{Type: sdk.String, Enum: []string{"a", "b"}}, "c", `must be one of "a", "b", got "c"`},
		{sdk.Param{Type: sdk.Bool}, false, ""},
		{sdk.Param{Type: sdk.Bool}, int64(0), "must be true or false, got number 0"},
		{sdk.Param{Type: "matrix"}, int64(0), `unknown type "matrix"`},
		{sdk.Param{Type: sdk.Int}, nil, "must be a whole number, got <nil>"},
	} {
		err := tc.p.Check(tc.v)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %#v: %v", tc.p.Type, tc.v, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %#v: err = %v, want %q", tc.p.Type, tc.v, err, tc.want)
		}
	}
}

// TestNewParams checks value decoding: defaults, explicit values, whole
// floats taken as Int, and each way a value can be refused.
func TestNewParams(t *testing.T) {
	p, err := sdk.NewParams(paramSchema(), map[string]any{
		"rate":   float64(40), // a whole float (as from HCL) is an Int
		"scale":  int64(2),    // an int64 is a Number
		"label":  "x",
		"fuse":   false,
		"blocks": int64(3),
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		got  any
		want any
	}{
		{"log_w (int64 default)", p.Int("log_w"), 6},
		{"rounds (int default)", p.Int("rounds"), 24},
		{"blocks", p.Int("blocks"), 3},
		{"rate", p.Int("rate"), 40},
		{"scale", p.Float("scale"), 2.0},
		{"log_w as float", p.Float("log_w"), 6.0},
		{"rounds as float", p.Float("rounds"), 24.0},
		{"padding default", p.String("padding"), "sha3"},
		{"label", p.String("label"), "x"},
		{"fuse", p.Bool("fuse"), false},
		{"Has rate", p.Has("rate"), true},
		{"Has log_w", p.Has("log_w"), false},
	} {
		if !reflect.DeepEqual(tc.got, tc.want) {
			t.Errorf("%s = %#v, want %#v", tc.name, tc.got, tc.want)
		}
	}
	if v := p.Values()["rate"]; v != int64(40) {
		t.Errorf("rate stored as %#v, want int64(40)", v)
	}
	// Unset parameters without defaults read as zero values.
	q, err := sdk.NewParams([]sdk.Param{{Name: "n", Type: sdk.Int}, {Name: "x", Type: sdk.Number}, {Name: "s", Type: sdk.String}, {Name: "b", Type: sdk.Bool}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if q.Int("n") != 0 || q.Float("x") != 0 || q.String("s") != "" || q.Bool("b") {
		t.Errorf("unset parameters: %d %v %q %v", q.Int("n"), q.Float("x"), q.String("s"), q.Bool("b"))
	}
}

func TestNewParamsErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values map[string]any
		param  string
		msg    string
	}{
		{"unknown", map[string]any{"rate": int64(1), "rouns": int64(2)}, "rouns", "unknown parameter"},
		{"missing required", map[string]any{"log_w": int64(1)}, "rate", "is required"},
		{"below min", map[string]any{"rate": int64(0)}, "rate", "must be at least 1, got 0"},
		{"above max", map[string]any{"rate": int64(1), "log_w": int64(7)}, "log_w", "must be at most 6, got 7"},
		{"fraction for Int", map[string]any{"rate": 1.5}, "rate", "must be a whole number, got number 1.5"},
		{"huge float for Int", map[string]any{"rate": 1e300}, "rate", "must be a whole number"},
		{"2^53 for Int", map[string]any{"rate": float64(1 << 53)}, "rate", "must be a whole number"},
		{"NaN for Int", map[string]any{"rate": math.NaN()}, "rate", "must be a whole number"},
		{"not in enum", map[string]any{"rate": int64(1), "padding": "pad10*1"}, "padding", `must be one of "none", "sha3"`},
		{"string for Bool", map[string]any{"rate": int64(1), "fuse": "yes"}, "fuse", "must be true or false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sdk.NewParams(paramSchema(), tc.values)
			pe, ok := sdk.AsParamError(err)
			if !ok {
				t.Fatalf("err = %v, want a *ParamError", err)
			}
			if pe.Param != tc.param || !strings.Contains(pe.Msg, tc.msg) {
				t.Errorf("ParamError{%q, %q}, want {%q, …%q…}", pe.Param, pe.Msg, tc.param, tc.msg)
			}
			if want := fmt.Sprintf("parameter %q: %s", pe.Param, pe.Msg); err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
}

// TestValuesCopy checks that Values returns a copy.
func TestValuesCopy(t *testing.T) {
	p, err := sdk.NewParams(paramSchema(), map[string]any{"rate": int64(8)})
	if err != nil {
		t.Fatal(err)
	}
	v := p.Values()
	v["rate"] = int64(9)
	v["extra"] = true
	if p.Int("rate") != 8 || p.Has("extra") {
		t.Errorf("modifying Values changed the params")
	}
}

// TestUndeclaredPanics checks that reading a parameter the schema does not
// declare is a programming error.
func TestUndeclaredPanics(t *testing.T) {
	p, _ := sdk.NewParams(paramSchema(), map[string]any{"rate": int64(8)})
	defer func() {
		if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), `"nope"`) {
			t.Errorf("recover() = %v", r)
		}
	}()
	p.Int("nope")
}

// TestParamsJSONRoundTrip checks MarshalJSON (explicit values only, sorted
// keys) and ParseParams, which must give back the same values and types.
func TestParamsJSONRoundTrip(t *testing.T) {
	p, err := sdk.NewParams(paramSchema(), map[string]any{
		"rate":    int64(1088),
		"scale":   0.25,
		"padding": "none",
		"label":   "quote \" and ünïcode",
		"fuse":    false,
		"log_w":   int64(0),
		"blocks":  int64(math.MaxInt64),
	})
	if err != nil {
		t.Fatal(err)
	}
	data, err := p.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"blocks":9223372036854775807,"fuse":false,"label":"quote \" and ünïcode","log_w":0,"padding":"none","rate":1088,"scale":0.25}`
	if string(data) != want {
		t.Errorf("MarshalJSON = %s\nwant          %s", data, want)
	}
	q, err := sdk.ParseParams(paramSchema(), data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(q.Values(), p.Values()) {
		t.Errorf("decoded %#v\nwant    %#v", q.Values(), p.Values())
	}
	if q.Int("rounds") != 24 || q.Has("rounds") {
		t.Errorf("defaults are not carried by the encoding: rounds %d, set %v", q.Int("rounds"), q.Has("rounds"))
	}
	empty, _ := sdk.NewParams(nil, nil)
	if data, _ := empty.MarshalJSON(); string(data) != "{}" {
		t.Errorf("empty params encode as %s", data)
	}
}

// TestParseParams checks decoding of numbers (integers stay exact, whole
// floats become Ints where declared so) and its errors.
func TestParseParams(t *testing.T) {
	p, err := sdk.ParseParams(paramSchema(), []byte(`{"rate": 4e1, "scale": 3, "log_w": 2.0}`))
	if err != nil {
		t.Fatal(err)
	}
	if p.Int("rate") != 40 || p.Float("scale") != 3 || p.Int("log_w") != 2 {
		t.Errorf("rate %d scale %v log_w %d", p.Int("rate"), p.Float("scale"), p.Int("log_w"))
	}
	for _, tc := range []struct {
		name, json, want string
		param            string
	}{
		{"not JSON", `{"rate": `, "decoding parameters", ""},
		{"not an object", `[1]`, "decoding parameters", ""},
		{"number out of range", `{"rate": 1e400}`, "bad number", "rate"},
		{"fraction for Int", `{"rate": 2.5}`, "whole number", "rate"},
		{"unknown", `{"rate": 1, "zzz": 1}`, "unknown parameter", "zzz"},
		{"null", `{"rate": null}`, "whole number", "rate"},
		{"array", `{"rate": 1, "label": [1]}`, "must be a string", "label"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sdk.ParseParams(paramSchema(), []byte(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
			if pe, ok := sdk.AsParamError(err); ok != (tc.param != "") || (ok && pe.Param != tc.param) {
				t.Errorf("AsParamError = %v, %v; want param %q", pe, ok, tc.param)
			}
		})
	}
}

// TestErrorf checks Params.Errorf and that AsParamError finds a wrapped
// *ParamError.
func TestErrorf(t *testing.T) {
	p, _ := sdk.NewParams(paramSchema(), map[string]any{"rate": int64(7)})
	err := p.Errorf("rate", "must divide %d", 25)
	wrapped := fmt.Errorf("building: %w", err)
	pe, ok := sdk.AsParamError(wrapped)
	if !ok || pe.Param != "rate" || pe.Msg != "must divide 25" {
		t.Errorf("AsParamError(%v) = %+v, %v", wrapped, pe, ok)
	}
	if _, ok := sdk.AsParamError(errors.New("plain")); ok {
		t.Errorf("AsParamError found a ParamError in a plain error")
	}
	if _, ok := sdk.AsParamError(nil); ok {
		t.Errorf("AsParamError(nil) = true")
	}
}

func TestBound(t *testing.T) {
	a, b := sdk.Bound(3), sdk.Bound(3)
	if *a != 3 || a == b {
		t.Errorf("Bound returns %d at %p and %p; want distinct pointers to 3", *a, a, b)
	}
}
