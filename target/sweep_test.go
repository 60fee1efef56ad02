package target

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestStateDirRefusesOthers: a journal names what a sweep kills and
// removes, so the state directory must be this user's alone.
func TestStateDirRefusesOthers(t *testing.T) {
	root := t.TempDir()
	fresh := filepath.Join(root, "fresh")
	t.Setenv(StateDirEnv, fresh)
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
		t.Setenv(StateDirEnv, dir)
		if _, err := stateDir(); err == nil {
			t.Errorf("stateDir accepted %s", dir)
		} else {
			t.Log(err)
		}
	}
}

// writeJournal writes a journal as a run of owner o would have.
func writeJournal(t *testing.T, dir string, o Owner, lines ...journalLine) string {
	t.Helper()
	var b strings.Builder
	for _, l := range append([]journalLine{{Owner: o.String()}}, lines...) {
		j, _ := json.Marshal(l)
		b.Write(j)
		b.WriteByte('\n')
	}
	b.WriteString(`{"add":{"kind":"dir","path":"/torn`) // a crash mid-line
	path := filepath.Join(dir, fmt.Sprintf("%d-%d-%d.jsonl", o.PIDNS, o.PID, o.Start))
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func markedDir(t *testing.T, o Owner) string {
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
	t.Parallel()
	me := mustOwner(t)
	state := t.TempDir()
	dead := me
	dead.PID, dead.Start = deadPid(t), 1
	otherNS := dead
	otherNS.PIDNS++

	grouped, groupedStart := sleeper(t, nil) // its environment scrubbed
	escaped, escapedStart := sleeper(t, []string{OwnerEnvVar + "=" + dead.String()})
	reused, reusedStart := sleeper(t, nil)
	dropped, droppedStart := sleeper(t, nil)
	foreign, foreignStart := sleeper(t, nil)
	live, liveStart := sleeper(t, nil)
	liveMarked, liveMarkedStart := sleeper(t, []string{OwnerEnvVar + "=" + me.String()})
	foreignMarked, foreignMarkedStart := sleeper(t, []string{OwnerEnvVar + "=" + otherNS.String()})
	liveOwner := me
	liveOwner.PID, liveOwner.Start = live, liveStart

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

	var progress strings.Builder
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
	prefix := fmt.Sprintf("swept a leftover of benchgate process %d, which is gone: ", dead.PID)
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
