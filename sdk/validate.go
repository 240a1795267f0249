package sdk

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
)

// namePattern is what plugin and parameter names look like: HCL identifiers
// (parameter names are attributes), plugin names may also hold hyphens.
var namePattern = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// Validate reports every mistake in a plugin's declaration, in the manner
// of analysis.Validate: a missing name or func, a parameter declared twice,
// a Default whose Go type does not match its Type (Int takes int or int64,
// Number float64 or int, String string, Bool bool), bounds on a non-Int,
// an Enum on a non-String, a Default outside its bounds or Enum, a Required
// parameter with a Default. Serve refuses to serve an invalid plugin, and
// the host refuses to load one.
func Validate(pl Plugin) error {
	if pl == nil {
		return errors.New("nil plugin")
	}
	d := pl.Describe()
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("plugin %q: "+format, append([]any{d.Name}, args...)...))
	}
	if !namePattern.MatchString(d.Name) {
		bad("the name must be lower-case letters, digits, '_' and '-', starting with a letter")
	}
	if d.Doc == "" {
		bad("no Doc")
	}
	var prepare, call bool
	switch v := pl.(type) {
	case *Construction:
		prepare, call = v.Prepare != nil, v.Build != nil && v.Reference != nil
		if !call {
			bad("a construction needs Build and Reference")
		}
	case *Layerer:
		prepare, call = v.Prepare != nil, v.Layer != nil
		if !call {
			bad("a layerer needs Layer")
		}
	case *Mapper:
		prepare, call = v.Prepare != nil, v.Map != nil
		if !call {
			bad("a mapper needs Map")
		}
		if v.MaxWeight < 0 {
			bad("MaxWeight %d: want 0 (none) or a positive bound", v.MaxWeight)
		}
	default:
		bad("%T is not a *Construction, *Layerer or *Mapper", pl)
		prepare = true
	}
	if !prepare {
		bad("no Prepare: every plugin resolves and checks its parameters before it is called")
	}
	seen := map[string]bool{}
	for _, p := range d.Params {
		if err := validateParam(p); err != nil {
			bad("%w", err)
		}
		if seen[p.Name] {
			bad("parameter %q declared twice", p.Name)
		}
		seen[p.Name] = true
	}
	return errors.Join(errs...)
}

// validateParam checks one parameter declaration.
func validateParam(p Param) error {
	if !namePattern.MatchString(p.Name) || slices.Contains([]byte(p.Name), '-') {
		return fmt.Errorf("parameter %q: the name must be lower-case letters, digits and '_', starting with a letter", p.Name)
	}
	if p.Doc == "" {
		return fmt.Errorf("parameter %q: no Doc", p.Name)
	}
	switch p.Type {
	case Int, Number, String, Bool, Path:
	default:
		return fmt.Errorf("parameter %q: unknown Type %q", p.Name, p.Type)
	}
	if (p.Min != nil || p.Max != nil) && p.Type != Int {
		return fmt.Errorf("parameter %q: Min and Max apply to Int parameters only, not %s", p.Name, p.Type)
	}
	if p.Min != nil && p.Max != nil && *p.Min > *p.Max {
		return fmt.Errorf("parameter %q: Min %d is above Max %d", p.Name, *p.Min, *p.Max)
	}
	if len(p.Enum) > 0 && p.Type != String {
		return fmt.Errorf("parameter %q: Enum applies to String parameters only, not %s", p.Name, p.Type)
	}
	if p.Default == nil {
		return nil
	}
	if p.Required {
		return fmt.Errorf("parameter %q: Required with a Default", p.Name)
	}
	v, ok := normalize(p.Type, p.Default)
	if !ok {
		return fmt.Errorf("parameter %q: Default %#v (%T) is not a %s value", p.Name, p.Default, p.Default, p.Type)
	}
	if err := p.Check(v); err != nil {
		return fmt.Errorf("parameter %q: Default %v %w", p.Name, p.Default, err)
	}
	return nil
}

// normalize returns v as the Go type Params holds for t (int64, float64,
// string, bool): an int for an Int or Number, an int64 for a Number; ok is
// false for any other type.
func normalize(t Type, v any) (any, bool) {
	switch t {
	case Int:
		switch x := v.(type) {
		case int:
			return int64(x), true
		case int64:
			return x, true
		}
	case Number:
		switch x := v.(type) {
		case int:
			return float64(x), true
		case int64:
			return float64(x), true
		case float64:
			return x, true
		}
	case String:
		s, ok := v.(string)
		return s, ok
	case Bool:
		b, ok := v.(bool)
		return b, ok
	}
	return nil, false
}
