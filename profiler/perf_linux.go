package profiler

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/profdiff"
	"github.com/google/pprof/profile"
)

// Recording is a perf record of some processes, started with its events
// off and turned on and off over its control FIFO, so that what it
// records is exactly a window, however long perf takes to start (it reads
// every thread's memory map first: seconds on a loaded machine).
type Recording struct {
	cmd      *exec.Cmd
	dir      string // perf's data file and the FIFOs
	ctl, ack *os.File
	stderr   bytes.Buffer
	ackr     *bufio.Reader
	exited   chan error // perf's exit, once
	waited   error
	done     bool
}

// ackTimeout bounds how long perf may take to answer a command: it
// answers once it is recording, so this also bounds its start.
const ackTimeout = 2 * time.Minute

// StartPerf starts perf record of pids (every thread of each, and the
// threads they start) with the cpu-clock software event every PerfPeriod
// of CPU and call stacks, recording nothing until Enable. Its files go in
// a new directory under dir, removed by Close.
func StartPerf(ctx context.Context, pids []int, dir string) (*Recording, error) {
	if len(pids) == 0 {
		return nil, errors.New("perf: no process to record")
	}
	tmp, err := os.MkdirTemp(dir, "perf-")
	if err != nil {
		return nil, fmt.Errorf("perf: %w", err)
	}
	r := &Recording{dir: tmp}
	ctlPath, ackPath := filepath.Join(tmp, "ctl"), filepath.Join(tmp, "ack")
	for _, p := range []string{ctlPath, ackPath} {
		if err := syscall.Mkfifo(p, 0o600); err != nil {
			r.Close()
			return nil, fmt.Errorf("perf: control FIFO: %w", err)
		}
	}
	// Both ends read-write, so neither open waits for perf's.
	if r.ctl, err = os.OpenFile(ctlPath, os.O_RDWR, 0); err == nil {
		r.ack, err = os.OpenFile(ackPath, os.O_RDWR, 0)
	}
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("perf: control FIFO: %w", err)
	}
	r.ackr = bufio.NewReader(r.ack)
	ps := make([]string, len(pids))
	for i, p := range pids {
		ps[i] = strconv.Itoa(p)
	}
	r.cmd = exec.Command("perf", "record", "-q", "-e", "cpu-clock", "-c", strconv.Itoa(PerfPeriod), "-g",
		"-p", strings.Join(ps, ","), "-o", filepath.Join(tmp, "perf.data"), "-D", "-1", "--control", "fifo:"+ctlPath+","+ackPath)
	r.cmd.Stderr = &r.stderr
	if err := r.cmd.Start(); err != nil {
		r.cmd = nil
		r.Close()
		return nil, fmt.Errorf("perf record: %w", err)
	}
	r.exited = make(chan error, 1)
	go func(cmd *exec.Cmd) { r.exited <- cmd.Wait() }(r.cmd)
	return r, nil
}

// Enable turns recording on, once perf says it has.
func (r *Recording) Enable(ctx context.Context) error { return r.command(ctx, "enable") }

// Disable turns recording off, once perf says it has.
func (r *Recording) Disable(ctx context.Context) error { return r.command(ctx, "disable") }

func (r *Recording) command(ctx context.Context, c string) error {
	if _, err := r.ctl.WriteString(c + "\n"); err != nil {
		return fmt.Errorf("perf record: %s: %w", c, err)
	}
	type answer struct {
		line string
		err  error
	}
	got := make(chan answer, 1)
	r.ack.SetReadDeadline(time.Now().Add(ackTimeout))
	go func() {
		line, err := r.ackr.ReadString('\n')
		got <- answer{line, err}
	}()
	var a answer
	select {
	case a = <-got:
	case err := <-r.exited:
		r.done, r.waited = true, err
		return fmt.Errorf("perf record ended before it answered %s: %v: %s", c, err, textsafe.Quote(r.stderr.String(), textsafe.QuoteRunes))
	case <-ctx.Done():
		return ctx.Err()
	}
	if a.err != nil {
		return fmt.Errorf("perf record: no answer to %s: %w: %s", c, a.err, textsafe.Quote(r.stderr.String(), textsafe.QuoteRunes))
	}
	if strings.Trim(a.line, "\x00\r\n ") != "ack" {
		return fmt.Errorf("perf record: %s answered %s", c, textsafe.Quote(a.line, textsafe.QuoteRunes))
	}
	return nil
}

// Stop ends the recording (perf writes its data when interrupted) and
// reads it with perf script.
func (r *Recording) Stop(ctx context.Context) (*profile.Profile, error) {
	var err error
	if r.done {
		err = r.waited
	} else {
		_ = r.cmd.Process.Signal(syscall.SIGINT)
		select {
		case err = <-r.exited:
		case <-ctx.Done():
			r.cmd.Process.Kill()
			r.waited, r.done = <-r.exited, true
			return nil, ctx.Err()
		}
		r.waited, r.done = err, true
	}
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && (ee.ExitCode() == 130 || ee.ExitCode() == -1)) {
		return nil, fmt.Errorf("perf record: %w: %s", err, textsafe.Quote(r.stderr.String(), textsafe.QuoteRunes))
	}
	var out, stderr bytes.Buffer
	script := exec.CommandContext(ctx, "perf", "script", "-i", filepath.Join(r.dir, "perf.data"), "-F", profdiff.PerfFields)
	script.Stdout = &limitWriter{w: &out, n: MaxPerfScriptBytes}
	script.Stderr = &stderr
	if err := script.Run(); err != nil {
		return nil, fmt.Errorf("perf script: %w: %s", err, textsafe.Quote(stderr.String(), textsafe.QuoteRunes))
	}
	p, err := profdiff.ParsePerf(&out)
	if err != nil {
		return nil, fmt.Errorf("perf: %w", err)
	}
	return p, nil
}

// Close kills perf if it still runs and removes its files.
func (r *Recording) Close() {
	if r.cmd != nil && !r.done {
		r.cmd.Process.Kill()
		r.waited, r.done = <-r.exited, true
	}
	for _, f := range []*os.File{r.ctl, r.ack} {
		if f != nil {
			f.Close()
		}
	}
	os.RemoveAll(r.dir)
}
