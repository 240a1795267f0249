package sdktest

import (
	"crypto/sha256"
	"encoding"
	"encoding/hex"
	"fmt"
	"testing"
)

// Digest returns the SHA-256, in hex, of v's binary encoding (its length
// in bytes, a colon, then the bytes): what a TestOutputUnchanged pins a
// model or a layered circuit by, so that a refactor shows it changed
// nothing.
func Digest(t testing.TB, v encoding.BinaryMarshaler) string {
	t.Helper()
	b, err := v.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d:", len(b))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil))
}
