package httpload

// The fast path: a minimal HTTP/1.1 client made for load. Each worker
// holds one keep-alive connection and a read buffer of its own; a request
// is rendered into bytes once (a constant one once for the run) and
// written whole; a response is parsed in place in the buffer (the status
// line and the three headers that frame it: Content-Length,
// Transfer-Encoding, Connection) and its body counted and discarded,
// Content-Length, chunked or to the connection's close alike. Nothing is
// allocated per request once the connection is up. The bytes on the wire
// are net/http's for the same request (render_test.go compares them), and
// so are the counts (fast_test.go runs both clients against the same
// servers): status codes, error kinds, the retry of an idempotent request
// on a reused connection the server had closed, no redirect followed.

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/benchgate/benchgate/load"
)

const (
	// readBuf is each worker's read buffer: a response's head must fit
	// in it, else it grows up to maxHead.
	readBuf = 16 << 10
	// maxHead bounds a response's status line and headers, as
	// net/http's Transport does by default (MaxResponseHeaderBytes).
	maxHead = 10 << 20
)

// fastClient is the Protocol of the fast path.
type fastClient struct {
	addr     string      // host:port dialled
	host     string      // the Host header
	tls      *tls.Config // nil for http
	dialer   net.Dialer
	statusOK func(string, int) bool

	mu      sync.Mutex
	callers []*fastCaller
}

func newFastClient(base *url.URL, timeout time.Duration, roots *x509.CertPool, statusOK func(string, int) bool) (*fastClient, error) {
	c := &fastClient{
		host:     base.Host,
		dialer:   net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second},
		statusOK: statusOK,
	}
	port := base.Port()
	switch base.Scheme {
	case "http":
		if port == "" {
			port = "80"
		}
	case "https":
		if port == "" {
			port = "443"
		}
		c.tls = &tls.Config{ServerName: base.Hostname(), NextProtos: []string{"http/1.1"}, RootCAs: roots}
	default:
		return nil, fmt.Errorf("load: unsupported scheme %q in target URL", base.Scheme)
	}
	c.addr = net.JoinHostPort(base.Hostname(), port)
	return c, nil
}

func (c *fastClient) Caller(int) load.Caller {
	fc := &fastCaller{c: c, buf: make([]byte, readBuf)}
	c.mu.Lock()
	c.callers = append(c.callers, fc)
	c.mu.Unlock()
	return fc
}

func (c *fastClient) Status(code int) string { return strconv.Itoa(code) }

// Close closes every worker's connection; the workers have stopped.
func (c *fastClient) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, fc := range c.callers {
		fc.closeConn()
	}
}

// fastCaller is one worker's client.
type fastCaller struct {
	c *fastClient

	// The connection and whether it served a response already (a
	// request that finds a reused connection closed is sent again).
	// connMu guards conn against interrupt, which runs on the context's
	// goroutine.
	connMu      sync.Mutex
	conn        net.Conn
	inCall      bool // a call is in flight: an interrupt ends it
	interrupted bool // it did: conn's deadline is in the past
	gen         int  // the call context's; an interrupt of an older one is void
	reused      bool

	// The read buffer: buf[r:w] is read and not yet parsed. got counts
	// the bytes of the current answer read so far.
	buf  []byte
	r, w int
	got  int64

	// The prepared request.
	class      string
	req        []byte // rendered; a constant one's is kept in consts
	head       bool   // HEAD: no body comes back
	idempotent bool   // may be sent again on a new connection
	close      bool   // the request says Connection: close
	own        []byte // the buffer a non-constant request renders into
	consts     []constReq

	// The call context an interrupt is registered on (context.AfterFunc,
	// once per context: the core keeps it from call to call).
	ctx  context.Context
	stop func() bool
}

// constReq is a constant request of a class, rendered once.
type constReq struct {
	class string
	b     []byte
}

// Prepare renders r, or takes the rendering of a constant request of the
// same class.
func (fc *fastCaller) Prepare(r *load.Request) error {
	fc.class = r.Class
	fc.head = r.Method == "HEAD"
	fc.idempotent = idempotent(r)
	fc.close = false
	for _, v := range r.Header["Connection"] {
		fc.close = fc.close || hasToken(v, "close")
	}
	if r.Constant {
		for _, k := range fc.consts {
			if k.class == r.Class {
				fc.req = k.b
				return nil
			}
		}
	}
	// A constant request is kept for the caller's life in a buffer of its
	// own: rendered into fc.own, it would share the array the next
	// templated request is rendered into, and be sent with its bytes.
	dst := fc.own[:0]
	if r.Constant {
		dst = nil
	}
	b, err := renderRequest(dst, r, fc.c.host)
	if err != nil {
		return err
	}
	if r.Constant {
		fc.consts = append(fc.consts, constReq{class: r.Class, b: b})
	} else {
		fc.own = b
	}
	fc.req = b
	return nil
}

// idempotent reports whether net/http would send r again after its reused
// connection broke before any answer (Request.isReplayable).
func idempotent(r *load.Request) bool {
	switch r.Method {
	case "", "GET", "HEAD", "OPTIONS", "TRACE":
		return true
	}
	_, a := r.Header["Idempotency-Key"]
	_, b := r.Header["X-Idempotency-Key"]
	return a || b
}

// interrupt ends the call in flight under the call context of generation
// gen: it was cancelled (its timer, the window, the run). A context that
// ends between calls leaves the connection be: a call drained past its
// window's end keeps it, as net/http does.
func (fc *fastCaller) interrupt(gen int) {
	fc.connMu.Lock()
	if gen != fc.gen || !fc.inCall {
		fc.connMu.Unlock()
		return
	}
	fc.interrupted = true
	if fc.conn != nil {
		fc.conn.SetDeadline(aLongTimeAgo)
	}
	fc.connMu.Unlock()
}

var aLongTimeAgo = time.Unix(1, 0)

// errInterrupted is a call whose context had ended before it could start.
var errInterrupted = errors.New("call cancelled")

// Call sends the prepared request and reads its answer to the end.
func (fc *fastCaller) Call(ctx context.Context) load.Outcome {
	if ctx != fc.ctx {
		if fc.stop != nil {
			fc.stop()
		}
		fc.connMu.Lock()
		fc.gen++
		gen := fc.gen
		fc.connMu.Unlock()
		fc.ctx, fc.stop = ctx, context.AfterFunc(ctx, func() { fc.interrupt(gen) })
	}
	fc.connMu.Lock()
	fc.inCall = true
	fc.connMu.Unlock()
	defer fc.endCall()
	if err := ctx.Err(); err != nil {
		// Ended before the call began: nothing can interrupt it now.
		return load.Outcome{Kind: load.Other, Err: err, Spent: true}
	}
	for attempt := 0; ; attempt++ {
		if fc.conn != nil && fc.r != fc.w {
			// The server sent what nobody asked for: net/http drops
			// such a connection.
			fc.closeConn()
		}
		if fc.conn == nil {
			if err := fc.dial(ctx); err != nil {
				return load.Outcome{Kind: classify(err), Err: err, Spent: true}
			}
		}
		reused := fc.reused
		code, n, answered, err := fc.roundTrip()
		if err == nil {
			out := load.Outcome{Code: code, Bytes: n}
			if !fc.c.statusOK(fc.class, code) {
				out.Kind = load.Status
			}
			return out
		}
		fc.closeConn()
		if reused && !answered && fc.idempotent && attempt == 0 && ctx.Err() == nil {
			// The server closed the idle connection as the request
			// went out: net/http sends it again on a new one.
			continue
		}
		return load.Outcome{Kind: classify(err), Err: err, Spent: true}
	}
}

// endCall ends a call: a connection it was interrupted on cannot serve
// again.
func (fc *fastCaller) endCall() {
	fc.connMu.Lock()
	fc.inCall = false
	if fc.interrupted {
		fc.closeConnLocked()
		fc.interrupted = false
	}
	fc.connMu.Unlock()
}

// dial opens the worker's connection (and its TLS session).
func (fc *fastCaller) dial(ctx context.Context) error {
	conn, err := fc.c.dialer.DialContext(ctx, "tcp", fc.c.addr)
	if err != nil {
		return err
	}
	if fc.c.tls != nil {
		tc := tls.Client(conn, fc.c.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return err
		}
		conn = tc
	}
	fc.connMu.Lock()
	defer fc.connMu.Unlock()
	if fc.interrupted {
		conn.Close()
		return errInterrupted
	}
	fc.conn, fc.reused, fc.r, fc.w = conn, false, 0, 0
	return nil
}

func (fc *fastCaller) closeConn() {
	fc.connMu.Lock()
	fc.closeConnLocked()
	fc.connMu.Unlock()
}

func (fc *fastCaller) closeConnLocked() {
	if fc.conn != nil {
		fc.conn.Close()
		fc.conn = nil
	}
	fc.r, fc.w = 0, 0
}

// roundTrip writes the request and reads the answer on fc.conn. answered
// says a byte of the answer came back, so the request must not be sent
// again.
func (fc *fastCaller) roundTrip() (code int, n int64, answered bool, err error) {
	if _, err := fc.conn.Write(fc.req); err != nil {
		return 0, 0, false, err
	}
	fc.r, fc.w, fc.got = 0, 0, 0
	// Let the other workers run before asking for the answer: it cannot
	// be there yet, and a read now would mostly find nothing and park.
	// Asked later, the read more often finds the answer, and the process
	// idles (and wakes, slowly on a VM) less: 4-6% more requests a
	// second against nginx at c=32, measured alternately
	// (docs/loadgen.md). With one worker it returns at once.
	runtime.Gosched()
	code, keep, n, err := fc.readResponse()
	if err != nil {
		return 0, 0, fc.got > 0, err
	}
	if keep && !fc.close {
		fc.reused = true
	} else {
		fc.closeConn()
	}
	return code, n, true, nil
}
