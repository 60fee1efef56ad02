package linux

import (
	"errors"
	"fmt"
	"runtime"
)

// ErrRequired is what every Linux-only part of benchgate (running targets:
// process and docker targets, pins, cgroups, the sweep of leftovers; the
// doctor's machine checks) returns on another system, wrapped by Required.
// The commands over files (compare, merge, history, comment, the reports)
// work on every system benchgate builds for; the *_other.go stubs of those
// parts are the only callers of Required.
var ErrRequired = errors.New("running targets needs Linux")

// Required is the one error of a Linux-only part of benchgate reached on
// another system: it names this system and what does work here.
func Required() error { return required(runtime.GOOS, runtime.GOARCH) }

func required(goos, goarch string) error {
	return fmt.Errorf("%w (this is %s/%s); compare, merge and history work here", ErrRequired, goos, goarch)
}
