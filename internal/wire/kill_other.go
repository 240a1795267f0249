//go:build !unix

package wire

import "os/exec"

// ownGroup does nothing where there are no process groups.
func ownGroup(*exec.Cmd) {}

// killGroup does nothing where there are no process groups.
func killGroup(int) {}
