package wire

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// A mapped answer must not change under the host: a mapped file that
// another process truncates faults the host (SIGBUS) where it reads the
// lost pages, and one it rewrites after the checksum changes arrays the
// decoder already checked (an index out of range, a panic). A blob file
// in the plugin's directory offers no such promise. So the host maps only
// an answer file it made itself and sealed before reading it: for a
// call whose answer it maps (a bundled plugin's Build or Layer, within
// the budget), it creates a memfd (Linux), passes its path
// (/proc/<host pid>/fd/<fd>) in the call's metadata, and the plugin
// writes its answer there instead of into a blob file. When the answer
// has arrived the host seals the memfd (F_SEAL_WRITE, F_SEAL_SHRINK,
// F_SEAL_GROW, F_SEAL_SEAL: no process can change its content or size
// any more), checks its size and checksum, and maps it. A memfd that
// cannot be sealed (another process holds a writable shared mapping of
// it) is read into fresh memory instead, as every other answer is; a
// plain blob file is never mapped by the host. Where there is no memfd,
// nothing is mapped.
const (
	// mdAnswerFile, in a call's metadata, is the path of the host's
	// answer file for the call.
	mdAnswerFile = "tcforge-answer-file"
	// answerFileRef is the blob file name of an answer written to the
	// host's answer file.
	answerFileRef = "answer-file"
)

// answerFilePath reports whether path is where a plugin may write its
// answer: its host's (its parent's) descriptor, /proc/<ppid>/fd/<n>.
func answerFilePath(path string) bool {
	rest, ok := strings.CutPrefix(path, "/proc/"+strconv.Itoa(os.Getppid())+"/fd/")
	if !ok || rest == "" {
		return false
	}
	_, err := strconv.ParseUint(rest, 10, 31)
	return err == nil
}

// writeAnswerFile writes an answer, given as consecutive parts, to the
// host's answer file path (plugin side) and returns its reference.
func writeAnswerFile(path string, blob [][]byte) (blobRef, error) {
	if !answerFilePath(path) {
		return blobRef{}, fmt.Errorf("answer file %q is not the host's", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return blobRef{}, err
	}
	ref := blobRef{name: answerFileRef}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("answer file %s is not a regular file", path)
	}
	if err == nil {
		ref.crc, err = writeBlob(f, blob)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return ref, err
}
