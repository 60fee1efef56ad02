// Command scrubcheck plays benchgate's process tree for environ's tests,
// on the host and in a container FROM scratch (so it needs nothing but
// itself): it scrubs its environment and starts itself as the supervised
// child with its full environment, as benchgate's supervisor does; the
// child scrubs too and starts itself as a target with environ.Without, as
// the runner does; the target prints what it can read of every ancestor's
// /proc/PID/environ and of its own.
package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/internal/environ"
)

func main() {
	switch role := os.Getenv("SCRUBCHECK_ROLE"); role {
	case "", "child":
		me, next := "supervisor", "child"
		if role == "child" {
			me, next = "child", "target"
		}
		if err := environ.Scrub(); err != nil {
			fmt.Printf("%s: scrub: %v\n", me, err)
		} else {
			fmt.Printf("%s: scrub: ok\n", me)
		}
		// Scrubbing the block must leave Go's copy alone.
		fmt.Printf("%s: getenv GITHUB_TOKEN: %d bytes\n", me, len(os.Getenv("GITHUB_TOKEN")))
		env := os.Environ()
		if next == "target" {
			env = environ.Without(env)
		}
		self, err := os.Executable()
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		cmd := exec.Command(self)
		cmd.Env = append(env, "SCRUBCHECK_ROLE="+next)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	case "target":
		show("self", "/proc/self/environ")
		for pid := os.Getppid(); pid > 0; pid = parent(pid) {
			show("ancestor "+strconv.Itoa(pid), "/proc/"+strconv.Itoa(pid)+"/environ")
		}
	}
}

// show prints the entries of an environ file, or why it cannot be read.
func show(who, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		fmt.Printf("target: %s: %v\n", who, err)
		return
	}
	var entries []string
	for _, e := range bytes.Split(b, []byte{0}) {
		if len(e) > 0 {
			entries = append(entries, strconv.Quote(string(e)))
		}
	}
	fmt.Printf("target: %s: %s\n", who, strings.Join(entries, " "))
}

// parent returns the parent of pid (0 at the top, or when unknown).
func parent(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
