package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/tcforge/tcforge/host/report"
)

// abort ends a run whose output could not be written (a full disk, the
// directory removed): later pipelines do not run, the manifest says
// "failed: " and why (see report.WriteManifest for a full disk), the
// error goes to stderr, and the exit status is 1. Every file of --out is
// written atomically, so none is left partial.
func (o *runOutput) abort(stderr io.Writer, err error) error {
	defer o.bar.Finish()
	fmt.Fprintln(stderr, "Error:", err)
	if o.dir != "" && o.manifest != nil {
		o.manifest.Status, o.manifest.Finished = "failed: "+err.Error(), time.Now().UTC().Round(time.Second)
		if peak, ok := selfPeak(); ok {
			o.manifest.HostPeakRSS = peak
		}
		o.manifest.HostMemoryLimit, o.manifest.HostMemoryFrom = o.memLimit, o.memFrom
		o.recordProcesses()
		if werr := report.WriteManifest(o.dir, o.manifest); werr != nil {
			fmt.Fprintln(stderr, "Error: the run manifest could not say so either:", werr)
		}
	}
	return exitStatus{1}
}
