package wire

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// answerFile is a memfd the host makes for one call's answer (see
// mdAnswerFile).
type answerFile struct {
	f    *os.File
	path string
}

// newAnswerFile makes an answer file, or returns nil where none can be
// made.
func newAnswerFile() *answerFile {
	fd, err := unix.MemfdCreate("tcforge-answer", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil
	}
	return &answerFile{f: os.NewFile(uintptr(fd), "answer-file"), path: "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/" + strconv.Itoa(fd)}
}

// close closes the host's descriptor (a mapping of the file outlives it).
func (a *answerFile) close() {
	if a != nil {
		a.f.Close()
	}
}

// sealsNeeded are the seals that make the file's content final.
const sealsNeeded = unix.F_SEAL_WRITE | unix.F_SEAL_SHRINK | unix.F_SEAL_GROW

// seal seals the file so that no process can change it any more, and
// reports whether it is.
func (a *answerFile) seal() bool {
	fd := a.f.Fd()
	_, err := unix.FcntlInt(fd, unix.F_ADD_SEALS, sealsNeeded|unix.F_SEAL_SEAL)
	if err != nil && !errors.Is(err, unix.EPERM) { // EPERM: sealed already (F_SEAL_SEAL)
		return false
	}
	seals, err := unix.FcntlInt(fd, unix.F_GET_SEALS, 0)
	return err == nil && seals&sealsNeeded == sealsNeeded
}

// take seals the answer the plugin wrote, checks that it holds size bytes
// with checksum crc, and maps it through m if m takes it, else reads it;
// a file that would not seal is read, never mapped.
func (a *answerFile) take(ctx context.Context, size uint64, crc uint32, m *Mapped) ([]byte, error) {
	if a == nil {
		return nil, errors.New("an answer file was announced but the host made none")
	}
	sealed := a.seal()
	fi, err := a.f.Stat()
	if err != nil {
		return nil, fmt.Errorf("answer file: %w", err)
	}
	if uint64(fi.Size()) != size {
		return nil, fmt.Errorf("answer file holds %d bytes, %d announced", fi.Size(), size)
	}
	if size > maxBlobSize {
		return nil, fmt.Errorf("announced blob of %d bytes exceeds the limit of %d", size, uint64(maxBlobSize))
	}
	var blob []byte
	mapped := false
	if sealed {
		blob, mapped = m.mapFile(a.f, int64(size))
	}
	if !mapped {
		if blob, err = readBlob(ctx, a.f, size, answerFileRef); err != nil {
			return nil, err
		}
	}
	if got := checksum(blob); got != crc {
		if mapped {
			m.drop(blob)
		}
		return nil, fmt.Errorf("answer file: CRC-32C %08x, %08x announced", got, crc)
	}
	return blob, nil
}
