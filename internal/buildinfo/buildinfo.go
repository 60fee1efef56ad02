// Package buildinfo is the version benchgate reports of itself — in
// results, reports, `benchgate version`, and the release a workflow that
// benchgate init writes installs: the one stamped at link time, else the
// module's version, else the VCS revision the build info records.
package buildinfo

import "runtime/debug"

// Version is linked when it is set (-ldflags "-X main.version=v1.2.3"),
// else the main module's version from the build info (go install
// module@v1.2.3), else "dev-" and the first 12 digits of the VCS
// revision ("-dirty" after them when the working tree had changes), else
// "dev".
func Version(linked string) string {
	if linked != "" {
		return linked
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "dev"
	}
	return fromBuildInfo(bi)
}

func fromBuildInfo(bi *debug.BuildInfo) string {
	if v := bi.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	rev, dirty := "", ""
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = "-dirty"
		}
	}
	if rev == "" {
		return "dev"
	}
	return "dev-" + rev + dirty
}

// unrecorded says why a version of "dev" names no commit: `go run`, and
// `go build -buildvcs=false`, and the action image built from its
// Dockerfile (.dockerignore leaves .git out) record none in the build.
const unrecorded = "no commit recorded: go run, builds with -buildvcs=false and the action's image built from its Dockerfile (no .git in it) carry none; go build or go install in a git checkout do"

// Shown is the version as `benchgate version` prints it: Version, and for
// a "dev" build why it names no commit.
func Shown(linked string) string {
	v := Version(linked)
	if v == "dev" {
		v += " (" + unrecorded + ")"
	}
	return v
}
