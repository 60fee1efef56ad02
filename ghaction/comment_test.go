package ghaction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/benchgate/benchgate/internal/fakegithub"
)

const testToken = "ghp_TESTTOKEN0123456789abcdefSECRET"

var (
	pat   = &fakegithub.User{Login: "perf-bot", Type: "User"}
	alice = fakegithub.User{Login: "alice", Type: "User"}
	// t0 is the injected clock; it is years before the real one, so
	// go-github's own client-side rate-limit check (which uses the real
	// clock) never blocks a request in these tests.
	t0 = time.Unix(1700000000, 0)
)

// sleeps records the waits the transport asks for instead of waiting.
type sleeps struct {
	mu    sync.Mutex
	waits []time.Duration
	fail  error // returned by sleep, as a cancelled wait would
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waits = append(s.waits, d)
	if s.fail != nil {
		return s.fail
	}
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

type setup struct {
	gh     *fakegithub.Server
	c      *Commenter
	sleeps *sleeps
}

// newSetup starts a fake GitHub with PR 7 and a Commenter pointed at it
// through NewClient, with the sleep and clock injected. opts may set bounds.
func newSetup(t *testing.T, user *fakegithub.User, opts RetryOptions) setup {
	t.Helper()
	gh := fakegithub.New(t, testToken, user)
	gh.AddPR(7, "abc123abc123abc123abc123abc123abc123abc1")
	s := &sleeps{}
	opts.Sleep, opts.Now = s.sleep, func() time.Time { return t0 }
	// No trailing slash, as GITHUB_API_URL is given.
	client, err := NewClient(testToken, gh.URL, opts)
	if err != nil {
		t.Fatal(err)
	}
	return setup{gh: gh, c: &Commenter{Client: client, Owner: "octo", Repo: "bench", Header: "perf", Sleep: s.sleep}, sleeps: s}
}

func checkCalls(t *testing.T, gh *fakegithub.Server, want ...string) {
	t.Helper()
	if got := gh.Calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests:\n got %q\nwant %q", got, want)
	}
}

func checkWaits(t *testing.T, s *sleeps, want ...time.Duration) {
	t.Helper()
	if got := s.got(); !reflect.DeepEqual(got, want) {
		t.Errorf("waits = %v, want %v", got, want)
	}
}

const (
	listPR7   = "GET /repos/octo/bench/issues/7/comments?page=1&per_page=100"
	createPR7 = "POST /repos/octo/bench/issues/7/comments"
)

func editOf(id int64) string { return fmt.Sprintf("PATCH /repos/octo/bench/issues/comments/%d", id) }

func TestUpsertCreatesThenEdits(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	ctx := context.Background()

	url1, created, err := s.c.Upsert(ctx, 7, "report one")
	if err != nil || !created {
		t.Fatalf("first Upsert = %q, %v, %v; want created", url1, created, err)
	}
	url2, created, err := s.c.Upsert(ctx, 7, "report two")
	if err != nil || created {
		t.Fatalf("second Upsert = %q, %v, %v; want edited", url2, created, err)
	}
	if url1 != url2 || !strings.HasPrefix(url1, "https://github.com/octo/bench/pull/7#issuecomment-") {
		t.Errorf("urls %q, %q: want the same comment's html_url", url1, url2)
	}
	cs := s.gh.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("%d comments stored, want 1", len(cs))
	}
	if want := Marker("perf") + "\nreport two"; cs[0].Body != want {
		t.Errorf("body = %q, want %q", cs[0].Body, want)
	}
	// GET /user once: who we are is learnt once per Commenter.
	checkCalls(t, s.gh, "GET /user", listPR7, createPR7, listPR7, editOf(cs[0].ID))
	for _, r := range s.gh.Requests() {
		if r.Auth != "Bearer "+testToken {
			t.Errorf("%s %s: Authorization %q", r.Method, r.Path, r.Auth)
		}
	}
	checkWaits(t, s.sleeps)
}

func TestUpsertSameBodyDoesNotEdit(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	ctx := context.Background()
	if _, _, err := s.c.Upsert(ctx, 7, "same"); err != nil {
		t.Fatal(err)
	}
	if _, created, err := s.c.Upsert(ctx, 7, "same"); err != nil || created {
		t.Fatalf("second Upsert: created=%v err=%v", created, err)
	}
	checkCalls(t, s.gh, "GET /user", listPR7, createPR7, listPR7)
}

func TestUpsertKeepsMarkerAlreadyInBody(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newSetup(t, pat, RetryOptions{})
	body := Marker("perf") + "\n# Report\n"
	if _, _, err := s.c.Upsert(ctx, 7, body); err != nil {
		t.Fatal(err)
	}
	if got := s.gh.Comments(7)[0].Body; got != body {
		t.Errorf("body = %q, want %q unchanged", got, body)
	}

	// A marker elsewhere is not the tag: the tag is still prepended, so
	// that Find recognises the comment on the next run.
	s = newSetup(t, pat, RetryOptions{})
	body = "# Report\n" + Marker("perf") + "\n"
	if _, _, err := s.c.Upsert(ctx, 7, body); err != nil {
		t.Fatal(err)
	}
	if got, want := s.gh.Comments(7)[0].Body, Marker("perf")+"\n"+body; got != want {
		t.Errorf("body = %q, want %q", got, want)
	}
	if _, created, err := s.c.Upsert(ctx, 7, body); err != nil || created {
		t.Errorf("second Upsert: created=%v err=%v; want the same comment found", created, err)
	}
}

func TestFindIgnoresMarkerNotAtStart(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		user *fakegithub.User
		bot  fakegithub.User
	}{
		{"pat", pat, fakegithub.User{Login: pat.Login, Type: "User"}},
		{"actions token", nil, fakegithub.User{Login: "github-actions[bot]", Type: "Bot"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSetup(t, tc.user, RetryOptions{})
			// Our own identity's comments, with our marker planted where a
			// PR author can put it: quoted text, another gate's output.
			planted := []string{
				"> " + Marker("perf") + "\n> quoted by a bot",
				Marker("other") + "\ntarget output:\n" + Marker("perf") + "\n",
				" " + Marker("perf") + "\nleading space",
				Marker("perf") + " same line, no newline",
				Marker("perf"), // marker only, no newline
			}
			for _, b := range planted {
				s.gh.AddComment(7, tc.bot, b)
			}
			if got, err := s.c.Find(context.Background(), 7); err != nil || got != nil {
				t.Fatalf("Find = %v, %v; want none", got, err)
			}
			if _, created, err := s.c.Upsert(context.Background(), 7, "fresh"); err != nil || !created {
				t.Fatalf("Upsert: created=%v err=%v; want a new comment", created, err)
			}
			cs := s.gh.Comments(7)
			if len(cs) != len(planted)+1 {
				t.Fatalf("%d comments, want %d", len(cs), len(planted)+1)
			}
			for i, b := range planted {
				if cs[i].Body != b || !cs[i].UpdatedAt.Equal(cs[i].CreatedAt) {
					t.Errorf("comment %d = %q, want %q untouched", i, cs[i].Body, b)
				}
			}
			if want := Marker("perf") + "\nfresh"; cs[len(planted)].Body != want {
				t.Errorf("new comment = %q, want %q", cs[len(planted)].Body, want)
			}
		})
	}
}

func TestOutcomeLine(t *testing.T) {
	t.Parallel()
	c := &Commenter{Header: "perf"}
	m := Marker("perf")
	for _, tc := range []struct{ body, want string }{
		{m + "\n<!-- benchgate:outcome pass regressions=0 -->\n# Report", "<!-- benchgate:outcome pass regressions=0 -->"},
		{m + "\nonly line", "only line"},
		{m + "\ncrlf\r\nrest", "crlf"},
		{m + "\n", ""},
		{m, ""},
		{"x\n" + m + "\nplanted", ""},
		{Marker("perf2") + "\nother header", ""},
	} {
		if got := c.OutcomeLine(tc.body); got != tc.want {
			t.Errorf("OutcomeLine(%q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

func TestUpsertLeavesOtherCommentsAlone(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	mine := fakegithub.User{Login: pat.Login, Type: "User"}
	quote := "> " + Marker("perf") + "\n> quoted from the bot"
	s.gh.AddComment(7, alice, quote)                                       // marked, someone else's
	s.gh.AddComment(7, mine, "LGTM")                                       // ours, unmarked
	s.gh.AddComment(7, mine, Marker("other job")+"\nanother gate's table") // ours, other header
	s.gh.AddComment(7, mine, Marker("perf2")+"\n")                         // header with ours as a prefix

	if _, created, err := s.c.Upsert(context.Background(), 7, "fresh"); err != nil || !created {
		t.Fatalf("Upsert: created=%v err=%v; want a new comment", created, err)
	}
	cs := s.gh.Comments(7)
	if len(cs) != 5 {
		t.Fatalf("%d comments, want 5", len(cs))
	}
	wantBodies := []string{quote, "LGTM", Marker("other job") + "\nanother gate's table", Marker("perf2") + "\n", Marker("perf") + "\nfresh"}
	for i, c := range cs {
		if c.Body != wantBodies[i] || !c.UpdatedAt.Equal(c.CreatedAt) {
			t.Errorf("comment %d = %q (edited %v), want %q untouched", i, c.Body, !c.UpdatedAt.Equal(c.CreatedAt), wantBodies[i])
		}
	}
	checkCalls(t, s.gh, "GET /user", listPR7, createPR7)
}

func TestUpsertWithActionsTokenEditsBotComment(t *testing.T) {
	t.Parallel()
	s := newSetup(t, nil, RetryOptions{}) // GET /user answers 403
	// A human account named like the bot is not the bot.
	s.gh.AddComment(7, fakegithub.User{Login: "github-actions[bot]", Type: "User"}, Marker("perf")+"\nimpostor")
	s.gh.AddComment(7, fakegithub.User{Login: "github-actions[bot]", Type: "Bot"}, Marker("perf")+"\nold duplicate")
	id := s.gh.AddComment(7, fakegithub.User{Login: "github-actions[bot]", Type: "Bot"}, Marker("perf")+"\nnewer")
	s.gh.AddComment(7, alice, Marker("perf")+"\na person's, newest")

	url, created, err := s.c.Upsert(context.Background(), 7, "new")
	if err != nil || created {
		t.Fatalf("Upsert = %q, %v, %v; want an edit", url, created, err)
	}
	// An installation token cannot tell which bot it is: the most recent
	// bot's comment is taken (see TestInstallationTokenMovesOnFromOtherBotsComment).
	if want := fmt.Sprintf("https://github.com/octo/bench/pull/7#issuecomment-%d", id); url != want {
		t.Errorf("url = %q, want the most recent bot comment %q", url, want)
	}
	checkCalls(t, s.gh, "GET /user", listPR7, editOf(id))
	if got := s.gh.Comments(7)[0].Body; got != Marker("perf")+"\nimpostor" {
		t.Errorf("impostor's comment changed to %q", got)
	}
}

func TestFindPagesThroughLongThread(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	var ours int64
	for i := range 250 {
		if i == 230 {
			ours = s.gh.AddComment(7, fakegithub.User{Login: "Perf-Bot", Type: "User"}, Marker("perf")+"\nold report")
			continue
		}
		s.gh.AddComment(7, alice, fmt.Sprintf("comment %d", i))
	}

	url, created, err := s.c.Upsert(context.Background(), 7, "new report")
	if err != nil || created {
		t.Fatalf("Upsert = %q, %v, %v; want an edit", url, created, err)
	}
	if n := len(s.gh.Comments(7)); n != 250 {
		t.Errorf("%d comments, want 250", n)
	}
	checkCalls(t, s.gh, "GET /user", listPR7,
		"GET /repos/octo/bench/issues/7/comments?page=2&per_page=100",
		"GET /repos/octo/bench/issues/7/comments?page=3&per_page=100",
		editOf(ours))
}

func TestFindNone(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	for i := range 150 {
		s.gh.AddComment(7, alice, fmt.Sprintf("comment %d", i))
	}
	got, err := s.c.Find(context.Background(), 7)
	if err != nil || got != nil {
		t.Fatalf("Find = %v, %v; want nil, nil", got, err)
	}
	checkCalls(t, s.gh, "GET /user", listPR7, "GET /repos/octo/bench/issues/7/comments?page=2&per_page=100")
}

func TestReadOnlyToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("create", func(t *testing.T) {
		s := newSetup(t, nil, RetryOptions{})
		s.gh.SetReadOnly(true)
		_, _, err := s.c.Upsert(ctx, 7, "r")
		if !errors.Is(err, ErrReadOnly) {
			t.Fatalf("err = %v, want ErrReadOnly", err)
		}
		if !strings.Contains(err.Error(), "Resource not accessible by integration") {
			t.Errorf("err = %v, want GitHub's message kept", err)
		}
		// A permission error is not retried.
		checkCalls(t, s.gh, "GET /user", listPR7, createPR7)
		checkWaits(t, s.sleeps)
	})
	t.Run("edit", func(t *testing.T) {
		s := newSetup(t, nil, RetryOptions{})
		id := s.gh.AddComment(7, fakegithub.User{Login: "github-actions[bot]", Type: "Bot"}, Marker("perf")+"\nold")
		s.gh.SetReadOnly(true)
		if _, _, err := s.c.Upsert(ctx, 7, "r"); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("err = %v, want ErrReadOnly", err)
		}
		// The refused edit could be of another App's bot's comment: the
		// create that follows is refused as well.
		checkCalls(t, s.gh, "GET /user", listPR7, editOf(id), createPR7)
	})
	t.Run("404 on write", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{})
		s.gh.Inject(fakegithub.Fault{Method: "POST", Status: http.StatusNotFound, Body: `{"message":"Not Found","documentation_url":"https://docs.github.com/rest"}`})
		if _, _, err := s.c.Upsert(ctx, 7, "r"); !errors.Is(err, ErrReadOnly) {
			t.Fatalf("err = %v, want ErrReadOnly", err)
		}
	})
	t.Run("404 on list is not read-only", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{})
		_, _, err := s.c.Upsert(ctx, 8, "r") // no PR 8
		if err == nil || errors.Is(err, ErrReadOnly) {
			t.Fatalf("err = %v, want a plain error", err)
		}
	})
}

func TestNonPositivePRMakesNoRequest(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	ctx := context.Background()
	for _, pr := range []int{0, -1} {
		if _, _, err := s.c.Upsert(ctx, pr, "r"); err == nil {
			t.Errorf("Upsert(%d): no error", pr)
		}
		if _, err := s.c.Find(ctx, pr); err == nil {
			t.Errorf("Find(%d): no error", pr)
		}
		if _, err := s.c.PRHead(ctx, pr); err == nil {
			t.Errorf("PRHead(%d): no error", pr)
		}
	}
	checkCalls(t, s.gh)
}

func TestBodyLimitInRunes(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	ctx := context.Background()
	room := MaxCommentRunes - utf8.RuneCountInString(Marker("perf")+"\n")
	// 'é' is two bytes: a byte count would refuse this body.
	fits := strings.Repeat("é", room)
	if _, created, err := s.c.Upsert(ctx, 7, fits); err != nil || !created {
		t.Fatalf("Upsert of exactly %d runes: created=%v err=%v", MaxCommentRunes, created, err)
	}
	n := len(s.gh.Requests())
	if _, _, err := s.c.Upsert(ctx, 7, fits+"é"); err == nil || !strings.Contains(err.Error(), "65536") {
		t.Fatalf("Upsert of %d runes: err = %v, want the limit named", MaxCommentRunes+1, err)
	}
	if got := len(s.gh.Requests()); got != n {
		t.Errorf("an over-long body made %d requests", got-n)
	}
}

func TestPRHead(t *testing.T) {
	t.Parallel()
	s := newSetup(t, pat, RetryOptions{})
	sha, err := s.c.PRHead(context.Background(), 7)
	if err != nil || sha != "abc123abc123abc123abc123abc123abc123abc1" {
		t.Fatalf("PRHead = %q, %v", sha, err)
	}
	checkCalls(t, s.gh, "GET /repos/octo/bench/pulls/7")
	if _, err := s.c.PRHead(context.Background(), 99); err == nil {
		t.Error("PRHead of a missing PR: no error")
	}
}

func TestTokenNeverInErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	check := func(t *testing.T, err error) {
		t.Helper()
		if err == nil {
			t.Fatal("want an error")
		}
		if strings.Contains(err.Error(), testToken) || strings.Contains(fmt.Sprintf("%+v", err), testToken) {
			t.Errorf("error contains the token: %v", err)
		}
	}
	t.Run("read-only", func(t *testing.T) {
		s := newSetup(t, nil, RetryOptions{})
		s.gh.SetReadOnly(true)
		_, _, err := s.c.Upsert(ctx, 7, "r")
		check(t, err)
	})
	t.Run("exhausted 5xx", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{MaxAttempts: 2})
		s.gh.Inject(fakegithub.Fault{Status: 500}, fakegithub.Fault{Status: 500})
		_, _, err := s.c.Upsert(ctx, 7, "r")
		check(t, err)
	})
	t.Run("bad credentials", func(t *testing.T) {
		gh := fakegithub.New(t, "another-token", pat)
		gh.AddPR(7, "abc")
		client, err := NewClient(testToken, gh.URL, RetryOptions{Sleep: (&sleeps{}).sleep})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = (&Commenter{Client: client, Owner: "octo", Repo: "bench"}).Upsert(ctx, 7, "r")
		check(t, err)
		for _, r := range gh.Requests() {
			if strings.Contains(r.Path+r.Query, testToken) {
				t.Errorf("token in URL %s?%s", r.Path, r.Query)
			}
		}
	})
	t.Run("network", func(t *testing.T) {
		s := newSetup(t, pat, RetryOptions{MaxAttempts: 2})
		s.gh.Close()
		_, err := s.c.PRHead(ctx, 7)
		check(t, err)
		// Connection refused never reached a server: retried like any GET.
		if len(s.sleeps.got()) != 1 {
			t.Errorf("waits = %v, want 1", s.sleeps.got())
		}
	})
}

func TestMarker(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ header, want string }{
		{"", `<!-- benchgate:comment header="" -->`},
		{"perf", `<!-- benchgate:comment header="perf" -->`},
		{"linux / amd64", `<!-- benchgate:comment header="linux / amd64" -->`},
		{"a-->b", `<!-- benchgate:comment header="a%2D%2D%3Eb" -->`},
		{`x" --><script>`, `<!-- benchgate:comment header="x%22 %2D%2D%3E%3Cscript%3E" -->`},
		{"100%-ok\n!", `<!-- benchgate:comment header="100%25%2Dok%0A%21" -->`},
		{"perf-é", `<!-- benchgate:comment header="perf%2Dé" -->`},
	} {
		got := Marker(tc.header)
		if got != tc.want {
			t.Errorf("Marker(%q) = %q, want %q", tc.header, got, tc.want)
		}
		// The comment must end only at its own end.
		inner := strings.TrimSuffix(strings.TrimPrefix(got, "<!--"), "-->")
		if strings.Contains(inner, "--") || strings.Contains(inner, ">") {
			t.Errorf("Marker(%q) = %q can close early", tc.header, got)
		}
	}
	// Distinct headers, distinct markers, none inside another.
	hs := []string{"a", "ab", `a"`, "a-", "a%2D", "a\n"}
	for _, x := range hs {
		for _, y := range hs {
			if x != y && strings.Contains(Marker(y), Marker(x)) {
				t.Errorf("Marker(%q) found inside Marker(%q)", x, y)
			}
		}
	}
}

func TestServerWaitClamped(t *testing.T) {
	t.Parallel()
	tr := &retryTransport{opts: RetryOptions{Now: func() time.Time { return t0 }}}
	for _, tc := range []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"retry-after seconds", map[string]string{"Retry-After": "999999999999"}, maxServerWait},
		{"retry-after max int64", map[string]string{"Retry-After": "9223372036854775807"}, maxServerWait},
		{"retry-after date", map[string]string{"Retry-After": "Fri, 31 Dec 9999 23:59:59 GMT"}, maxServerWait},
		{"reset far away", map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "9223372036854775807"}, maxServerWait},
		{"reset long past", map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "1"}, 0},
		{"reset min int64", map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": "-9223372036854775808"}, 0},
		{"reset in 30s", map[string]string{"X-Ratelimit-Remaining": "0", "X-Ratelimit-Reset": strconv.FormatInt(t0.Unix()+30, 10)}, 31 * time.Second},
	} {
		resp := &http.Response{Header: http.Header{}}
		for k, v := range tc.header {
			resp.Header.Set(k, v)
		}
		if got, ok := tr.serverWait(resp); !ok || got != tc.want {
			t.Errorf("%s: serverWait = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
}

// TestRedirectKeepsToken: go-github's transport adds the Authorization
// header to every request, redirects included, so a redirect to another
// host must not be followed.
func TestRedirectKeepsToken(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string // Authorization headers the other host received
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"head":{"sha":"stolen"}}`)
	}))
	defer other.Close()
	// The same address under another name is another host too.
	otherByName := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)

	for _, target := range []string{other.URL, otherByName} {
		t.Run(target, func(t *testing.T) {
			for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
				s := newSetup(t, pat, RetryOptions{})
				s.gh.Inject(fakegithub.Fault{Path: "/repos/octo/bench/pulls/7", Status: code,
					Header: map[string]string{"Location": target + "/repos/octo/bench/pulls/7"}})
				_, err := s.c.PRHead(context.Background(), 7)
				if err == nil || !strings.Contains(err.Error(), "refusing redirect") {
					t.Fatalf("%d: err = %v, want a refused redirect", code, err)
				}
				if strings.Contains(err.Error(), testToken) {
					t.Errorf("%d: error contains the token: %v", code, err)
				}
				if !strings.Contains(err.Error(), strings.TrimPrefix(s.gh.URL, "http://")) {
					t.Errorf("%d: error %q does not name the API host", code, err)
				}
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 0 {
		t.Errorf("the other host was sent %d requests (Authorization %q)", len(seen), seen)
	}

	// A redirect on the same host is still followed (GitHub answers 301
	// for a renamed repository).
	s := newSetup(t, pat, RetryOptions{})
	s.gh.AddPR(8, "def456def456def456def456def456def456def4")
	s.gh.Inject(fakegithub.Fault{Path: "/repos/octo/bench/pulls/7", Status: http.StatusMovedPermanently,
		Header: map[string]string{"Location": s.gh.URL + "/repos/octo/bench/pulls/8"}})
	if sha, err := s.c.PRHead(context.Background(), 7); err != nil || sha != "def456def456def456def456def456def456def4" {
		t.Errorf("same-host redirect: PRHead = %q, %v", sha, err)
	}
}

func TestCheckRedirect(t *testing.T) {
	t.Parallel()
	req := func(u string) *http.Request {
		r, err := http.NewRequest("GET", u, nil)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, tc := range []struct {
		via []string
		to  string
		ok  bool
	}{
		{[]string{"https://api.github.com/repos/a/b"}, "https://api.github.com/repositories/1", true},
		{[]string{"https://api.github.com/repos/a/b"}, "https://API.GitHub.com/repositories/1", true},
		{[]string{"https://api.github.com/repos/a/b"}, "https://evil.example/x", false},
		{[]string{"https://api.github.com/repos/a/b"}, "https://api.github.com.evil.example/x", false},
		{[]string{"https://api.github.com/repos/a/b"}, "https://api.github.com:8443/x", false},
		{[]string{"https://api.github.com/repos/a/b"}, "http://api.github.com/x", false},
		{[]string{"https://api.github.com/a", "https://api.github.com/b"}, "https://evil.example/x", false},
		{[]string{"http://127.0.0.1:1234/a"}, "http://127.0.0.1:1234/b", true},
		{[]string{"http://127.0.0.1:1234/a"}, "http://127.0.0.1:5678/b", false},
	} {
		var via []*http.Request
		for _, v := range tc.via {
			via = append(via, req(v))
		}
		if err := checkRedirect(req(tc.to), via); (err == nil) != tc.ok {
			t.Errorf("redirect %v -> %s: err = %v, want ok=%v", tc.via, tc.to, err, tc.ok)
		}
	}
	via := make([]*http.Request, 10)
	for i := range via {
		via[i] = req("https://api.github.com/x")
	}
	if err := checkRedirect(req("https://api.github.com/x"), via); err == nil {
		t.Error("11th redirect followed")
	}
}

func TestNewClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", "https://api.github.com/"},
		{"https://api.github.com", "https://api.github.com/"},
		{"https://ghe.example.com/api/v3", "https://ghe.example.com/api/v3/"},
		{"https://ghe.example.com/api/v3/", "https://ghe.example.com/api/v3/"},
	} {
		c, err := NewClient("t", tc.in, RetryOptions{})
		if err != nil {
			t.Errorf("NewClient(%q): %v", tc.in, err)
			continue
		}
		if got := c.BaseURL.String(); got != tc.want {
			t.Errorf("NewClient(%q).BaseURL = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Plain http only to loopback, where the tests' fake GitHub listens.
	for _, in := range []string{"http://127.0.0.1:8080", "http://127.1.2.3/api/v3", "http://[::1]:9/", "http://localhost:3000", "http://LOCALHOST"} {
		if _, err := NewClient("t", in, RetryOptions{}); err != nil {
			t.Errorf("NewClient(%q): %v", in, err)
		}
	}
	for _, bad := range []string{"api.github.com", "ftp://x/", "://",
		"http://api.github.com", "http://ghe.example.com/api/v3", "http://10.0.0.1/", "http://localhost.evil.example/", "http://127.0.0.1.nip.io/", "http://[::ffff:10.0.0.1]/"} {
		if _, err := NewClient("t", bad, RetryOptions{}); err == nil {
			t.Errorf("NewClient(%q): no error", bad)
		}
	}
	if _, err := NewClient("", "", RetryOptions{}); err == nil {
		t.Error("NewClient with no token: no error")
	}
}

func TestSleepContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	// A cancelled context ends even a long wait at once.
	if err := sleepContext(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("sleepContext = %v, want context.Canceled", err)
	}
	if err := sleepContext(context.Background(), 0); err != nil {
		t.Errorf("sleepContext(0) = %v", err)
	}
}
