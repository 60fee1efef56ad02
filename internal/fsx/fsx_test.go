package fsx

import (
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
