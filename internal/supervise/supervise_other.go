//go:build !linux

package supervise

import "errors"

// Off Linux there is no supervisor. What makes one safe is the kernel
// killing the child when the supervisor dies (Pdeathsig, Linux's alone):
// without it a benchgate killed by SIGKILL would leave its child running
// on. And there is little to protect: off Linux benchgate runs no targets,
// only the commands over files, whose crash exits 2 as it did before
// benchgate had a supervisor. So Child reports true, and the caller runs
// the program in this process as Run's child would, without starting a
// supervisor or warning that it could not; as in Run's child, a second
// SIGINT or SIGTERM does not kill it at once.
func Child() bool { return true }

// Run starts nothing: Child reports true, so no caller gets here.
func Run(argv []string) (Exit, error) {
	return Exit{}, errors.New("supervise: no supervisor off Linux")
}
