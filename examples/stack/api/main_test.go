package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startRedis runs a real redis-server on a free loopback port for the
// test, without persistence, and returns its address once it answers
// PING. Without redis-server the test skips, unless CI=true: CI installs
// it, so there its absence is a failure.
func startRedis(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("redis-server is not on PATH, and CI=true: .ci/run installs redis-server")
		}
		t.Skip("redis-server is not on PATH: these tests run a real Redis (apt-get install redis-server)")
	}
	addr := closedAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--save", "", "--appendonly", "no",
		"--bind", "127.0.0.1", "--dir", t.TempDir())
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	db := newClient(addr, time.Second, 1)
	defer db.Close()
	deadline := time.After(10 * time.Second)
	for {
		if _, err := db.Do(context.Background(), "PING"); err == nil {
			return addr
		}
		select {
		case err := <-exited:
			t.Fatalf("redis-server on port %s exited: %v\n%s", port, err, out.Bytes())
		case <-deadline:
			t.Fatalf("redis-server on port %s did not answer PING within 10s", port)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// closedAddr is a loopback address nothing listens on (a port that was
// free a moment ago).
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func seeded(t *testing.T, n int) (addr string, db *client) {
	t.Helper()
	addr = startRedis(t)
	db = newClient(addr, 5*time.Second, 4)
	t.Cleanup(db.Close)
	var out bytes.Buffer
	if err := seed(context.Background(), db, n, time.Second, &out); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("seeded %d items in 20 categories\n", n); out.String() != want {
		t.Fatalf("seed printed %q, want %q", out.String(), want)
	}
	return addr, db
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := httpClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// commandCalls resets Redis's command statistics, runs f, and returns how
// many times f's requests called each command, from INFO commandstats.
func commandCalls(t *testing.T, db *client, f func()) map[string]int {
	t.Helper()
	ctx := context.Background()
	if _, err := db.Do(ctx, "CONFIG", "RESETSTAT"); err != nil {
		t.Fatal(err)
	}
	f()
	info, err := db.Do(ctx, "INFO", "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]int{}
	for _, line := range strings.Split(info.Str, "\r\n") {
		// cmdstat_get:calls=20,usec=31,usec_per_call=1.55,...
		name, stats, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(stats, ",")
		calls[name], err = strconv.Atoi(n)
		if err != nil {
			t.Fatalf("INFO commandstats line %q", line)
		}
	}
	return calls
}

func TestServe(t *testing.T) {
	t.Parallel()
	// 2100 items: category 7 holds 105, more than /list's limit of 100.
	_, db := seeded(t, 2100)
	normal := httptest.NewServer((&server{db: db}).routes())
	t.Cleanup(normal.Close)
	nPlusOne := httptest.NewServer((&server{db: db, nPlusOne: true}).routes())
	t.Cleanup(nPlusOne.Close)

	for _, c := range []struct {
		path string
		code int
		body string
	}{
		{"/items/7", 200, `{"id":7,"name":"red chair 7","price":555.33}` + "\n"},
		{"/items/2100", 200, `{"id":2100,"name":"red clock 2100","price":466}` + "\n"},
		{"/items/2101", 404, `{"error":"no item 2101"}` + "\n"},
		{"/items/0", 404, `{"error":"no item 0"}` + "\n"},
		{"/items/x", 400, `{"error":"item id \"x\": want a non-negative integer"}` + "\n"},
		{"/list?category=7&limit=3", 200, `{"category":7,"items":[` +
			`{"id":7,"name":"red chair 7","price":555.33},` +
			`{"id":27,"name":"swift clock 27","price":141.13},` +
			`{"id":47,"name":"plain shelf 47","price":725.93}]}` + "\n"},
		{"/list?category=20", 200, `{"category":20,"items":[]}` + "\n"},
		{"/list?limit=3", 400, `{"error":"category \"\": want a non-negative integer"}` + "\n"},
		{"/list?category=7&limit=0", 400, `{"error":"limit \"0\": want a positive integer"}` + "\n"},
	} {
		for _, srv := range []*httptest.Server{normal, nPlusOne} {
			code, body := get(t, srv.URL+c.path)
			if code != c.code || body != c.body {
				t.Errorf("GET %s (n+1 %t) = %d %q, want %d %q", c.path, srv == nPlusOne, code, body, c.code, c.body)
			}
		}
	}

	// Whole pages: the default limit, and a limit over the maximum.
	for _, c := range []struct {
		query string
		ids   int
	}{{"category=7", 20}, {"category=7&limit=1000", 100}, {"category=0&limit=100", 100}} {
		_, want := get(t, normal.URL+"/list?"+c.query)
		if _, got := get(t, nPlusOne.URL+"/list?"+c.query); got != want {
			t.Errorf("/list?%s: the N+1 build answers\n%s\nthe normal build\n%s", c.query, got, want)
		}
		var doc listBody
		if err := json.Unmarshal([]byte(want), &doc); err != nil {
			t.Fatalf("/list?%s: %v", c.query, err)
		}
		if len(doc.Items) != c.ids {
			t.Errorf("/list?%s: %d items, want %d", c.query, len(doc.Items), c.ids)
		}
		first := doc.Category // the category's smallest id
		if first == 0 {
			first = 20
		}
		for i, it := range doc.Items {
			if want := corpusItem(first + 20*i); it != want {
				t.Errorf("/list?%s: item %d is %+v, want %+v", c.query, i, it, want)
			}
		}
	}
}

func TestNPlusOneIssuesOneGETPerItem(t *testing.T) {
	t.Parallel()
	_, db := seeded(t, 2000)
	for _, c := range []struct {
		nPlusOne bool
		want     map[string]int
	}{
		{false, map[string]int{"zrange": 1, "mget": 1}},
		{true, map[string]int{"zrange": 1, "get": 50}},
	} {
		srv := httptest.NewServer((&server{db: db, nPlusOne: c.nPlusOne}).routes())
		calls := commandCalls(t, db, func() {
			if code, body := get(t, srv.URL+"/list?category=3&limit=50"); code != 200 {
				t.Fatalf("/list: %d %s", code, body)
			}
		})
		srv.Close()
		for _, cmd := range []string{"zrange", "mget", "get"} {
			if calls[cmd] != c.want[cmd] {
				t.Errorf("n+1 %t: /list called %s %d times, want %d (all calls: %v)", c.nPlusOne, cmd, calls[cmd], c.want[cmd], calls)
			}
		}
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	addr := startRedis(t)
	for _, c := range []struct {
		addr string
		code int
		body string
	}{
		{addr, 200, "ok\n"},
		{closedAddr(t), 503, "redis: dial tcp "},
	} {
		db := newClient(c.addr, 5*time.Second, 1)
		srv := httptest.NewServer((&server{db: db}).routes())
		code, body := get(t, srv.URL+"/healthz")
		srv.Close()
		db.Close()
		if code != c.code || !strings.HasPrefix(body, c.body) {
			t.Errorf("/healthz with redis at %s = %d %q, want %d %q…", c.addr, code, body, c.code, c.body)
		}
	}
}

// logLines is a writer that passes each write (a line of run's log) on.
type logLines chan string

func (l logLines) Write(p []byte) (int, error) {
	select {
	case l <- string(p):
	default:
	}
	return len(p), nil
}

// TestRun runs the command as main does: seed, serve with -n-plus-one,
// answer, stop when its context ends.
func TestRun(t *testing.T) {
	t.Parallel()
	addr := startRedis(t)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"-seed", "2000", "-redis", addr}, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if out.String() != "seeded 2000 items in 20 categories\n" {
		t.Errorf("-seed 2000 printed %q", out.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := make(logLines, 16)
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0", "-redis", addr, "-n-plus-one"}, io.Discard, log)
	}()
	var line string
	select {
	case line = <-log:
	case err := <-done:
		t.Fatalf("run returned before serving: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("run did not say where it listens within 10s")
	}
	listen, _, ok := strings.Cut(strings.TrimPrefix(line, "api: listening on "), " ")
	if !ok || !strings.HasSuffix(line, "(redis "+addr+", n+1 true)\n") {
		t.Fatalf("run's first line is %q", line)
	}
	db := newClient(addr, 5*time.Second, 1)
	defer db.Close()
	calls := commandCalls(t, db, func() {
		if code, body := get(t, "http://"+listen+"/healthz"); code != 200 {
			t.Errorf("/healthz: %d %s", code, body)
		}
		if code, body := get(t, "http://"+listen+"/list?category=1&limit=4"); code != 200 || !strings.HasPrefix(body, `{"category":1,"items":[{"id":1,"name":"quiet lamp 1","price":80.19},`) {
			t.Errorf("/list: %d %s", code, body)
		}
	})
	if calls["get"] != 4 || calls["mget"] != 0 {
		t.Errorf("with -n-plus-one, /list of 4 items called GET %d and MGET %d times, want 4 and 0", calls["get"], calls["mget"])
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run after its context ended: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("run did not return within 15s of its context ending")
	}
	if line := <-log; line != "api: stopped\n" {
		t.Errorf("run's last line is %q", line)
	}
}

func TestRunErrors(t *testing.T) {
	closed := closedAddr(t)
	for _, c := range []struct {
		args     []string
		nPlusOne string // the link-time default
		code     int
		msg      string
	}{
		{[]string{"-seed", "5", "-redis", closed, "-seed-wait", "200ms"}, "false", 1,
			"api: redis at " + closed + " did not answer PING within 200ms: dial tcp " + closed + ": connect: connection refused\n"},
		{[]string{"-seed", "0"}, "false", 2, "api: -seed 0: want at least 1 item\n"},
		{[]string{"-seed", "-3"}, "false", 2, "api: -seed -3: want at least 1 item\n"},
		{[]string{"serve"}, "false", 2, "api: unexpected arguments [\"serve\"]\n"},
		{[]string{"-redis-timeout", "0s"}, "false", 2, "api: -redis-timeout 0s: want a positive duration\n"},
		{[]string{"-nope"}, "false", 2, ""}, // the flag package said it, with the usage
		{nil, "maybe", 1, "api: built with -X main.defaultNPlusOne=\"maybe\": want true or false\n"},
	} {
		defaultNPlusOne = c.nPlusOne
		err := run(context.Background(), c.args, io.Discard, io.Discard)
		defaultNPlusOne = "false"
		var msg bytes.Buffer
		if code := exitCode(err, &msg); code != c.code || msg.String() != c.msg {
			t.Errorf("run %q: exit %d, said %q; want exit %d, %q", c.args, code, msg.String(), c.code, c.msg)
		}
	}
}

func TestReadValue(t *testing.T) {
	t.Parallel()
	bulk := strings.Repeat("x", maxBulk)
	for _, c := range []struct {
		in   string
		want Value
		err  string
	}{
		{in: "+OK\r\n", want: Value{Kind: '+', Str: "OK"}},
		{in: "-ERR wrong\r\n", want: Value{Kind: '-', Str: "ERR wrong"}},
		{in: ":-12\r\n", want: Value{Kind: ':', Int: -12}},
		{in: "$3\r\na\rc\r\n", want: Value{Kind: '$', Str: "a\rc"}},
		{in: "$0\r\n\r\n", want: Value{Kind: '$'}},
		{in: "$-1\r\n", want: Value{Kind: '$', Null: true}},
		{in: "*-1\r\n", want: Value{Kind: '*', Null: true}},
		{in: "*0\r\n", want: Value{Kind: '*', Array: []Value{}}},
		{in: "*3\r\n$1\r\na\r\n$-1\r\n*1\r\n:7\r\n", want: Value{Kind: '*', Array: []Value{
			{Kind: '$', Str: "a"}, {Kind: '$', Null: true}, {Kind: '*', Array: []Value{{Kind: ':', Int: 7}}},
		}}},
		{in: "$1048576\r\n" + bulk + "\r\n", want: Value{Kind: '$', Str: bulk}},
		{in: "$1048577\r\n", err: "redis protocol: bulk string of 1048577 bytes, over the limit of 1048576"},
		{in: "*100001\r\n", err: "redis protocol: array of 100001 elements, over the limit of 100000"},
		{in: strings.Repeat("*1\r\n", 8) + ":1\r\n", want: nested(8, Value{Kind: ':', Int: 1})},
		{in: strings.Repeat("*1\r\n", 9) + ":1\r\n", err: "redis protocol: arrays nested deeper than 8"},
		{in: "", err: "EOF"},
		{in: "$3\r\nab", err: "unexpected EOF"},
		{in: "*2\r\n:1\r\n", err: "unexpected EOF"},
		{in: "+OK", err: "unexpected EOF"},
		{in: "$3\r\nabcd\r\n", err: "redis protocol: bulk string of 3 bytes not ended by CRLF"},
		{in: "+OK\n", err: "redis protocol: line not ended by CRLF"},
		{in: "\r\n", err: "redis protocol: empty reply line"},
		{in: "%1\r\n", err: "redis protocol: unknown reply type '%'"},
		{in: "$-2\r\n", err: `redis protocol: length "-2"`},
		{in: ":1x\r\n", err: `redis protocol: integer "1x"`},
		{in: "+" + strings.Repeat("x", 16<<10) + "\r\n", err: "redis protocol: reply line longer than the read buffer"},
	} {
		got, err := readValue(newReader(strings.NewReader(c.in)), 0)
		name := c.in
		if len(name) > 40 {
			name = name[:40] + "…"
		}
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("readValue(%q): error %v, want %s", name, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("readValue(%q) = %+v, %v; want %+v", name, got, err, c.want)
		}
	}
}

func nested(depth int, v Value) Value {
	for range depth {
		v = Value{Kind: '*', Array: []Value{v}}
	}
	return v
}

// encodeValue writes v as Redis would: the inverse of readValue.
func encodeValue(w *bufio.Writer, v Value) {
	w.WriteByte(v.Kind)
	switch {
	case v.Null:
		w.WriteString("-1\r\n")
	case v.Kind == ':':
		fmt.Fprintf(w, "%d\r\n", v.Int)
	case v.Kind == '$':
		fmt.Fprintf(w, "%d\r\n%s\r\n", len(v.Str), v.Str)
	case v.Kind == '*':
		fmt.Fprintf(w, "%d\r\n", len(v.Array))
		for _, e := range v.Array {
			encodeValue(w, e)
		}
	default:
		fmt.Fprintf(w, "%s\r\n", v.Str)
	}
}

// FuzzRESP reads arbitrary bytes as a stream of replies: no panic, what
// the reading allocates stays within a constant plus a multiple of the
// bytes read (whatever lengths the bytes announce), and every reply read
// is read back the same after writing it out again.
func FuzzRESP(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", "-ERR x\r\n", ":42\r\n", "$5\r\nhello\r\n", "$-1\r\n", "*-1\r\n", "*0\r\n",
		"*2\r\n$1\r\na\r\n$-1\r\n", "*1\r\n*1\r\n*1\r\n:1\r\n", "$1048576\r\nab", "*100000\r\n:1\r\n",
		"+PONG\r\n$3\r\nabc\r\n:1\r\n", "$2\r\nab\n\r", "*3\r\n+a\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := newReader(bytes.NewReader(data))
		var vals []Value
		var err error
		for {
			var v Value
			if v, err = readValue(r, 0); err != nil {
				break
			}
			vals = append(vals, v)
		}
		runtime.ReadMemStats(&after)
		if n, limit := after.TotalAlloc-before.TotalAlloc, uint64(1<<20+256*len(data)); n > limit {
			t.Fatalf("reading %d bytes allocated %d bytes, over %d", len(data), n, limit)
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, errProtocol) {
			t.Fatalf("readValue: an error neither EOF nor protocol: %v", err)
		}
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		for _, v := range vals {
			encodeValue(w, v)
		}
		w.Flush()
		r = newReader(&buf)
		for i, want := range vals {
			got, err := readValue(r, 0)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("reply %d read back as %+v, %v; want %+v", i, got, err, want)
			}
		}
	})
}
