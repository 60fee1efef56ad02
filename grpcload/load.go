package grpcload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/benchgate/benchgate/load"
)

// Load is one rung of closed-loop unary gRPC load. A request's Target is
// the method ("package.Service/Method"), its Body the request message as
// JSON, its Header the metadata.
type Load struct {
	load.Loop
	Target string // host:port, or a gRPC target URI such as unix:///path
	// Connections is the number of HTTP/2 connections (1 when 0). Each
	// worker takes them in turn, call by call, starting at its own index,
	// so calls spread round-robin over all of them.
	Connections int
	// Resolve returns the Call for a request's Target. Each worker asks
	// once per method and keeps the answer; an error counts every such
	// request as an "other" error.
	Resolve func(method string) (*Call, error)
}

// Generate puts l on its target (see load.Generate). The connections are
// made before the clock starts, and Started is called once they are up.
// An answer is any status the server sent; a status other than OK is
// also an error of kind Status. Statuses is keyed by the code's name
// ("OK", "NotFound"); Bytes sums the OK responses' message sizes.
func Generate(ctx context.Context, l Load) (load.Result, error) {
	return load.Generate(ctx, l.Loop, l.open)
}

// NewSession is a session of l (see load.Session), as httpload's: the
// connections are made and up before it returns; l's Warmup, Duration
// and Started are the caller's to apply. Slices of gRPC load are windows
// of one session, as HTTP's.
func NewSession(ctx context.Context, l Load) (*load.Session, error) {
	return load.NewSession(ctx, l.Loop, l.open)
}

// open dials l's connections and waits until they are up, or failed.
func (l Load) open(ctx context.Context) (load.Protocol, error) {
	if l.Resolve == nil {
		return nil, errors.New("grpc load: no method resolver")
	}
	if l.Target == "" {
		return nil, errors.New("grpc load: no target")
	}
	c := &client{resolve: l.Resolve, opts: []grpc.CallOption{grpc.ForceCodecV2(codec{})}}
	for range max(l.Connections, 1) {
		conn, err := dial(l.Target)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("grpc load: %w", err)
		}
		c.conns = append(c.conns, conn)
	}
	if err := connect(ctx, c.conns, l.CallTimeout()); err != nil {
		c.Close()
		return nil, fmt.Errorf("grpc load cancelled: %w", err)
	}
	return c, nil
}

// connect starts every connection and waits, at most timeout, until each
// is ready or has failed: a target that is down is measured as such (its
// calls fail as "connect"), not refused here. Only ctx ending is an error.
func connect(ctx context.Context, conns []*grpc.ClientConn, timeout time.Duration) error {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, c := range conns {
		c.Connect()
	}
	for _, c := range conns {
		for s := c.GetState(); s == connectivity.Idle || s == connectivity.Connecting; s = c.GetState() {
			if !c.WaitForStateChange(wctx, s) {
				break
			}
		}
	}
	return ctx.Err()
}

// client is the Protocol: the connections and the Calls, which the
// workers share.
type client struct {
	conns   []*grpc.ClientConn
	resolve func(string) (*Call, error)
	opts    []grpc.CallOption
}

func (c *client) Caller(worker int) load.Caller {
	return &caller{cl: c, next: worker % len(c.conns), calls: map[string]*wcall{}}
}

func (c *client) Status(code int) string { return codes.Code(code).String() }

func (c *client) Close() {
	for _, conn := range c.conns {
		conn.Close()
	}
}

// caller is one worker's gRPC client. Everything its calls touch is its
// own; workers share the connections and the Calls' message caches.
type caller struct {
	cl   *client
	next int // the connection of the next call

	// calls by Target, the last one kept at hand.
	calls      map[string]*wcall
	lastTarget string
	last       *wcall
	// The last request body and its encoding: a class whose body does
	// not change needs no cache lookup.
	lastBody []byte
	lastCall *Call
	lastEnc  *encoded
	// The metadata of lastHdr: a header that does not change is not
	// converted again.
	lastHdr http.Header
	lastMD  metadata.MD

	// The prepared call.
	wc   *wcall
	hdr  http.Header
	req  rawReq
	resp rawResp
}

// wcall is a worker's Call for one Target with the worker's own response
// message, reused call after call.
type wcall struct {
	call *Call
	out  *dynamicpb.Message
	err  error
}

// Prepare finds r's Call and encodes its message.
func (c *caller) Prepare(r *load.Request) error {
	wc := c.call(r.Target)
	if wc.err != nil {
		return wc.err
	}
	enc := c.encode(wc.call, r.Body)
	if enc.err != nil {
		return enc.err
	}
	c.wc, c.hdr = wc, r.Header
	c.req.buf = enc.buf
	c.resp.msg, c.resp.size = wc.out, 0
	return nil
}

// Call makes the prepared call on the next connection.
func (c *caller) Call(ctx context.Context) load.Outcome {
	conn := c.cl.conns[c.next]
	if c.next++; c.next == len(c.cl.conns) {
		c.next = 0
	}
	err := conn.Invoke(c.withMD(ctx), c.wc.call.Method, &c.req, &c.resp, c.cl.opts...)
	if err != nil {
		return load.Outcome{Kind: classify(err), Code: int(status.Code(err)), Err: err}
	}
	return load.Outcome{Code: int(codes.OK), Bytes: int64(c.resp.size)}
}

// call is the worker's Call for target.
func (c *caller) call(target string) *wcall {
	if c.last != nil && target == c.lastTarget {
		return c.last
	}
	wc := c.calls[target]
	if wc == nil {
		wc = &wcall{}
		wc.call, wc.err = c.cl.resolve(target)
		if wc.err == nil && wc.call == nil {
			wc.err = fmt.Errorf("no call for method %s", target)
		}
		if wc.err == nil {
			wc.out = dynamicpb.NewMessage(wc.call.Out)
		}
		c.calls[target] = wc
	}
	c.last, c.lastTarget = wc, target
	return wc
}

// encode is body's encoding for call, the last one's when body repeats.
func (c *caller) encode(call *Call, body []byte) *encoded {
	if c.lastEnc != nil && c.lastCall == call && bytes.Equal(body, c.lastBody) {
		return c.lastEnc
	}
	e := call.encode(body)
	c.lastEnc, c.lastCall, c.lastBody = e, call, append(c.lastBody[:0], body...)
	return e
}

// withMD is ctx carrying the prepared call's header as metadata.
func (c *caller) withMD(ctx context.Context) context.Context {
	if len(c.hdr) == 0 {
		return ctx
	}
	if c.lastMD == nil || !headerEqual(c.hdr, c.lastHdr) {
		c.lastHdr = c.hdr.Clone()
		c.lastMD = toMD(c.hdr)
	}
	return metadata.NewOutgoingContext(ctx, c.lastMD)
}

func headerEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !slices.Equal(va, vb) {
			return false
		}
	}
	return true
}

// classify says what kind of error err is. A status the server sent is
// load.Status; the rest are grpc-go's own, told apart by their messages
// since grpc-go reports a connection that failed, or broke, as Unavailable
// like a server that says it is. load counts an error whose timer fired
// as a timeout whatever it says.
func classify(err error) load.Kind {
	st, ok := status.FromError(err)
	if !ok {
		return load.Other
	}
	msg := st.Message()
	switch st.Code() {
	case codes.OK:
		return load.Other
	case codes.Unavailable:
		switch {
		case strings.HasPrefix(msg, "connection error"),
			strings.Contains(msg, "while dialing"),
			strings.Contains(msg, "name resolver"),
			strings.Contains(msg, "produced zero addresses"),
			strings.Contains(msg, "last connection error"),
			strings.Contains(msg, "no children to pick from"):
			return load.Connect
		case strings.Contains(msg, "transport is closing"),
			strings.Contains(msg, "error reading from server"),
			strings.Contains(msg, "connection reset"),
			strings.Contains(msg, "broken pipe"),
			strings.Contains(msg, "connection is draining"),
			strings.Contains(msg, "server preface"),
			strings.Contains(msg, "EOF"):
			return load.Reset
		}
	case codes.Internal:
		switch {
		case strings.Contains(msg, "RST_STREAM"), strings.HasPrefix(msg, "transport:"):
			return load.Reset
		case strings.HasPrefix(msg, "grpc: failed to unmarshal"),
			strings.HasPrefix(msg, "grpc: error while marshaling"):
			return load.Other
		}
	case codes.ResourceExhausted:
		if strings.HasPrefix(msg, "grpc: received message larger than max") ||
			strings.HasPrefix(msg, "grpc: trying to send message larger than max") {
			return load.Other
		}
	}
	return load.Status
}
