package httpload

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

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
		r := scenario.Request{Method: method, Target: target, Header: http.Header{key: {value}}, Body: body}
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
func netHTTPRefuses(r *scenario.Request) error {
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
