package target

// Each run records, while it runs, what it leaves if it dies: a journal
// per process in the state directory, one JSON line per leftover added or
// removed, held under an flock(2) while the process lives. The kernel
// drops the lock when it dies, which also keeps two sweepers from
// sweeping one run at once. Directories it makes carry a marker file
// naming the owner, and the sweep removes a directory only when the
// marker matches the journal's owner. The processes benchgate starts carry
// the owner in their environment (OwnerEnvVar): a process that left its
// group with setsid is found by it, as long as its run's journal is in the
// state directory.
//
// The owner is the process itself, so the journal is one per process (a
// package variable), not one per run: several runs of one process (tests)
// share it.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

const (
	// StateDirEnv overrides the state directory.
	StateDirEnv = "BENCHGATE_STATE_DIR"
	// markerName is the owner's marker file in a directory benchgate made.
	markerName = ".benchgate-owner"
)

// stateDir is $BENCHGATE_STATE_DIR, else benchgate-<uid> in the temporary
// directory, made if need be. It must be a directory of this user's that
// nobody else can write: a journal there names what a sweep kills and
// removes.
func stateDir() (string, error) {
	dir := os.Getenv(StateDirEnv)
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

// TrackGroup records the process group led by the just-started pgid until
// untrack is called, once the group is gone.
func TrackGroup(pgid int) (untrack func()) {
	st, err := readProcStat(pgid)
	if err != nil {
		return func() {}
	}
	return track(leftover{Kind: leftGroup, PGID: pgid, Start: st.StartTime})
}

// TrackCgroup records the cgroup directory dir, a target's, which is about
// to be made, until untrack is called once it is removed. The record comes
// first: a benchgate killed right after the mkdir must not leave an
// unrecorded group.
func TrackCgroup(dir string) (untrack func()) {
	return track(leftover{Kind: leftCgroup, Path: dir})
}

// TrackWorktree records the git worktree path of the repository repo,
// which is about to be made in a directory MarkDir marked, until untrack
// is called once it is removed.
func TrackWorktree(path, repo string) (untrack func()) {
	return track(leftover{Kind: leftWorktree, Path: path, Repo: repo})
}

// MarkDir writes the owner's marker into dir, which benchgate just made,
// and records dir; untrack once it is removed.
func MarkDir(dir string) (untrack func()) {
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
	path := filepath.Join(dir, fmt.Sprintf("%d-%d-%d.jsonl", me.PIDNS, me.PID, me.Start))
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
