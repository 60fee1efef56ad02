// Command testserver is the child process of the runner's target tests: a
// small HTTP service whose misbehaviours are chosen by flags.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	failHealth := flag.Bool("fail-health", false, "answer /healthz with 503")
	exitAfter := flag.Int64("exit-after", 0, "exit with status 2 after this many non-health requests (0: never)")
	ignoreTerm := flag.Bool("ignore-term", false, "ignore SIGTERM, so only SIGKILL ends it")
	spawn := flag.Bool("spawn", false, "start a child that sleeps in the same process group")
	sleep := flag.Bool("sleep", false, "only sleep (the spawned child)")
	exitNow := flag.Bool("exit-now", false, "print some lines and exit with status 1 before listening")
	printEnv := flag.Bool("print-env", false, "print the environment, a line \"env NAME=value\" each")
	flag.Parse()

	if *printEnv {
		for _, kv := range os.Environ() {
			fmt.Printf("env %s\n", kv)
		}
	}

	if *ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if *sleep {
		time.Sleep(time.Hour)
		return
	}
	if *exitNow {
		for i := 1; i <= 60; i++ {
			fmt.Printf("startup line %d\n", i)
		}
		fmt.Fprintln(os.Stderr, "fatal: cannot start")
		os.Exit(1)
	}
	if *spawn {
		c := exec.Command(os.Args[0], "-sleep")
		if *ignoreTerm {
			c.Args = append(c.Args, "-ignore-term")
		}
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("spawned %d\n", c.Process.Pid)
	}
	fmt.Printf("pid %d\n", os.Getpid())
	fmt.Printf("listening on %s port env %s\n", *addr, os.Getenv("TESTSERVER_PORT"))

	var served atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if *failHealth {
			fmt.Println("health check failing on purpose")
			http.Error(w, "unhealthy", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		n := served.Add(1)
		if *exitAfter > 0 && n > *exitAfter {
			fmt.Printf("exiting after %d requests\n", *exitAfter)
			os.Exit(2)
		}
		w.Write([]byte("hello"))
	})
	if err := http.ListenAndServe(*addr, mux); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
