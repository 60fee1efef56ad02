// Package fsx holds the file-system steps that several commands take:
// reading a file someone else made without trusting it (OpenLimited: a
// regular file, read no further than its kind's limit), and writing so
// that a failure leaves nothing behind (WriteFile replaces a file whole or
// not at all, Mkdirs says which directories it made, for the caller to
// take back).
package fsx

import (
	"errors"
	"io"
	"os"
	"path/filepath"
)

// Mkdirs makes dir and its missing parents, as os.MkdirAll does, and
// returns those it made, outermost first.
func Mkdirs(dir string) ([]string, error) {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	var made []string
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return made, err
		}
		made = append(made, missing[i])
	}
	return made, nil
}

// Rmdirs removes the directories Mkdirs made, innermost first, each only
// when empty: what a failed write made, and nothing else.
func Rmdirs(made []string) {
	for i := len(made) - 1; i >= 0; i-- {
		os.Remove(made[i])
	}
}

// WriteFile writes path through a temporary file in the same directory and
// renames it into place, so a reader sees the old file or the new one,
// never half of one, and a symbolic link at path is replaced, not written
// through. The file is readable by all (0644), as a file created by hand
// is; the temporary file goes whatever fails (a rename onto a directory
// included).
func WriteFile(path string, write func(io.Writer) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	werr := write(tmp)
	cerr := tmp.Close()
	err = errors.Join(werr, cerr)
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
