// Package inject makes a chosen benchmark process of a run fail or hang,
// for the runner's tests; without BENCHMOD_INJECT it does nothing.
package inject

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

var (
	once   sync.Once
	action string
)

// Maybe is called first by every benchmark. The first call of the process
// takes the process's number: the lowest n for which it can create
// BENCHMOD_INJECT_DIR/n. From BENCHMOD_INJECT_AT on, processes do
// BENCHMOD_INJECT: "fail" fails the benchmark, "hang" writes hang.pid
// and sleeps for ten minutes.
func Maybe(b *testing.B) {
	once.Do(func() {
		what, dir := os.Getenv("BENCHMOD_INJECT"), os.Getenv("BENCHMOD_INJECT_DIR")
		at, err := strconv.Atoi(os.Getenv("BENCHMOD_INJECT_AT"))
		if what == "" || dir == "" || err != nil {
			return
		}
		n := 0
		for {
			f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(n)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err == nil {
				f.Close()
				break
			}
			if !os.IsExist(err) {
				panic(err)
			}
			n++
		}
		if n >= at {
			action = what
		}
	})
	switch action {
	case "fail":
		b.Fatal("injected failure")
	case "hang":
		pid := filepath.Join(os.Getenv("BENCHMOD_INJECT_DIR"), "hang.pid")
		os.WriteFile(pid+".tmp", []byte(fmt.Sprint(os.Getpid())), 0o644)
		os.Rename(pid+".tmp", pid)
		time.Sleep(10 * time.Minute)
	}
}
