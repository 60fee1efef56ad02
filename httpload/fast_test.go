package httpload

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/load/loadtest"
)

// rawServer answers every request on a loopback listener with what
// answer writes, given the request's head (up to its blank line, the body
// of a Content-Length read after it); answer returns false to close the
// connection. It is the server the fast client's framing is tested
// against: every byte it sends is the test's.
func rawServer(t testing.TB, answer func(w *bufio.Writer, head string) (keep bool)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	conns := map[net.Conn]bool{}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns[c] = true
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				br, bw := bufio.NewReader(c), bufio.NewWriter(c)
				for {
					head, err := readHead(br)
					if err != nil {
						return
					}
					keep := answer(bw, head)
					if bw.Flush() != nil || !keep {
						return
					}
				}
			})
		}
	})
	return "http://" + ln.Addr().String()
}

// readHead reads a request's head and discards its Content-Length body.
func readHead(br *bufio.Reader) (string, error) {
	var b strings.Builder
	length := 0
	for {
		l, err := br.ReadString('\n')
		if err != nil {
			return "", err
		}
		b.WriteString(l)
		if l == "\r\n" {
			break
		}
		if k, v, ok := strings.Cut(l, ":"); ok && strings.EqualFold(k, "Content-Length") {
			fmt.Sscan(strings.TrimSpace(v), &length)
		}
	}
	_, err := io.CopyN(io.Discard, br, int64(length))
	return b.String(), err
}

// both runs l with each client and fails unless their counts agree; it
// returns the fast client's result.
func both(t *testing.T, l Load) load.Result {
	t.Helper()
	var res [2]load.Result
	for i, c := range []Client{Fast, NetHTTP} {
		l.Client = c
		r, err := Generate(t.Context(), l)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		res[i] = r
	}
	f, n := res[0], res[1]
	if f.Requests != n.Requests || f.Answered != n.Answered || f.Errors != n.Errors || f.Bytes != n.Bytes ||
		f.InFlight != n.InFlight || fmt.Sprint(f.Statuses) != fmt.Sprint(n.Statuses) {
		t.Errorf("the clients disagree:\n fast     requests %d answered %d errors %v statuses %v bytes %d in flight %d\n net/http requests %d answered %d errors %v statuses %v bytes %d in flight %d",
			f.Requests, f.Answered, f.Errors, f.Statuses, f.Bytes, f.InFlight,
			n.Requests, n.Answered, n.Errors, n.Statuses, n.Bytes, n.InFlight)
	}
	return f
}

func finite(c, n int, reqs ...load.Request) load.Loop {
	return load.Loop{Concurrency: c, Duration: long, Timeout: 5 * time.Second, Source: loadtest.Finite(n, reqs...)}
}

func TestFastChunked(t *testing.T) {
	t.Parallel()
	// net/http's server chunks what it flushes before the handler ends;
	// the raw one adds extensions and a trailer.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := range 5 {
			fmt.Fprintf(w, "part %d;", i)
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	r := both(t, Load{URL: srv.URL, Loop: finite(2, 10, loadtest.Get("a", "/"))})
	if r.Answered != 20 || r.Bytes != int64(20*5*len("part 0;")) || r.ErrorCount() != 0 {
		t.Errorf("chunked: %+v", r)
	}
	raw := rawServer(t, func(w *bufio.Writer, _ string) bool {
		w.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
			"5;ext=1\r\nhello\r\n" + "A\r\n0123456789\r\n" + "0\r\nX-Trailer: t\r\n\r\n")
		return true
	})
	r = both(t, Load{URL: raw, Loop: finite(2, 10, loadtest.Get("a", "/"))})
	if r.Answered != 20 || r.Bytes != 20*15 || r.ErrorCount() != 0 {
		t.Errorf("chunked with extensions and a trailer: %+v", r)
	}
}

func TestFastServerClosesAfterEachResponse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, header string
	}{
		{"saying so", "Connection: close\r\n"},
		// An HTTP/1.1 answer that does not say so: the next request on
		// the connection finds it closed and is sent again on a new
		// one, as net/http does for a GET.
		{"silently", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw := rawServer(t, func(w *bufio.Writer, _ string) bool {
				w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + tc.header + "\r\nok")
				return false
			})
			r := both(t, Load{URL: raw, Loop: finite(2, 20, loadtest.Get("a", "/"))})
			if r.Answered != 40 || r.Bytes != 80 || r.ErrorCount() != 0 {
				t.Errorf("%+v", r)
			}
		})
	}
	// An HTTP/1.0 answer without a length ends at the close.
	raw := rawServer(t, func(w *bufio.Writer, _ string) bool {
		w.WriteString("HTTP/1.0 200 OK\r\n\r\nuntil the end")
		return false
	})
	r := both(t, Load{URL: raw, Loop: finite(1, 10, loadtest.Get("a", "/"))})
	if r.Answered != 10 || r.Bytes != 10*int64(len("until the end")) || r.ErrorCount() != 0 {
		t.Errorf("HTTP/1.0 to the close: %+v", r)
	}
}

func TestFastSlowloris(t *testing.T) {
	t.Parallel()
	// The head arrives a byte at a time, slower than the timeout allows.
	raw := rawServer(t, func(w *bufio.Writer, _ string) bool {
		for _, b := range []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") {
			w.WriteByte(b)
			if w.Flush() != nil {
				return false
			}
			time.Sleep(50 * time.Millisecond)
		}
		return true
	})
	l := Load{URL: raw, Loop: finite(2, 3, loadtest.Get("a", "/"))}
	l.Timeout = 200 * time.Millisecond
	r := both(t, l)
	if r.Requests != 6 || r.Errors[load.Timeout] != 6 || r.Answered != 0 {
		t.Errorf("%+v", r)
	}
}

func TestFastHugeBody(t *testing.T) {
	// Not parallel: it bounds what the whole process allocates meanwhile.
	const size = 1 << 30
	zeros := make([]byte, 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(size))
		for range size / len(zeros) {
			if _, err := w.Write(zeros); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	// A gibibyte takes what it takes on a loaded machine: the test is of
	// memory, not speed.
	huge := finite(1, 1, loadtest.Get("a", "/"))
	huge.Timeout = 10 * time.Minute
	r, err := Generate(t.Context(), Load{URL: srv.URL, Loop: huge})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if r.Answered != 1 || r.Bytes != size || r.ErrorCount() != 0 {
		t.Errorf("fast: %+v", r)
	}
	// The body is counted, not kept: what the whole run allocated, the
	// server's buffers included, is a sliver of it.
	if got := after.TotalAlloc - before.TotalAlloc; got > size/16 {
		t.Errorf("a 1 GiB body allocated %d MiB", got>>20)
	}
	l := Load{URL: srv.URL, Client: NetHTTP, Loop: huge}
	if n, err := Generate(t.Context(), l); err != nil || n.Bytes != r.Bytes || n.Answered != r.Answered {
		t.Errorf("net/http: %+v, %v", n, err)
	}
}

func TestFastMalformedAnswers(t *testing.T) {
	t.Parallel()
	for _, answer := range []string{
		"HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1\r\n\r\n",
		"HTTP/1.10 200 OK\r\n\r\n",
		"garbage\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nok",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", // then the close
	} {
		t.Run(strings.Fields(answer)[0]+" "+fmt.Sprintf("%.20q", answer), func(t *testing.T) {
			t.Parallel()
			raw := rawServer(t, func(w *bufio.Writer, _ string) bool {
				w.WriteString(answer)
				return false
			})
			r := both(t, Load{URL: raw, Loop: finite(1, 3, loadtest.Get("a", "/"))})
			if r.Requests != 3 || r.Answered != 0 || r.ErrorCount() != 3 {
				t.Errorf("%+v", r)
			}
		})
	}
}

func TestFastContinue(t *testing.T) {
	t.Parallel()
	post := load.Request{Class: "a", Method: "POST", Target: "/", Body: []byte("payload"),
		Header: http.Header{"Expect": {"100-continue"}}}
	// net/http's server says 100 Continue when the handler reads the body.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	}))
	defer srv.Close()
	r := both(t, Load{URL: srv.URL, Loop: finite(2, 5, post)})
	if r.Answered != 10 || r.Bytes != 10*int64(len("payload")) || r.ErrorCount() != 0 {
		t.Errorf("net/http server: %+v", r)
	}
	// Informational answers before the final one are skipped.
	raw := rawServer(t, func(w *bufio.Writer, _ string) bool {
		w.WriteString("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </s.css>\r\n\r\n" +
			"HTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok")
		return true
	})
	r = both(t, Load{URL: raw, Loop: finite(2, 5, post)})
	if r.Statuses["201"] != 10 || r.Bytes != 20 || r.ErrorCount() != 0 {
		t.Errorf("raw server: %+v", r)
	}
}

func TestFastNoBody(t *testing.T) {
	t.Parallel()
	// HEAD is answered with the GET's Content-Length and no body; 204
	// and 304 have none either.
	raw := rawServer(t, func(w *bufio.Writer, head string) bool {
		switch {
		case strings.HasPrefix(head, "HEAD "):
			w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
		case strings.HasPrefix(head, "GET /204 "):
			w.WriteString("HTTP/1.1 204 No Content\r\n\r\n")
		default:
			w.WriteString("HTTP/1.1 304 Not Modified\r\nContent-Length: 1000\r\n\r\n")
		}
		return true
	})
	head := load.Request{Class: "a", Method: "HEAD", Target: "/"}
	l := Load{URL: raw, StatusOK: func(_ string, code int) bool { return code < 400 },
		Loop: finite(2, 12, head, loadtest.Get("a", "/204"), loadtest.Get("a", "/304"))}
	r := both(t, l)
	if r.Answered != 24 || r.Bytes != 0 || r.ErrorCount() != 0 || r.Statuses["200"] != 8 || r.Statuses["204"] != 8 || r.Statuses["304"] != 8 {
		t.Errorf("%+v", r)
	}
	// And against net/http's server, which writes no HEAD body.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "a body HEAD does not get")
	}))
	defer srv.Close()
	r = both(t, Load{URL: srv.URL, Loop: finite(2, 10, head)})
	if r.Answered != 20 || r.Bytes != 0 || r.ErrorCount() != 0 {
		t.Errorf("net/http server: %+v", r)
	}
}

func TestFastSendsNetHTTPsBytes(t *testing.T) {
	t.Parallel()
	// What the server receives from each client, request by request.
	var mu sync.Mutex
	var got []string
	raw := rawServer(t, func(w *bufio.Writer, head string) bool {
		mu.Lock()
		got = append(got, head)
		mu.Unlock()
		w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		return true
	})
	reqs := []load.Request{
		loadtest.Get("a", "/a?x=1&y=%20"),
		{Class: "b", Method: "POST", Target: "/b", Header: http.Header{"X-Z": {"1"}, "Accept": {"a", "b"}, "User-Agent": {"mine"}}, Body: []byte("{}")},
		{Class: "c", Method: "DELETE", Target: "/c"},
		{Class: "d", Method: "PUT", Target: "/d"},
	}
	var heads [2][]string
	for i, c := range []Client{Fast, NetHTTP} {
		mu.Lock()
		got = nil
		mu.Unlock()
		if _, err := Generate(t.Context(), Load{URL: raw, Client: c, Loop: finite(1, len(reqs), reqs...)}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		heads[i] = got
		mu.Unlock()
	}
	for i := range heads {
		slices.Sort(heads[i])
	}
	if fmt.Sprint(heads[0]) != fmt.Sprint(heads[1]) || len(heads[0]) != len(reqs) {
		t.Errorf("fast sends\n%q\nnet/http sends\n%q", heads[0], heads[1])
	}
}

func TestFastRefusesWhatNetHTTPRefuses(t *testing.T) {
	t.Parallel()
	raw := rawServer(t, func(w *bufio.Writer, _ string) bool {
		w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		return true
	})
	for _, r := range []load.Request{
		{Class: "a", Method: "GET", Target: "/a\nb"},
		{Class: "a", Method: "GET", Target: "/", Header: http.Header{"X": {"a\r\nInjected: 1"}}},
		{Class: "a", Method: "GET", Target: "/", Header: http.Header{"Bad Name": {"1"}}},
		{Class: "a", Method: "G T", Target: "/"},
	} {
		res := both(t, Load{URL: raw, Loop: finite(1, 2, r)})
		if res.Requests != 2 || res.Errors[load.Other] != 2 {
			t.Errorf("%+v: %+v", r, res)
		}
	}
}

func TestFastUnsolicitedBytes(t *testing.T) {
	t.Parallel()
	// Bytes past the answer's end: the connection is not trusted again.
	raw := rawServer(t, func(w *bufio.Writer, _ string) bool {
		w.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA")
		return true
	})
	r, err := Generate(t.Context(), Load{URL: raw, Loop: finite(1, 5, loadtest.Get("a", "/"))})
	if err != nil || r.Answered != 5 || r.Bytes != 10 || r.ErrorCount() != 0 {
		t.Errorf("%+v %v", r, err)
	}
}

func TestRenderMatchesNetHTTP(t *testing.T) {
	t.Parallel()
	for _, r := range []load.Request{
		loadtest.Get("a", "/"),
		loadtest.Get("a", "/p/%2F?q=a%20b&r"),
		loadtest.Get("a", "/p?"),
		{Method: "POST", Target: "/post", Body: []byte(`{"a":1}`), Header: http.Header{"Content-Type": {"application/json"}}},
		{Method: "POST", Target: "/empty"},
		{Method: "PATCH", Target: "/empty"},
		{Method: "OPTIONS", Target: "/o"},
		{Method: "GET", Target: "/h", Header: http.Header{"User-Agent": {" spaced "}, "Host": {"ignored"}, "Content-Length": {"99"}, "B": {"2", " 1 "}, "A": {""}}},
		{Method: "GET", Target: "/u", Header: http.Header{"User-Agent": {""}}},
		{Method: "GET", Target: "//double"},
		{Method: "GET", Target: "rel?x=1"},
	} {
		fast, err := renderRequest(nil, &r, "127.0.0.1:8080")
		if err != nil {
			t.Errorf("%q: %v", r.Target, err)
			continue
		}
		if want := netHTTPBytes(t, &r, "127.0.0.1:8080"); string(fast) != want {
			t.Errorf("%q:\n fast     %q\n net/http %q", r.Target, fast, want)
		}
	}
}

// netHTTPBytes is what net/http writes for r, prepared as the net/http
// client prepares it.
func netHTTPBytes(t testing.TB, r *load.Request, host string) string {
	t.Helper()
	b, err := netHTTPWrite(r, host)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func netHTTPWrite(r *load.Request, host string) (string, error) {
	p := &netClient{origin: url.URL{Scheme: "http", Host: host}, statusOK: func(string, int) bool { return true }}
	c := p.Caller(0).(*netCaller)
	if err := c.Prepare(r); err != nil {
		return "", err
	}
	req, _ := http.NewRequest("GET", "http://x/", nil)
	req.Method, req.URL, req.Host, req.Header = c.method, &c.u, "", c.header
	if c.body != nil {
		req.Body = io.NopCloser(bytes.NewReader(c.body))
		req.ContentLength = int64(len(c.body))
	}
	var b bytes.Buffer
	err := req.Write(&b)
	return b.String(), err
}

// TestFastTLS: an https target is reached over TLS, its certificate
// verified, with the same counts as net/http's; one the roots do not
// vouch for is refused by both.
func TestFastTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS == nil {
			http.Error(w, "not TLS", 400)
			return
		}
		io.WriteString(w, "secure")
	}))
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	r := both(t, Load{URL: srv.URL, RootCAs: roots, Loop: finite(2, 10, loadtest.Get("a", "/"))})
	if r.Answered != 20 || r.Bytes != 20*6 || r.ErrorCount() != 0 {
		t.Errorf("%+v", r)
	}
	r = both(t, Load{URL: srv.URL, Loop: finite(1, 2, loadtest.Get("a", "/"))})
	if r.Answered != 0 || r.Errors[load.Other] != 2 {
		t.Errorf("unverified certificate: %+v", r)
	}
}
