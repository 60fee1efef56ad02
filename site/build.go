package site

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchgate/benchgate/baselines"
)

// Build renders the site of records (Render) and writes it to dir,
// replacing what an earlier build left there as a whole: the site is
// written into a new directory beside dir, then renamed into place, the
// old one renamed aside first and removed after, so a reader (or a
// publishing step) sees the old site or the new one, and no page of a
// cell gone from the history stays behind.
//
// dir may be missing (it is created, its parent too), an empty directory,
// or a directory holding Marker (a site Build wrote). Anything else is
// refused, naming dir: a file, a symbolic link, a directory of other
// things (so a mistyped -out never deletes a home directory).
func Build(dir string, records []baselines.Record, opt Options) (*Site, error) {
	if err := CheckOut(dir); err != nil {
		return nil, err
	}
	s, err := Render(records, opt)
	if err != nil {
		return nil, err
	}
	return s, write(dir, s)
}

// CheckOut refuses an output directory Build must not replace, as Build
// does before it renders anything; a caller may check it first, before
// reading the history.
func CheckOut(dir string) error {
	if dir == "" {
		return errors.New("-out: want a directory to write the site into")
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("-out %s: %w", dir, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("-out %s: a symbolic link, not a directory: give the directory it points to", dir)
	case !fi.IsDir():
		return fmt.Errorf("-out %s: a file, not a directory", dir)
	}
	if _, err := os.Lstat(filepath.Join(dir, Marker)); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("-out %s: %w", dir, err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("-out %s: a directory that holds no benchgate site (no %s) and is not empty: refusing to replace it; give a new or empty directory", dir, Marker)
	}
	return nil
}

// write writes s into a new directory beside dir and renames it into
// dir's place.
func write(dir string, s *Site) (err error) {
	dir = filepath.Clean(dir)
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("-out %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return fmt.Errorf("-out %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("-out %s: %w", dir, err)
	}
	made := map[string]bool{}
	for _, f := range s.Files {
		if !filepath.IsLocal(filepath.FromSlash(f.Path)) || strings.Contains(f.Path, "\\") {
			return fmt.Errorf("site: refusing file name %q", f.Path) // Render makes none such
		}
		path := filepath.Join(tmp, filepath.FromSlash(f.Path))
		if d := filepath.Dir(path); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("-out %s: %w", dir, err)
			}
			made[d] = true
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			return fmt.Errorf("-out %s: %w", dir, err)
		}
	}
	var old string
	if _, err := os.Lstat(dir); err == nil {
		// Check again: the directory may have changed since Build looked.
		if err := CheckOut(dir); err != nil {
			return err
		}
		aside, err := os.MkdirTemp(parent, "."+base+".old-")
		if err != nil {
			return fmt.Errorf("-out %s: %w", dir, err)
		}
		old = filepath.Join(aside, base)
		if err := os.Rename(dir, old); err != nil {
			os.Remove(aside)
			return fmt.Errorf("-out %s: moving the old site aside: %w", dir, err)
		}
		defer os.RemoveAll(aside)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir) // put the old site back
		}
		return fmt.Errorf("-out %s: %w", dir, err)
	}
	return nil
}
