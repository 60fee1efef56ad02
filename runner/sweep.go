package runner

// Leftovers of a killed benchgate.
//
// A benchgate that is SIGKILLed (a CI job cancelled, a runner out of
// memory) cannot clean up. Pdeathsig ends its direct children only: what
// they started in their process groups, the cgroups it made, the gobench
// worktrees and test binaries all stay. So each run records, while it
// runs, what it leaves if it dies, and every run sweeps at its start the
// leftovers of runs that are verifiably dead, and nothing else.
//
// An owner is one benchgate process, named so that another can tell later
// whether it still runs: its boot ID (the kernel instance), the inode of its
// PID namespace, its pid and the pid's start time. It is dead only when it
// is in the observer's boot and PID namespace and its pid is gone, a zombie,
// or a later process's (another start time). An owner that cannot be
// checked so (another host, another namespace, a record of an older
// format) is alive: a concurrent run in a container sharing the host name
// and the docker engine, whose pid says ESRCH here, is never swept.
//
// The record is a journal per process in the state directory, one JSON
// line per leftover added or removed, held under an flock(2) while the
// process lives: the kernel drops the lock when it dies, which also keeps
// two sweepers from sweeping one run at once. Directories it makes carry a
// marker file naming the owner, and the sweep removes a directory only
// when the marker matches the journal's owner. The processes benchgate
// starts carry the owner in their environment (ownerEnvVar): a process that
// left its group with setsid is found by it, as long as its run's journal
// is in the state directory.
//
// The owner is the process itself, so the journal is one per process (a
// package variable), not one per Run: several Runs of one process (tests)
// share it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/internal/linux"
)

const (
	// ownerEnvVar carries the owner into the environment of every build,
	// target, pre-flight command and test binary benchgate starts.
	ownerEnvVar = "BENCHGATE_OWNER"
	// stateDirEnv overrides the state directory.
	stateDirEnv = "BENCHGATE_STATE_DIR"
	// markerName is the owner's marker file in a directory benchgate made.
	markerName = ".benchgate-owner"
	// maxJournal bounds how much of a journal the sweep reads.
	maxJournal = 64 << 20
	// sweepKillWait bounds the wait for killed leftovers to be gone.
	sweepKillWait = 5 * time.Second
)

// owner identifies a benchgate process across processes, namespaces and
// reboots; see the file comment.
type owner struct {
	host  string // for people reading labels; not part of the decision
	boot  string // /proc/sys/kernel/random/boot_id
	pidns uint64 // inode of /proc/self/ns/pid
	pid   int
	start uint64 // field 22 of /proc/PID/stat: clock ticks after boot
}

// String is "host/boot/pidns/pid/start", the form of the docker owner
// label, the journal's header and the marker files.
func (o owner) String() string {
	return fmt.Sprintf("%s/%s/%d/%d/%d", o.host, o.boot, o.pidns, o.pid, o.start)
}

// parseOwner reads String's form; ok is false for anything else (an older
// label's "host:pid" among them), which makes an owner that cannot be
// checked.
func parseOwner(s string) (o owner, ok bool) {
	parts := strings.Split(s, "/")
	n := len(parts)
	if n < 5 {
		return owner{}, false
	}
	o.host = strings.Join(parts[:n-4], "/")
	o.boot = parts[n-4]
	ns, err1 := strconv.ParseUint(parts[n-3], 10, 64)
	pid, err2 := strconv.Atoi(parts[n-2])
	start, err3 := strconv.ParseUint(parts[n-1], 10, 64)
	if o.boot == "" || err1 != nil || err2 != nil || err3 != nil || ns == 0 || pid <= 0 {
		return owner{}, false
	}
	o.pidns, o.pid, o.start = ns, pid, start
	return o, true
}

// thisProcess is the owner record of this process, or why there is none;
// without one nothing is recorded and nothing is swept.
var thisProcess = sync.OnceValues(readOwner)

func readOwner() (owner, error) {
	host, _ := os.Hostname()
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return owner{}, err
	}
	boot := strings.TrimSpace(string(b))
	ns, err := pidNamespace("/proc/self/ns/pid")
	if err != nil {
		return owner{}, err
	}
	// A /proc of another PID namespace would answer for other processes
	// than the ones our pids name.
	if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(os.Getpid()) {
		return owner{}, fmt.Errorf("/proc is not of benchgate's PID namespace (/proc/self is %q, %v)", self, err)
	}
	st, err := readProcStat(os.Getpid())
	if err != nil {
		return owner{}, err
	}
	if boot == "" || strings.Contains(boot, "/") {
		return owner{}, fmt.Errorf("boot id %q", boot)
	}
	return owner{host: host, boot: boot, pidns: ns, pid: os.Getpid(), start: st.start}, nil
}

// pidNamespace reads the inode of a namespace link, "pid:[4026531836]".
func pidNamespace(link string) (uint64, error) {
	s, err := os.Readlink(link)
	if err != nil {
		return 0, err
	}
	in, ok := strings.CutPrefix(s, "pid:[")
	in, ok2 := strings.CutSuffix(in, "]")
	n, err := strconv.ParseUint(in, 10, 64)
	if !ok || !ok2 || err != nil || n == 0 {
		return 0, fmt.Errorf("%s: unexpected %q", link, s)
	}
	return n, nil
}

// knowsGone says whether here, the observer, can verify that o no longer
// runs; see the file comment. Here's own record is never gone.
func (here owner) knowsGone(o owner) bool {
	if here.boot == "" || here.pidns == 0 || o.boot != here.boot || o.pidns != here.pidns || o.pid <= 0 {
		return false
	}
	if o.pid == here.pid && o.start == here.start {
		return false
	}
	st, err := readProcStat(o.pid)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false // EPERM and the like: something is there
	}
	return st.start != o.start || st.state == 'Z' || st.state == 'X'
}

// procInfo is what the sweep reads of /proc/PID/stat.
type procInfo struct {
	comm  string
	state byte
	pgrp  int
	start uint64
}

func readProcStat(pid int) (procInfo, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, err
	}
	// The command name is in parentheses and may hold anything, ')'
	// and spaces included: the fields start after the last ')'.
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procInfo{}, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, b)
	}
	f := strings.Fields(string(b[end+1:]))
	// f[0] is field 3 (state), f[2] field 5 (pgrp), f[19] field 22.
	if len(f) < 20 || len(f[0]) != 1 {
		return procInfo{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	pgrp, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return procInfo{}, fmt.Errorf("/proc/%d/stat: unexpected %q", pid, b)
	}
	return procInfo{comm: string(b[open+1 : end]), state: f[0][0], pgrp: pgrp, start: start}, nil
}

// withOwnerEnv is env (nil: benchgate's own) with ownerEnvVar set to this
// process, replacing one it inherited; a new slice.
func withOwnerEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, ownerEnvVar+"=") {
			out = append(out, kv)
		}
	}
	if me, err := thisProcess(); err == nil {
		out = append(out, ownerEnvVar+"="+me.String())
	}
	return out
}

// stateDir is $BENCHGATE_STATE_DIR, else benchgate-<uid> in the temporary
// directory, made if need be. It must be a directory of this user's that
// nobody else can write: a journal there names what a sweep kills and
// removes.
func stateDir() (string, error) {
	dir := os.Getenv(stateDirEnv)
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "benchgate-"+strconv.Itoa(os.Getuid()))
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("state directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("state directory: %w", err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || st.Uid != uint32(os.Getuid()) || fi.Mode().Perm()&0o022 != 0 {
		return "", fmt.Errorf("state directory %s: not a directory of uid %d that only it can write (%v)", dir, os.Getuid(), fi.Mode())
	}
	return dir, nil
}

// Kinds of leftover.
const (
	leftGroup    = "group"    // a process group: PGID, and its leader's Start
	leftCgroup   = "cgroup"   // a cgroup directory made for a target: Path
	leftWorktree = "worktree" // a git worktree: Path, of the repository Repo
	leftDir      = "dir"      // a directory holding markerName: Path
)

// leftover is one thing a run would leave if it died now.
type leftover struct {
	Kind  string `json:"kind"`
	Path  string `json:"path,omitempty"`
	Repo  string `json:"repo,omitempty"`
	PGID  int    `json:"pgid,omitempty"`
	Start uint64 `json:"start,omitempty"`
}

func (l leftover) key() string {
	return l.Kind + "\x00" + l.Path + "\x00" + strconv.Itoa(l.PGID)
}

// journalLine is one line of a journal: the header names the owner, the
// others add or remove a leftover.
type journalLine struct {
	Owner string    `json:"owner,omitempty"`
	Add   *leftover `json:"add,omitempty"`
	Del   *leftover `json:"del,omitempty"`
}

// journal is this process's record, opened at the first leftover and kept
// open (and locked) until the process ends; the sweep of a later run
// removes it.
type journal struct {
	mu sync.Mutex
	f  *os.File
}

var thisJournal journal

// track records l until the returned function is called; a record that
// cannot be made is skipped (the sweep warns about the state directory).
func track(l leftover) (untrack func()) {
	if !thisJournal.write(journalLine{Add: &l}) {
		return func() {}
	}
	var once sync.Once
	return func() { once.Do(func() { thisJournal.write(journalLine{Del: &l}) }) }
}

// trackGroup records the process group led by the just-started pgid.
func trackGroup(pgid int) (untrack func()) {
	st, err := readProcStat(pgid)
	if err != nil {
		return func() {}
	}
	return track(leftover{Kind: leftGroup, PGID: pgid, Start: st.start})
}

// markDir writes the owner's marker into dir, which benchgate just made,
// and records dir; untrack once it is removed.
func markDir(dir string) (untrack func()) {
	me, err := thisProcess()
	if err != nil || os.WriteFile(filepath.Join(dir, markerName), []byte(me.String()), 0o644) != nil {
		return func() {}
	}
	return track(leftover{Kind: leftDir, Path: dir})
}

func (j *journal) write(line journalLine) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		f, err := openJournal()
		if err != nil {
			return false
		}
		j.f = f
	}
	b, _ := json.Marshal(line)
	// One write per line, appended: a crash tears at most the last one.
	_, err := j.f.Write(append(b, '\n'))
	return err == nil
}

func openJournal() (*os.File, error) {
	me, err := thisProcess()
	if err != nil {
		return nil, err
	}
	dir, err := stateDir()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, fmt.Sprintf("%d-%d-%d.jsonl", me.pidns, me.pid, me.start))
	// O_CLOEXEC (as os.OpenFile always sets): a child holding the file
	// would hold the lock after benchgate died.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	b, _ := json.Marshal(journalLine{Owner: me.String()})
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sweepLeftovers removes what dead benchgate runs left behind (see the
// file comment) and says on progress what it removed. Run and RunGoBench
// call it at their start, before anything is started. Failures are
// warnings: leftovers cost the machine resources, not this run its
// validity.
func sweepLeftovers(progress io.Writer) {
	me, err := thisProcess()
	if err != nil {
		fmt.Fprintf(progress, "warning: the leftovers of killed runs are neither recorded nor swept: %v\n", err)
		return
	}
	dir, err := stateDir()
	if err != nil {
		fmt.Fprintf(progress, "warning: the leftovers of killed runs are neither recorded nor swept: %v\n", err)
		return
	}
	sweepDir(me, dir, progress)
}

// deadRun is the journal of a dead owner, locked by the sweep.
type deadRun struct {
	owner owner
	path  string
	f     *os.File
	left  []leftover // still recorded, in the order added
}

// says writes one line about the run to progress.
func (d *deadRun) says(progress io.Writer, format string, args ...any) {
	fmt.Fprintf(progress, "swept a leftover of benchgate process %d, which is gone: %s\n", d.owner.pid, fmt.Sprintf(format, args...))
}

func (d *deadRun) warn(progress io.Writer, err error) {
	fmt.Fprintf(progress, "warning: sweeping the leftovers of benchgate process %d: %v\n", d.owner.pid, err)
}

// sweepDir sweeps the runs whose journals are in dir and whose owner here
// knows to be gone: their processes first (a cgroup or a worktree in use
// cannot go), then their cgroups, worktrees and directories, then the
// journal.
func sweepDir(here owner, dir string, progress io.Writer) {
	dead := deadJournals(here, dir)
	if len(dead) == 0 {
		return
	}
	killLeftovers(here, dead, progress)
	for _, d := range dead {
		d.removeFiles(progress)
		if err := os.Remove(d.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			d.warn(progress, err)
		}
		d.f.Close()
	}
}

// deadJournals opens and locks the journals in dir whose owner is gone.
// A journal another sweep holds, or one removed meanwhile, is skipped.
func deadJournals(here owner, dir string) []*deadRun {
	names, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil
	}
	var dead []*deadRun
	for _, path := range names {
		d := openDeadJournal(here, path)
		if d != nil {
			dead = append(dead, d)
		}
	}
	return dead
}

func openDeadJournal(here owner, path string) *deadRun {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	keep := false
	defer func() {
		if !keep {
			f.Close()
		}
	}()
	r := bufio.NewReader(io.LimitReader(f, maxJournal))
	first, err := r.ReadBytes('\n')
	if err != nil {
		return nil
	}
	var head journalLine
	if json.Unmarshal(first, &head) != nil {
		return nil
	}
	o, ok := parseOwner(head.Owner)
	if !ok || !here.knowsGone(o) {
		return nil
	}
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return nil // a live owner after all, or another sweep
	}
	// Swept and removed by another sweep between our open and our lock.
	var a, b unix.Stat_t
	if unix.Fstat(int(f.Fd()), &a) != nil || unix.Stat(path, &b) != nil || a.Ino != b.Ino || a.Dev != b.Dev {
		return nil
	}
	d := &deadRun{owner: o, path: path, f: f}
	live := map[string]int{} // key → index in d.left
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // the end, or a line torn by the crash
		}
		var jl journalLine
		if json.Unmarshal(line, &jl) != nil {
			continue
		}
		switch {
		case jl.Add != nil:
			if _, ok := live[jl.Add.key()]; !ok {
				live[jl.Add.key()] = len(d.left)
				d.left = append(d.left, *jl.Add)
			}
		case jl.Del != nil:
			if i, ok := live[jl.Del.key()]; ok {
				d.left[i].Kind = "" // removed
				delete(live, jl.Del.key())
			}
		}
	}
	d.left = slices.DeleteFunc(d.left, func(l leftover) bool { return l.Kind == "" })
	keep = true
	return d
}

// killLeftovers SIGKILLs the processes of the dead runs: those in a
// process group a run recorded (unless the group's id may have been
// reused: its leader's pid now runs something started after it), and
// those whose environment names a dead run's owner (they may have left
// the group with setsid). It passes over /proc until a pass finds nothing
// new, since a process may fork while it is being killed, and waits,
// bounded, until the killed are gone.
func killLeftovers(here owner, dead []*deadRun, progress io.Writer) {
	type group struct {
		start uint64
		run   *deadRun
	}
	groups := map[int]group{}
	owners := map[string]*deadRun{}
	for _, d := range dead {
		owners[d.owner.String()] = d
		for _, l := range d.left {
			if l.Kind != leftGroup || l.PGID <= 1 {
				continue
			}
			if st, err := readProcStat(l.PGID); err == nil && st.start != l.Start {
				continue // the id is another process's now
			}
			groups[l.PGID] = group{l.Start, d}
		}
	}
	self := os.Getpid()
	killed := map[int]uint64{} // pid → start
	for pass := 0; pass < 10; pass++ {
		pids, err := readDirNames("/proc")
		if err != nil {
			return
		}
		found := false
		for _, name := range pids {
			pid, err := strconv.Atoi(name)
			if err != nil || pid == self || pid <= 1 {
				continue
			}
			st, err := readProcStat(pid)
			if err != nil || st.state == 'Z' || st.state == 'X' {
				continue // gone, or dead and waiting for its parent
			}
			if s, ok := killed[pid]; ok && s == st.start {
				continue
			}
			var run *deadRun
			if g, ok := groups[st.pgrp]; ok && st.start >= g.start {
				run = g.run
			} else if tok := envOwner(pid); tok != "" {
				run = owners[tok]
			}
			if run == nil || !killExact(pid, st.start) {
				continue
			}
			killed[pid], found = st.start, true
			run.says(progress, "process %d (%s)", pid, sanitize(st.comm))
		}
		if !found {
			break
		}
		waitKilled(killed)
	}
}

// envOwner is the ownerEnvVar of pid's environment, "" when it has none
// or it cannot be read.
func envOwner(pid int) string {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(ownerEnvVar+"=")); ok {
			return string(v)
		}
	}
	return ""
}

// killExact SIGKILLs pid if it is still the process that started at
// start: through a pidfd, which cannot reach a process that reused the
// pid after the check; by kill(2) after the check where pidfds are
// missing.
func killExact(pid int, start uint64) bool {
	same := func() bool {
		st, err := readProcStat(pid)
		return err == nil && st.start == start
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		if errors.Is(err, unix.ESRCH) || !same() {
			return false
		}
		return unix.Kill(pid, unix.SIGKILL) == nil
	}
	defer unix.Close(fd)
	return same() && unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0) == nil
}

// waitKilled waits, for at most sweepKillWait, until every killed process
// is gone or a zombie.
func waitKilled(killed map[int]uint64) {
	deadline := time.Now().Add(sweepKillWait)
	for time.Now().Before(deadline) {
		left := false
		for pid, start := range killed {
			st, err := readProcStat(pid)
			if err == nil && st.start == start && st.state != 'Z' && st.state != 'X' {
				left = true
				break
			}
		}
		if !left {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// removeFiles removes the run's cgroups, worktrees and marked directories,
// and prunes git's records of the worktrees. A recorded path is only
// touched when it is what benchgate makes: a cgroup named benchgate-* on a
// cgroup file system, a directory holding the owner's marker (a worktree:
// in such a directory).
func (d *deadRun) removeFiles(progress io.Writer) {
	mounts, _ := readCgroupMounts()
	for _, l := range d.left {
		if l.Kind != leftCgroup {
			continue
		}
		if !ourCgroup(l.Path, mounts) {
			continue
		}
		if _, err := os.Lstat(l.Path); err != nil {
			continue
		}
		// Its processes were killed above; remove kills what is left.
		if err := (&targetCgroup{dirs: []string{l.Path}}).remove(); err != nil {
			d.warn(progress, fmt.Errorf("cgroup %s: %w", l.Path, err))
			continue
		}
		d.says(progress, "cgroup %s", l.Path)
	}
	repos := map[string]bool{}
	for _, l := range d.left {
		if l.Kind != leftWorktree {
			continue
		}
		if l.Repo != "" {
			repos[l.Repo] = true
		}
		if !d.marked(filepath.Dir(l.Path)) {
			continue
		}
		if _, err := os.Lstat(l.Path); err != nil {
			continue
		}
		if err := os.RemoveAll(l.Path); err != nil {
			d.warn(progress, err)
			continue
		}
		d.says(progress, "worktree %s of %s", l.Path, l.Repo)
	}
	for _, l := range slices.Backward(d.left) {
		if l.Kind != leftDir || !d.marked(l.Path) {
			continue
		}
		if err := os.RemoveAll(l.Path); err != nil {
			d.warn(progress, err)
			continue
		}
		d.says(progress, "directory %s", l.Path)
	}
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	for _, repo := range slices.Sorted(maps.Keys(repos)) {
		if fi, err := os.Stat(repo); err != nil || !fi.IsDir() {
			continue
		}
		// Drops the records of worktrees whose directory is gone.
		if _, err := git(ctx, repo, "worktree", "prune"); err != nil {
			d.warn(progress, fmt.Errorf("git worktree prune in %s: %w", repo, err))
		}
	}
}

// marked says whether dir is a directory (not a symlink) holding the
// run's owner marker.
func (d *deadRun) marked(dir string) bool {
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return false
	}
	p := filepath.Join(dir, markerName)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() || fi.Size() > 4096 {
		return false
	}
	b, err := os.ReadFile(p)
	return err == nil && string(b) == d.owner.String()
}

// ourCgroup says whether path is a cgroup benchgate makes: a directory
// named benchgate-* on one of the cgroup file systems.
func ourCgroup(path string, mounts []linux.CgroupMount) bool {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path || !strings.HasPrefix(filepath.Base(path), "benchgate-") {
		return false
	}
	for _, m := range mounts {
		if strings.HasPrefix(path, m.Point+"/") {
			fi, err := os.Lstat(path)
			return err == nil && fi.IsDir()
		}
	}
	return false
}
