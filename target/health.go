package target

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/benchgate/benchgate/grpcload"
	"github.com/benchgate/benchgate/httpload"
	"github.com/benchgate/benchgate/scenario"
)

// How a starting target's health is polled.
const (
	healthInterval = 50 * time.Millisecond
	healthAttempt  = time.Second // one health request may take this long
	// defaultStartup applies when a scenario leaves StartupTimeout at zero.
	defaultStartup = 30 * time.Second
)

// WaitHealthy polls the health of a target of spec at base every
// healthInterval until it answers (nil), exited is closed (the error
// gone returns), spec's startup timeout passes or ctx ends: then the
// error unhealthy makes of why, for a TargetError of PhaseHealth. A nil
// exited never closes: a service benchgate did not start cannot exit.
func WaitHealthy(ctx context.Context, spec scenario.Target, base string, exited <-chan struct{}, gone func() error, unhealthy func(why error) error) error {
	limit := spec.StartupTimeout
	if limit <= 0 {
		limit = defaultStartup
	}
	deadline := time.Now().Add(limit)
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: healthAttempt}
	tick := time.NewTicker(healthInterval)
	defer tick.Stop()
	for {
		last := probe(ctx, hc, base, spec.Health)
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

// probe makes one health check of a target at base by its spec's health:
// the standard gRPC health service for scenario.HealthGRPC (a server
// without it is healthy once it answers), else a GET of the health path
// ("/" when empty, the scenario's default, which a spec built by hand may
// lack) at base's origin, where the load goes too (see httpload.Origin).
func probe(ctx context.Context, hc *http.Client, base, health string) error {
	bu, err := url.Parse(base)
	if err != nil {
		return err
	}
	o := httpload.Origin(bu)
	if health == scenario.HealthGRPC {
		cctx, cancel := context.WithTimeout(ctx, healthAttempt)
		defer cancel()
		return grpcload.WaitHealthy(cctx, o.Host, "")
	}
	if health == "" {
		health = "/"
	}
	return probeHealth(ctx, hc, o.String()+health)
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
