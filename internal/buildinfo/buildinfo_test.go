package buildinfo

import (
	"runtime/debug"
	"testing"
)

// TestVersion: the linked version wins, then the module's, then the VCS
// revision, then "dev".
func TestVersion(t *testing.T) {
	t.Parallel()
	if got := Version("v1.2.3"); got != "v1.2.3" {
		t.Errorf("Version(v1.2.3) = %q", got)
	}
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}}
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "v2.0.1"}, Settings: rev}, "v2.0.1"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "dev-0123456789ab"},
		{debug.BuildInfo{Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})}, "dev-0123456789ab-dirty"},
		{debug.BuildInfo{Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "false"})}, "dev-0123456789ab"},
		{debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "short"}}}, "dev"},
		{debug.BuildInfo{}, "dev"},
	} {
		if got := fromBuildInfo(&c.bi); got != c.want {
			t.Errorf("fromBuildInfo(%+v) = %q, want %q", c.bi, got, c.want)
		}
	}
}

func TestShown(t *testing.T) {
	t.Parallel()
	if got := Shown("v1.2.3"); got != "v1.2.3" {
		t.Errorf("Shown(v1.2.3) = %q", got)
	}
	// A test binary records no commit.
	if v, got := Version(""), Shown(""); v == "dev" && got != "dev ("+unrecorded+")" || v != "dev" && got != v {
		t.Errorf("Shown(\"\") = %q, Version %q", got, v)
	}
}
