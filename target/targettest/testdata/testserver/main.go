// Command testserver is the child process of the target and runner tests: a
// small HTTP service whose misbehaviours are chosen by flags.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
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
	burnMS := flag.Int("burn", 0, "only spin for this many milliseconds of CPU, then exit")
	flag.Parse()

	if *burnMS > 0 {
		burn(unix.RUSAGE_SELF, time.Duration(*burnMS)*time.Millisecond)
		return
	}

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
	// /burn?ms=N spins for N milliseconds of CPU time (not wall time,
	// which would depend on how busy the machine is).
	mux.HandleFunc("/burn", func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil || ms < 0 {
			http.Error(w, "ms: want a number of milliseconds", http.StatusBadRequest)
			return
		}
		// The thread's own CPU clock only counts while the goroutine
		// stays on that thread.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		burn(unix.RUSAGE_THREAD, time.Duration(ms)*time.Millisecond)
		w.Write([]byte("burnt"))
	})
	// /spawn-burn?ms=N runs a child that spins for N ms of CPU and waits
	// for it: CPU used by a process that is gone by the time anyone looks.
	mux.HandleFunc("/spawn-burn", func(w http.ResponseWriter, r *http.Request) {
		ms, err := strconv.Atoi(r.URL.Query().Get("ms"))
		if err != nil || ms < 0 {
			http.Error(w, "ms: want a number of milliseconds", http.StatusBadRequest)
			return
		}
		out, err := exec.Command(os.Args[0], "-burn", strconv.Itoa(ms)).CombinedOutput()
		if err != nil {
			http.Error(w, fmt.Sprintf("child: %v: %s", err, out), http.StatusInternalServerError)
			return
		}
		w.Write([]byte("child burnt"))
	})
	// /alloc?mb=N maps N MiB, writes to every page (so the kernel charges
	// it), holds it for 100ms and unmaps it: a memory spike that is over
	// by the time the response arrives. mmap rather than a Go slice, so
	// the memory goes back to the kernel at once, not when the garbage
	// collector and scavenger get to it.
	mux.HandleFunc("/alloc", func(w http.ResponseWriter, r *http.Request) {
		mb, err := strconv.Atoi(r.URL.Query().Get("mb"))
		if err != nil || mb <= 0 {
			http.Error(w, "mb: want a number of MiB", http.StatusBadRequest)
			return
		}
		b, err := unix.Mmap(-1, 0, mb<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANON)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		for i := 0; i < len(b); i += os.Getpagesize() {
			b[i] = 1
		}
		time.Sleep(100 * time.Millisecond)
		if err := unix.Munmap(b); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, "allocated %d MiB", mb)
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

// burn spins until who (the process or the calling thread) has used d of
// CPU time more than when it began.
func burn(who int, d time.Duration) {
	used := func() time.Duration {
		var ru unix.Rusage
		if err := unix.Getrusage(who, &ru); err != nil {
			panic(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	end := used() + d
	x := uint64(1)
	for used() < end {
		for i := 0; i < 100000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink.Store(x)
}

var sink atomic.Uint64
