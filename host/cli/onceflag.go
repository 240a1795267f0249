package cli

import "fmt"

// onceString is a string flag that may be given once: a second value is
// refused rather than silently replacing the first (--point a=1 --point
// a=2 inspected a=2).
type onceString struct {
	v   *string
	set bool
}

// String implements pflag.Value.
func (o *onceString) String() string {
	if o.v == nil {
		return ""
	}
	return *o.v
}

// Set implements pflag.Value.
func (o *onceString) Set(s string) error {
	if o.set {
		return fmt.Errorf("given twice (%q, then %q): give it once", *o.v, s)
	}
	*o.v, o.set = s, true
	return nil
}

// Type implements pflag.Value.
func (o *onceString) Type() string { return "string" }
