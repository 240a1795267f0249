// Package imports holds, as its test, the import rules docs/design.md
// states: sdk/... never imports host/, plugins/ or the wire (gRPC) but for
// the serve entry point; plugins import only sdk/...; the host imports
// plugins only to bundle them; internal/wire imports no sdk package but the
// IR ones. It has no code.
package imports
