package ghaction

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"github.com/benchgate/benchgate/internal/fakegithub"
)

func TestRetriesServerErrorOnList(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	s.gh.Inject(fakegithub.Fault{Method: "GET", Path: "/repos/octo/bench/issues/7/comments", Status: http.StatusBadGateway, Body: "<html>502 Bad Gateway</html>"})

	if _, created, err := s.c.Upsert(context.Background(), 7, "r"); err != nil || !created {
		t.Fatalf("Upsert: created=%v err=%v", created, err)
	}
	checkCalls(t, s.gh, "GET /user", listPR7, listPR7, createPR7)
	// Backoff starts at 1s with up to 50% jitter.
	w := s.sleeps.got()
	if len(w) != 1 || w[0] < time.Second || w[0] >= 1500*time.Millisecond {
		t.Errorf("waits = %v, want one in [1s, 1.5s)", w)
	}
}

func TestBackoffDoublesWithinBounds(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	for range 4 {
		s.gh.Inject(fakegithub.Fault{Path: "/repos/octo/bench/pulls/7", Status: http.StatusServiceUnavailable})
	}
	if _, err := s.c.PRHead(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	w := s.sleeps.got()
	if len(w) != 4 {
		t.Fatalf("waits = %v, want 4", w)
	}
	for i, d := range w {
		lo := time.Second << i
		if d < lo || d >= lo+lo/2 {
			t.Errorf("wait %d = %v, want in [%v, %v)", i, d, lo, lo+lo/2)
		}
	}
}

func TestRetriesDroppedConnectionOnGet(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	s.gh.Inject(fakegithub.Fault{Path: "/repos/octo/bench/pulls/7", Drop: true})
	sha, err := s.c.PRHead(context.Background(), 7)
	if err != nil || sha != "abc123abc123abc123abc123abc123abc123abc1" {
		t.Fatalf("PRHead = %q, %v", sha, err)
	}
	checkCalls(t, s.gh, "GET /repos/octo/bench/pulls/7", "GET /repos/octo/bench/pulls/7")
	if len(s.sleeps.got()) != 1 {
		t.Errorf("waits = %v, want 1", s.sleeps.got())
	}
}

func TestTooManyRequestsHonoursRetryAfter(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	// A 429 is refused before processing, so even the POST is resent.
	s.gh.Inject(fakegithub.Fault{Method: "POST", Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "7"},
		Body: `{"message":"Too many requests","documentation_url":"https://docs.github.com/rest"}`})

	if _, created, err := s.c.Upsert(context.Background(), 7, "r"); err != nil || !created {
		t.Fatalf("Upsert: created=%v err=%v", created, err)
	}
	checkWaits(t, s.sleeps, 7*time.Second)
	checkCalls(t, s.gh, "GET /user", listPR7, createPR7, createPR7)
	if n := len(s.gh.Comments(7)); n != 1 {
		t.Errorf("%d comments, want 1", n)
	}
	// The replayed POST carried the whole body again.
	reqs := s.gh.Requests()
	if a, b := reqs[2].Body, reqs[3].Body; a != b || !strings.Contains(b, `"body":`) {
		t.Errorf("POST bodies differ or are empty: %q vs %q", a, b)
	}
}

func TestPrimaryRateLimitWaitsForReset(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	reset := strconv.FormatInt(t0.Add(30*time.Second).Unix(), 10)
	s.gh.Inject(fakegithub.Fault{Method: "GET", Path: "/repos/octo/bench/issues/7/comments", Status: http.StatusForbidden,
		Header: map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000", "X-RateLimit-Reset": reset},
		Body:   `{"message":"API rate limit exceeded for user ID 1.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`})

	if _, _, err := s.c.Upsert(context.Background(), 7, "r"); err != nil {
		t.Fatal(err)
	}
	// The reset time, plus a second because it is to be passed, not met.
	checkWaits(t, s.sleeps, 31*time.Second)
	checkCalls(t, s.gh, "GET /user", listPR7, listPR7, createPR7)
}

func TestSecondaryRateLimit(t *testing.T) {
	t.Parallel()
	body := `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"retry-after", map[string]string{"Retry-After": "5"}, 5 * time.Second},
		// GitHub's docs: with no header, wait at least a minute.
		{"message only", nil, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, pat, RetryOptions{})
			s.gh.Inject(fakegithub.Fault{Method: "POST", Status: http.StatusForbidden, Header: tc.header, Body: body})
			if _, created, err := s.c.Upsert(context.Background(), 7, "r"); err != nil || !created {
				t.Fatalf("Upsert: created=%v err=%v", created, err)
			}
			checkWaits(t, s.sleeps, tc.want)
			checkCalls(t, s.gh, "GET /user", listPR7, createPR7, createPR7)
			if n := len(s.gh.Comments(7)); n != 1 {
				t.Errorf("%d comments, want 1", n)
			}
		})
	}
}

func TestRetryBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("attempts", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{MaxAttempts: 3})
		for range 10 {
			s.gh.Inject(fakegithub.Fault{Path: "/repos/octo/bench/pulls/7", Status: http.StatusServiceUnavailable, Header: map[string]string{"Retry-After": "2"}})
		}
		_, err := s.c.PRHead(ctx, 7)
		var er *github.ErrorResponse
		if !errors.As(err, &er) || er.Response.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("err = %v, want the last 503 as it is", err)
		}
		checkWaits(t, s.sleeps, 2*time.Second, 2*time.Second)
		if n := len(s.gh.Requests()); n != 3 {
			t.Errorf("%d requests, want 3", n)
		}
	})
	t.Run("default attempts", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{})
		for range 10 {
			s.gh.Inject(fakegithub.Fault{Path: "/repos/octo/bench/pulls/7", Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "1"}})
		}
		if _, err := s.c.PRHead(ctx, 7); err == nil {
			t.Fatal("no error after exhausting attempts")
		}
		checkWaits(t, s.sleeps, time.Second, time.Second, time.Second, time.Second)
		if n := len(s.gh.Requests()); n != DefaultRetryOptions.MaxAttempts {
			t.Errorf("%d requests, want %d", n, DefaultRetryOptions.MaxAttempts)
		}
	})
	t.Run("total wait", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{})
		for range 3 {
			s.gh.Inject(fakegithub.Fault{Path: "/repos/octo/bench/pulls/7", Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "40"}})
		}
		_, err := s.c.PRHead(ctx, 7)
		var er *github.ErrorResponse
		if !errors.As(err, &er) || er.Response.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("err = %v, want the 429 as it is", err)
		}
		// 40s fits in the default 60s; another 40s would not, and is not begun.
		checkWaits(t, s.sleeps, 40*time.Second)
		if n := len(s.gh.Requests()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
	t.Run("reset beyond budget", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{MaxWait: 10 * time.Second})
		reset := strconv.FormatInt(t0.Add(time.Hour).Unix(), 10)
		s.gh.Inject(fakegithub.Fault{Method: "POST", Status: http.StatusForbidden,
			Header: map[string]string{"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset},
			Body:   `{"message":"API rate limit exceeded","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"}`})
		_, _, err := s.c.Upsert(ctx, 7, "r")
		var rl *github.RateLimitError
		if !errors.As(err, &rl) || errors.Is(err, ErrReadOnly) {
			t.Fatalf("err = %v, want a rate-limit error that is not ErrReadOnly", err)
		}
		checkWaits(t, s.sleeps)
		checkCalls(t, s.gh, "GET /user", listPR7, createPR7)
	})
	t.Run("huge retry-after", func(t *testing.T) {
		// 999999999999 s overflows time.Duration if multiplied unclamped,
		// wrapping to a negative wait that would retry at once.
		s := newSetup(t, pat, RetryOptions{})
		s.gh.Inject(fakegithub.Fault{Path: "/repos/octo/bench/pulls/7", Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "999999999999"}})
		_, err := s.c.PRHead(ctx, 7)
		var er *github.ErrorResponse
		if !errors.As(err, &er) || er.Response.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("err = %v, want the 429 as it is", err)
		}
		checkWaits(t, s.sleeps)
		if n := len(s.gh.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
	t.Run("huge budget", func(t *testing.T) {
		// Neither a huge wait nor a huge MaxWait may overflow the budget
		// check: the wait is capped and the retry made.
		s := newSetup(t, pat, RetryOptions{MaxWait: time.Duration(1<<63 - 1)})
		s.gh.Inject(fakegithub.Fault{Path: "/repos/octo/bench/pulls/7", Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "999999999999"}})
		if _, err := s.c.PRHead(ctx, 7); err != nil {
			t.Fatal(err)
		}
		checkWaits(t, s.sleeps, maxServerWait)
	})
	t.Run("cancelled while waiting", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{})
		s.sleeps.fail = context.Canceled
		s.gh.Inject(fakegithub.Fault{Path: "/repos/octo/bench/pulls/7", Status: http.StatusBadGateway})
		if _, err := s.c.PRHead(ctx, 7); !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if n := len(s.gh.Requests()); n != 1 {
			t.Errorf("%d requests, want 1", n)
		}
	})
}

// checkLookWait checks that each create answered with a server error was
// followed by one wait, of the backoff for that attempt, before the look.
func checkLookWait(t *testing.T, s *sleeps, creates int) {
	t.Helper()
	got := s.got()
	if len(got) != creates {
		t.Fatalf("waits %v, want one after each of %d creates", got, creates)
	}
	for i, d := range got {
		if lo := firstBackoff << i; d < lo || d >= lo+lo/2 {
			t.Errorf("wait %d = %v, want in [%v, %v)", i, d, lo, lo+lo/2)
		}
	}
}

func TestCreateAnsweredServerErrorIsNotResentBlindly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("created despite 502", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{})
		s.gh.Inject(fakegithub.Fault{Method: "POST", Status: http.StatusBadGateway, AfterHandling: true})
		url, created, err := s.c.Upsert(ctx, 7, "r")
		if err != nil || !created || url == "" {
			t.Fatalf("Upsert = %q, %v, %v; want the comment found after the 502", url, created, err)
		}
		checkCalls(t, s.gh, "GET /user", listPR7, createPR7, listPR7)
		if n := len(s.gh.Comments(7)); n != 1 {
			t.Errorf("%d comments, want 1", n)
		}
		checkLookWait(t, s.sleeps, 1)
	})
	t.Run("not created: sent again", func(t *testing.T) {
		// POST 502, the listing shows no comment: it was not made, so it
		// is sent again, and exists once.
		s := newSetup(t, pat, RetryOptions{})
		s.gh.Inject(fakegithub.Fault{Method: "POST", Status: http.StatusBadGateway})
		url, created, err := s.c.Upsert(ctx, 7, "r")
		if err != nil || !created || url == "" {
			t.Fatalf("Upsert = %q, %v, %v; want the comment created on the second POST", url, created, err)
		}
		checkCalls(t, s.gh, "GET /user", listPR7, createPR7, listPR7, createPR7)
		if n := len(s.gh.Comments(7)); n != 1 {
			t.Errorf("%d comments, want 1", n)
		}
		checkLookWait(t, s.sleeps, 1)
	})
	t.Run("never created: bounded", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{})
		for range maxCreates {
			s.gh.Inject(fakegithub.Fault{Method: "POST", Status: http.StatusBadGateway})
		}
		_, _, err := s.c.Upsert(ctx, 7, "r")
		if err == nil || !strings.Contains(err.Error(), "sent 3 times, and not created") {
			t.Fatalf("err = %v, want it sent %d times", err, maxCreates)
		}
		checkCalls(t, s.gh, "GET /user", listPR7, createPR7, listPR7, createPR7, listPR7, createPR7, listPR7)
		if n := len(s.gh.Comments(7)); n != 0 {
			t.Errorf("%d comments, want none", n)
		}
		checkLookWait(t, s.sleeps, maxCreates)
	})
	t.Run("ambiguous: the listing fails", func(t *testing.T) {
		// POST 502, then the comments cannot be listed (404 is not
		// retried): whether it was made is unknown, so it is not resent.
		s := newSetup(t, pat, RetryOptions{})
		s.gh.Inject(fakegithub.Fault{Method: "POST", Status: http.StatusBadGateway, AfterHandling: true},
			fakegithub.Fault{Method: "GET", Path: "/repos/octo/bench/issues/7/comments", Skip: 1, Status: http.StatusNotFound, Body: `{"message":"Not Found"}`})
		_, _, err := s.c.Upsert(ctx, 7, "r")
		if err == nil || !strings.Contains(err.Error(), "not resent, since GitHub may have created it and the comments could not be listed") {
			t.Fatalf("err = %v", err)
		}
		checkCalls(t, s.gh, "GET /user", listPR7, createPR7, listPR7)
		if n := len(s.gh.Comments(7)); n != 1 {
			t.Errorf("%d comments, want the one GitHub made", n)
		}
	})
	t.Run("connection dropped after sending", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{})
		s.gh.Inject(fakegithub.Fault{Method: "POST", Drop: true, AfterHandling: true})
		if _, created, err := s.c.Upsert(ctx, 7, "r"); err != nil || !created {
			t.Fatalf("Upsert: created=%v err=%v", created, err)
		}
		checkCalls(t, s.gh, "GET /user", listPR7, createPR7, listPR7)
		if n := len(s.gh.Comments(7)); n != 1 {
			t.Errorf("%d comments, want 1", n)
		}
	})
}
