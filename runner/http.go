//go:build linux

package runner

// The HTTP protocol: its load through httpload, and its agreement check
// (the probe's client, one request sent to both targets as the load sends
// it, and the answers compared).

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/benchgate/benchgate/agreement"
	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/httpload"
	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/target"
)

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

func (httpProtocol) close() {}

func (httpProtocol) pprofURL(t target.Service, path string) (string, error) {
	return strings.TrimRight(t.URL(), "/") + path, nil
}

// health: an HTTP target is healthy when its health path answers 2xx,
// target's own check.
func (httpProtocol) health() target.Probe { return nil }

// kind: an HTTP run's results leave Kind empty, as they always have.
func (httpProtocol) kind() string { return "" }

// prober makes the probe's client: no proxy, answers as sent (no
// decompression), a redirect an answer of its own; done closes its idle
// connections, so none stays open to a target under load.
func (p httpProtocol) prober() (prober, func()) {
	client := &http.Client{
		Transport: &http.Transport{Proxy: nil, DisableCompression: true, MaxIdleConnsPerHost: 2},
		Timeout:   p.s.sc.Load.Timeout,
		// A redirect is an answer: following it would compare something
		// else than what the load measures.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return func(ctx context.Context, req *load.Request, opt agreement.Options) (*benchdata.Disagreement, string, error) {
		return p.probe(ctx, client, req, opt)
	}, client.CloseIdleConnections
}

// probe sends req to both targets over client, the baseline first, and
// returns the difference of their answers (nil when they agree) and the
// format they were compared in. A request that fails is a difference,
// since nothing can be said of its answer; a dead target or a
// cancellation is an error.
func (p httpProtocol) probe(ctx context.Context, client *http.Client, req *load.Request, opt agreement.Options) (*benchdata.Disagreement, string, error) {
	s := p.s
	var resp [2]agreement.Response
	var fail [2]string
	for i, t := range []target.Service{s.base, s.cand} {
		r, err := send(ctx, client, t.URL(), req)
		if err != nil {
			// The error quotes the URL sent, its query and all, and
			// what the target answered.
			if fail[i], err = s.sideFailed(ctx, t, "request", err); err != nil {
				return nil, "", err
			}
		}
		r.ContentType, r.Location = s.sc.Redact(r.ContentType), s.sc.Redact(r.Location)
		r.Body = s.redactBody(r.Body)
		resp[i] = r
	}
	d := &benchdata.Disagreement{
		Method: req.Method, Target: req.Target,
		BaselineStatus: resp[0].Status, CandidateStatus: resp[1].Status,
	}
	if d.Method == "" {
		d.Method = http.MethodGet
	}
	if d.Reason = sidesFailed(fail); d.Reason != "" {
		return s.stored(d), "", nil
	}
	cmp := agreement.Compare(resp[0], resp[1], opt)
	if cmp.Agree {
		return nil, cmp.Format, nil
	}
	d.Reason, d.Path, d.Baseline, d.Candidate = cmp.Reason, cmp.Path, cmp.ExcerptA, cmp.ExcerptB
	return s.stored(d), cmp.Format, nil
}

// send issues one request of a stream to base, as the load generator
// would, and reads the answer.
func send(ctx context.Context, client *http.Client, base string, r *load.Request) (agreement.Response, error) {
	bu, err := url.Parse(base)
	if err != nil {
		return agreement.Response{}, err
	}
	o := httpload.Origin(bu)
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if len(r.Body) > 0 {
		body = bytes.NewReader(bytes.Clone(r.Body))
	}
	hr, err := http.NewRequestWithContext(ctx, method, o.String()+"/", body)
	if err != nil {
		return agreement.Response{}, err
	}
	// The target goes out byte for byte, as the load generator sends it.
	path, query, hasQuery := strings.Cut(r.Target, "?")
	if strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "//") {
		hr.URL.Opaque, hr.URL.Path = path, ""
		hr.URL.RawQuery, hr.URL.ForceQuery = query, hasQuery && query == ""
	} else {
		p, err := url.Parse(r.Target)
		if err != nil {
			return agreement.Response{}, err
		}
		hr.URL.Path, hr.URL.RawPath, hr.URL.RawQuery = p.Path, p.RawPath, p.RawQuery
	}
	if r.Header != nil {
		hr.Header = r.Header.Clone()
	}
	resp, err := client.Do(hr)
	if err != nil {
		return agreement.Response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxProbeBody))
	if err != nil {
		return agreement.Response{}, err
	}
	return agreement.Response{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), Location: resp.Header.Get("Location"), Body: b}, nil
}
