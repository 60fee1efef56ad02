package linux

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseSelfCgroups(t *testing.T) {
	t.Parallel()
	got := ParseSelfCgroups("12:cpu,cpuacct:/ci/job\n4:memory:/ci/job\n1:name=systemd:/init.scope\n0::/user.slice\nnot a line\n")
	want := SelfCgroups{HasV2: true, V2: "/user.slice", V1: map[string]string{
		"cpu": "/ci/job", "cpuacct": "/ci/job", "memory": "/ci/job", "name=systemd": "/init.scope",
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseSelfCgroups = %+v, want %+v", got, want)
	}
	if got := ParseSelfCgroups(""); got.HasV2 || len(got.V1) != 0 || got.V1 == nil {
		t.Errorf("ParseSelfCgroups(\"\") = %+v", got)
	}
}

const mountinfo = `22 1 0:21 / /sys rw - sysfs sysfs rw
30 22 0:26 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw
31 22 0:27 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
32 22 0:28 /docker/abc /sys/fs/cgroup/cpu\040acct rw - cgroup cgroup rw,cpu,cpuacct
short - cgroup
`

func TestReadCgroupMounts(t *testing.T) {
	t.Parallel()
	got, err := ReadCgroupMounts(strings.NewReader(mountinfo))
	if err != nil {
		t.Fatal(err)
	}
	want := []CgroupMount{
		{Point: "/sys/fs/cgroup/unified", Root: "/", V2: true},
		{Point: "/sys/fs/cgroup/memory", Root: "/", Options: []string{"rw", "memory"}},
		{Point: "/sys/fs/cgroup/cpu acct", Root: "/docker/abc", Options: []string{"rw", "cpu", "cpuacct"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ReadCgroupMounts =\n%+v\nwant\n%+v", got, want)
	}
}

func TestCgroupDir(t *testing.T) {
	t.Parallel()
	mounts, _ := ReadCgroupMounts(strings.NewReader(mountinfo))
	all := func(string) bool { return true }
	for _, tc := range []struct {
		controller, path, dir, err string
		isDir                      func(string) bool
	}{
		{"", "/user.slice", "/sys/fs/cgroup/unified/user.slice", "", all},
		{"memory", "/ci/job", "/sys/fs/cgroup/memory/ci/job", "", all},
		{"cpuacct", "/docker/abc/x", "/sys/fs/cgroup/cpu acct/x", "", all},
		{"cpuacct", "/docker/abcd", "", "group /docker/abcd not visible in the cgroup v1 cpuacct mounts", all},
		{"memory", "/gone", "", "group /gone not visible in the cgroup v1 memory mounts", func(string) bool { return false }},
		{"pids", "/", "", "cgroup v1 pids not mounted", all},
		{"", "/", "", "cgroup2 not mounted", nil},
	} {
		ms := mounts
		if tc.isDir == nil {
			ms, tc.isDir = mounts[1:], all
		}
		dir, err := CgroupDir(ms, tc.controller, tc.path, tc.isDir)
		if dir != tc.dir || (err == nil) != (tc.err == "") || err != nil && err.Error() != tc.err {
			t.Errorf("CgroupDir(%q, %q) = %q, %v; want %q, %s", tc.controller, tc.path, dir, err, tc.dir, tc.err)
		}
	}
}
