package fakegithub

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// do sends one request with the token and returns the status and body.
func do(t *testing.T, s *Server, token, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestRepoReadOnlyAndLog(t *testing.T) {
	t.Parallel()
	s := New(t, "tok", nil)
	s.SetRepo("o", "r")
	s.AddPR(7, "abc")

	if code, _ := do(t, s, "tok", "GET", "/repos/octo/bench/pulls/7", ""); code != http.StatusNotFound {
		t.Errorf("the default repository after SetRepo: %d, want 404", code)
	}
	if code, _ := do(t, s, "wrong", "GET", "/repos/o/r/pulls/7", ""); code != http.StatusUnauthorized {
		t.Errorf("a wrong token: %d, want 401", code)
	}
	code, body := do(t, s, "tok", "POST", "/repos/o/r/issues/7/comments", `{"body":"hi"}`)
	if code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	var made struct {
		ID      int64  `json:"id"`
		HTMLURL string `json:"html_url"`
		User    struct{ Login, Type string }
	}
	if err := json.Unmarshal([]byte(body), &made); err != nil {
		t.Fatal(err)
	}
	if made.HTMLURL != "https://github.com/o/r/pull/7#issuecomment-1001" || made.User.Login != ActionsBot.Login || made.User.Type != "Bot" {
		t.Errorf("created %+v", made)
	}

	s.SetReadOnly(true)
	code, body = do(t, s, "tok", "PATCH", "/repos/o/r/issues/comments/1001", `{"body":"edited"}`)
	if code != http.StatusForbidden || !strings.Contains(body, "Resource not accessible by integration") {
		t.Errorf("read-only edit: %d %s", code, body)
	}
	if code, _ := do(t, s, "tok", "GET", "/repos/o/r/issues/7/comments", ""); code != http.StatusOK {
		t.Errorf("read-only read: %d", code)
	}
	if cs := s.Comments(7); len(cs) != 1 || cs[0].Body != "hi" {
		t.Errorf("comments = %+v", cs)
	}
	want := []string{
		"GET /repos/octo/bench/pulls/7",
		"GET /repos/o/r/pulls/7",
		"POST /repos/o/r/issues/7/comments",
		"PATCH /repos/o/r/issues/comments/1001",
		"GET /repos/o/r/issues/7/comments",
	}
	if got := s.Calls(); !reflect.DeepEqual(got, want) {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
	if r := s.Requests(); r[1].Auth != "Bearer wrong" || r[2].Body != `{"body":"hi"}` {
		t.Errorf("requests not logged as received: %+v", r[1:3])
	}
}

func TestFaultSkip(t *testing.T) {
	t.Parallel()
	s := New(t, "tok", nil)
	s.AddPR(7, "abc")
	s.Inject(Fault{Method: "GET", Path: "/repos/octo/bench/pulls/7", Skip: 2, Status: http.StatusBadGateway})
	var codes []int
	for range 4 {
		code, _ := do(t, s, "tok", "GET", "/repos/octo/bench/pulls/7", "")
		codes = append(codes, code)
	}
	if want := []int{200, 200, 502, 200}; !slices.Equal(codes, want) {
		t.Errorf("codes %v, want %v: the fault after two requests, once", codes, want)
	}
}

// An App's installation token: GET /user is refused as GitHub refuses it,
// and its comments are the App's bot's, made through the App; a user's
// comment says no App made it.
func TestAppInstallationToken(t *testing.T) {
	t.Parallel()
	s := New(t, "ghs_app", ptr(AppBot("myapp")))
	s.AddPR(7, "abc")
	s.AddComment(7, User{Login: "alice", Type: "User"}, "hi")

	code, body := do(t, s, "ghs_app", "GET", "/user", "")
	if code != http.StatusForbidden || !strings.Contains(body, `"message":"Resource not accessible by integration"`) {
		t.Errorf("GET /user: %d %s, want 403 Resource not accessible by integration", code, body)
	}
	if code, body := do(t, s, "ghs_app", "POST", "/repos/octo/bench/issues/7/comments", `{"body":"report"}`); code != http.StatusCreated {
		t.Fatalf("create: %d %s", code, body)
	}
	code, body = do(t, s, "ghs_app", "GET", "/repos/octo/bench/issues/7/comments", "")
	if code != http.StatusOK {
		t.Fatalf("list: %d %s", code, body)
	}
	var cs []struct {
		Body string
		User struct{ Login, Type string }
		App  *struct{ Slug, HTMLURL string } `json:"performed_via_github_app"`
	}
	if err := json.Unmarshal([]byte(body), &cs); err != nil {
		t.Fatal(err)
	}
	if len(cs) != 2 || cs[0].User.Login != "alice" || cs[0].User.Type != "User" || cs[0].App != nil {
		t.Fatalf("comments %+v: want alice's first, made through no App", cs)
	}
	if c := cs[1]; c.User.Login != "myapp[bot]" || c.User.Type != "Bot" || c.App == nil || c.App.Slug != "myapp" {
		t.Errorf("the App's comment: %+v, want by myapp[bot] (Bot) through App myapp", c)
	}
	if !strings.Contains(body, `"performed_via_github_app":null`) {
		t.Errorf("a comment made through no App should say null: %s", body)
	}
	if got := s.Comments(7)[1].User; got != AppBot("myapp") {
		t.Errorf("stored author %+v", got)
	}
}

func ptr[T any](v T) *T { return &v }
