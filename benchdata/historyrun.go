package benchdata

import (
	"errors"
	"io/fs"
	"slices"
)

// InHistory reports whether the history file at path already holds a
// record of r's run: one of the same run id and date. A missing file
// holds none, and a record without a run id is never found, since runs
// without one cannot be told apart.
func InHistory(path string, r Record) (bool, error) {
	if r.RunID == "" {
		return false, nil
	}
	old, err := ReadHistory(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	return slices.ContainsFunc(old, func(o Record) bool { return o.RunID == r.RunID && o.Date.Equal(r.Date) }), nil
}
