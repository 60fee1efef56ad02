//go:build linux

package runner

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/benchgate/benchgate/agreement"
	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/grpcload"
	"github.com/benchgate/benchgate/httpload"
	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// protocol is how a run's requests reach its targets: chosen once, by the
// scenario's kind (protocolOf), so the schedule — rounds, slices,
// restarts, the correctness checks — knows no protocol. Both put their calls through
// the one load core (load.Generate, load.Session), so a slice, an open
// loop and a round mean the same for each.
type protocol interface {
	// prepare readies calling the pin set's freshly started targets
	// before any request; before names the round a restart precedes, ""
	// at a pin set's first start. A failure of the scenario against the
	// targets is an *InputError.
	prepare(ctx context.Context, before string) error
	// generate is one rung of load l on t.
	generate(ctx context.Context, t target.Service, l load.Loop) (load.Result, error)
	// session opens a session of load l on t, whose windows are a sliced
	// round's slices.
	session(ctx context.Context, t target.Service, l load.Loop) (*load.Session, error)
	// probe sends req to both targets, the baseline first, and compares
	// their answers (the agreement check); client is the probe's HTTP
	// client.
	probe(ctx context.Context, client *http.Client, req *load.Request, opt agreement.Options) (*benchdata.Disagreement, string, error)
	// close releases what prepare made for the last pin set.
	close()
	// pprofURL is where t's net/http/pprof endpoint at path answers, or
	// why this protocol cannot reach one.
	pprofURL(t target.Service, path string) (string, error)
	// health is the targets' health check when the protocol has one of
	// its own (target.Options.Probe); nil: a GET of their health path.
	health() target.Probe
	// kind is the results' Kind of a run of this protocol.
	kind() string
}

// protocolOf is s's protocol, by its scenario's kind.
func protocolOf(s *schedule) protocol {
	if s.sc.Kind == scenario.KindGRPC {
		return &grpcProtocol{s: s}
	}
	return httpProtocol{s}
}

// httpProtocol is HTTP/1.1 or HTTP/2 by load.http_client (httpload).
type httpProtocol struct{ s *schedule }

func (httpProtocol) prepare(context.Context, string) error { return nil }

func (p httpProtocol) load(t target.Service, l load.Loop) httpload.Load {
	return httpload.Load{Loop: l, URL: t.URL(), StatusOK: p.s.sc.StatusOK, Client: httpload.Client(p.s.sc.Load.HTTPClient)}
}

func (p httpProtocol) generate(ctx context.Context, t target.Service, l load.Loop) (load.Result, error) {
	return httpload.Generate(ctx, p.load(t, l))
}

func (p httpProtocol) session(ctx context.Context, t target.Service, l load.Loop) (*load.Session, error) {
	return httpload.NewSession(ctx, p.load(t, l))
}

func (p httpProtocol) probe(ctx context.Context, client *http.Client, req *load.Request, opt agreement.Options) (*benchdata.Disagreement, string, error) {
	return p.s.probe(ctx, client, req, opt)
}

func (httpProtocol) close() {}

func (httpProtocol) pprofURL(t target.Service, path string) (string, error) {
	return strings.TrimRight(t.URL(), "/") + path, nil
}

// health: an HTTP target is healthy when its health path answers 2xx,
// target's own check.
func (httpProtocol) health() target.Probe { return nil }

// kind: an HTTP run's results leave Kind empty, as they always have.
func (httpProtocol) kind() string { return "" }

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

func (*grpcProtocol) pprofURL(target.Service, string) (string, error) {
	return "", errors.New("a pprof endpoint is reached over HTTP, and a gRPC target's address is not an HTTP server's")
}

// health asks the standard gRPC health service at the target's address
// (health: grpc, which a scenario of gRPC classes takes by default; a
// server without the service is healthy once it answers).
func (*grpcProtocol) health() target.Probe {
	return func(ctx context.Context, base string) error {
		u, err := url.Parse(base)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(ctx, target.HealthAttempt)
		defer cancel()
		return grpcload.WaitHealthy(ctx, u.Host, "")
	}
}

func (*grpcProtocol) kind() string { return scenario.KindGRPC }
