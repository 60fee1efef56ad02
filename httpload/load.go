// Package httpload is benchgate's HTTP load: the protocol that package
// load's closed loop drives. Each worker has its own Caller, which turns
// the seeded stream's requests into requests on the target's origin,
// sends them without following redirects, reads every body to its end
// (counting its bytes) so the connection is reused, and tells a status
// the class does not expect from a transport failure, classified by kind.
//
// Two clients speak it. The fast one, the default, is a minimal
// HTTP/1.1 client at the cost per request of wrk's: one keep-alive
// connection per worker, requests rendered into bytes, responses parsed
// in place. NetHTTP is net/http's Transport, shared by the workers, for
// what the fast one does not do; both send the same bytes and count the
// same answers.
package httpload

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/scenario"
)

// Load is one rung of closed-loop HTTP load.
type Load struct {
	load.Loop
	URL string // base URL; a request's Target is appended to its Origin
	// StatusOK says whether a status code counts as success for a request
	// of the class; nil means any 2xx.
	StatusOK func(class string, code int) bool
	// Client is the client that sends the requests: Fast (also "") or
	// NetHTTP, the names of scenario's load.http_client.
	Client Client
	// RootCAs verifies an https target's certificate; nil means the
	// system's roots.
	RootCAs *x509.CertPool
}

// Client names an HTTP client of the load.
type Client string

const (
	Fast    Client = scenario.HTTPClientFast    // the minimal HTTP/1.1 client of fast.go
	NetHTTP Client = scenario.HTTPClientNetHTTP // net/http's Transport, HTTP/1.1
	HTTP2   Client = scenario.HTTPClientHTTP2   // net/http's Transport, HTTP/2 only (h2c for http)
)

// Generate puts l on its target (see load.Generate). Statuses are keyed
// by the code in decimal ("200"); Bytes sums the response bodies.
func Generate(ctx context.Context, l Load) (load.Result, error) {
	return load.Generate(ctx, l.Loop, l.open)
}

// NewSession is a session of l (see load.Session): l's Warmup, Duration
// and Started are the caller's to apply.
func NewSession(ctx context.Context, l Load) (*load.Session, error) {
	return load.NewSession(ctx, l.Loop, l.open)
}

// open checks the URL and makes the client the workers share.
func (l Load) open(context.Context) (load.Protocol, error) {
	base, err := url.Parse(l.URL)
	if err != nil || base.Host == "" {
		return nil, fmt.Errorf("load: bad target URL %q", l.URL)
	}
	statusOK := l.StatusOK
	if statusOK == nil {
		statusOK = func(_ string, code int) bool { return code >= 200 && code < 300 }
	}
	switch l.Client {
	case Fast, "":
		return newFastClient(base, l.CallTimeout(), l.RootCAs, statusOK)
	case NetHTTP, HTTP2:
	default:
		return nil, fmt.Errorf("load: unknown HTTP client %q", string(l.Client))
	}
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: l.CallTimeout(), KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        l.Concurrency,
		MaxIdleConnsPerHost: l.Concurrency,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	if l.RootCAs != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: l.RootCAs}
	}
	if l.Client == HTTP2 {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP2(true)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	return &netClient{
		tr:       tr,
		origin:   Origin(base),
		statusOK: statusOK,
	}, nil
}

// Origin is the scheme, userinfo and host of base. Every request, load
// and health check alike, goes to the origin plus its own target: any
// path of the base URL is not part of it, and no slash is doubled.
func Origin(base *url.URL) url.URL {
	return url.URL{Scheme: base.Scheme, Host: base.Host, User: base.User}
}

// netClient is the Protocol of net/http: the transport and what every
// worker's Caller starts from.
type netClient struct {
	tr       *http.Transport
	origin   url.URL
	statusOK func(string, int) bool
}

func (c *netClient) Caller(int) load.Caller {
	return &netCaller{
		tr:       c.tr,
		statusOK: c.statusOK,
		buf:      make([]byte, 32<<10),
		u:        c.origin,
		noHdr:    http.Header{},
	}
}

func (c *netClient) Status(code int) string { return strconv.Itoa(code) }

func (c *netClient) Close() { c.tr.CloseIdleConnections() }

// netCaller is one worker's net/http client.
type netCaller struct {
	tr       *http.Transport
	statusOK func(string, int) bool
	buf      []byte
	noHdr    http.Header

	// The prepared request: u is its URL (the origin's scheme and host
	// with the request's path and query), the rest is taken from the
	// scenario's request, the body cloned.
	u      url.URL
	class  string
	method string
	header http.Header
	body   []byte

	// req is reused while its context is the call context and no call
	// spent it: a request per call would cost allocations. A request
	// with a body is never reused.
	req *http.Request
}

// Prepare points the worker's URL at r's target and takes r's method,
// header and body.
func (c *netCaller) Prepare(r *load.Request) error {
	path, query, hasQuery := strings.Cut(r.Target, "?")
	if strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "//") {
		// Opaque is sent verbatim: the stream's encoding reaches the
		// target byte for byte, and nothing is parsed per request.
		c.u.Opaque, c.u.Path, c.u.RawPath = path, "", ""
		c.u.RawQuery, c.u.ForceQuery = query, hasQuery && query == ""
	} else {
		p, err := url.Parse(r.Target)
		if err != nil {
			return err
		}
		c.u.Opaque, c.u.Path, c.u.RawPath = "", p.Path, p.RawPath
		c.u.RawQuery, c.u.ForceQuery = p.RawQuery, p.ForceQuery
	}
	c.class = r.Class
	c.method = r.Method
	if c.method == "" {
		c.method = http.MethodGet
	}
	c.header = r.Header
	if c.header == nil {
		c.header = c.noHdr
	}
	c.body = nil
	if len(r.Body) > 0 {
		// The stream rewrites its buffer on the next Next, while
		// net/http may still be writing this body (below).
		c.body = bytes.Clone(r.Body)
	}
	return nil
}

// Call sends the prepared request and reads the response to its end.
func (c *netCaller) Call(ctx context.Context) load.Outcome {
	if c.req == nil || c.req.Context() != ctx {
		c.req, _ = http.NewRequestWithContext(ctx, http.MethodGet, "http://x/", nil)
		c.req.Host = ""
	}
	req := c.req
	req.Method, req.Header = c.method, c.header
	if c.body == nil {
		req.URL = &c.u
		req.Body, req.GetBody, req.ContentLength = nil, nil, 0
	} else {
		// net/http may go on writing a body after RoundTrip returned
		// (the server answered early), so this request gets a reader
		// and a URL of its own, and is not reused: Prepare rewrites u.
		body := c.body
		u := c.u
		req.URL = &u
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		req.ContentLength = int64(len(body))
	}
	code, n, err := c.do(req)
	if err != nil {
		// The transport's writer may still hold the request.
		c.req = nil
		return load.Outcome{Kind: classify(err), Err: err, Spent: true}
	}
	out := load.Outcome{Code: code, Bytes: n}
	if !c.statusOK(c.class, code) {
		out.Kind = load.Status
	}
	if c.body != nil {
		c.req = nil
		out.Spent = true
	}
	return out
}

// do sends req and drains the body so the connection is reused.
func (c *netCaller) do(req *http.Request) (code int, n int64, err error) {
	resp, err := c.tr.RoundTrip(req)
	if err != nil {
		return 0, 0, err
	}
	for {
		m, rerr := resp.Body.Read(c.buf)
		n += int64(m)
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			err = rerr
			break
		}
	}
	resp.Body.Close()
	return resp.StatusCode, n, err
}

// classify says what kind of failure err is; load counts a failure whose
// timer fired as a timeout whatever it says.
func classify(err error) load.Kind {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" || errors.Is(err, syscall.ECONNREFUSED) {
		return load.Connect
	}
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return load.Reset
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return load.Timeout
	}
	return load.Other
}
