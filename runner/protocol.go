//go:build linux

package runner

import (
	"context"

	"github.com/benchgate/benchgate/agreement"
	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
)

// protocol is how a run's requests reach its targets: chosen once, by the
// scenario's kind (protocolOf), so the schedule — rounds, slices,
// restarts, the correctness checks — knows no protocol. Each is a type of
// its own file (HTTP's http.go, gRPC's grpc.go), and both put their calls
// through the one load core (load.Generate, load.Session), so a slice, an
// open loop and a round mean the same for each.
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
	// prober opens the agreement check's calls to both targets: done
	// releases what they hold, before any load.
	prober() (probe prober, done func())
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

// prober sends req to both targets, the baseline first, and returns the
// difference of their answers (nil when they agree, or the reason a side
// could not answer) and the format they were compared in; an error only
// for a dead target or a cancellation.
type prober func(ctx context.Context, req *load.Request, opt agreement.Options) (*benchdata.Disagreement, string, error)

// protocolOf is s's protocol, by its scenario's kind.
func protocolOf(s *schedule) protocol {
	if s.sc.Kind == scenario.KindGRPC {
		return &grpcProtocol{s: s}
	}
	return httpProtocol{s}
}
