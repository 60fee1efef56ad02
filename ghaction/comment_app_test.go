package ghaction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/internal/fakegithub"
)

// app is a GitHub App's installation token: GET /user answers 403, as for
// the Actions token, but its comments are myapp[bot]'s.
var app = fakegithub.AppBot("myapp")

// newAppSetup is newSetup for an App installation token: a new Commenter
// per run, as each workflow run is a new process.
func newAppSetup(t *testing.T) setup {
	t.Helper()
	return newSetup(t, &app, RetryOptions{})
}

func (s setup) rerun() setup {
	c := *s.c
	c.self = nil
	s.c = &c
	return s
}

func TestUpsertWithAppTokenIsSticky(t *testing.T) {
	t.Parallel()
	s := newAppSetup(t)
	ctx := context.Background()
	var urls []string
	for run := range 3 {
		s = s.rerun()
		url, created, err := s.c.Upsert(ctx, 7, fmt.Sprintf("report %d", run))
		if err != nil || created != (run == 0) {
			t.Fatalf("run %d: Upsert = %q, created %v, %v; want created only by the first run", run, url, created, err)
		}
		urls = append(urls, url)
	}
	cs := s.gh.Comments(7)
	if len(cs) != 1 {
		t.Fatalf("%d comments after 3 runs, want 1", len(cs))
	}
	if cs[0].User != app || cs[0].Body != Marker("perf")+"\nreport 2" {
		t.Errorf("comment by %+v = %q, want myapp[bot]'s last report", cs[0].User, cs[0].Body)
	}
	if urls[0] != urls[1] || urls[1] != urls[2] {
		t.Errorf("urls %q: want one comment's", urls)
	}
	checkCalls(t, s.gh,
		"GET /user", listPR7, createPR7,
		"GET /user", listPR7, editOf(cs[0].ID),
		"GET /user", listPR7, editOf(cs[0].ID))
}

// A marked comment by a person is never ours, whatever token: a PR author
// who pastes the marker (or quotes the comment) must not have it edited.
func TestAppTokenNeverEditsHumanComment(t *testing.T) {
	t.Parallel()
	s := newAppSetup(t)
	human := s.gh.AddComment(7, alice, Marker("perf")+"\nhijack me")
	// Named like a bot, but a person: GitHub's logins cannot hold "[", yet
	// the type is what says who it is.
	s.gh.AddComment(7, fakegithub.User{Login: "myapp[bot]", Type: "User"}, Marker("perf")+"\nimpostor")
	ctx := context.Background()
	for run := range 2 {
		s = s.rerun()
		if _, created, err := s.c.Upsert(ctx, 7, fmt.Sprintf("report %d", run)); err != nil || created != (run == 0) {
			t.Fatalf("run %d: created %v, %v", run, created, err)
		}
	}
	cs := s.gh.Comments(7)
	if len(cs) != 3 {
		t.Fatalf("%d comments, want the two planted and ours", len(cs))
	}
	for _, c := range cs[:2] {
		if !c.UpdatedAt.Equal(c.CreatedAt) {
			t.Errorf("comment %d by %+v was edited: %q", c.ID, c.User, c.Body)
		}
	}
	if cs[0].ID != human || cs[2].User != app || cs[2].Body != Marker("perf")+"\nreport 1" {
		t.Errorf("comments %+v", cs)
	}
}

// A repository that moves from the Actions token to an App's (or back)
// has the other bot's marked comment on its open PRs. The token cannot
// edit it: one new comment is made, and the runs after settle on it, the
// most recent bot comment.
func TestInstallationTokenMovesOnFromOtherBotsComment(t *testing.T) {
	t.Parallel()
	s := newAppSetup(t)
	old := s.gh.AddComment(7, fakegithub.ActionsBot, Marker("perf")+"\nby the Actions token")
	ctx := context.Background()
	_, created, err := s.c.Upsert(ctx, 7, "report 0")
	if err != nil || !created {
		t.Fatalf("first run: created %v, %v; want a new comment", created, err)
	}
	checkCalls(t, s.gh, "GET /user", listPR7, editOf(old), createPR7)
	for run := 1; run < 3; run++ {
		s = s.rerun()
		if _, created, err := s.c.Upsert(ctx, 7, fmt.Sprintf("report %d", run)); err != nil || created {
			t.Fatalf("run %d: created %v, %v; want an edit", run, created, err)
		}
	}
	cs := s.gh.Comments(7)
	if len(cs) != 2 || cs[0].Body != Marker("perf")+"\nby the Actions token" || cs[1].User != app || cs[1].Body != Marker("perf")+"\nreport 2" {
		t.Errorf("comments %+v: want the Actions bot's untouched and one of myapp[bot]'s", cs)
	}
}

// A read-only installation token still reports ErrReadOnly when it finds
// a bot's comment it may not edit.
func TestAppTokenReadOnly(t *testing.T) {
	t.Parallel()
	s := newAppSetup(t)
	id := s.gh.AddComment(7, app, Marker("perf")+"\nold")
	s.gh.SetReadOnly(true)
	if _, _, err := s.c.Upsert(context.Background(), 7, "r"); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("err = %v, want ErrReadOnly", err)
	}
	checkCalls(t, s.gh, "GET /user", listPR7, editOf(id), createPR7)
}

// With Author set, the comment is that login's, and GET /user is not asked:
// of two Apps' bots' comments under one header, only Author's is ours.
func TestAuthorSetsIdentity(t *testing.T) {
	t.Parallel()
	s := newAppSetup(t)
	other := fakegithub.AppBot("otherapp")
	s.gh.AddComment(7, alice, Marker("perf")+"\na person's")
	id := s.gh.AddComment(7, fakegithub.User{Login: "MyApp[bot]", Type: "Bot", App: "myapp"}, Marker("perf")+"\nours")
	s.gh.AddComment(7, other, Marker("perf")+"\nthe other App's, newer")
	s.c.Author = "myapp[bot]"
	url, created, err := s.c.Upsert(context.Background(), 7, "new")
	if err != nil || created {
		t.Fatalf("Upsert = %q, %v, %v; want an edit", url, created, err)
	}
	checkCalls(t, s.gh, listPR7, editOf(id))
}

// An edit refused for another bot's comment, then a create answered 502
// that GitHub did not make: the look that follows must not take the
// refused comment for ours (its edit would be refused again), and the
// create is sent again.
func TestRefusedCommentSkippedAfterFailedCreate(t *testing.T) {
	t.Parallel()
	s := newAppSetup(t)
	old := s.gh.AddComment(7, fakegithub.ActionsBot, Marker("perf")+"\nthe Actions bot's")
	s.gh.Inject(fakegithub.Fault{Method: "POST", Status: 502, Body: `{"message":"Server Error"}`})
	url, created, err := s.c.Upsert(context.Background(), 7, "report")
	if err != nil || !created {
		t.Fatalf("Upsert = %q, %v, %v; want the comment made by the second POST", url, created, err)
	}
	cs := s.gh.Comments(7)
	if len(cs) != 2 || cs[1].User != app || cs[1].Body != Marker("perf")+"\nreport" || cs[0].UpdatedAt != cs[0].CreatedAt {
		t.Fatalf("comments %+v", cs)
	}
	checkCalls(t, s.gh, "GET /user", listPR7, editOf(old), createPR7, listPR7, createPR7)
}

func TestCheckLogin(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"octocat", "myapp[bot]", "github-actions[bot]", "a", "A1-b2", strings.Repeat("x", 39)} {
		if err := CheckLogin(ok); err != nil {
			t.Errorf("CheckLogin(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-x", "my app", "@octocat", "x[bot", "[bot]", "x[bot][bot]", "x\n", strings.Repeat("x", 40)} {
		if err := CheckLogin(bad); err == nil {
			t.Errorf("CheckLogin(%q) = nil, want an error", bad)
		}
	}
}

// The most recent bot's comment may be on any page: an installation token
// reads them all.
func TestInstallationTokenReadsEveryPage(t *testing.T) {
	t.Parallel()
	s := newAppSetup(t)
	var newest int64
	for i := range 250 {
		switch i {
		case 30:
			s.gh.AddComment(7, app, Marker("perf")+"\nolder duplicate")
		case 230:
			newest = s.gh.AddComment(7, app, Marker("perf")+"\nnewest")
		default:
			s.gh.AddComment(7, alice, fmt.Sprintf("comment %d", i))
		}
	}
	if _, created, err := s.c.Upsert(context.Background(), 7, "new"); err != nil || created {
		t.Fatalf("Upsert: created %v, %v; want an edit", created, err)
	}
	checkCalls(t, s.gh, "GET /user", listPR7,
		"GET /repos/octo/bench/issues/7/comments?page=2&per_page=100",
		"GET /repos/octo/bench/issues/7/comments?page=3&per_page=100",
		editOf(newest))
}

// The comment-author input reaches the Commenter: of two Apps' bots'
// marked comments, the named one's is edited, though the other's is newer.
func TestCommentAuthorInput(t *testing.T) {
	t.Parallel()
	gh := fakegithub.New(t, testToken, &app)
	gh.AddPR(7, headSHA)
	id := gh.AddComment(7, app, Marker("benchgate")+"\nours")
	gh.AddComment(7, fakegithub.AppBot("otherapp"), Marker("benchgate")+"\nthe other App's")
	e := actionEnv(t, gh)
	e.Inputs.CommentAuthor = "myapp[bot]"
	url, err := e.postComment(context.Background(), *failedReport(), "", io.Discard)
	if want := fmt.Sprintf("https://github.com/octo/bench/pull/7#issuecomment-%d", id); err != nil || url != want {
		t.Fatalf("postComment = %q, %v; want %q", url, err, want)
	}
	if cs := gh.Comments(7); len(cs) != 2 || cs[1].Body != Marker("benchgate")+"\nthe other App's" {
		t.Errorf("comments %+v", cs)
	}
	for _, c := range gh.Calls() {
		if c == "GET /user" {
			t.Errorf("GET /user asked, though comment-author names the login")
		}
	}
}
