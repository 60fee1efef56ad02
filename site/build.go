package site

import (
	"errors"
	"fmt"
	"github.com/benchgate/benchgate/internal/fsx"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
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
// things (so a mistyped -out never deletes a home directory), the root,
// the working directory or one holding it.
//
// Records of more than MaxCells cells are refused (CellsError) before
// anything is written. Each page is written as it is rendered, so the
// site is never in memory whole; the Site returned has no Files.
func Build(dir string, records []benchdata.Record, opt Options) (*Site, error) {
	if err := CheckOut(dir); err != nil {
		return nil, err
	}
	m, err := newModel(records, opt)
	if err != nil {
		return nil, err
	}
	s := m.site()
	if err := write(dir, func(emit func(string, []byte) error) error { return m.render(s, emit) }); err != nil {
		return nil, err
	}
	return s, nil
}

// CheckOut refuses an output directory Build must not replace, as Build
// does before it renders anything; a caller may check it first, before
// reading the history.
func CheckOut(dir string) error {
	if dir == "" {
		return errors.New("-out: want a directory to write the site into")
	}
	// The site is written beside dir, in its parent: "." has to be
	// resolved to have one.
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("-out %s: %w", dir, err)
	}
	if filepath.Dir(abs) == abs {
		return fmt.Errorf("-out %s: the root directory, which a site cannot replace: give a directory of its own, such as public", dir)
	}
	fi, err := os.Lstat(abs)
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
	if _, err := os.Lstat(filepath.Join(abs, Marker)); err != nil {
		entries, err := os.ReadDir(abs)
		if err != nil {
			return fmt.Errorf("-out %s: %w", dir, err)
		}
		if len(entries) > 0 {
			return fmt.Errorf("-out %s: a directory that holds no benchgate site (no %s) and is not empty: refusing to replace it; give a new or empty directory", dir, Marker)
		}
	}
	if holdsWorkingDir(fi) {
		return fmt.Errorf("-out %s: the working directory, or one holding it: the site replaces -out by renaming the old one away, "+
			"which would leave the working directory (and a shell's in it) removed; run from the directory above it, with -out and its name", dir)
	}
	return nil
}

// holdsWorkingDir says whether the directory fi is the working directory
// or one of its parents.
func holdsWorkingDir(fi fs.FileInfo) bool {
	wd, err := os.Getwd()
	if err != nil {
		return false // removed already: nothing to strand
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real // its parents, not a symbolic link's
	}
	for d := wd; ; d = filepath.Dir(d) {
		if di, err := os.Stat(d); err == nil && os.SameFile(di, fi) {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// write writes the files fill hands to emit into a new directory beside
// dir and renames it into dir's place. Errors name dir as given.
func write(name string, fill func(emit func(path string, data []byte) error) error) (err error) {
	dir, err := filepath.Abs(name)
	if err != nil {
		return fmt.Errorf("-out %s: %w", name, err)
	}
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	// The directories made for -out's parent go again when the build
	// fails: a failed build leaves nothing.
	madeDirs, err := fsx.Mkdirs(parent)
	defer func() {
		if err != nil {
			fsx.Rmdirs(madeDirs)
		}
	}()
	if err != nil {
		return fmt.Errorf("-out %s: %w", name, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return fmt.Errorf("-out %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("-out %s: %w", name, err)
	}
	made := map[string]bool{}
	err = fill(func(p string, data []byte) error {
		if !filepath.IsLocal(filepath.FromSlash(p)) || strings.Contains(p, "\\") {
			return fmt.Errorf("site: refusing file name %q", p) // render makes none such
		}
		path := filepath.Join(tmp, filepath.FromSlash(p))
		if d := filepath.Dir(path); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return fmt.Errorf("-out %s: %w", name, err)
			}
			made[d] = true
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("-out %s: %w", name, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	var old string
	if _, err := os.Lstat(dir); err == nil {
		// Check again: the directory may have changed since Build looked.
		if err := CheckOut(name); err != nil {
			return err
		}
		aside, err := os.MkdirTemp(parent, "."+base+".old-")
		if err != nil {
			return fmt.Errorf("-out %s: %w", name, err)
		}
		old = filepath.Join(aside, base)
		if err := os.Rename(dir, old); err != nil {
			os.Remove(aside)
			return fmt.Errorf("-out %s: moving the old site aside: %w", name, err)
		}
		defer os.RemoveAll(aside)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			_ = os.Rename(old, dir) // put the old site back
		}
		return fmt.Errorf("-out %s: %w", name, err)
	}
	return nil
}
