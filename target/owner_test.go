package target

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
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

func mustOwner(t *testing.T) Owner {
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
	return err == nil && st.StartTime == start && st.State != 'Z' && st.State != 'X'
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
	return c.Process.Pid, st.StartTime
}

func TestOwnerRecord(t *testing.T) {
	t.Parallel()
	me := mustOwner(t)
	if me.PID != os.Getpid() || me.Boot == "" || me.PIDNS == 0 || me.Start == 0 {
		t.Fatalf("owner %+v", me)
	}
	ns, _ := os.Readlink("/proc/self/ns/pid")
	if want := "pid:[" + strconv.FormatUint(me.PIDNS, 10) + "]"; ns != want {
		t.Errorf("pidns %d, /proc/self/ns/pid is %s", me.PIDNS, ns)
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
	for i := 0; err == nil && zst.State != 'Z' && i < 500; i++ {
		time.Sleep(10 * time.Millisecond)
		zst, err = readProcStat(zombie.Process.Pid)
	}
	defer zombie.Wait()
	if err != nil || zst.State != 'Z' {
		t.Fatalf("the unreaped child is %+v, %v; want a zombie", zst, err)
	}
	livePid, liveStart := sleeper(t, nil)
	gone := deadPid(t)
	with := func(edit func(o *Owner)) Owner {
		o := me
		edit(&o)
		return o
	}
	for _, c := range []struct {
		name string
		o    Owner
		gone bool
	}{
		{"this process", me, false},
		{"a live process", with(func(o *Owner) { o.PID, o.Start = livePid, liveStart }), false},
		{"a pid that ended", with(func(o *Owner) { o.PID = gone }), true},
		{"a zombie", with(func(o *Owner) { o.PID, o.Start = zombie.Process.Pid, zst.StartTime }), true},
		{"a reused pid", with(func(o *Owner) { o.PID, o.Start = livePid, liveStart-1 }), true},
		{"another PID namespace", with(func(o *Owner) { o.PID, o.PIDNS = gone, me.PIDNS+1 }), false},
		{"another boot", with(func(o *Owner) { o.PID, o.Boot = gone, "other" }), false},
		{"another host name, same kernel", with(func(o *Owner) { o.PID, o.Host = gone, "elsewhere" }), true},
	} {
		if got := me.knowsGone(c.o); got != c.gone {
			t.Errorf("%s (%s): knowsGone %v, want %v", c.name, c.o, got, c.gone)
		}
	}
	if (Owner{}).knowsGone(with(func(o *Owner) { o.PID = gone })) {
		t.Error("an observer without a record decided an owner was gone")
	}
}

func TestWithOwnerEnv(t *testing.T) {
	t.Parallel()
	me := mustOwner(t)
	in := []string{"A=1", OwnerEnvVar + "=inherited/from/a/dead/run", "B=2"}
	got := WithOwnerEnv(in)
	if want := []string{"A=1", "B=2", OwnerEnvVar + "=" + me.String()}; !slices.Equal(got, want) {
		t.Errorf("WithOwnerEnv = %q, want %q", got, want)
	}
	if in[1] != OwnerEnvVar+"=inherited/from/a/dead/run" {
		t.Error("WithOwnerEnv changed its argument")
	}
}

// TestOwnerGone: the reason the docker sweep gives for an owner record,
// and none for one it cannot check or that still runs.
func TestOwnerGone(t *testing.T) {
	t.Parallel()
	me := mustOwner(t)
	livePid, liveStart := sleeper(t, nil)
	gone, reused := me, me
	gone.PID = deadPid(t)
	reused.PID, reused.Start = livePid, liveStart-1
	live := me
	live.PID, live.Start = livePid, liveStart
	for _, c := range []struct{ rec, want string }{
		{gone.String(), "its owner, benchgate process " + strconv.Itoa(gone.PID) + ", is gone"},
		{reused.String(), "its owner, benchgate process " + strconv.Itoa(livePid) + ", ended: the pid names a later process now"},
		{live.String(), ""},
		{me.String(), ""},
		{"host:" + strconv.Itoa(gone.PID), ""},
	} {
		if got := me.Gone(c.rec); got != c.want {
			t.Errorf("Gone(%q) = %q, want %q", c.rec, got, c.want)
		}
	}
}
