// Package buildinfo is the version benchgate reports of itself — in
// results, reports, `benchgate version`, and the release a workflow that
// benchgate init writes installs: the one stamped at link time, else the
// module's version, else the VCS revision the build info records.
package buildinfo

import "runtime/debug"

// Version is linked when it is set (-ldflags "-X main.version=v1.2.3"),
// else the main module's version from the build info (go install
// module@v1.2.3), else "dev-" and the first 12 digits of the VCS
// revision, else "dev".
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
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			return "dev-" + s.Value[:12]
		}
	}
	return "dev"
}
