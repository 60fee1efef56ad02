package export

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/benchgate/benchgate/benchdata"
)

// Files says what "benchgate export" exports and where: a results file,
// or a history file instead, to Out ("" for stdout).
type Files struct {
	Results, History, Out string
}

// WriteError is an export that could not be written, as opposed to an
// input that could not be read or exported.
type WriteError struct{ Err error }

func (e *WriteError) Error() string { return e.Err.Error() }
func (e *WriteError) Unwrap() error { return e.Err }

// Export exports f's file in o's format to f.Out or, without one, to
// stdout. An input that does not read or cannot be exported in o is its
// error, written nowhere; a failed write is a *WriteError. An Out that is
// a directory is refused as input.
func (f Files) Export(o Options, stdout io.Writer) error {
	var src Source
	if f.History != "" {
		recs, err := benchdata.ReadHistory(f.History)
		if err != nil {
			return err
		}
		if src, err = FromHistory(recs, f.History); err != nil {
			return err
		}
	} else {
		res, err := benchdata.Read(f.Results)
		if err != nil {
			return err
		}
		if src, err = FromResults(res, f.Results); err != nil {
			return err
		}
	}
	write, err := New(src, o)
	if err != nil {
		return err
	}
	if f.Out == "" {
		if err := write(stdout); err != nil {
			return &WriteError{err}
		}
		return nil
	}
	if fi, err := os.Stat(f.Out); err == nil && fi.IsDir() {
		return fmt.Errorf("-out %s: a directory: want the file to write", f.Out)
	}
	if err := os.MkdirAll(filepath.Dir(f.Out), 0o755); err != nil {
		return &WriteError{err}
	}
	if err := benchdata.WriteFile(f.Out, write); err != nil {
		return &WriteError{fmt.Errorf("export: %s: %w", f.Out, err)}
	}
	return nil
}
