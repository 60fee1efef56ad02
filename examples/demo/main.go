// Command demo is the small HTTP service that benchgate's bundled example
// gates. It has a few endpoints of different cost, and a way to build or run
// it with one endpoint made slower, so the example ends with a visible
// regression:
//
//	demo -addr 127.0.0.1:8080                 # the normal build
//	demo -addr 127.0.0.1:8080 -slow search=5  # /search does 5× the work
//
// The slowed build bakes the same setting in at link time:
//
//	go build -ldflags "-X main.defaultSlow=search=5" -o demo-slow ./examples/demo
package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// defaultSlow is the -slow default; a slowed build sets it with -ldflags -X.
var defaultSlow = ""

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	slow := flag.String("slow", defaultSlow, "endpoint=factor: multiply the work of one endpoint (items, search, sleep)")
	flag.Parse()
	factors, err := parseSlow(*slow)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(2)
	}
	srv := &http.Server{Addr: *addr, Handler: newHandler(factors), ReadHeaderTimeout: 10 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	log.Printf("demo: listening on %s (slow: %q)", *addr, *slow)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
	log.Print("demo: stopped")
}

func parseSlow(s string) (map[string]int, error) {
	f := map[string]int{"items": 1, "search": 1, "sleep": 1}
	if s == "" {
		return f, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, n, ok := strings.Cut(part, "=")
		k, err := strconv.Atoi(n)
		if _, known := f[name]; !ok || !known || err != nil || k < 1 {
			return nil, fmt.Errorf("-slow %q: want endpoint=factor with endpoint one of items, search, sleep and factor >= 1", part)
		}
		f[name] = k
	}
	return f, nil
}

type item struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Price int    `json:"price"`
}

func newHandler(factor map[string]int) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	})
	// /items: cheap, allocation-bound JSON.
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		limit := intParam(r, "limit", 10, 1, 1000)
		var items []item
		for range factor["items"] {
			items = items[:0]
			for i := range limit {
				items = append(items, item{ID: i, Name: "item-" + strconv.Itoa(i), Price: (i * 7919) % 1000})
			}
		}
		writeJSON(w, map[string]any{"items": items, "count": len(items)})
	})
	// /search: CPU-bound: hashes the query a fixed number of rounds.
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("q")
		if q == "" {
			http.Error(w, "missing q", http.StatusBadRequest)
			return
		}
		sum := sha256.Sum256([]byte(q))
		for range 2000 * factor["search"] {
			sum = sha256.Sum256(sum[:])
		}
		writeJSON(w, map[string]any{"q": q, "digest": hex.EncodeToString(sum[:8])})
	})
	// /sleep: waiting dominates, like a call to a slow backend.
	mux.HandleFunc("GET /sleep", func(w http.ResponseWriter, r *http.Request) {
		ms := intParam(r, "ms", 2, 0, 1000)
		time.Sleep(time.Duration(ms*factor["sleep"]) * time.Millisecond)
		writeJSON(w, map[string]any{"slept_ms": ms * factor["sleep"]})
	})
	return mux
}

func intParam(r *http.Request, name string, def, lo, hi int) int {
	v, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil {
		return def
	}
	return min(max(v, lo), hi)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}
