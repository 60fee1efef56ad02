package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// testServer is the path of the built testdata/testserver program.
var testServer string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runner-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testServer = filepath.Join(dir, "testserver")
	out, err := exec.Command("go", "build", "-o", testServer, "./testdata/testserver").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building testdata/testserver: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// groupGone reports whether no process of the group is left, zombies
// included: kill(2) finds a zombie until it has been reaped.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	if pgid <= 0 {
		t.Fatalf("no process group recorded (pgid %d)", pgid)
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still exists (kill -0: %v)", pgid, err)
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}
