//go:build linux

package runner

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/benchgate/benchgate/agreement"
	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/grpcload"
	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// grpcProtocol is unary gRPC calls (grpcload): each pin set's targets'
// methods are resolved and checked by prepare, and their sides (a
// connection, the descriptors, the prepared calls) are the protocol's
// own (grpc.go).
type grpcProtocol struct {
	s *schedule
	// sides are the current pin set's targets as gRPC services
	// (baseline, candidate); nil before prepare and after close.
	sides [2]*grpcSide
}

func (p *grpcProtocol) prepare(ctx context.Context, before string) error {
	p.s.budget.enter(strings.TrimSpace("the check of the gRPC methods " + before))
	return p.prepareSides(ctx)
}

func (p *grpcProtocol) load(ctx context.Context, t target.Service, l load.Loop) grpcload.Load {
	side := p.sideOf(t)
	return grpcload.Load{
		Loop:        l,
		Target:      side.hostport,
		Connections: p.s.sc.GRPC.Connections,
		Resolve:     func(method string) (*grpcload.Call, error) { return side.call(ctx, method) },
	}
}

func (p *grpcProtocol) generate(ctx context.Context, t target.Service, l load.Loop) (load.Result, error) {
	return grpcload.Generate(ctx, p.load(ctx, t, l))
}

func (p *grpcProtocol) session(ctx context.Context, t target.Service, l load.Loop) (*load.Session, error) {
	return grpcload.NewSession(ctx, p.load(ctx, t, l))
}

// prober: the calls go over the sides' connections, which prepare made
// for the load too.
func (p *grpcProtocol) prober() (prober, func()) { return p.probe, func() {} }

func (*grpcProtocol) pprofURL(target.Service, string) (string, error) {
	return "", errors.New("a pprof endpoint is reached over HTTP, and a gRPC target's address is not an HTTP server's")
}

// health asks the standard gRPC health service at the target's address
// (health: grpc, which a scenario of gRPC classes takes by default; a
// server without the service is healthy once it answers).
func (*grpcProtocol) health() target.Probe {
	return func(ctx context.Context, base string) error {
		hp, err := hostPort(base)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, target.HealthAttempt)
		defer cancel()
		return grpcload.WaitHealthy(ctx, hp, "")
	}
}

func (*grpcProtocol) kind() string { return scenario.KindGRPC }

// grpcSide is what calling one started gRPC target takes: a connection for
// reflection and the agreement probe, the descriptors, and each method's
// prepared Call.
type grpcSide struct {
	hostport string
	conn     *grpc.ClientConn
	desc     *grpcload.Descriptors
	mu       sync.Mutex
	calls    map[string]*grpcload.Call
}

// hostPort is the host:port of a target's base URL.
func hostPort(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("bad target URL %q", base)
	}
	return u.Host, nil
}

// prepareSides makes the gRPC sides of the current pin set's targets and
// checks the scenario against them before any load: every class's method
// exists and is unary, and the first request of every class's stream fits
// its message type. A failure is an *InputError.
func (p *grpcProtocol) prepareSides(ctx context.Context) error {
	p.close()
	s := p.s
	g := s.sc.GRPC
	var shared *grpcload.Descriptors
	var err error
	switch g.Descriptors {
	case "proto":
		shared, err = grpcload.FromProtoFiles(g.ProtoFiles, g.ImportPaths)
	case "descriptor_set":
		shared, err = grpcload.FromDescriptorSet(g.DescriptorSet)
	}
	if err != nil {
		return &InputError{fmt.Errorf("grpc descriptors: %w", err)}
	}
	for i, t := range []target.Service{s.base, s.cand} {
		hp, err := hostPort(t.URL())
		if err != nil {
			return err
		}
		conn, err := grpcload.Dial(hp)
		if err != nil {
			return err
		}
		side := &grpcSide{hostport: hp, conn: conn, desc: shared, calls: map[string]*grpcload.Call{}}
		if side.desc == nil {
			side.desc = grpcload.FromReflection(ctx, conn)
		}
		p.sides[i] = side
	}
	c0 := s.sc.Load.Concurrency[0]
	checked := [2]map[string]bool{{}, {}}
	for _, v := range s.sc.Variants {
		for _, c := range s.sc.Classes {
			src := s.sc.Stream(v.Name, c.Name, c0, 0, 0)
			// A mix draws from its components: a few requests show them.
			for range 16 {
				req := src.Next()
				if req == nil {
					break
				}
				for i, side := range p.sides {
					t := []target.Service{s.base, s.cand}[i]
					call, err := side.call(ctx, req.Target)
					if err == nil {
						_, err = call.Message(req.Body)
					}
					if err == nil && !checked[i][req.Target] {
						// Types from files say what a method takes, not
						// whether the server has it: one call says.
						checked[i][req.Target] = true
						cctx, cancel := context.WithTimeout(ctx, s.sc.Load.Timeout)
						var code string
						code, _, err = call.Invoke(cctx, side.conn, req)
						cancel()
						if err == nil && code == "Unimplemented" {
							err = fmt.Errorf("the server does not implement %s (it answers Unimplemented)", req.Target)
						}
					}
					if err != nil {
						if cerr := cancelled(ctx, s.res); cerr != nil {
							return cerr
						}
						if derr := t.Died(); derr != nil {
							return derr
						}
						if transport(err) {
							// Not the scenario's fault: the target did
							// not answer.
							return target.ShownErr(s.sc, fmt.Errorf("%s: %w", t.Name(), err))
						}
						// The error may quote the message (a value that
						// does not fit its field) and what the server said.
						return &InputError{target.ShownErr(s.sc, fmt.Errorf("class %s on the %s: %w", c.Name, []string{"baseline", "candidate"}[i], err))}
					}
				}
				if c.Mix == nil {
					break
				}
			}
			if err := src.Err(); err != nil {
				return &InputError{target.ShownErr(s.sc, fmt.Errorf("class %s: a request template failed: %w", c.Name, err))}
			}
		}
	}
	return nil
}

// call returns the prepared Call of method on this side.
func (g *grpcSide) call(ctx context.Context, method string) (*grpcload.Call, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if c := g.calls[method]; c != nil {
		return c, nil
	}
	c, err := grpcload.Prepare(ctx, g.desc, method)
	if err != nil {
		return nil, err
	}
	g.calls[method] = c
	return c, nil
}

// close closes the connections of the sides of the last pin set.
func (p *grpcProtocol) close() {
	for i, g := range p.sides {
		if g != nil {
			g.conn.Close()
			p.sides[i] = nil
		}
	}
}

// sideOf is the gRPC side of a target of the current pin set.
func (p *grpcProtocol) sideOf(t target.Service) *grpcSide {
	if t == p.s.cand {
		return p.sides[1]
	}
	return p.sides[0]
}

// probe is the agreement check's call on both targets, the baseline
// first, compared by status code and by the answers' JSON form.
func (p *grpcProtocol) probe(ctx context.Context, req *load.Request, opt agreement.Options) (*benchdata.Disagreement, string, error) {
	s := p.s
	var codes [2]string
	var bodies [2][]byte
	var fail [2]string
	for i, side := range p.sides {
		t := []target.Service{s.base, s.cand}[i]
		call, err := side.call(ctx, req.Target)
		if err == nil {
			cctx, cancel := context.WithTimeout(ctx, s.sc.Load.Timeout)
			codes[i], bodies[i], err = call.Invoke(cctx, side.conn, req)
			cancel()
		}
		if err != nil {
			// A status message is the server's text, and may echo the
			// message or the metadata.
			if fail[i], err = s.sideFailed(ctx, t, "call", err); err != nil {
				return nil, "", err
			}
		}
		bodies[i] = s.redactBody(bodies[i])
	}
	d := &benchdata.Disagreement{Method: "GRPC", Target: req.Target}
	switch d.Reason = sidesFailed(fail); {
	case d.Reason != "":
		return s.stored(d), "", nil
	case codes[0] != codes[1]:
		d.Reason = "status " + codes[0] + " vs " + codes[1]
		d.Baseline, d.Candidate = truncateRunes(string(bodies[0]), agreement.ExcerptRunes), truncateRunes(string(bodies[1]), agreement.ExcerptRunes)
		return s.stored(d), "json", nil
	}
	opt.Format = agreement.FormatJSON
	cmp := agreement.Compare(agreement.Response{Status: 200, ContentType: "application/json", Body: bodies[0]},
		agreement.Response{Status: 200, ContentType: "application/json", Body: bodies[1]}, opt)
	if cmp.Agree {
		return nil, cmp.Format, nil
	}
	d.Reason, d.Path, d.Baseline, d.Candidate = cmp.Reason, cmp.Path, cmp.ExcerptA, cmp.ExcerptB
	return s.stored(d), cmp.Format, nil
}

// transport says whether err is the target not answering (unreachable,
// a broken connection, a deadline) rather than an answer about the
// scenario (an unknown method, a message that does not fit).
func transport(err error) bool {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled:
		return true
	}
	return false
}
