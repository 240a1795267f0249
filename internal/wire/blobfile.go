package wire

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// Large blobs cross the connection as files: the sender writes the blob to
// a file in a directory private to one host–plugin pair, and the stream
// carries only the header, with the file's name and CRC-32C in the gRPC
// metadata of the call (request) or of the answer's headers (response).
// The receiver opens the file without following links, checks that it is a
// regular file of the announced size whose checksum matches, reads it and
// removes it; the blob's own encoding (magic, version) is checked by its
// decoder as before. This skips framing every MiB, TLS and HTTP/2 flow
// control for the tens of MB of a full SHA-3 circuit or model; the control
// channel (handshake, AutoMTLS, calls, errors) is unchanged.
//
// The host makes the directory (mode 0700, in os.TempDir) when it launches
// a plugin, passes it in BlobDirEnv and removes it, with anything left in
// it, when it closes the plugin. A plugin that accepts the directory says
// so in its Describe answer's headers; with a plugin that does not (built
// against an older SDK, or where the directory is unusable) blobs are
// streamed in chunks as before, and so are blobs below blobFileMin.
const (
	// BlobDirEnv names the directory the host passes to a plugin for
	// blob files.
	BlobDirEnv = "TCFORGE_PLUGIN_BLOB_DIR"
	// blobFileMin is the smallest blob sent as a file.
	blobFileMin = 256 << 10
	// mdBlobFiles, in Describe's answer headers, says the plugin reads and
	// writes blob files; in a call's metadata, that the host reads them.
	mdBlobFiles = "tcforge-blob-files"
	// mdBlobFile and mdBlobCRC name a blob's file and its CRC-32C (hex).
	mdBlobFile = "tcforge-blob-file"
	mdBlobCRC  = "tcforge-blob-crc32c"
	// blobFilesVersion is the version of this scheme the two sides agree on.
	blobFilesVersion = "1"
	// blobFilePrefix starts every blob file's name.
	blobFilePrefix = "blob-"
	// mdFlat, in Describe's answer headers, says the plugin reads the
	// flat encoding of logic circuits (binenc's flat layout:
	// circuit.DecodeView); in a call's metadata, that the host does.
	// Either side sends a logic circuit flat only to a side that reads it
	// and where blobs cross as files: a flat blob is about 1.7 times the
	// packed size, written and read without work per element.
	mdFlat = "tcforge-flat"
	// mdFlatLayered, in a call's metadata, says that the host maps the
	// answer's blob file (Mapped), so a layered circuit answer may be
	// flat too. Read into fresh memory, a flat layered circuit costs more
	// than it saves: with every repeated row in full, a SHA3-256 one is
	// 7.7 times the packed size (docs/design.md, "Blob files").
	mdFlatLayered = "tcforge-flat-layered"
	// flatVersion is the version of the flat encodings both sides agree on.
	flatVersion = "1"
)

// castagnoli is the CRC-32C table (hardware-accelerated on amd64, arm64).
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// blobRef locates a blob sent as a file.
type blobRef struct {
	name string
	crc  uint32
}

// md returns the metadata pairs announcing r.
func (r blobRef) md() metadata.MD {
	return metadata.Pairs(mdBlobFile, r.name, mdBlobCRC, strconv.FormatUint(uint64(r.crc), 16))
}

// blobRefFrom reads a blob file's reference from md (ok false if none).
func blobRefFrom(md metadata.MD) (blobRef, bool, error) {
	names, crcs := md.Get(mdBlobFile), md.Get(mdBlobCRC)
	if len(names) == 0 && len(crcs) == 0 {
		return blobRef{}, false, nil
	}
	if len(names) != 1 || len(crcs) != 1 {
		return blobRef{}, false, errors.New("malformed blob file reference")
	}
	crc, err := strconv.ParseUint(crcs[0], 16, 32)
	if err != nil {
		return blobRef{}, false, fmt.Errorf("blob file checksum %q: %w", crcs[0], err)
	}
	return blobRef{name: names[0], crc: uint32(crc)}, true, nil
}

// blobDirPrefix starts the name of every blob directory; the host's
// process ID follows it ("tcforge-blobs-<pid>-<random>").
const blobDirPrefix = "tcforge-blobs-"

// makeBlobDir creates a private directory for one plugin's blob files,
// named for this host process. A host killed outright (SIGKILL) cannot
// remove its directories: SweepBlobDirs, which a host runs once before its
// first plugin starts, removes those of hosts that are gone.
func makeBlobDir() (string, error) {
	return os.MkdirTemp("", blobDirPrefix+strconv.Itoa(os.Getpid())+"-")
}

// SweepBlobDirs removes the blob directories of hosts that are gone from
// the temporary directory (see sweepBlobDirs), and from the short
// directories sockets fall back to when it is too long (socketDir): a run
// killed outright leaves nothing past the next one. It reads the whole
// directory, so a host runs it once, not at every plugin start.
func SweepBlobDirs() {
	sweepBlobDirs(os.TempDir())
	if !socketFits(os.TempDir()) {
		for _, d := range shortDirs {
			sweepBlobDirs(d)
		}
	}
}

// maxSocketDir is the longest directory a plugin's Unix socket can be
// made in: go-plugin names it DIR/plugin<up to 10 digits>, and a socket's
// path has at most 107 bytes (sun_path, 108 with its NUL) on Linux, 103
// on the BSDs and macOS.
const maxSocketDir = 103 - len("/plugin") - 10

// shortDirs are where a plugin's socket goes, in a private directory of
// its own, when the blob directory's path is too long for one.
var shortDirs = []string{"/tmp", "/dev/shm", "/var/tmp"}

// socketFits reports whether a directory made in dir (blobDirPrefix, the
// pid and a random suffix) can hold a plugin's socket.
func socketFits(dir string) bool {
	return len(dir)+len("/"+blobDirPrefix)+len(strconv.Itoa(os.Getpid()))+1+10 <= maxSocketDir
}

// socketDir returns the directory a plugin's Unix socket is made in: dir
// (its blob directory) if its path is short enough, else a private
// directory (mode 0700, named as blob directories are, so that
// SweepBlobDirs removes it after a killed host) in the first of shortDirs
// that takes one. Without either, it says to shorten $TMPDIR: before,
// every plugin failed to start with "exited during startup: exit status 0".
func socketDir(dir string) (string, error) {
	if dir != "" && len(dir) <= maxSocketDir {
		return dir, nil
	}
	for _, d := range shortDirs {
		if !socketFits(d) {
			continue
		}
		if sd, err := os.MkdirTemp(d, blobDirPrefix+strconv.Itoa(os.Getpid())+"-"); err == nil {
			return sd, nil
		}
	}
	at := dir
	if at == "" {
		at = os.TempDir()
	}
	return "", fmt.Errorf("the temporary directory's path %s is too long for a plugin's Unix socket (%d bytes; at most %d), and none of %s takes a directory: set TMPDIR to a shorter path", at, len(at), maxSocketDir, strings.Join(shortDirs, ", "))
}

// sweepBlobDirs removes the blob directories under tmp whose host process
// no longer exists, with whatever files a killed transfer left in them.
// Only this user's directories are touched (checkBlobDir), and a directory
// whose name carries no process ID is left alone.
func sweepBlobDirs(tmp string) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return
	}
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), blobDirPrefix)
		if !ok || !e.IsDir() {
			continue
		}
		pidText, _, ok := strings.Cut(rest, "-")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || pid <= 0 || pid == os.Getpid() || processAlive(pid) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		if checkBlobDir(dir) == nil {
			os.RemoveAll(dir)
		}
	}
}

// checkBlobDir reports whether dir is usable as a blob directory on the
// plugin side: an existing directory, not a link, owned by this user and
// closed to everyone else.
func checkBlobDir(dir string) error {
	if dir == "" || !filepath.IsAbs(dir) {
		return fmt.Errorf("blob directory %q is not an absolute path", dir)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("blob directory %s is not a directory", dir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("blob directory %s is open to other users (%v)", dir, fi.Mode().Perm())
	}
	return checkOwner(fi)
}

// writeBlobFile writes a blob, given as consecutive parts, to a new file
// in dir and returns its reference.
func writeBlobFile(dir string, blob [][]byte) (blobRef, error) {
	f, err := os.CreateTemp(dir, blobFilePrefix+"*")
	if err != nil {
		return blobRef{}, err
	}
	ref := blobRef{name: filepath.Base(f.Name())}
	ref.crc, err = writeBlob(f, blob)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return blobRef{}, err
	}
	return ref, nil
}

// writeBlob writes a blob, given as consecutive parts, to f and returns
// its CRC-32C, made on another goroutine meanwhile for a large blob.
func writeBlob(f *os.File, blob [][]byte) (uint32, error) {
	var crc uint32
	sum := func() {
		for _, p := range blob {
			crc = crc32.Update(crc, castagnoli, p)
		}
	}
	var wg sync.WaitGroup
	if blobSize(blob) >= parallelCRCMin {
		wg.Go(sum) // on another goroutine while this one writes
	} else {
		sum()
	}
	var err error
	for _, p := range blob {
		if _, err = f.Write(p); err != nil {
			break
		}
	}
	wg.Wait()
	return crc, err
}

// readChunk is how much of a blob file is read between two looks at the
// call's context: a large answer (hundreds of MB) is read within a
// fraction of a second of a signal, not after it.
const readChunk = 16 << 20

// readBlob reads size bytes of f from its start into fresh memory,
// stopping when ctx ends.
func readBlob(ctx context.Context, f *os.File, size uint64, name string) ([]byte, error) {
	blob := make([]byte, size)
	for off := uint64(0); off < size; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := f.ReadAt(blob[off:min(off+readChunk, size)], int64(off))
		off += uint64(n)
		if err != nil && off < size {
			return nil, fmt.Errorf("blob file %s: %w", name, err)
		}
	}
	return blob, nil
}

// readBlobFile reads and removes the blob file ref in dir, which must hold
// exactly size bytes with ref's checksum: it maps it through m if m
// takes it (nil: never; the plugin side maps the host's requests, which
// it trusts), else reads it. It opens the file without following a link
// and without waiting on a FIFO (a FIFO in its place hung the host past
// its timeout and its signals), and checks the file it opened.
func readBlobFile(ctx context.Context, dir string, ref blobRef, size uint64, m *Mapped) ([]byte, error) {
	if dir == "" {
		return nil, errors.New("a blob file was announced but this side has no blob directory")
	}
	if !strings.HasPrefix(ref.name, blobFilePrefix) || filepath.Base(ref.name) != ref.name || strings.ContainsAny(ref.name, `/\`) {
		return nil, fmt.Errorf("bad blob file name %q", ref.name)
	}
	path := filepath.Join(dir, ref.name)
	f, err := openNoFollow(path)
	if err != nil {
		return nil, fmt.Errorf("blob file: %w", err)
	}
	defer f.Close()
	os.Remove(path) // the receiver owns it now
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("blob file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("blob file %s is not a regular file", ref.name)
	}
	if uint64(fi.Size()) != size {
		return nil, fmt.Errorf("blob file %s holds %d bytes, %d announced", ref.name, fi.Size(), size)
	}
	if size > maxBlobSize {
		return nil, fmt.Errorf("announced blob of %d bytes exceeds the limit of %d", size, uint64(maxBlobSize))
	}
	blob, mapped := m.mapFile(f, int64(size))
	if !mapped {
		if blob, err = readBlob(ctx, f, size, ref.name); err != nil {
			return nil, err
		}
	}
	if got := checksum(blob); got != ref.crc {
		if mapped {
			m.drop(blob)
		}
		return nil, fmt.Errorf("blob file %s: CRC-32C %08x, %08x announced", ref.name, got, ref.crc)
	}
	return blob, nil
}

// describeFiles is the call option that collects Describe's answer
// headers into md.
func describeFiles(md *metadata.MD) grpc.CallOption { return grpc.Header(md) }

// acceptsFiles reports whether Describe's answer headers (or a call's
// metadata) md say the other side speaks blob files.
func acceptsFiles(md metadata.MD) bool {
	v := md.Get(mdBlobFiles)
	return len(v) == 1 && v[0] == blobFilesVersion
}

// acceptsFlatLayered reports whether a call's metadata md says the host
// takes a flat layered circuit answer.
func acceptsFlatLayered(md metadata.MD) bool {
	v := md.Get(mdFlatLayered)
	return len(v) == 1 && v[0] == flatVersion
}

// acceptsFlat reports whether md says the other side reads the flat
// encodings.
func acceptsFlat(md metadata.MD) bool {
	v := md.Get(mdFlat)
	return len(v) == 1 && v[0] == flatVersion
}

// callFiles returns ctx with the outgoing metadata of a call: that the
// host reads blob files and flat encodings, the request blob's file, if
// any, and the answer file the host gives the plugin, if any (then a
// layered answer may be flat too, if layered: the host maps it).
func callFiles(ctx context.Context, req *blobRef, answer *answerFile, layered bool) context.Context {
	md := metadata.Pairs(mdBlobFiles, blobFilesVersion, mdFlat, flatVersion)
	if answer != nil {
		md.Append(mdAnswerFile, answer.path)
		if layered {
			md.Append(mdFlatLayered, flatVersion)
		}
	}
	if req != nil {
		md = metadata.Join(md, req.md())
	}
	return metadata.NewOutgoingContext(ctx, md)
}
