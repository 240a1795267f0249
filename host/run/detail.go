package run

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tcforge/tcforge/host/config"
)

// Detailer is implemented by errors that carry, beside their one-line
// message, a longer text: a plugin process's standard error with the Go
// runtime's crash report (*wire.ExitError), go-plugin's explanation of a
// failed start (*wire.StartError).
type Detailer interface {
	error
	Detail() string
}

// DetailSaver saves the full text behind a failed row's one-line error
// and returns the file's path. pt is nil for a failure of every point of
// the pipeline (a plugin that did not start); block names the plugin block
// whose call failed ("" for the construction's, which fails every row of
// the point).
type DetailSaver func(p *config.Pipeline, pt *config.Point, block, text string) (string, error)

// DetailedError is a row's error whose full text is in a file: its message
// is the error's first line and the file's path.
type DetailedError struct {
	Err  error
	Path string
}

// Error implements error.
func (e *DetailedError) Error() string {
	first, _, _ := strings.Cut(e.Err.Error(), "\n")
	return fmt.Sprintf("%s (full output: %s)", first, e.Path)
}

// Unwrap returns the error.
func (e *DetailedError) Unwrap() error { return e.Err }

// detail makes err one line: an error with a longer text (Detailer) or a
// message of several lines has the whole saved by SaveDetail, and becomes
// a *DetailedError naming the file. Without SaveDetail, or if saving
// fails (logged), err is returned as it is.
func (r *Runner) detail(p *config.Pipeline, pt *config.Point, block string, err error) error {
	if err == nil || r.SaveDetail == nil {
		return err
	}
	msg := err.Error()
	var d Detailer
	long := ""
	if errors.As(err, &d) {
		long = d.Detail()
	}
	if long == "" && !strings.Contains(msg, "\n") {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "pipeline: %s\n", p.Name)
	if pt != nil {
		if s := pt.String(); s != "" {
			fmt.Fprintf(&b, "point:    %s\n", s)
		}
	}
	if block != "" {
		fmt.Fprintf(&b, "block:    %s\n", block)
	}
	fmt.Fprintf(&b, "error:    %s\n\n", msg)
	b.WriteString(long)
	path, serr := r.SaveDetail(p, pt, block, b.String())
	if serr != nil {
		r.Log.Warn().Err(serr).Str("pipeline", p.Name).Msg("saving a failure's full output")
		return err
	}
	return &DetailedError{Err: err, Path: path}
}
