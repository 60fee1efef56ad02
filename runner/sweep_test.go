package runner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchgate/benchgate/internal/linux"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/targettest"
)

// procStat reads /proc/<pid>/stat.
func procStat(pid int) (linux.ProcStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return linux.ProcStat{}, err
	}
	return linux.ParseProcStat(b)
}

// running says whether the process that started at start still runs
// (a zombie does not).
func running(pid int, start uint64) bool {
	st, err := procStat(pid)
	return err == nil && st.StartTime == start && st.State != 'Z' && st.State != 'X'
}

// The child of TestSweepAfterSIGKILL: a run that would last for hours,
// which its parent kills mid-run.
func TestSweepChild(t *testing.T) {
	t.Parallel()
	mode := os.Getenv("BENCHGATE_SWEEP_CHILD")
	if mode == "" {
		t.Skip("the child of TestSweepAfterSIGKILL")
	}
	out := os.Getenv("BENCHGATE_SWEEP_OUT")
	var err error
	switch mode {
	case "target", "cgroup":
		sleep, lerr := exec.LookPath("sleep")
		if lerr != nil {
			t.Fatal(lerr)
		}
		// A background child in the target's group whose environment
		// is scrubbed, and one that left the group; both print their pid.
		cand := targettest.ServerSpec("candidate")
		cand.Command = append([]string{"sh", "-c", `env -i ` + sleep + ` 300 & echo grouped $!; setsid ` + sleep + ` 300 & echo escaped $!; exec "$@"`, "sh"}, cand.Command...)
		sc := testScenario(targettest.ServerSpec("baseline"), cand)
		sc.Load.Repetitions = 10000
		if mode == "cgroup" {
			sc.PinSets = []scenario.Pins{{Name: "memory=256MiB", Memory: 256 << 20, MemoryText: "256MiB"}}
		}
		_, err = Run(context.Background(), sc, Options{OutDir: out, Progress: os.Stdout, source: fixedSource})
	case "gobench":
		module := os.Getenv("BENCHGATE_SWEEP_MODULE")
		sc := goBenchScenario(module, scenario.Target{Ref: "HEAD", Shown: "HEAD"}, dirTarget(module), 10000)
		sc.GoBench.CPU = nil
		_, err = RunGoBench(context.Background(), sc, Options{OutDir: out, Progress: os.Stdout})
	}
	t.Fatalf("the run ended (%v): it should have been killed", err)
}

// slowModule is a repository holding a module whose one benchmark starts
// a background sleep, writes its pid to $SLOW_STARTED and sleeps.
func slowModule(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/slow\n\ngo 1.22\n",
		"slow_test.go": `package slow

import (
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

func BenchmarkSlow(b *testing.B) {
	c := exec.Command("sleep", "300")
	if err := c.Start(); err != nil {
		b.Fatal(err)
	}
	os.WriteFile(os.Getenv("SLOW_STARTED"), []byte(strconv.Itoa(c.Process.Pid)), 0o644)
	time.Sleep(time.Hour)
}
`,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(repo, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitRun(t, repo, "init", "-q", "-b", "main")
	gitRun(t, repo, "add", ".")
	gitRun(t, repo, "commit", "-q", "-m", "slow")
	return repo
}

// TestSweepAfterSIGKILL runs benchgate's runner in a child process (this
// test binary, re-executed), SIGKILLs it mid-run, finds what it left (a
// target's background child in its group and one that left it with
// setsid; the target's cgroup; a gobench worktree, its test binaries and
// a benchmark's child), and checks that the next run's sweep removes all
// of it and says so.
func TestSweepAfterSIGKILL(t *testing.T) {
	if _, err := target.ThisProcess(); err != nil {
		t.Skipf("no owner record here: %v", err)
	}
	for _, mode := range []string{"target", "cgroup", "gobench"} {
		t.Run(mode, func(t *testing.T) {
			root := t.TempDir()
			state, out, tmp := filepath.Join(root, "state"), filepath.Join(root, "out"), filepath.Join(root, "tmp")
			os.Mkdir(tmp, 0o755)
			started := filepath.Join(root, "started")
			var module string
			if mode == "gobench" {
				module = slowModule(t)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestSweepChild$", "-test.v")
			cmd.Env = append(os.Environ(), "BENCHGATE_SWEEP_CHILD="+mode, "BENCHGATE_SWEEP_OUT="+out,
				"BENCHGATE_SWEEP_MODULE="+module, "SLOW_STARTED="+started,
				target.StateDirEnv+"="+state, "TMPDIR="+tmp)
			cmd.WaitDelay = 5 * time.Second
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = cmd.Stdout
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			killed := false
			t.Cleanup(func() {
				if !killed {
					cmd.Process.Kill()
					cmd.Wait()
				}
			})
			// Mid-run: a rung was measured, or the benchmark runs.
			ready := make(chan struct{})
			var lines syncBuffer
			go func() {
				sc := bufio.NewScanner(stdout)
				once := false
				for sc.Scan() {
					lines.Write([]byte(sc.Text() + "\n"))
					if !once && mode != "gobench" && strings.Contains(sc.Text(), "(rung 1/") {
						once = true
						close(ready)
					}
				}
			}()
			deadline := time.After(3 * time.Minute)
			if mode == "gobench" {
				tick := time.NewTicker(20 * time.Millisecond)
				defer tick.Stop()
				for b, _ := os.ReadFile(started); len(b) == 0; b, _ = os.ReadFile(started) {
					select {
					case <-deadline:
						t.Fatalf("the benchmark did not start; the child said:\n%s", lines.String())
					case <-tick.C:
					}
				}
			} else {
				select {
				case <-ready:
				case <-deadline:
					t.Fatalf("no rung was measured; the child said:\n%s", lines.String())
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			cmd.Wait()
			killed = true
			t.Logf("the child said:\n%s", lines.String())

			type proc struct {
				pid   int
				start uint64
			}
			var procs []proc
			var dirs []string // must be gone after the sweep
			var said []string // must be in the progress
			pidOf := func(s string) proc {
				pid, _ := strconv.Atoi(s)
				st, err := procStat(pid)
				start := st.StartTime
				if err != nil || !running(pid, start) {
					t.Fatalf("process %d: not left running (%+v, %v)", pid, st, err)
				}
				// Should the sweep fail, the test leaves nothing.
				t.Cleanup(func() {
					if running(pid, start) {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				})
				return proc{pid, start}
			}
			if mode == "gobench" {
				b, _ := os.ReadFile(started)
				procs = append(procs, pidOf(string(b)))
				wts := worktrees(t, module)
				if len(wts) != 2 {
					t.Fatalf("worktrees %q: the ref's is not left", wts)
				}
				bins, _ := filepath.Glob(filepath.Join(out, ".gobench-bin-*"))
				if len(bins) != 1 {
					t.Fatalf("test binaries left: %q", bins)
				}
				wt, _ := filepath.EvalSymlinks(wts[1])
				dirs = append(dirs, wt, filepath.Dir(wt), bins[0])
				said = append(said, "worktree "+wt+" of ", "directory "+filepath.Dir(wt)+"\n", "directory "+bins[0]+"\n")
				t.Cleanup(func() { exec.Command("git", "-C", module, "worktree", "prune").Run() })
			} else {
				b, err := os.ReadFile(filepath.Join(out, "candidate.log"))
				if err != nil {
					t.Fatal(err)
				}
				for _, name := range []string{"grouped", "escaped"} {
					m := regexp.MustCompile(`(?m)^` + name + ` (\d+)$`).FindSubmatch(b)
					if m == nil {
						t.Fatalf("candidate.log has no %q line:\n%s", name, b)
					}
					procs = append(procs, pidOf(string(m[1])))
				}
			}
			if mode == "cgroup" {
				// The candidate's groups, where its background child is,
				// and beside them the baseline's (its server is gone).
				var cgs []string
				for _, dir := range benchgateCgroupsOf(t, procs[0].pid) {
					if !strings.HasPrefix(filepath.Base(dir), fmt.Sprintf("benchgate-candidate-%d-", cmd.Process.Pid)) {
						t.Fatalf("the target's background child is in cgroup %s, not one made for it", dir)
					}
					cgs = append(cgs, dir)
					base, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), fmt.Sprintf("benchgate-baseline-%d-*", cmd.Process.Pid)))
					if len(base) != 1 {
						t.Fatalf("the baseline's cgroup beside %s: %q", dir, base)
					}
					cgs = append(cgs, base[0])
				}
				for _, dir := range cgs {
					t.Cleanup(func() { target.RemoveCgroupDir(dir, "") })
					dirs = append(dirs, dir)
					said = append(said, "cgroup "+dir+"\n")
				}
			}
			for _, p := range procs {
				said = append(said, fmt.Sprintf("process %d (sleep)\n", p.pid))
			}

			// The next run's sweep, as Run and RunGoBench begin.
			t.Setenv(target.StateDirEnv, state)
			var progress strings.Builder
			target.SweepLeftovers(&progress)
			t.Logf("sweep:\n%s", progress.String())

			for _, p := range procs {
				if running(p.pid, p.start) {
					t.Errorf("process %d survived the sweep", p.pid)
				}
			}
			for _, d := range dirs {
				if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("%s survived the sweep (%v)", d, err)
				}
			}
			if mode == "gobench" {
				if wts := worktrees(t, module); len(wts) != 1 {
					t.Errorf("git still records worktrees %q", wts)
				}
			}
			prefix := fmt.Sprintf("swept a leftover of benchgate process %d, which is gone: ", cmd.Process.Pid)
			for _, s := range said {
				if !strings.Contains(progress.String(), prefix+s) {
					t.Errorf("the sweep did not say %q", prefix+s)
				}
			}
			if left, _ := filepath.Glob(filepath.Join(state, "*.jsonl")); len(left) != 0 {
				t.Errorf("journals left: %q", left)
			}
			// A second sweep finds nothing.
			var again strings.Builder
			target.SweepLeftovers(&again)
			if again.String() != "" {
				t.Errorf("second sweep: %q", again.String())
			}
		})
	}
}

// benchgateCgroupsOf are the directories of pid's groups named
// benchgate-*, in every hierarchy; it skips the test when there are none
// (no writable cgroup here).
func benchgateCgroupsOf(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := target.ReadCgroupMounts()
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 || !strings.HasPrefix(filepath.Base(parts[2]), "benchgate-") {
			continue
		}
		controller := ""
		if parts[0] != "0" {
			controller = strings.Split(parts[1], ",")[0]
		}
		dir, err := target.LocateCgroup(mounts, controller, parts[2])
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	if len(dirs) == 0 {
		t.Skipf("the target got no cgroup here:\n%s", b)
	}
	return dirs
}
