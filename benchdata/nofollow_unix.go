//go:build unix

package benchdata

import "syscall"

// oNoFollow makes an open fail on a symbolic link rather than follow it.
const oNoFollow = syscall.O_NOFOLLOW
