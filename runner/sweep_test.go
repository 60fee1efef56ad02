package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchgate/benchgate/scenario"
)

// deadPid is a pid that surely ended: a child we waited for.
func deadPid(t *testing.T) int {
	t.Helper()
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid
}

func mustOwner(t *testing.T) owner {
	t.Helper()
	me, err := thisProcess()
	if err != nil {
		t.Skipf("no owner record here: %v", err)
	}
	return me
}

// running says whether the process that started at start still runs
// (a zombie does not).
func running(pid int, start uint64) bool {
	st, err := readProcStat(pid)
	return err == nil && st.start == start && st.state != 'Z' && st.state != 'X'
}

// sleeper starts sleep in a process group of its own with env (nil: an
// empty environment) and returns its pid and start time; it is killed and
// reaped when the test ends.
func sleeper(t *testing.T, env []string) (int, uint64) {
	t.Helper()
	c := exec.Command("sleep", "300")
	c.Env = env
	if env == nil {
		c.Env = []string{}
	}
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Process.Kill()
		c.Wait()
	})
	st, err := readProcStat(c.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	return c.Process.Pid, st.start
}

func TestOwnerRecord(t *testing.T) {
	me := mustOwner(t)
	if me.pid != os.Getpid() || me.boot == "" || me.pidns == 0 || me.start == 0 {
		t.Fatalf("owner %+v", me)
	}
	ns, _ := os.Readlink("/proc/self/ns/pid")
	if want := "pid:[" + strconv.FormatUint(me.pidns, 10) + "]"; ns != want {
		t.Errorf("pidns %d, /proc/self/ns/pid is %s", me.pidns, ns)
	}
	for _, s := range []string{me.String(), "a/b/c/" + me.String()[strings.IndexByte(me.String(), '/')+1:]} {
		o, ok := parseOwner(s)
		if !ok || o.String() != s {
			t.Errorf("parseOwner(%q) = %+v, %v", s, o, ok)
		}
	}
	for _, s := range []string{"", "host:123", "host:123@0123", "h/boot/x/1/2", "h//1/2/3", "h/b/0/2/3", "h/b/1/0/3", "h/b/1/-2/3"} {
		if o, ok := parseOwner(s); ok {
			t.Errorf("parseOwner(%q) = %+v, want none", s, o)
		}
	}

	zombie := exec.Command("true")
	if err := zombie.Start(); err != nil {
		t.Fatal(err)
	}
	zst, err := readProcStat(zombie.Process.Pid)
	for i := 0; err == nil && zst.state != 'Z' && i < 500; i++ {
		time.Sleep(10 * time.Millisecond)
		zst, err = readProcStat(zombie.Process.Pid)
	}
	defer zombie.Wait()
	if err != nil || zst.state != 'Z' {
		t.Fatalf("the unreaped child is %+v, %v; want a zombie", zst, err)
	}
	livePid, liveStart := sleeper(t, nil)
	gone := deadPid(t)
	with := func(edit func(o *owner)) owner {
		o := me
		edit(&o)
		return o
	}
	for _, c := range []struct {
		name string
		o    owner
		gone bool
	}{
		{"this process", me, false},
		{"a live process", with(func(o *owner) { o.pid, o.start = livePid, liveStart }), false},
		{"a pid that ended", with(func(o *owner) { o.pid = gone }), true},
		{"a zombie", with(func(o *owner) { o.pid, o.start = zombie.Process.Pid, zst.start }), true},
		{"a reused pid", with(func(o *owner) { o.pid, o.start = livePid, liveStart-1 }), true},
		{"another PID namespace", with(func(o *owner) { o.pid, o.pidns = gone, me.pidns+1 }), false},
		{"another boot", with(func(o *owner) { o.pid, o.boot = gone, "other" }), false},
		{"another host name, same kernel", with(func(o *owner) { o.pid, o.host = gone, "elsewhere" }), true},
	} {
		if got := me.knowsGone(c.o); got != c.gone {
			t.Errorf("%s (%s): knowsGone %v, want %v", c.name, c.o, got, c.gone)
		}
	}
	if (owner{}).knowsGone(with(func(o *owner) { o.pid = gone })) {
		t.Error("an observer without a record decided an owner was gone")
	}
}

func TestWithOwnerEnv(t *testing.T) {
	me := mustOwner(t)
	in := []string{"A=1", ownerEnvVar + "=inherited/from/a/dead/run", "B=2"}
	got := withOwnerEnv(in)
	if want := []string{"A=1", "B=2", ownerEnvVar + "=" + me.String()}; !slices.Equal(got, want) {
		t.Errorf("withOwnerEnv = %q, want %q", got, want)
	}
	if in[1] != ownerEnvVar+"=inherited/from/a/dead/run" {
		t.Error("withOwnerEnv changed its argument")
	}
}

// TestStateDirRefusesOthers: a journal names what a sweep kills and
// removes, so the state directory must be this user's alone.
func TestStateDirRefusesOthers(t *testing.T) {
	root := t.TempDir()
	fresh := filepath.Join(root, "fresh")
	t.Setenv(stateDirEnv, fresh)
	if dir, err := stateDir(); err != nil || dir != fresh {
		t.Fatalf("stateDir = %q, %v", dir, err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o700 {
		t.Errorf("made with mode %v", fi.Mode())
	}
	open := filepath.Join(root, "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	link := filepath.Join(root, "link")
	os.Symlink(fresh, link)
	for _, dir := range []string{open, link} {
		t.Setenv(stateDirEnv, dir)
		if _, err := stateDir(); err == nil {
			t.Errorf("stateDir accepted %s", dir)
		} else {
			t.Log(err)
		}
	}
}

// writeJournal writes a journal as a run of owner o would have.
func writeJournal(t *testing.T, dir string, o owner, lines ...journalLine) string {
	t.Helper()
	var b strings.Builder
	for _, l := range append([]journalLine{{Owner: o.String()}}, lines...) {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	b.WriteString(`{"add":{"kind":"dir","path":"/torn`) // a crash mid-line
	path := filepath.Join(dir, fmt.Sprintf("%d-%d-%d.jsonl", o.pidns, o.pid, o.start))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func markedDir(t *testing.T, o owner) string {
	t.Helper()
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, markerName), []byte(o.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestSweepKillsAndRemovesOnlyTheDead writes journals as runs would have
// left them, around real processes and directories: the sweep kills and
// removes what a dead run recorded and nothing of a live run, of a run in
// another PID namespace, of a group whose id was reused, or a directory
// without the dead owner's marker, and says exactly what it removed.
func TestSweepKillsAndRemovesOnlyTheDead(t *testing.T) {
	me := mustOwner(t)
	state := t.TempDir()
	dead := me
	dead.pid, dead.start = deadPid(t), 1
	otherNS := dead
	otherNS.pidns++

	grouped, groupedStart := sleeper(t, nil) // its environment scrubbed
	escaped, escapedStart := sleeper(t, []string{ownerEnvVar + "=" + dead.String()})
	reused, reusedStart := sleeper(t, nil)
	dropped, droppedStart := sleeper(t, nil)
	foreign, foreignStart := sleeper(t, nil)
	live, liveStart := sleeper(t, nil)
	liveMarked, liveMarkedStart := sleeper(t, []string{ownerEnvVar + "=" + me.String()})
	foreignMarked, foreignMarkedStart := sleeper(t, []string{ownerEnvVar + "=" + otherNS.String()})
	liveOwner := me
	liveOwner.pid, liveOwner.start = live, liveStart

	ours := markedDir(t, dead)
	others := markedDir(t, otherNS)
	unmarked := t.TempDir()
	notCgroup := filepath.Join(t.TempDir(), "benchgate-candidate-1-1")
	os.Mkdir(notCgroup, 0o755)

	add := func(l leftover) journalLine { return journalLine{Add: &l} }
	group := func(pid int, start uint64) leftover { return leftover{Kind: leftGroup, PGID: pid, Start: start} }
	deadJournal := writeJournal(t, state, dead,
		add(group(grouped, groupedStart)),
		// The id was reused: its leader is a later process.
		add(group(reused, reusedStart-1)),
		add(group(dropped, droppedStart)),
		journalLine{Del: &leftover{Kind: leftGroup, PGID: dropped}},
		add(leftover{Kind: leftDir, Path: ours}),
		add(leftover{Kind: leftDir, Path: others}),
		add(leftover{Kind: leftDir, Path: unmarked}),
		add(leftover{Kind: leftCgroup, Path: notCgroup}),
	)
	keptJournals := []string{
		writeJournal(t, state, otherNS, add(group(foreign, foreignStart))),
		writeJournal(t, state, liveOwner, add(group(live, liveStart))),
	}

	var progress syncBuffer
	sweepDir(me, state, &progress)
	t.Logf("progress:\n%s", progress.String())

	for _, p := range []struct {
		name  string
		pid   int
		start uint64
		kept  bool
	}{
		{"a recorded group's", grouped, groupedStart, false},
		{"one marked with the dead owner", escaped, escapedStart, false},
		{"a reused group id's", reused, reusedStart, true},
		{"a group removed from the journal", dropped, droppedStart, true},
		{"another namespace's run's", foreign, foreignStart, true},
		{"a live run's", live, liveStart, true},
		{"one marked with a live owner", liveMarked, liveMarkedStart, true},
		{"one marked with an owner of another namespace", foreignMarked, foreignMarkedStart, true},
	} {
		if got := running(p.pid, p.start); got != p.kept {
			t.Errorf("process %d, %s: running %v, want %v", p.pid, p.name, got, p.kept)
		}
	}
	for _, d := range []struct {
		path string
		kept bool
	}{{ours, false}, {others, true}, {unmarked, true}, {notCgroup, true}} {
		if _, err := os.Stat(d.path); (err == nil) != d.kept {
			t.Errorf("%s: stat %v, want kept %v", d.path, err, d.kept)
		}
	}
	if _, err := os.Stat(deadJournal); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dead run's journal is still there (%v)", err)
	}
	for _, j := range keptJournals {
		if _, err := os.Stat(j); err != nil {
			t.Errorf("journal %s: %v", j, err)
		}
	}
	prefix := fmt.Sprintf("swept a leftover of benchgate process %d, which is gone: ", dead.pid)
	want := []string{
		prefix + fmt.Sprintf("process %d (sleep)", grouped),
		prefix + fmt.Sprintf("process %d (sleep)", escaped),
		prefix + "directory " + ours,
	}
	got := strings.Split(strings.TrimSpace(progress.String()), "\n")
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("progress:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The child of TestSweepAfterSIGKILL: a run that would last for hours,
// which its parent kills mid-run.
func TestSweepChild(t *testing.T) {
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
		cand := serverSpec("candidate")
		cand.Command = append([]string{"sh", "-c", `env -i ` + sleep + ` 300 & echo grouped $!; setsid ` + sleep + ` 300 & echo escaped $!; exec "$@"`, "sh"}, cand.Command...)
		sc := testScenario(serverSpec("baseline"), cand)
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
	me := mustOwner(t)
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
				stateDirEnv+"="+state, "TMPDIR="+tmp)
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
				st, err := readProcStat(pid)
				if err != nil || !running(pid, st.start) {
					t.Fatalf("process %d: not left running (%+v, %v)", pid, st, err)
				}
				// Should the sweep fail, the test leaves nothing.
				t.Cleanup(func() { killExact(pid, st.start) })
				return proc{pid, st.start}
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
					t.Cleanup(func() { (&targetCgroup{dirs: []string{dir}}).remove() })
					dirs = append(dirs, dir)
					said = append(said, "cgroup "+dir+"\n")
				}
			}
			for _, p := range procs {
				said = append(said, fmt.Sprintf("process %d (sleep)\n", p.pid))
			}

			// The next run's sweep, as Run and RunGoBench begin.
			t.Setenv(stateDirEnv, state)
			var progress syncBuffer
			sweepLeftovers(&progress)
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
			var again syncBuffer
			sweepDir(me, state, &again)
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
	mounts, err := readCgroupMounts()
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
		dir, err := locateCgroup(mounts, controller, parts[2])
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
