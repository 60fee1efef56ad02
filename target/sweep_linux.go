package target

// The sweep of a run's start: it removes the leftovers of runs that are
// verifiably dead (see owner.go), and nothing else, as their journals
// record them (see journal_linux.go). docs/leftovers.md says what is swept
// and how.

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
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchgate/benchgate/internal/linux"
)

const (
	// maxJournal bounds how much of a journal the sweep reads.
	maxJournal = 64 << 20
	// sweepKillWait bounds the wait for killed leftovers to be gone.
	sweepKillWait = 5 * time.Second
	// pruneTimeout bounds the git worktree prune of a swept run's
	// repositories.
	pruneTimeout = 2 * time.Minute
)

// SweepLeftovers removes what dead benchgate runs left behind and says
// on progress what it removed. A run calls it at its start, before it
// starts anything. Failures are warnings: leftovers cost the machine
// resources, not this run its validity.
func SweepLeftovers(progress io.Writer) {
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
	owner Owner
	path  string
	f     *os.File
	left  []leftover // still recorded, in the order added
}

// says writes one line about the run to progress.
func (d *deadRun) says(progress io.Writer, format string, args ...any) {
	fmt.Fprintf(progress, "swept a leftover of benchgate process %d, which is gone: %s\n", d.owner.PID, fmt.Sprintf(format, args...))
}

func (d *deadRun) warn(progress io.Writer, err error) {
	fmt.Fprintf(progress, "warning: sweeping the leftovers of benchgate process %d: %v\n", d.owner.PID, err)
}

// sweepDir sweeps the runs whose journals are in dir and whose owner here
// knows to be gone: their processes first (a cgroup or a worktree in use
// cannot go), then their cgroups, worktrees and directories, then the
// journal.
func sweepDir(here Owner, dir string, progress io.Writer) {
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
func deadJournals(here Owner, dir string) []*deadRun {
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

func openDeadJournal(here Owner, path string) *deadRun {
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
func killLeftovers(here Owner, dead []*deadRun, progress io.Writer) {
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
			if st, err := readProcStat(l.PGID); err == nil && st.StartTime != l.Start {
				continue // the id is another process's now
			}
			groups[l.PGID] = group{l.Start, d}
		}
	}
	self := os.Getpid()
	killed := map[int]uint64{} // pid → start
	for pass := 0; pass < 10; pass++ {
		pids, err := ProcIDs("/proc")
		if err != nil {
			return
		}
		found := false
		for _, pid := range pids {
			if pid == self || pid <= 1 {
				continue
			}
			st, err := readProcStat(pid)
			if err != nil || st.State == 'Z' || st.State == 'X' {
				continue // gone, or dead and waiting for its parent
			}
			if s, ok := killed[pid]; ok && s == st.StartTime {
				continue
			}
			var run *deadRun
			if g, ok := groups[st.PGRP]; ok && st.StartTime >= g.start {
				run = g.run
			} else if tok := envOwner(pid); tok != "" {
				run = owners[tok]
			}
			if run == nil || !killExact(pid, st.StartTime) {
				continue
			}
			killed[pid], found = st.StartTime, true
			run.says(progress, "process %d (%s)", pid, Sanitize(string(st.Comm)))
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
		if v, ok := bytes.CutPrefix(kv, []byte(OwnerEnvVar+"=")); ok {
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
		return err == nil && st.StartTime == start
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
			if err == nil && st.StartTime == start && st.State != 'Z' && st.State != 'X' {
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
	mounts, _ := ReadCgroupMounts()
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
		// Its processes were killed above; this kills what is left.
		if err := RemoveCgroupDir(l.Path, ""); err != nil {
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
	ctx, cancel := context.WithTimeout(context.Background(), pruneTimeout)
	defer cancel()
	for _, repo := range slices.Sorted(maps.Keys(repos)) {
		if fi, err := os.Stat(repo); err != nil || !fi.IsDir() {
			continue
		}
		// Drops the records of worktrees whose directory is gone.
		if _, err := Git(ctx, repo, "worktree", "prune"); err != nil {
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
