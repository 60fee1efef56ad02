package linux

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// ProcStat is what benchgate reads of a /proc/<pid>/stat line. The
// comments give each field's number in proc_pid_stat(5).
type ProcStat struct {
	// Comm (2) is the command name, without its parentheses. It is part
	// of the text parsed, not a copy: a sampler rereading a buffer
	// allocates nothing.
	Comm  []byte
	State byte // 3: R, S, D, ..., Z for a zombie, X for a dead process
	PPID  int  // 4
	PGRP  int  // 5: the process group
	// 14 to 17: CPU time in clock ticks (USER_HZ), user and system, of
	// the process and of the children it has waited for.
	UTime, STime, CUTime, CSTime uint64
	StartTime                    uint64 // 22: clock ticks after boot
	// 50 and 51: the bounds of the environment block in the process's
	// memory, written since Linux 3.5; 0 in a line without them.
	EnvStart, EnvEnd uint64
	// Fields is how many fields the line has, the command name counted
	// as one however many spaces it holds.
	Fields int
}

// minStatFields is the fields every kernel benchgate runs on writes, and
// the last one ProcStat needs always (StartTime).
const minStatFields = 22

// ParseProcStat reads a /proc/<pid>/stat line. The command name is in
// parentheses and may hold anything, spaces and ')' included, so the
// fields after it are counted from the last ')'. A line with fewer than
// 22 fields, or with a field ProcStat takes that is not a decimal number
// (the state: one byte), is refused. A line it takes costs no
// allocation, so a sampler may parse the file of every process it watches
// at every reading.
func ParseProcStat(b []byte) (ProcStat, error) {
	var st ProcStat
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return st, errors.New("no command name in parentheses")
	}
	st.Fields = 2
	rest := b[end+1:]
	for {
		i := 0
		for i < len(rest) && isStatSpace(rest[i]) {
			i++
		}
		rest = rest[i:]
		if len(rest) == 0 {
			break
		}
		j := 0
		for j < len(rest) && !isStatSpace(rest[j]) {
			j++
		}
		st.Fields++
		if err := st.set(st.Fields, rest[:j]); err != nil {
			return ProcStat{}, err
		}
		rest = rest[j:]
	}
	if st.Fields < minStatFields {
		return ProcStat{}, fmt.Errorf("%d fields, not the %d or more of a Linux kernel", st.Fields, minStatFields)
	}
	st.Comm = b[open+1 : end]
	return st, nil
}

func isStatSpace(c byte) bool { return c == ' ' || c == '\n' }

// set takes field n of the line, tok, when it is one ProcStat holds.
func (st *ProcStat) set(n int, tok []byte) error {
	var err error
	switch n {
	case 3:
		if len(tok) != 1 {
			return fmt.Errorf("field 3: state %q is not one letter", tok)
		}
		st.State = tok[0]
	case 4:
		st.PPID, err = strconv.Atoi(string(tok))
	case 5:
		st.PGRP, err = strconv.Atoi(string(tok))
	case 14:
		st.UTime, err = strconv.ParseUint(string(tok), 10, 64)
	case 15:
		st.STime, err = strconv.ParseUint(string(tok), 10, 64)
	case 16:
		// cutime and cstime are signed longs in the kernel, but never
		// negative.
		st.CUTime, err = strconv.ParseUint(string(tok), 10, 64)
	case 17:
		st.CSTime, err = strconv.ParseUint(string(tok), 10, 64)
	case 22:
		st.StartTime, err = strconv.ParseUint(string(tok), 10, 64)
	case 50:
		st.EnvStart, err = strconv.ParseUint(string(tok), 10, 64)
	case 51:
		st.EnvEnd, err = strconv.ParseUint(string(tok), 10, 64)
	}
	if err != nil {
		return fmt.Errorf("field %d: %w", n, err)
	}
	return nil
}
