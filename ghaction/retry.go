package ghaction

// The retrying transport sits under go-github, so every API call benchgate
// makes (listing comments, editing, creating, reading the PR head) gets the
// same bounded policy without each call site growing its own loop. The
// policy's one hard rule: a request that may already have been acted on by
// GitHub is sent again only if sending it twice is harmless. A POST that
// creates a comment is not harmless, so it is retried only when GitHub says
// it rejected the request before doing anything (429, rate-limit 403) or when
// the connection was never made.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
)

// DefaultAPIURL is GitHub.com's REST endpoint, used when NewClient is given
// no API URL (outside Actions, or on a runner that does not set
// GITHUB_API_URL).
const DefaultAPIURL = "https://api.github.com/"

// RetryOptions bounds the retrying transport. A zero field takes its value
// from DefaultRetryOptions, so callers set only what they mean to change.
type RetryOptions struct {
	// MaxAttempts is the number of times one request may be sent, the first
	// included.
	MaxAttempts int
	// MaxWait bounds the total time one request may spend waiting between
	// attempts. A wait that would cross it is not started: the last response
	// or error is returned as it is, so a job is never held for an hour by a
	// rate-limit reset far in the future.
	MaxWait time.Duration
	// Sleep waits d or until ctx is done. Tests inject a recorder so that no
	// test actually waits and the waits requested can be asserted.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock used to turn x-ratelimit-reset (a Unix time) and an
	// HTTP-date Retry-After into a wait.
	Now func() time.Time
}

// DefaultRetryOptions is the policy NewClient uses for zero fields.
var DefaultRetryOptions = RetryOptions{
	MaxAttempts: 5,
	MaxWait:     60 * time.Second,
	Sleep:       sleepContext,
	Now:         time.Now,
}

const (
	// firstBackoff is the wait after the first failure when GitHub gives no
	// hint; it doubles with each further failure.
	firstBackoff = time.Second
	// secondaryRateLimitWait is what GitHub's documentation asks for after a
	// secondary rate limit that carries neither Retry-After nor
	// x-ratelimit-reset: "wait for at least one minute".
	secondaryRateLimitWait = time.Minute
	// resetMargin is added to x-ratelimit-reset: the header has one-second
	// resolution and GitHub asks clients to retry only *after* it, so
	// waiting exactly until it races the reset.
	resetMargin = time.Second
	// peekLimit bounds how much of a 403 body is read to tell a secondary
	// rate limit from a permission error; GitHub's error bodies are tiny.
	peekLimit = 64 << 10
	// maxServerWait caps a wait GitHub asks for before it is used, so that
	// an absurd Retry-After or reset cannot overflow time.Duration (which
	// would wrap to a negative wait and retry at once). Any wait this long
	// is far beyond every sensible MaxWait, so the request is not retried.
	maxServerWait = 24 * time.Hour
)

// NewClient returns a go-github client that sends token as a bearer token to
// apiURL (DefaultAPIURL when empty; a GHES URL such as
// https://ghe.example.com/api/v3 is used as given, with or without its
// trailing slash). Its transport retries, within opts' bounds:
//   - 429, and 403 when it is a rate limit (x-ratelimit-remaining: 0, a
//     Retry-After header, or a secondary-rate-limit message), for every
//     method, since GitHub rejected the request before processing it;
//   - 5xx other than 501, and network errors, for GET, HEAD, OPTIONS, PUT,
//     PATCH and DELETE only;
//   - a POST after a network error only if the connection was never made.
//
// The wait is Retry-After, else x-ratelimit-reset plus a second, else one
// minute for a secondary rate limit, else exponential backoff from one second
// with jitter. A retry that would exceed MaxAttempts or MaxWait is not made:
// the last response or error is returned as it is.
//
// The token travels only in the Authorization header, never in a URL, so it
// cannot leak through the request URLs that errors quote. go-github adds that
// header to every request the client sends, redirects included, so the
// client refuses a redirect to another host or from https to http rather
// than hand the token to it. For the same reason an http:// API URL is
// refused unless its host is loopback (a local test server).
func NewClient(token, apiURL string, opts RetryOptions) (*github.Client, error) {
	if token == "" {
		// Unauthenticated calls cannot comment and share a 60-an-hour limit
		// per IP address; failing here names the cause instead of a 401 later.
		return nil, errors.New("ghaction: empty GitHub token")
	}
	if apiURL == "" {
		apiURL = DefaultAPIURL
	}
	base, err := url.Parse(apiURL)
	if err != nil || (base.Scheme != "https" && base.Scheme != "http") || base.Host == "" {
		return nil, fmt.Errorf("ghaction: API URL %q is not an http(s) URL", apiURL)
	}
	if base.Scheme == "http" && !isLoopback(base.Hostname()) {
		return nil, fmt.Errorf("ghaction: API URL %q is plain http to a host that is not loopback; the token would travel unencrypted (use https)", apiURL)
	}
	// go-github resolves relative paths against BaseURL and refuses one
	// without a trailing slash; GITHUB_API_URL has none.
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	hc := &http.Client{
		Transport:     &retryTransport{base: http.DefaultTransport, opts: opts.withDefaults()},
		CheckRedirect: checkRedirect,
	}
	c := github.NewClient(hc).WithAuthToken(token)
	c.BaseURL = base
	return c, nil
}

// checkRedirect lets the client follow a redirect only to the same host
// (port included) without leaving https: the token transport would send the
// Authorization header to wherever the redirect points. The error names the
// hosts, which carry no secret.
func checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("ghaction: stopped after 10 redirects")
	}
	from, to := via[0].URL, req.URL
	if !strings.EqualFold(from.Host, to.Host) {
		return fmt.Errorf("ghaction: refusing redirect from host %q to another host %q: it would receive the token", from.Host, to.Host)
	}
	if last := via[len(via)-1].URL; last.Scheme == "https" && to.Scheme != "https" {
		return fmt.Errorf("ghaction: refusing redirect from https to %s on host %q: it would send the token unencrypted", to.Scheme, to.Host)
	}
	return nil
}

// isLoopback reports whether host (no port, no brackets) is localhost or a
// loopback address (127.0.0.0/8, ::1).
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (o RetryOptions) withDefaults() RetryOptions {
	d := DefaultRetryOptions
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = d.MaxAttempts
	}
	if o.MaxWait <= 0 {
		o.MaxWait = d.MaxWait
	}
	if o.Sleep == nil {
		o.Sleep = d.Sleep
	}
	if o.Now == nil {
		o.Now = d.Now
	}
	return o
}

func sleepContext(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryTransport is an http.RoundTripper; go-github's token transport wraps
// it, so every attempt carries the Authorization header.
type retryTransport struct {
	base http.RoundTripper
	opts RetryOptions
}

func (t *retryTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		r := req
		if attempt > 1 {
			var err error
			if r, err = rewind(req); err != nil {
				return nil, err
			}
		}
		resp, err := t.base.RoundTrip(r)
		wait, retry := t.decide(req, resp, err, attempt)
		// waited <= MaxWait here, so the subtraction cannot overflow where
		// waited+wait could.
		if !retry || attempt >= t.opts.MaxAttempts || wait > t.opts.MaxWait-waited || !replayable(req) {
			return resp, err
		}
		discard(resp)
		if err := t.opts.Sleep(req.Context(), wait); err != nil {
			return nil, err
		}
		waited += wait
	}
}

// decide says whether the outcome of one attempt is worth another, and how
// long to wait first.
func (t *retryTransport) decide(req *http.Request, resp *http.Response, err error, attempt int) (time.Duration, bool) {
	if err != nil {
		if req.Context().Err() != nil {
			return 0, false
		}
		// A request whose connection was never made cannot have reached
		// GitHub, whatever its method; any other transport error may have
		// come after GitHub read and acted on the request.
		if idempotent(req.Method) || isDialError(err) {
			return backoff(attempt), true
		}
		return 0, false
	}
	switch code := resp.StatusCode; {
	case code == http.StatusTooManyRequests:
		// Rejected before processing: safe to resend even a POST.
		if d, ok := t.serverWait(resp); ok {
			return d, true
		}
		return backoff(attempt), true
	case code == http.StatusForbidden:
		// A 403 is usually a permission error, which no retry fixes; only
		// rate-limit 403s are retried, and those were rejected unprocessed.
		body := peekBody(resp)
		if !isRateLimited(resp.Header, string(body)) {
			return 0, false
		}
		if d, ok := t.serverWait(resp); ok {
			return d, true
		}
		if isSecondaryRateLimitText(string(body)) {
			return secondaryRateLimitWait, true
		}
		return backoff(attempt), true
	case code >= 500 && code != http.StatusNotImplemented:
		// GitHub's front end answers 502/504 when the back end was slow, and
		// the back end may still have finished the work: a comment POST
		// answered 502 has often been created. So only requests that are
		// harmless to repeat are retried; Commenter.Upsert handles the POST
		// case by looking for the comment before reporting failure.
		if !idempotent(req.Method) {
			return 0, false
		}
		if d, ok := t.serverWait(resp); ok {
			return d, true
		}
		return backoff(attempt), true
	}
	return 0, false
}

// serverWait returns the wait GitHub asked for, if it asked: Retry-After
// (seconds, or an HTTP date), else an exhausted primary limit's
// x-ratelimit-reset.
func (t *retryTransport) serverWait(resp *http.Response) (time.Duration, bool) {
	if v := strings.TrimSpace(resp.Header.Get("Retry-After")); v != "" {
		// Clamp the seconds before multiplying: a huge value would
		// overflow to a negative wait.
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
			return time.Duration(min(s, int64(maxServerWait/time.Second))) * time.Second, true
		}
		if at, err := http.ParseTime(v); err == nil {
			return clampWait(at.Sub(t.opts.Now())), true
		}
	}
	if resp.Header.Get("X-Ratelimit-Remaining") == "0" {
		if s, err := strconv.ParseInt(resp.Header.Get("X-Ratelimit-Reset"), 10, 64); err == nil {
			return resetWait(s, t.opts.Now()), true
		}
	}
	return 0, false
}

// resetWait is the wait until x-ratelimit-reset (Unix seconds) has passed.
// The reset is bounded in seconds first: time.Unix wraps for values far out
// of range, and the margin could overflow a saturated difference.
func resetWait(reset int64, now time.Time) time.Duration {
	limit := int64(maxServerWait / time.Second)
	var d time.Duration
	switch n := now.Unix(); {
	case reset > n+limit:
		d = maxServerWait
	case reset < n-limit:
		d = -maxServerWait
	default:
		d = time.Unix(reset, 0).Sub(now)
	}
	return clampWait(d + resetMargin)
}

// clampWait bounds a wait to [0, maxServerWait].
func clampWait(d time.Duration) time.Duration {
	return min(max(d, 0), maxServerWait)
}

// isRateLimited reports whether a 403 is GitHub's primary or secondary rate
// limit rather than a permission error. body is the response body, or an
// error response's message and documentation URL.
func isRateLimited(h http.Header, body string) bool {
	return h.Get("X-Ratelimit-Remaining") == "0" || h.Get("Retry-After") != "" || isSecondaryRateLimitText(body)
}

// isSecondaryRateLimitText recognises GitHub's secondary rate limit by its
// message ("You have exceeded a secondary rate limit", formerly "abuse
// detection mechanism") or its documentation URL's anchor.
func isSecondaryRateLimitText(s string) bool {
	s = strings.ToLower(s)
	for _, m := range []string{"secondary rate limit", "secondary-rate-limit", "abuse detection", "abuse-rate-limit"} {
		if strings.Contains(s, m) {
			return true
		}
	}
	return false
}

// backoff is exponential from firstBackoff with up to 50% added jitter, so
// that jobs failing together do not retry together.
func backoff(attempt int) time.Duration {
	d := firstBackoff << min(attempt-1, 20)
	return d + rand.N(d/2)
}

// idempotent lists the methods that are harmless to repeat. PATCH is not
// idempotent in HTTP in general, but every PATCH benchgate sends sets a
// comment's body to a fixed value, so repeating it changes nothing.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodPatch, http.MethodDelete:
		return true
	}
	return false
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// rewind returns a copy of req with a fresh body: the transport consumed and
// closed the previous one.
func rewind(req *http.Request) (*http.Request, error) {
	r := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody {
		body, err := req.GetBody()
		if err != nil {
			return nil, fmt.Errorf("ghaction: replaying request body: %w", err)
		}
		r.Body = body
	}
	return r, nil
}

// peekBody reads the start of resp's body and puts it back, so the caller
// (go-github's error decoding) still sees all of it.
func peekBody(resp *http.Response) []byte {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, peekLimit))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
	return b
}

// discard drains and closes a response that will be retried, so its
// connection can be reused.
func discard(resp *http.Response) {
	if resp == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, peekLimit))
	_ = resp.Body.Close()
}
