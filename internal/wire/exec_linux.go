package wire

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// privateCopy copies the executable r (size bytes) into a sealed memfd,
// passes it to cmd's process (ExtraFiles) and returns the path the process
// is run from, /proc/self/fd/N (in the child, before exec: its own
// descriptor, inherited, so a script's interpreter can open it too). The
// host's descriptor is closed by release.
func privateCopy(cmd *exec.Cmd, r io.Reader, size int64, dir string) (string, func(), error) {
	name := filepath.Base(cmd.Path)
	fd, err := unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING|unix.MFD_EXEC)
	if errors.Is(err, unix.EINVAL) {
		fd, err = unix.MemfdCreate(name, unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING) // before Linux 6.3
	}
	if err != nil {
		path, err := copyToDir(r, dir, name)
		return path, func() {}, err
	}
	f := os.NewFile(uintptr(fd), "memfd:"+name)
	n, err := io.Copy(f, r)
	if err == nil && n != size {
		err = fmt.Errorf("read %d bytes of %d", n, size)
	}
	if err == nil {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
	}
	if err != nil {
		f.Close()
		return "", nil, err
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	return "/proc/self/fd/" + strconv.Itoa(2+len(cmd.ExtraFiles)), func() { f.Close() }, nil
}
