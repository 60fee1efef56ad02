package linux

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestOnlineCPUsFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// The kernel ends the list with a newline.
	if got, err := onlineCPUs(write("online", "0-3,5\n"), 2); err != nil || !slices.Equal(got, []int{0, 1, 2, 3, 5}) {
		t.Errorf("online 0-3,5 = %v, %v; want [0 1 2 3 5], nil", got, err)
	}

	missing := filepath.Join(dir, "missing")
	got, err := onlineCPUs(missing, 3)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file: err = %v, want fs.ErrNotExist", err)
	}
	if !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("missing file: guess = %v, want [0 1 2]", got)
	}

	bad := write("bad", "0-3,x\n")
	got, err = onlineCPUs(bad, 1)
	want := bad + `: "0-3,x" is not a cpuset (want e.g. "0-3,5")`
	if err == nil || err.Error() != want {
		t.Errorf("unparsable file: err = %v, want %s", err, want)
	}
	if !slices.Equal(got, []int{0}) {
		t.Errorf("unparsable file: guess = %v, want [0]", got)
	}
}

// TestOnlineCPUs reads this machine's CPUs for real: some, ascending.
func TestOnlineCPUs(t *testing.T) {
	t.Parallel()
	cpus, err := OnlineCPUs()
	if err != nil || len(cpus) == 0 {
		t.Fatalf("OnlineCPUs() = %v, %v", cpus, err)
	}
	for i := 1; i < len(cpus); i++ {
		if cpus[i] <= cpus[i-1] {
			t.Fatalf("OnlineCPUs() = %v, not ascending", cpus)
		}
	}
}
