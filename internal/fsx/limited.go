package fsx

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// Every file benchgate reads from an artifact or from the user (results,
// history, decisions, profiles, go test -bench outputs, other tools'
// reports) is opened here, with its kind's size limit (benchdata's
// MaxResultsBytes and the rest): it must be a regular file, and it is
// read through the limit. A size check by stat alone is not enough: a symlink to /dev/zero has
// size 0 and never ends, and opening a FIFO blocks until a writer comes,
// so the file is opened without blocking, checked on the open descriptor
// (no race with a rename between the check and the open), and read no
// further than the limit allows.

// TooLargeError is a file over its size limit.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: larger than %d bytes, more than such a file can be", e.Path, e.Limit)
}

// NotRegularError is a path that names something other than a regular
// file (after symlinks): a FIFO, a device, a directory, a socket.
type NotRegularError struct {
	Path string
	Mode fs.FileMode
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s: not a regular file (%s): refused", e.Path, fileKind(e.Mode))
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "mode " + m.String()
}

// OpenLimited opens path for reading as a regular file, read no further
// than max bytes: reading past max fails with a *TooLargeError instead of
// returning more. The open does not block (a FIFO is refused, not
// waited on), and anything but a regular file is a *NotRegularError
// naming the path.
func OpenLimited(path string, max int64) (io.ReadCloser, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, &NotRegularError{Path: path, Mode: st.Mode()}
	}
	if st.Size() > max {
		f.Close()
		return nil, &TooLargeError{Path: path, Limit: max}
	}
	// O_NONBLOCK means nothing to a regular file's reads: it only kept
	// the open from waiting on a FIFO's writer.
	return &limitedFile{limitReader: newLimitReader(f, path, max), f: f}, nil
}

// limitReader reads r up to a limit; one byte more is a *TooLargeError,
// since a file may have grown after the fstat.
type limitReader struct {
	r    io.Reader
	path string
	max  int64
	left int64
}

// LimitReader reads r, named path in errors, up to max bytes: one byte
// more is a *TooLargeError (a stream, or a file grown after its fstat).
func LimitReader(r io.Reader, path string, max int64) io.Reader { return newLimitReader(r, path, max) }

func newLimitReader(r io.Reader, path string, max int64) *limitReader {
	return &limitReader{r: r, path: path, max: max, left: max}
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, &TooLargeError{Path: l.path, Limit: l.max}
	}
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		return n + int(l.left), &TooLargeError{Path: l.path, Limit: l.max}
	}
	return n, err
}

// limitedFile is an open file read through a limitReader.
type limitedFile struct {
	*limitReader
	f *os.File
}

func (l *limitedFile) Close() error { return l.f.Close() }

// ReadFileLimited reads the whole of path as OpenLimited opens it: a
// regular file of at most max bytes.
func ReadFileLimited(path string, max int64) ([]byte, error) {
	r, err := OpenLimited(path, max)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	if err != nil {
		var tl *TooLargeError
		if errors.As(err, &tl) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}
