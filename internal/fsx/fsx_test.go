package fsx

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestMkdirs: Mkdirs says which directories it made, outermost first, and
// Rmdirs takes back exactly those.
func TestMkdirs(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	made, err := Mkdirs(filepath.Join(base, "a", "b", "c"))
	want := []string{filepath.Join(base, "a"), filepath.Join(base, "a", "b"), filepath.Join(base, "a", "b", "c")}
	if err != nil || !slices.Equal(made, want) {
		t.Fatalf("Mkdirs: %v %v, want %v", made, err, want)
	}
	again, err := Mkdirs(filepath.Join(base, "a", "b", "d"))
	if err != nil || !slices.Equal(again, []string{filepath.Join(base, "a", "b", "d")}) {
		t.Errorf("Mkdirs beside: %v %v", again, err)
	}
	Rmdirs(again)
	if _, err := os.Stat(filepath.Join(base, "a", "b", "d")); !os.IsNotExist(err) {
		t.Errorf("Rmdirs left d: %v", err)
	}
	if err := os.WriteFile(filepath.Join(base, "a", "b", "c", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	Rmdirs(made) // c holds a file: it and its parents stay
	if _, err := os.Stat(filepath.Join(base, "a", "b", "c", "f")); err != nil {
		t.Errorf("Rmdirs removed a directory that was not empty: %v", err)
	}
}

// TestWriteFile: the file is 0644, and a rename that fails (onto a
// directory) leaves no temporary file beside it.
func TestWriteFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	write := func(w io.Writer) error { _, err := io.WriteString(w, "{}\n"); return err }
	if err := WriteFile(path, write); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v (%v), want 0644", fi.Mode(), err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.MkdirAll(filepath.Join(sub, "full"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(sub, write); err == nil {
		t.Fatal("a rename onto a non-empty directory reported no error")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".tmp-*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
