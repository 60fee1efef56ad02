// Command faulty is a misbehaving HTTP service for benchgate's CLI tests: it
// can refuse to become healthy, or die in the middle of a run at a point that
// does not depend on timing.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	noHealth := flag.Bool("no-health", false, "answer 503 on /healthz forever")
	pidfile := flag.String("pidfile", "", "write the process id here")
	dieWhen := flag.String("die-when", "", "FILE:TEXT: exit(7) as soon as FILE contains TEXT")
	flag.Parse()
	if *pidfile != "" {
		os.WriteFile(*pidfile, []byte(strconv.Itoa(os.Getpid())), 0o644)
	}
	fmt.Println("faulty: starting on", *addr)
	if *dieWhen != "" {
		file, text, _ := strings.Cut(*dieWhen, ":")
		go func() {
			for range time.Tick(5 * time.Millisecond) {
				if b, err := os.ReadFile(file); err == nil && strings.Contains(string(b), text) {
					fmt.Println("faulty: fatal: simulated crash")
					os.Exit(7)
				}
			}
		}()
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if *noHealth {
			fmt.Println("faulty: still warming up: cache not loaded")
			http.Error(w, "warming up", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok"))
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond)
		w.Write([]byte(`{"ok":true}`))
	})
	if err := http.ListenAndServe(*addr, mux); err != nil {
		fmt.Println("faulty:", err)
		os.Exit(1)
	}
}
