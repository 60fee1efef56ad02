package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/benchgate/benchgate/scenario"
)

// How a starting target's health is polled.
const (
	healthInterval = 50 * time.Millisecond
	// HealthAttempt bounds one health check, a Probe's too.
	HealthAttempt = time.Second
	// defaultStartup applies when a scenario leaves StartupTimeout at zero.
	defaultStartup = 30 * time.Second
)

// Probe makes one health check of a target answering at base, within
// HealthAttempt: nil when healthy. A protocol whose services answer a
// health check of their own supplies it (Options.Probe: the runner's gRPC
// protocol asks the standard gRPC health service, for health: grpc);
// without one a target is healthy when a GET of its health path answers
// 2xx.
type Probe func(ctx context.Context, base string) error

// WaitHealthy polls the health of a target of spec at base every
// healthInterval, by probe (nil: a GET of spec's health path), until it
// answers (nil), exited is closed (the error gone returns), spec's
// startup timeout passes or ctx ends: then the error unhealthy makes of
// why, for a TargetError of PhaseHealth. A nil exited never closes: a
// service benchgate did not start cannot exit.
func WaitHealthy(ctx context.Context, spec scenario.Target, base string, probe Probe, exited <-chan struct{}, gone func() error, unhealthy func(why error) error) error {
	limit := spec.StartupTimeout
	if limit <= 0 {
		limit = defaultStartup
	}
	deadline := time.Now().Add(limit)
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: HealthAttempt}
	if probe == nil {
		probe = func(ctx context.Context, base string) error { return getHealth(ctx, hc, base, spec.Health) }
	}
	tick := time.NewTicker(healthInterval)
	defer tick.Stop()
	for {
		last := probe(ctx, base)
		if last == nil {
			return nil
		}
		select {
		case <-exited:
			return gone()
		default:
		}
		if !time.Now().Before(deadline) {
			return unhealthy(fmt.Errorf("not healthy after %v: %v", limit, last))
		}
		select {
		case <-ctx.Done():
			return unhealthy(ctx.Err())
		case <-exited:
		case <-tick.C:
		}
	}
}

// getHealth is a target's health check without a Probe: a GET of the
// health path ("/" when empty, the scenario's default, which a spec built
// by hand may lack) at base's origin (its scheme, user and host), where
// the load goes too. health: grpc is a protocol's check, which only its
// Probe makes.
func getHealth(ctx context.Context, hc *http.Client, base, health string) error {
	if health == scenario.HealthGRPC {
		return errors.New("health grpc: the gRPC health service is asked by the gRPC protocol's probe, and none was given")
	}
	bu, err := url.Parse(base)
	if err != nil {
		return err
	}
	if health == "" {
		health = "/"
	}
	origin := url.URL{Scheme: bu.Scheme, Host: bu.Host, User: bu.User}
	return probeHealth(ctx, hc, origin.String()+health)
}

// probeHealth is a GET of u, drained so the connection is reused, that
// must answer 2xx.
func probeHealth(ctx context.Context, hc *http.Client, u string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("GET %s: %s", req.URL.Path, resp.Status)
	}
	return nil
}
