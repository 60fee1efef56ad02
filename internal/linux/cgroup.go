package linux

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// SelfCgroups is a process's /proc/<pid>/cgroup: its cgroup v2 group
// ("0::/path"), if any, and its group in each v1 hierarchy, keyed by each
// of the hierarchy's controllers (or its name=, for a named hierarchy).
type SelfCgroups struct {
	HasV2 bool
	V2    string
	V1    map[string]string
}

// ParseSelfCgroups reads the text of /proc/<pid>/cgroup; lines that are
// not hierarchy:controllers:path are skipped.
func ParseSelfCgroups(text string) SelfCgroups {
	s := SelfCgroups{V1: map[string]string{}}
	for line := range strings.SplitSeq(text, "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			s.HasV2, s.V2 = true, parts[2]
			continue
		}
		for c := range strings.SplitSeq(parts[1], ",") {
			s.V1[c] = parts[2]
		}
	}
	return s
}

// CgroupMount is a cgroup file system from /proc/self/mountinfo. Root is
// the group mounted there: "/" on a host, a deeper path when a container
// runtime bind-mounts its own group without a cgroup namespace.
type CgroupMount struct {
	Point, Root string
	V2          bool
	// Options are a v1 mount's super options: its controllers, and
	// others such as rw or name=systemd.
	Options []string
}

// ReadCgroupMounts reads mountinfo text and returns its cgroup mounts.
// benchgate finds them there rather than assuming /sys/fs/cgroup: on a
// hybrid host v2 sits at /sys/fs/cgroup/unified.
func ReadCgroupMounts(r io.Reader) ([]CgroupMount, error) {
	var ms []CgroupMount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if m, ok := ParseCgroupMount(sc.Text()); ok {
			ms = append(ms, m)
		}
	}
	return ms, sc.Err()
}

// ParseCgroupMount reads one line of mountinfo; ok is false when it is
// not a cgroup mount.
func ParseCgroupMount(line string) (m CgroupMount, ok bool) {
	// id parent major:minor root point options [optional...] - fstype source superoptions
	pre, post, ok := strings.Cut(line, " - ")
	if !ok {
		return m, false
	}
	a, b := strings.Fields(pre), strings.Fields(post)
	if len(a) < 5 || len(b) < 3 {
		return m, false
	}
	m = CgroupMount{Root: unescapeMount(a[3]), Point: unescapeMount(a[4])}
	switch b[0] {
	case "cgroup2":
		m.V2 = true
	case "cgroup":
		m.Options = strings.Split(b[2], ",")
	default:
		return m, false
	}
	return m, true
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// CgroupDir is the directory of group path in the v2 hierarchy
// (controller "") or the v1 hierarchy of controller: under the first such
// mount whose root holds path, where isDir says the directory is there.
func CgroupDir(mounts []CgroupMount, controller, path string, isDir func(string) bool) (string, error) {
	what := "cgroup2"
	if controller != "" {
		what = "cgroup v1 " + controller
	}
	found := false
	for _, m := range mounts {
		if controller == "" && !m.V2 || controller != "" && !slices.Contains(m.Options, controller) {
			continue
		}
		found = true
		rel, ok := strings.CutPrefix(path, m.Root)
		if m.Root == "/" {
			rel, ok = path, true
		} else if ok && rel != "" && rel[0] != '/' {
			ok = false
		}
		if !ok {
			continue
		}
		if dir := filepath.Join(m.Point, rel); isDir(dir) {
			return dir, nil
		}
	}
	if !found {
		return "", fmt.Errorf("%s not mounted", what)
	}
	return "", fmt.Errorf("group %s not visible in the %s mounts", path, what)
}
