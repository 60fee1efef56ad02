package target

import (
	"fmt"
	"os"
	"strconv"

	"github.com/benchgate/benchgate/internal/linux"
)

// ProcIDs is the numeric entries of dir, in no order: the pids of /proc,
// the thread ids of /proc/self/task.
func ProcIDs(dir string) ([]int, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	ids := make([]int, 0, len(names))
	for _, n := range names {
		// Skipped before Atoi, which would make an error of each of
		// /proc's many other entries: a scan of /proc runs once a second.
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		if id, err := strconv.Atoi(n); err == nil {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

// readProcStat reads /proc/<pid>/stat; the error wraps fs.ErrNotExist
// when there is no such process.
func readProcStat(pid int) (linux.ProcStat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return linux.ProcStat{}, err
	}
	st, err := linux.ParseProcStat(b)
	if err != nil {
		return linux.ProcStat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return st, nil
}
