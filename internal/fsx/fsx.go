// Package fsx holds the file-system steps that several commands take so
// that a failure leaves nothing behind: Mkdirs says which directories it
// made, for the caller to take back.
package fsx

import (
	"errors"
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
