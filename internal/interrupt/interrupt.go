// Package interrupt makes a phase that cannot look at a context itself
// end with one: decoding a plugin's answer of hundreds of MB, validating
// or compiling a model. A SIGTERM (a scheduler's time limit, whose
// KillWait is often 30 s) must end a run within seconds, its marks
// written, whatever phase it is in.
package interrupt

import "context"

// Do runs f on a goroutine and returns what it returns, or, as soon as
// ctx ends first, ctx.s error. f then runs
// on to its end in the background and its result is dropped: use Do only
// where nothing f touches is used after ctx ended, as when the run is
// stopping. If ctx has ended already, f does not start.
func Do[T any](ctx context.Context, f func() (T, error)) (T, error) {
	var zero T
	if err := ctx.Err(); err != nil {
		return zero, err
	}
	if ctx.Done() == nil {
		return f() // a context that never ends: no goroutine needed
	}
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}
