package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchgate/benchgate/internal/cli"
)

// benchgate comment reads an artifact a fork uploaded. Each forgery below
// is refused with exit 2 and the file named, at once: before the fix a
// FIFO blocked forever, /dev/zero was read until memory ran out, and 6 MB
// of empty rungs or a few forged histograms took gigabytes.
func TestCommentRefusesForgedResults(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	// The 60-byte histogram: 1..2^62 at 4 significant digits.
	const forged = "HISTFAAAACR42pJpmSzMwMDAzAABLFCa0QHKsP8AoY8zMgECAAD//0koA4g="
	cases := []struct {
		name, path, want string
	}{
		{"fifo", fifo, fifo + ": not a regular file (a named pipe)"},
		{"dev zero", zero, zero + ": not a regular file (a character device)"},
		{"rungs", write("rungs.json", `{"version":3,"rungs":[`+strings.Repeat("{},", 2_000_000)+`{}]}`),
			"rungs.json: rungs[200000]: more than 200000 entries"},
		{"histograms", write("hist.json", `{"version":3,"rungs":[`+strings.Repeat(fmt.Sprintf(`{"histogram":%q},`, forged), 149)+fmt.Sprintf(`{"histogram":%q}]}`, forged)),
			"hist.json: rungs[0].histogram: histogram of 4 significant digits: 1 to 3 are read"},
	}
	env := map[string]string{
		"GITHUB_ACTIONS": "true", "GITHUB_REPOSITORY": "o/r", "GITHUB_TOKEN": "ghs_fake",
	}
	for _, c := range cases {
		for _, mode := range []struct {
			event string
			args  []string
		}{{"workflow_run", nil}, {"schedule", []string{"-issue", "3"}}} {
			t.Run(c.name+"/"+mode.event, func(t *testing.T) {
				e := map[string]string{"GITHUB_EVENT_NAME": mode.event}
				for k, v := range env {
					e[k] = v
				}
				getenv := func(k string) string { return e[k] }
				var stdout, stderr bytes.Buffer
				done := make(chan error, 1)
				go func() {
					done <- run(context.Background(), append([]string{"comment", "-results", c.path}, mode.args...), &stdout, &stderr, getenv)
				}()
				select {
				case err := <-done:
					if cli.ExitCode(err) != cli.ExitUsage || err == nil || !strings.Contains(err.Error(), c.want) {
						t.Errorf("exit %d, %v; want exit 2 and %q", cli.ExitCode(err), err, c.want)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("benchgate comment still runs after 20 s")
				}
			})
		}
	}
}
