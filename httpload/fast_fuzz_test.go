package httpload

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/scenario"
)

// byteConn is a connection whose peer sent b and then closed, read a few
// bytes at a time so that the parser's buffer refills mid-line.
type byteConn struct {
	r     *bytes.Reader
	chunk int
}

func (c *byteConn) Read(p []byte) (int, error) {
	if len(p) > c.chunk {
		p = p[:c.chunk]
	}
	return c.r.Read(p)
}
func (c *byteConn) Write(p []byte) (int, error)      { return len(p), nil }
func (c *byteConn) Close() error                     { return nil }
func (c *byteConn) LocalAddr() net.Addr              { return nil }
func (c *byteConn) RemoteAddr() net.Addr             { return nil }
func (c *byteConn) SetDeadline(time.Time) error      { return nil }
func (c *byteConn) SetReadDeadline(time.Time) error  { return nil }
func (c *byteConn) SetWriteDeadline(time.Time) error { return nil }

// fastRead is what the fast client makes of answer to a request of
// method.
func fastRead(answer []byte, method string, chunk int) (code int, keep bool, n int64, err error) {
	fc := &fastCaller{buf: make([]byte, 64), conn: &byteConn{r: bytes.NewReader(answer), chunk: chunk}, head: method == "HEAD"}
	return fc.readResponse()
}

// netHTTPRead is what net/http's Transport makes of it: ReadResponse,
// informational answers skipped, the body read to its end.
func netHTTPRead(answer []byte, method string) (code int, keep bool, n int64, err error) {
	br := bufio.NewReader(bytes.NewReader(answer))
	req := &http.Request{Method: method}
	for informational := 0; ; informational++ {
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			return 0, false, 0, err
		}
		if resp.StatusCode >= 100 && resp.StatusCode <= 199 && resp.StatusCode != 101 {
			if informational == max1xx {
				return 0, false, 0, errors.New("too many 1xx")
			}
			continue
		}
		n, err = io.Copy(io.Discard, resp.Body)
		keep = !resp.Close && resp.StatusCode > 199
		return resp.StatusCode, keep, n, err
	}
}

var fuzzAnswers = []string{
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=y\r\nhello\r\n0\r\nT: 1\r\n\r\n",
	"HTTP/1.0 200 OK\r\n\r\nto the close",
	"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
	"HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n",
	"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
	"HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 1\r\n\r\nz",
	"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
	"HTTP/1.1 2000 OK\r\n\r\n",
	"HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\nContent-Length: 2\n\nok",
}

// FuzzResponse: for any bytes a server may send, the fast client reads
// what net/http reads: an answer when net/http reads one, with its code,
// its body's length and whether the connection is kept; and a failure
// when net/http fails.
func FuzzResponse(f *testing.F) {
	for _, a := range fuzzAnswers {
		f.Add([]byte(a), false, uint8(3))
		f.Add([]byte(a), true, uint8(64))
	}
	f.Fuzz(func(t *testing.T, answer []byte, isHead bool, chunk uint8) {
		if len(answer) > 1<<16 {
			return
		}
		// Trailers: net/http reads them with limits of its own (it looks
		// ahead in its 4 KiB buffer for their end); they are skipped.
		if bytes.Contains(bytes.ToLower(answer), []byte("chunked")) && !bytes.Contains(answer, []byte("0\r\n\r\n")) {
			return
		}
		// A framing header's value past maxFraming bytes is refused by
		// the fast client by design.
		for _, l := range bytes.Split(answer, []byte("\n")) {
			if len(l) > maxFraming {
				return
			}
		}
		method := "GET"
		if isHead {
			method = "HEAD"
		}
		fcode, fkeep, fn, ferr := fastRead(answer, method, max(int(chunk), 1))
		ncode, nkeep, nn, nerr := netHTTPRead(answer, method)
		if (ferr == nil) != (nerr == nil) {
			t.Fatalf("%q: fast: %v; net/http: %v", answer, ferr, nerr)
		}
		if ferr == nil && (fcode != ncode || fn != nn || fkeep != nkeep) {
			t.Fatalf("%q: fast: %d, %d bytes, keep %v; net/http: %d, %d bytes, keep %v", answer, fcode, fn, fkeep, ncode, nn, nkeep)
		}
	})
}

// FuzzRender: the fast client sends net/http's bytes for any request the
// stream can make, or refuses what net/http refuses.
func FuzzRender(f *testing.F) {
	f.Add("GET", "/a?b=c", "X-A", "1", []byte(nil))
	f.Add("POST", "/p", "Content-Type", "application/json", []byte(`{"a":1}`))
	f.Add("PUT", "/p", "User-Agent", " ua ", []byte(nil))
	f.Add("GET", "/p\x00", "X", "v", []byte(nil))
	f.Add("GET", "/", "X", "a\r\nInjected: 1", []byte(nil))
	f.Fuzz(func(t *testing.T, method, target, key, value string, body []byte) {
		if !strings.HasPrefix(target, "/") || !scenario.ValidToken(key) {
			// The stream's targets start with a slash; scenario.Load
			// refuses a header name that is not a token.
			return
		}
		key = http.CanonicalHeaderKey(key)
		r := load.Request{Method: method, Target: target, Header: http.Header{key: {value}}, Body: body}
		fast, ferr := renderRequest(nil, &r, "127.0.0.1:8080")
		nerr := netHTTPRefuses(&r)
		if (ferr == nil) != (nerr == nil) {
			t.Fatalf("%+v: fast: %v; net/http: %v", r, ferr, nerr)
		}
		if ferr != nil {
			return
		}
		if want := netHTTPBytes(t, &r, "127.0.0.1:8080"); string(fast) != want {
			t.Fatalf("%+v:\n fast     %q\n net/http %q", r, fast, want)
		}
	})
}

// netHTTPRefuses is the refusal of net/http's Transport to send r, or nil.
func netHTTPRefuses(r *load.Request) error {
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return nil, errNoDial
	}}
	p := &netClient{tr: tr, origin: url.URL{Scheme: "http", Host: "127.0.0.1:8080"}, statusOK: func(string, int) bool { return true }}
	c := p.Caller(0).(*netCaller)
	if err := c.Prepare(r); err != nil {
		return err
	}
	out := c.Call(context.Background())
	if !errors.Is(out.Err, errNoDial) {
		return out.Err
	}
	// It would dial, then write the request, which may still refuse.
	_, err := netHTTPWrite(r, "127.0.0.1:8080")
	return err
}

var errNoDial = errors.New("no dial in this test")

// loopConn hands out the same answer over and over.
type loopConn struct {
	byteConn
	answer []byte
	off    int
}

func (c *loopConn) Read(p []byte) (int, error) {
	n := copy(p, c.answer[c.off:])
	c.off = (c.off + n) % len(c.answer)
	return n, nil
}

// BenchmarkReadResponse is the fast client's parse of nginx's answer to a
// small static file, without the network.
func BenchmarkReadResponse(b *testing.B) {
	answer := []byte("HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Thu, 03 Dec 2026 07:10:00 GMT\r\n" +
		"Content-Type: application/json\r\nContent-Length: 8\r\nLast-Modified: Thu, 03 Dec 2026 06:59:00 GMT\r\n" +
		"Connection: keep-alive\r\nETag: \"692fe0b4-8\"\r\nAccept-Ranges: bytes\r\n\r\n{\"a\":1}\n")
	fc := &fastCaller{buf: make([]byte, readBuf), conn: &loopConn{answer: answer}}
	b.ReportAllocs()
	b.SetBytes(int64(len(answer)))
	for b.Loop() {
		fc.r, fc.w = 0, 0
		if code, _, n, err := fc.readResponse(); code != 200 || n != 8 || err != nil {
			b.Fatal(code, n, err)
		}
	}
}

// recConn records what is written to it and answers every request with
// an empty 200, so a caller can send a whole stream on one connection.
type recConn struct {
	byteConn
	sent bytes.Buffer
	owed int // answers owed: one per Write of a request
}

func (c *recConn) Write(p []byte) (int, error) {
	c.owed++
	return c.sent.Write(p)
}

func (c *recConn) Read(p []byte) (int, error) {
	const ok = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"
	if c.owed == 0 {
		return 0, io.EOF
	}
	c.owed--
	return copy(p, ok), nil
}

// streamScenario is a scenario whose classes are constant and templated
// requests of different lengths, and mixes of them: the sequences that
// once made the fast client write a templated request with an earlier
// one's bytes.
const streamScenario = `version: 1
name: stream
seed: %d
targets:
  baseline: {url: "http://127.0.0.1:1"}
  candidate: {url: "http://127.0.0.1:1"}
load: {concurrency: [1], duration: 1s}
data:
  term: [a, beta, gamma, deltadeltadelta, "x y", "%%2F"]
classes:
  - {name: items, request: GET /items?limit=10}
  - {name: long, request: "GET /a/much/longer/constant/path?with=a&query=string&that=is&long=yes"}
  - {name: search, request: 'GET /search?q={{pick "term"}}'}
  - name: post
    request:
      method: POST
      path: /p
      headers: {X-Term: '{{pick "term"}}', Content-Type: application/json}
      body: '{"q":"{{pick "term"}}","n":{{int 1 999999}}}'
  - {name: mix, mix: {items: %d, search: %d, long: %d, post: %d}}
  - {name: mix2, mix: {items: 1, search: 1}}
`

// FuzzStream: a whole sequence of requests, constant and templated,
// pure classes and mixes, sent by one fast caller on one connection, is
// byte for byte what net/http writes for the same sequence. FuzzRender
// checks one request; this checks that a request never carries bytes of
// the one before it.
func FuzzStream(f *testing.F) {
	f.Add(uint64(1), uint8(1), uint8(1), uint8(1), uint8(1), "mix", uint16(200))
	f.Add(uint64(7), uint8(3), uint8(1), uint8(0), uint8(0), "mix2", uint16(300))
	f.Add(uint64(9), uint8(1), uint8(5), uint8(2), uint8(1), "mix", uint16(500))
	f.Fuzz(func(t *testing.T, seed uint64, wi, ws, wl, wp uint8, class string, n uint16) {
		if class != "mix" && class != "mix2" && class != "search" && class != "post" {
			class = "mix"
		}
		w := func(x uint8) int { return int(x%8) + 1 }
		path := filepath.Join(t.TempDir(), "s.yml")
		text := fmt.Sprintf(streamScenario, seed, w(wi), w(ws), w(wl), w(wp))
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		sc, err := scenario.Load(path, "", func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		host := "127.0.0.1:1"
		conn := &recConn{byteConn: byteConn{chunk: 1 << 16}}
		fc := &fastCaller{c: &fastClient{host: host, statusOK: func(string, int) bool { return true }}, buf: make([]byte, readBuf), conn: conn}
		var want strings.Builder
		st := sc.Stream(sc.Variants[0].Name, class, 1, 0, 0)
		for i := 0; i < int(n%1000)+1; i++ {
			r := st.Next()
			if err := fc.Prepare(r); err != nil {
				t.Fatal(err)
			}
			if out := fc.Call(context.Background()); out.Err != nil || out.Code != 200 {
				t.Fatalf("request %d: %+v", i, out)
			}
			want.WriteString(netHTTPBytes(t, r, host))
		}
		if got := conn.sent.String(); got != want.String() {
			i := 0
			for i < len(got) && i < len(want.String()) && got[i] == want.String()[i] {
				i++
			}
			lo := max(i-80, 0)
			t.Fatalf("the stream differs from net/http's at byte %d:\n fast     %q\n net/http %q", i, got[lo:min(i+80, len(got))], want.String()[lo:min(i+80, want.Len())])
		}
	})
}
