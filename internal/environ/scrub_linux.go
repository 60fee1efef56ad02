package environ

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/benchgate/benchgate/internal/linux"
)

// maxBlock bounds the environment block Scrub reads: the kernel caps a
// process's arguments and environment at a quarter of its stack limit, a
// few MiB in practice.
const maxBlock = 64 << 20

// Scrub overwrites with NUL bytes every entry of this process's initial
// environment block (what /proc/self/environ shows) whose name is Secret,
// then marks the process non-dumpable, so that a process of the same user
// cannot read its memory (Go's own copy of the environment among it)
// through /proc/PID/mem without CAP_SYS_PTRACE. Go's copy is left as it
// is: os.Getenv still reads every variable. An error says what could not
// be done; the caller warns and carries on, as nothing else depends on it.
//
// Writing through /proc/self/mem rather than a pointer made from the
// block's address means a wrong address fails with an error, not a fault.
func Scrub() error {
	err := scrubBlock()
	// After the scrub: a non-dumpable process's /proc files belong to
	// root, and /proc/self/mem could no longer be opened by a user.
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); e != 0 {
		err = errors.Join(err, fmt.Errorf("prctl(PR_SET_DUMPABLE, 0): %w", e))
	}
	return err
}

func scrubBlock() error {
	start, end, err := envBounds()
	if err != nil {
		return err
	}
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer mem.Close()
	block := make([]byte, end-start)
	if _, err := mem.ReadAt(block, int64(start)); err != nil {
		return fmt.Errorf("reading the environment block: %w", err)
	}
	for off := 0; off < len(block); {
		n := bytes.IndexByte(block[off:], 0)
		if n < 0 {
			n = len(block) - off
		}
		entry := block[off : off+n]
		name, _, _ := bytes.Cut(entry, []byte("="))
		if len(entry) > 0 && Secret(string(name)) {
			if _, err := mem.WriteAt(make([]byte, n), int64(start)+int64(off)); err != nil {
				return fmt.Errorf("overwriting %s in the environment block: %w", name, err)
			}
		}
		off += n + 1
	}
	// What another process would read is what counts.
	shown, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return err
	}
	for _, entry := range bytes.Split(shown, []byte{0}) {
		name, _, _ := bytes.Cut(entry, []byte("="))
		if len(entry) > 0 && Secret(string(name)) {
			return fmt.Errorf("%s is still in /proc/self/environ", name)
		}
	}
	return nil
}

// envBounds reads the addresses of the environment block, env_start and
// env_end of /proc/self/stat.
func envBounds() (start, end uint64, err error) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, err
	}
	st, err := linux.ParseProcStat(b)
	const envEnd = 51
	switch {
	case err != nil:
		return 0, 0, fmt.Errorf("/proc/self/stat: %w", err)
	case st.Fields < envEnd:
		return 0, 0, fmt.Errorf("/proc/self/stat has %d fields, not the %d of Linux 3.5 and later", st.Fields, envEnd)
	}
	start, end = st.EnvStart, st.EnvEnd
	if start == 0 || end < start || end-start > maxBlock || end > 1<<62 {
		return 0, 0, fmt.Errorf("/proc/self/stat: no usable environment block at [%#x, %#x)", start, end)
	}
	return start, end, nil
}
