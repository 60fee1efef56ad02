package target

// An owner is one benchgate process, named so that another can tell later
// whether it still runs: its boot ID (the kernel instance), the inode of its
// PID namespace, its pid and the pid's start time. It is dead only when it
// is in the observer's boot and PID namespace and its pid is gone, a zombie,
// or a later process's (another start time). An owner that cannot be
// checked so (another host, another namespace, a record of an older
// format) is alive: a concurrent run in a container sharing the host name
// and the docker engine, whose pid says ESRCH here, is never swept. See
// docs/leftovers.md.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
)

// OwnerEnvVar carries the owner into the environment of every build,
// target, pre-flight command and test binary benchgate starts.
const OwnerEnvVar = "BENCHGATE_OWNER"

// Owner identifies a benchgate process across processes, namespaces and
// reboots; see the comment at the top of this file.
type Owner struct {
	Host  string // for people reading labels; not part of the decision
	Boot  string // /proc/sys/kernel/random/boot_id
	PIDNS uint64 // inode of /proc/self/ns/pid
	PID   int
	Start uint64 // field 22 of /proc/PID/stat: clock ticks after boot
}

// String is "host/boot/pidns/pid/start", the form of the docker owner
// label, the journal's header and the marker files.
func (o Owner) String() string {
	return fmt.Sprintf("%s/%s/%d/%d/%d", o.Host, o.Boot, o.PIDNS, o.PID, o.Start)
}

// parseOwner reads String's form; ok is false for anything else (an older
// label's "host:pid" among them), which makes an owner that cannot be
// checked.
func parseOwner(s string) (o Owner, ok bool) {
	parts := strings.Split(s, "/")
	n := len(parts)
	if n < 5 {
		return Owner{}, false
	}
	o.Host = strings.Join(parts[:n-4], "/")
	o.Boot = parts[n-4]
	ns, err1 := strconv.ParseUint(parts[n-3], 10, 64)
	pid, err2 := strconv.Atoi(parts[n-2])
	start, err3 := strconv.ParseUint(parts[n-1], 10, 64)
	if o.Boot == "" || err1 != nil || err2 != nil || err3 != nil || ns == 0 || pid <= 0 {
		return Owner{}, false
	}
	o.PIDNS, o.PID, o.Start = ns, pid, start
	return o, true
}

// ThisProcess is the owner record of this process, or why there is none;
// without one nothing is recorded and nothing is swept.
func ThisProcess() (Owner, error) { return thisProcess() }

var thisProcess = sync.OnceValues(readOwner)

func readOwner() (Owner, error) {
	host, _ := os.Hostname()
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return Owner{}, err
	}
	boot := strings.TrimSpace(string(b))
	ns, err := pidNamespace("/proc/self/ns/pid")
	if err != nil {
		return Owner{}, err
	}
	// A /proc of another PID namespace would answer for other processes
	// than the ones our pids name.
	if self, err := os.Readlink("/proc/self"); err != nil || self != strconv.Itoa(os.Getpid()) {
		return Owner{}, fmt.Errorf("/proc is not of benchgate's PID namespace (/proc/self is %q, %v)", self, err)
	}
	st, err := readProcStat(os.Getpid())
	if err != nil {
		return Owner{}, err
	}
	if boot == "" || strings.Contains(boot, "/") {
		return Owner{}, fmt.Errorf("boot id %q", boot)
	}
	return Owner{Host: host, Boot: boot, PIDNS: ns, PID: os.Getpid(), Start: st.StartTime}, nil
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
// runs; see the comment at the top of this file. Here's own record is
// never gone.
func (here Owner) knowsGone(o Owner) bool {
	if here.Boot == "" || here.PIDNS == 0 || o.Boot != here.Boot || o.PIDNS != here.PIDNS || o.PID <= 0 {
		return false
	}
	if o.PID == here.PID && o.Start == here.Start {
		return false
	}
	st, err := readProcStat(o.PID)
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false // EPERM and the like: something is there
	}
	return st.StartTime != o.Start || st.State == 'Z' || st.State == 'X'
}

// Gone says why here can tell that the owner of record rec (String's
// form) no longer runs, or "" when it cannot: rec is of another form, or
// of an owner knowsGone cannot check, or that owner still runs.
func (here Owner) Gone(rec string) string {
	o, ok := parseOwner(rec)
	if !ok || !here.knowsGone(o) {
		return ""
	}
	if _, err := readProcStat(o.PID); err == nil {
		return fmt.Sprintf("its owner, benchgate process %d, ended: the pid names a later process now", o.PID)
	}
	return fmt.Sprintf("its owner, benchgate process %d, is gone", o.PID)
}

// WithOwnerEnv is env (nil: benchgate's own) with OwnerEnvVar set to this
// process, replacing one it inherited; a new slice.
func WithOwnerEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, OwnerEnvVar+"=") {
			out = append(out, kv)
		}
	}
	if me, err := thisProcess(); err == nil {
		out = append(out, OwnerEnvVar+"="+me.String())
	}
	return out
}
