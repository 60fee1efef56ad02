// Command demo is the small HTTP service that benchgate's bundled example
// gates. It has a few endpoints of different cost, and a way to build or run
// it with one endpoint made slower, so the example ends with a visible
// regression:
//
//	demo -addr 127.0.0.1:8080                 # the normal build
//	demo -addr 127.0.0.1:8080 -slow search=5    # /search does 5× the work
//	demo -addr 127.0.0.1:8080 -slow search=1.2  # 20% more work per request
//
// A factor is any number >= 1. Whatever the factor, every answer is the
// same: a slowed build does more work (or waits longer) for the same
// answer, so it passes the agreement check. The slowed build bakes the same
// setting in at link time:
//
//	go build -ldflags "-X main.defaultSlow=search=5" -o demo-slow ./examples/demo
//
// Other flags make the builds a correctness check must tell apart: -reorder
// writes every JSON object's keys in reverse order (the same data),
// -stamp adds a generated_at time to every answer, -wrong items|search
// changes one value of that endpoint's answers (a bug that also makes
// /search cheaper), and -errors endpoint=rate answers that share of the
// endpoint's requests with 500. And the binary doubles as a conformance
// checker of a running demo:
//
//	demo -check http://127.0.0.1:8080         # PASS or FAIL, exit 0 or 1
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net/http"
	httppprof "net/http/pprof"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// defaultSlow is the -slow default; a slowed build sets it with -ldflags -X.
var defaultSlow = ""

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	slow := flag.String("slow", defaultSlow, "endpoint=factor[,...]: multiply the work of an endpoint (items, search, sleep) by a factor >= 1, e.g. search=1.2")
	var o options
	flag.BoolVar(&o.reorder, "reorder", false, "write JSON object keys in reverse order")
	flag.BoolVar(&o.stamp, "stamp", false, "add generated_at, the time of the answer, to every JSON answer")
	flag.StringVar(&o.wrong, "wrong", "", "items or search: change one value in that endpoint's answers")
	errs := flag.String("errors", "", "endpoint=rate: answer that share of the endpoint's requests with 500, e.g. sleep=0.05")
	check := flag.String("check", "", "check the demo at this URL for conformance instead of serving")
	pprof := flag.Bool("pprof", false, "serve net/http/pprof's profiles under /debug/pprof/ (on the listen address: keep it on loopback)")
	flag.Parse()
	if *check != "" {
		os.Exit(conformance(*check, os.Stdout))
	}
	factors, err := parseSlow(*slow)
	if err == nil {
		o.errEvery, err = parseErrors(*errs)
	}
	if err == nil && o.wrong != "" && o.wrong != "items" && o.wrong != "search" {
		err = fmt.Errorf("-wrong %q: want items or search", o.wrong)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(2)
	}
	o.factor = factors
	handler := newHandler(o)
	if *pprof {
		mux := http.NewServeMux()
		mux.Handle("/", handler)
		mux.HandleFunc("/debug/pprof/", httppprof.Index)
		mux.HandleFunc("/debug/pprof/profile", httppprof.Profile)
		handler = mux
	}
	srv := &http.Server{Addr: *addr, Handler: handler, ReadHeaderTimeout: 10 * time.Second}
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

// parseSlow reads -slow endpoint=factor[,endpoint=factor...] into each
// endpoint's work factor: 1 unless named, any finite number >= 1 when
// named ("5", "1.2").
func parseSlow(s string) (map[string]float64, error) {
	f := map[string]float64{"items": 1, "search": 1, "sleep": 1}
	if s == "" {
		return f, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, n, ok := strings.Cut(part, "=")
		k, err := strconv.ParseFloat(strings.TrimSpace(n), 64)
		if _, known := f[name]; !ok || !known || err != nil || math.IsNaN(k) || math.IsInf(k, 0) || k < 1 {
			return nil, fmt.Errorf("-slow %q: want endpoint=factor with endpoint one of items, search, sleep and factor a number >= 1 (e.g. search=1.2)", part)
		}
		f[name] = k
	}
	return f, nil
}

// searchRounds is /search's work: n rounds of SHA-256 over sum. Not
// inlined, so a CPU profile names it (what a slowed build adds is more of
// it).
//
//go:noinline
func searchRounds(sum [32]byte, n int) [32]byte {
	for range n {
		sum = sha256.Sum256(sum[:])
	}
	return sum
}

// extraRounds is the hashing a /search slowed by factor adds to its
// rounds: the cost of a request grows by the factor (to within one round).
func extraRounds(rounds int, factor float64) int {
	return int(math.Round(float64(rounds) * (factor - 1)))
}

// itemBuilds is how a /items slowed by factor builds its list of limit
// items: whole complete builds (the last one is the answer) after a
// partial build of part items, the fraction of the factor beyond whole.
func itemBuilds(limit int, factor float64) (whole, part int) {
	whole = max(int(math.Floor(factor)), 1)
	part = int(math.Round((factor - float64(whole)) * float64(limit)))
	return whole, min(max(part, 0), limit)
}

// sleepFor is how long a /sleep?ms=ms slowed by factor waits.
func sleepFor(ms int, factor float64) time.Duration {
	return time.Duration(math.Round(float64(ms) * factor * float64(time.Millisecond)))
}

// parseErrors reads -errors endpoint=rate into "answer every n-th request
// of the endpoint with 500": deterministic, so a test knows the rate.
func parseErrors(s string) (map[string]int64, error) {
	every := map[string]int64{}
	if s == "" {
		return every, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, r, ok := strings.Cut(part, "=")
		rate, err := strconv.ParseFloat(r, 64)
		if !ok || err != nil || rate <= 0 || rate > 1 || (name != "items" && name != "search" && name != "sleep") {
			return nil, fmt.Errorf("-errors %q: want endpoint=rate with endpoint one of items, search, sleep and 0 < rate <= 1", part)
		}
		every[name] = int64(math.Round(1 / rate))
	}
	return every, nil
}

type options struct {
	factor   map[string]float64
	reorder  bool
	stamp    bool
	wrong    string
	errEvery map[string]int64 // endpoint → every n-th request fails
}

type item struct {
	ID    int    `json:"id"`
	Name  string `json:"name"`
	Price int    `json:"price"`
}

// sink keeps the slowed build's extra work from being optimised away.
var sink atomic.Uint32

// price is what item i costs: the conformance check recomputes it.
func price(i int) int { return (i * 7919) % 1000 }

func newHandler(o options) http.Handler {
	factor := o.factor
	var counts [3]atomic.Int64
	endpoints := map[string]*atomic.Int64{"items": &counts[0], "search": &counts[1], "sleep": &counts[2]}
	// fail answers the endpoint's every n-th request with 500.
	fail := func(w http.ResponseWriter, endpoint string) bool {
		n := o.errEvery[endpoint]
		if n > 0 && endpoints[endpoint].Add(1)%n == 0 {
			http.Error(w, "injected failure", http.StatusInternalServerError)
			return true
		}
		return false
	}
	writeJSON := func(w http.ResponseWriter, v map[string]any) {
		if o.stamp {
			v["generated_at"] = time.Now().UTC().Format(time.RFC3339Nano)
		}
		w.Header().Set("Content-Type", "application/json")
		// Like many APIs, the demo does not escape HTML in JSON: an answer
		// can carry markup, which reports must neutralise.
		var raw bytes.Buffer
		enc := json.NewEncoder(&raw)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		if !o.reorder {
			w.Write(raw.Bytes())
			return
		}
		b := raw.Bytes()
		var tree any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		dec.Decode(&tree)
		var out bytes.Buffer
		writeReversed(&out, tree)
		out.WriteByte('\n')
		w.Write(out.Bytes())
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("ok\n"))
	})
	// /items: cheap, allocation-bound JSON.
	mux.HandleFunc("GET /items", func(w http.ResponseWriter, r *http.Request) {
		if fail(w, "items") {
			return
		}
		limit := intParam(r, "limit", 10, 1, 1000)
		whole, part := itemBuilds(limit, factor["items"])
		var items []item
		build := func(n int) {
			items = items[:0]
			for i := range n {
				items = append(items, item{ID: i, Name: "item-" + strconv.Itoa(i), Price: price(i)})
			}
		}
		// The partial build comes first: the answer is a complete one.
		if part > 0 {
			build(part)
		}
		for range whole {
			build(limit)
		}
		if o.wrong == "items" && len(items) > 3 {
			items[3].Price++ // the bug: one price off by one
		}
		writeJSON(w, map[string]any{"items": items, "count": len(items)})
	})
	// /search: CPU-bound: hashes the query a fixed number of rounds.
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		if fail(w, "search") {
			return
		}
		q := r.URL.Query().Get("q")
		if q == "" {
			http.Error(w, "missing q", http.StatusBadRequest)
			return
		}
		rounds := 2000
		if o.wrong == "search" {
			rounds /= 5 // the bug: 5× faster, and a different digest
		}
		sum := searchRounds(sha256.Sum256([]byte(q)), rounds)
		// A slowed build does more work for the same answer.
		extra := searchRounds(sum, extraRounds(rounds, factor["search"]))
		sink.Add(uint32(extra[0]))
		writeJSON(w, map[string]any{"q": q, "digest": hex.EncodeToString(sum[:8])})
	})
	// /sleep: waiting dominates, like a call to a slow backend.
	mux.HandleFunc("GET /sleep", func(w http.ResponseWriter, r *http.Request) {
		if fail(w, "sleep") {
			return
		}
		ms := intParam(r, "ms", 2, 0, 1000)
		time.Sleep(sleepFor(ms, factor["sleep"]))
		// The answer is the wait asked for, whatever the factor: a slowed
		// build waits longer for the same answer.
		writeJSON(w, map[string]any{"slept_ms": ms})
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

// writeReversed writes a decoded JSON value with every object's keys in
// reverse sorted order: the same data as encoding/json writes, in another
// order.
func writeReversed(b *bytes.Buffer, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			writeReversed(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeReversed(b, e)
		}
		b.WriteByte(']')
	default:
		vb, _ := json.Marshal(x)
		b.Write(vb)
	}
}

// conformance checks the demo at base: /healthz answers, /items returns
// count items with the right prices, /search requires q. It prints one
// line per problem and a last line with the verdict, and returns the exit
// code: 0 when every check passed.
func conformance(base string, out io.Writer) int {
	client := &http.Client{Timeout: 10 * time.Second}
	base = strings.TrimRight(base, "/")
	checks, problems := 0, 0
	fail := func(format string, args ...any) {
		problems++
		fmt.Fprintf(out, "problem: "+format+"\n", args...)
	}
	get := func(path string) (int, []byte) {
		checks++
		resp, err := client.Get(base + path)
		if err != nil {
			fail("GET %s: %v", path, err)
			return 0, nil
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return resp.StatusCode, b
	}
	if code, _ := get("/healthz"); code != http.StatusOK {
		fail("GET /healthz: status %d, want 200", code)
	}
	if code, b := get("/items?limit=8"); code != http.StatusOK {
		fail("GET /items: status %d, want 200", code)
	} else {
		var doc struct {
			Count int    `json:"count"`
			Items []item `json:"items"`
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			fail("GET /items: not JSON: %v", err)
		} else {
			if doc.Count != 8 || len(doc.Items) != 8 {
				fail("GET /items?limit=8: count %d with %d items, want 8", doc.Count, len(doc.Items))
			}
			for i, it := range doc.Items {
				if it.ID != i || it.Price != price(i) {
					fail("GET /items: item %d has id %d price %d, want id %d price %d", i, it.ID, it.Price, i, price(i))
				}
			}
		}
	}
	if code, _ := get("/search"); code != http.StatusBadRequest {
		fail("GET /search without q: status %d, want 400", code)
	}
	if problems > 0 {
		fmt.Fprintf(out, "conformance: FAIL (%d problems in %d checks)\n", problems, checks)
		return 1
	}
	fmt.Fprintf(out, "conformance: PASS (%d checks)\n", checks)
	return 0
}
