// Package targettest serves the tests of benchgate's targets and of the
// schedule that runs them: it builds the test server they start as a
// command target (testdata/testserver, a small HTTP service whose
// misbehaviours are chosen by flags) and checks what those tests check of
// processes, their groups and their threads.
package targettest

import (
	"bufio"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/internal/linux"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// serverPackage is the test server's package, built by its import path so
// that a test of any package can build it.
const serverPackage = "github.com/benchgate/benchgate/target/targettest/testdata/testserver"

// server is the path of the test server Main built.
var server string

// Main builds the test server, runs the tests and removes the server; a
// package's TestMain is os.Exit(targettest.Main(m)).
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "targettest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "testserver")
	if err := build(bin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	server = bin
	return m.Run()
}

// Server is the path of the test server; only under Main.
func Server() string {
	if server == "" {
		panic("targettest: Server outside of targettest.Main")
	}
	return server
}

// BuildStatic builds the test server without cgo into a directory of the
// test, for an image FROM scratch, and returns its path.
func BuildStatic(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testserver")
	if err := build(bin, "CGO_ENABLED=0"); err != nil {
		t.Fatal(err)
	}
	return bin
}

func build(bin string, env ...string) error {
	cmd := exec.Command("go", "build", "-o", bin, serverPackage)
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", serverPackage, err, out)
	}
	return nil
}

// ServerSpec is a command target running the test server with args on
// {port}, which it also finds in its environment, healthy at /healthz.
func ServerSpec(name string, args ...string) scenario.Target {
	return scenario.Target{
		Name:           name,
		Command:        append([]string{Server(), "-addr", "127.0.0.1:{port}"}, args...),
		Env:            map[string]string{"TESTSERVER_PORT": "{port}"},
		Health:         "/healthz",
		StartupTimeout: 20 * time.Second,
	}
}

// PIDLine matches the line "pid N" the test server writes as it starts,
// N its pid, which leads its process group.
var PIDLine = regexp.MustCompile(`(?m)^pid (\d+)$`)

// AsTargetError is err as a *target.TargetError of phase, or the test
// fails.
func AsTargetError(t testing.TB, err error, phase string) *target.TargetError {
	t.Helper()
	var te *target.TargetError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T), want a *TargetError", err, err)
	}
	if te.Phase != phase {
		t.Fatalf("phase %q, want %q; error: %v", te.Phase, phase, err)
	}
	return te
}

// GroupGone reports whether no process of the group is left, zombies
// included: kill(2) finds a zombie until it has been reaped.
func GroupGone(t testing.TB, pgid int) {
	t.Helper()
	if pgid <= 0 {
		t.Fatalf("no process group recorded (pgid %d)", pgid)
	}
	if err := syscall.Kill(-pgid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d still exists (kill -0: %v)", pgid, err)
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
}

// ThreadMasks is the affinity of each thread of the test process.
func ThreadMasks(t testing.TB) map[int]unix.CPUSet {
	t.Helper()
	tids, err := target.ProcIDs("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	m := map[int]unix.CPUSet{}
	for _, tid := range tids {
		var s unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &s); err == nil {
			m[tid] = s
		}
	}
	return m
}

// CheckMasksRestored says whether the threads have the masks they had in
// before, threads that are new the process's mask proc.
func CheckMasksRestored(t testing.TB, before map[int]unix.CPUSet, proc unix.CPUSet) {
	t.Helper()
	for tid, m := range ThreadMasks(t) {
		want, ok := before[tid]
		if !ok {
			want = proc
		}
		if m != want {
			t.Errorf("thread %d has affinity %s, want %s", tid, cpuList(m), cpuList(want))
		}
	}
}

// cpuList is set in the kernel's list form, for messages.
func cpuList(set unix.CPUSet) string {
	var cpus []int
	for c := range len(set) * 64 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return linux.FormatCPUList(cpus)
}

// RawServer is a server that answers every path but / (a health check
// that passes) with the raw HTTP/1.1 response answer writes, such as one
// no net/http handler could: a status line megabytes long.
func RawServer(t testing.TB, answer func(w *bufio.Writer, path string)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			return
		}
		conn, bw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		answer(bw.Writer, r.URL.Path)
		bw.Flush()
	}))
	t.Cleanup(srv.Close)
	return srv
}
