//go:build !linux

package wire

// dieWithParent does nothing where the kernel cannot be asked to; the
// poll of watchParent ends the plugin.
func dieWithParent() {}
