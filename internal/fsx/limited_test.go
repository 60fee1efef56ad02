package fsx

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadFileLimited: a file at its limit reads whole; past it, a
// TooLargeError naming the path and the limit; a stream past the limit
// stops at it.
func TestReadFileLimited(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFileLimited(path, 10); err != nil || string(b) != "0123456789" {
		t.Errorf("at the limit: %q, %v", b, err)
	}
	_, err := ReadFileLimited(path, 9)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Path != path || tl.Limit != 9 {
		t.Errorf("over the limit: %v, want a TooLargeError", err)
	}
	// A file that grows after the fstat is still cut at the limit: the
	// reader counts what it reads.
	r := LimitReader(strings.NewReader(strings.Repeat("x", 100)), "grown", 10)
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r); !errors.As(err, &tl) || buf.Len() > 10 {
		t.Errorf("a stream past the limit: %d bytes, %v", buf.Len(), err)
	}
}
