// Package fakegithub is an in-memory GitHub for tests: an httptest server
// that answers the few REST endpoints benchgate's Commenter uses with the
// shapes GitHub's REST API documents (field names, status codes, Link
// pagination, error bodies), holding comments in memory. Tests drive the real
// go-github client against it, in process or from a child process over
// loopback, so a change in how go-github builds requests or reads pages is
// caught here, not in production.
//
// It serves one repository (octo/bench unless SetRepo says otherwise) and
// the pull requests AddPR makes exist. Every request is logged, including
// the ones refused; Inject makes the next matching requests fail.
package fakegithub

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// Default repository the server answers for until SetRepo changes it.
const (
	DefaultOwner = "octo"
	DefaultRepo  = "bench"
)

// User is who a token authenticates as, or who wrote a comment. A user with
// an App is a GitHub App's bot, <slug>[bot] of type Bot: given to New, the
// token is that App's installation token, which GET /user refuses (only a
// user's token may call it) and whose comments carry the App in
// performed_via_github_app. A nil user given to New is the Actions
// GITHUB_TOKEN, the installation token of the github-actions App.
type User struct {
	Login string
	Type  string // "User" or "Bot"
	App   string // the App's slug, for a comment made through an App; empty for none
}

// ActionsBot is the author of comments made with an Actions token.
var ActionsBot = User{Login: "github-actions[bot]", Type: "Bot", App: "github-actions"}

// AppBot returns the bot of the GitHub App whose slug is slug, as an
// installation token of that App writes: login <slug>[bot], type Bot.
func AppBot(slug string) User {
	return User{Login: slug + "[bot]", Type: "Bot", App: slug}
}

// Comment is a stored issue comment.
type Comment struct {
	ID        int64
	PR        int
	Body      string
	User      User
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Fault is an answer given instead of the real one, for the first request
// that matches Method and Path (empty matches any). Each fault is used once.
type Fault struct {
	Method, Path string
	Status       int
	Header       map[string]string
	Body         string
	// AfterHandling applies the request first and then answers with the
	// fault: the server did the work, but the client never heard.
	AfterHandling bool
	// Drop closes the connection without answering, after reading the
	// request (or after handling it, with AfterHandling).
	Drop bool
	// Skip lets this many matching requests through before the fault
	// applies.
	Skip int
}

// Request is one logged request, as received.
type Request struct {
	Method, Path, Query, Auth, Body string
}

// Server is the fake GitHub. Its methods are safe for concurrent use, also
// while it serves requests.
type Server struct {
	// URL is the API's base URL (http://127.0.0.1:PORT, no trailing slash),
	// as GITHUB_API_URL gives it.
	URL string

	t     testing.TB
	srv   *httptest.Server
	token string
	user  *User

	// cfg guards the repository's name and readOnly; it is never held
	// together with mu.
	cfg   sync.Mutex
	owner string
	repo  string
	// readOnly makes every write answer 403 as GitHub does for the
	// Actions token of a pull request from a fork.
	readOnly bool

	mu       sync.Mutex
	comments []*Comment // in creation order, as GitHub lists them
	nextID   int64
	heads    map[int]string   // PR number -> head SHA
	labels   map[int][]string // PR number -> its labels' names, in order
	faults   []Fault
	log      []Request
	clock    time.Time
}

// New starts a fake GitHub that accepts only token (as a bearer token) and
// authenticates it as user: nil is an Actions token, a user with an App that
// App's installation token (AppBot), anything else a user's token, for which
// GET /user answers. It is closed when the test ends.
func New(t testing.TB, token string, user *User) *Server {
	t.Helper()
	f := &Server{
		t: t, owner: DefaultOwner, repo: DefaultRepo, token: token, user: user,
		nextID: 1000, heads: map[int]string{}, labels: map[int][]string{}, clock: time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /user", f.getUser)
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{number}/comments", f.listComments)
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{number}/comments", f.createComment)
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/issues/comments/{id}", f.editComment)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{number}", f.getPull)
	mux.HandleFunc("DELETE /repos/{owner}/{repo}/issues/{number}/labels/{name}", f.removeLabel)
	f.srv = httptest.NewUnstartedServer(f.middleware(mux))
	// One request per connection: otherwise net/http's own transport
	// silently resends a GET whose reused connection was dropped, and
	// request counts would depend on connection reuse.
	f.srv.Config.SetKeepAlivesEnabled(false)
	f.srv.Start()
	f.URL = f.srv.URL
	t.Cleanup(f.srv.Close)
	return f
}

// Close shuts the server down: later requests fail to connect.
func (f *Server) Close() { f.srv.Close() }

// SetRepo makes the server answer for owner/repo instead of octo/bench.
func (f *Server) SetRepo(owner, repo string) {
	f.cfg.Lock()
	defer f.cfg.Unlock()
	f.owner, f.repo = owner, repo
}

// SetReadOnly makes every write answer 403 "Resource not accessible by
// integration", as GitHub does for the Actions token of a pull request from
// a fork; reads still work.
func (f *Server) SetReadOnly(ro bool) {
	f.cfg.Lock()
	defer f.cfg.Unlock()
	f.readOnly = ro
}

func (f *Server) repoName() (owner, repo string) {
	f.cfg.Lock()
	defer f.cfg.Unlock()
	return f.owner, f.repo
}

func (f *Server) isReadOnly() bool {
	f.cfg.Lock()
	defer f.cfg.Unlock()
	return f.readOnly
}

// SetLabels gives pull request n these labels (by name).
func (f *Server) SetLabels(n int, names ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.labels[n] = slices.Clone(names)
}

// Labels returns the names of pull request n's labels.
func (f *Server) Labels(n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.labels[n])
}

// removeLabel answers as GitHub's "Remove a label from an issue": the
// issue's remaining labels, or 404 "Label does not exist".
func (f *Server) removeLabel(w http.ResponseWriter, r *http.Request) {
	n, ok := f.issue(w, r)
	if !ok || f.refuseReadOnly(w, "labels#remove-a-label-from-an-issue") {
		return
	}
	name := r.PathValue("name") // unescaped by the mux, as GitHub does
	f.mu.Lock()
	i := slices.Index(f.labels[n], name)
	if i >= 0 {
		f.labels[n] = slices.Delete(f.labels[n], i, i+1)
	}
	left := slices.Clone(f.labels[n])
	f.mu.Unlock()
	if i < 0 {
		writeJSON(w, http.StatusNotFound, ghError("Label does not exist", "https://docs.github.com/rest/issues/labels#remove-a-label-from-an-issue"))
		return
	}
	owner, repo := f.repoName()
	out := []map[string]any{}
	for _, l := range left {
		out = append(out, map[string]any{"name": l, "url": fmt.Sprintf("%s/repos/%s/%s/labels/%s", f.srv.URL, owner, repo, url.PathEscape(l))})
	}
	writeJSON(w, http.StatusOK, out)
}

// AddPR makes pull request n exist with the given head (or moves its head).
func (f *Server) AddPR(n int, sha string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.heads[n] = sha
}

// AddComment stores a comment as if made earlier, and returns its ID.
func (f *Server) AddComment(pr int, user User, body string) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.store(pr, user, body).ID
}

func (f *Server) store(pr int, user User, body string) *Comment {
	f.nextID++
	f.clock = f.clock.Add(time.Minute)
	c := &Comment{ID: f.nextID, PR: pr, Body: body, User: user, CreatedAt: f.clock, UpdatedAt: f.clock}
	f.comments = append(f.comments, c)
	return c
}

// Inject queues faults; each answers the first later request it matches.
func (f *Server) Inject(fs ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults = append(f.faults, fs...)
}

// Requests returns the requests received so far, in order.
func (f *Server) Requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.log...)
}

// Calls lists the requests as "METHOD path?query", for comparing sequences.
func (f *Server) Calls() []string {
	var out []string
	for _, r := range f.Requests() {
		s := r.Method + " " + r.Path
		if r.Query != "" {
			s += "?" + r.Query
		}
		out = append(out, s)
	}
	return out
}

// Comments returns copies of the comments on pull request pr, oldest first.
func (f *Server) Comments(pr int) []Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.commentsOn(pr)
}

func (f *Server) commentsOn(pr int) []Comment {
	var out []Comment
	for _, c := range f.comments {
		if c.PR == pr {
			out = append(out, *c)
		}
	}
	return out
}

// author is who writes with this fake's token.
func (f *Server) author() User {
	if f.user != nil {
		return *f.user
	}
	return ActionsBot
}

func (f *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		f.mu.Lock()
		f.log = append(f.log, Request{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), string(body)})
		var flt *Fault
		for i, x := range f.faults {
			if (x.Method == "" || x.Method == r.Method) && (x.Path == "" || x.Path == r.URL.Path) {
				if x.Skip > 0 {
					f.faults[i].Skip--
					continue
				}
				flt = &x
				f.faults = append(f.faults[:i:i], f.faults[i+1:]...)
				break
			}
		}
		f.mu.Unlock()

		if r.Header.Get("Authorization") != "Bearer "+f.token {
			writeJSON(w, http.StatusUnauthorized, ghError("Bad credentials", "https://docs.github.com/rest"))
			return
		}
		if flt == nil {
			next.ServeHTTP(w, r)
			return
		}
		if flt.AfterHandling {
			// Do the work, throw the answer away.
			next.ServeHTTP(httptest.NewRecorder(), r)
		}
		if flt.Drop {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err != nil {
				f.t.Errorf("fake GitHub: hijack: %v", err)
				return
			}
			conn.Close()
			return
		}
		for k, v := range flt.Header {
			w.Header().Set(k, v)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(flt.Status)
		io.WriteString(w, flt.Body)
	})
}

// ghError is GitHub's error body.
func ghError(message, docURL string) map[string]any {
	return map[string]any{"message": message, "documentation_url": docURL}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *Server) userJSON(u User) map[string]any {
	id := 1
	switch {
	case u.Login == ActionsBot.Login:
		id = 41898282 // github-actions[bot]'s real ID
	case u.Type == "Bot":
		id = 49699333 // some App's bot
	}
	return map[string]any{
		"login": u.Login, "id": id, "type": u.Type, "site_admin": false,
		"url":      f.srv.URL + "/users/" + url.PathEscape(u.Login),
		"html_url": "https://github.com/" + u.Login,
	}
}

// appJSON is the App a comment was made through, as performed_via_github_app
// gives it; nil (JSON null) for a comment made without one.
func (f *Server) appJSON(slug string) any {
	if slug == "" {
		return nil
	}
	id := 1001
	if slug == ActionsBot.App {
		id = 15368 // GitHub Actions' real App ID
	}
	return map[string]any{
		"id": id, "slug": slug, "node_id": fmt.Sprintf("MDM6QXBw%d", id), "name": slug,
		"owner":       map[string]any{"login": "octo", "id": 2, "type": "Organization"},
		"description": "", "external_url": "https://example.com/" + slug,
		"html_url":   "https://github.com/apps/" + slug,
		"created_at": "2020-01-01T00:00:00Z", "updated_at": "2020-01-01T00:00:00Z",
		"permissions": map[string]any{"issues": "write", "pull_requests": "write", "metadata": "read"},
		"events":      []string{},
	}
}

func (f *Server) commentJSON(c *Comment) map[string]any {
	owner, repo := f.repoName()
	return map[string]any{
		"id":                 c.ID,
		"node_id":            fmt.Sprintf("IC_kw%d", c.ID),
		"url":                fmt.Sprintf("%s/repos/%s/%s/issues/comments/%d", f.srv.URL, owner, repo, c.ID),
		"html_url":           fmt.Sprintf("https://github.com/%s/%s/pull/%d#issuecomment-%d", owner, repo, c.PR, c.ID),
		"issue_url":          fmt.Sprintf("%s/repos/%s/%s/issues/%d", f.srv.URL, owner, repo, c.PR),
		"body":               c.Body,
		"user":               f.userJSON(c.User),
		"created_at":         c.CreatedAt.Format(time.RFC3339),
		"updated_at":         c.UpdatedAt.Format(time.RFC3339),
		"author_association": "NONE",
		// Present on every comment, null unless an App made it.
		"performed_via_github_app": f.appJSON(c.User.App),
	}
}

// getUser answers GET /user: the user for a user's token, 403 for an
// installation token (the Actions token, an App's), as GitHub does.
func (f *Server) getUser(w http.ResponseWriter, r *http.Request) {
	if f.user == nil || f.user.App != "" {
		writeJSON(w, http.StatusForbidden, map[string]any{
			"message":           "Resource not accessible by integration",
			"documentation_url": "https://docs.github.com/rest/users/users#get-the-authenticated-user",
			"status":            "403",
		})
		return
	}
	writeJSON(w, http.StatusOK, f.userJSON(*f.user))
}

// ownRepo reports whether the request's {owner}/{repo} is the served one.
func (f *Server) ownRepo(r *http.Request) bool {
	owner, repo := f.repoName()
	return r.PathValue("owner") == owner && r.PathValue("repo") == repo
}

// issue resolves {owner}/{repo}/{number} to an existing pull request.
func (f *Server) issue(w http.ResponseWriter, r *http.Request) (int, bool) {
	n, err := strconv.Atoi(r.PathValue("number"))
	f.mu.Lock()
	_, ok := f.heads[n]
	f.mu.Unlock()
	if err != nil || !ok || !f.ownRepo(r) {
		writeJSON(w, http.StatusNotFound, ghError("Not Found", "https://docs.github.com/rest"))
		return 0, false
	}
	return n, true
}

func (f *Server) listComments(w http.ResponseWriter, r *http.Request) {
	n, ok := f.issue(w, r)
	if !ok {
		return
	}
	perPage, page := 30, 1
	if v, err := strconv.Atoi(r.URL.Query().Get("per_page")); err == nil && v > 0 {
		perPage = min(v, 100)
	}
	if v, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && v > 0 {
		page = v
	}
	all := f.Comments(n)
	last := max((len(all)+perPage-1)/perPage, 1)
	link := func(p int, rel string) string {
		return fmt.Sprintf(`<%s%s?per_page=%d&page=%d>; rel="%s"`, f.srv.URL, r.URL.Path, perPage, p, rel)
	}
	var links []string
	if page > 1 {
		links = append(links, link(page-1, "prev"))
	}
	if page < last {
		links = append(links, link(page+1, "next"), link(last, "last"))
	}
	if page > 1 {
		links = append(links, link(1, "first"))
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
	out := []map[string]any{}
	for i := (page - 1) * perPage; i < len(all) && i < page*perPage; i++ {
		out = append(out, f.commentJSON(&all[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *Server) readBody(w http.ResponseWriter, r *http.Request) (string, bool) {
	var in struct {
		Body *string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, ghError("Problems parsing JSON", "https://docs.github.com/rest"))
		return "", false
	}
	if in.Body == nil || utf8.RuneCountInString(*in.Body) > 65536 {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{
			"message":           "Validation Failed",
			"errors":            []map[string]any{{"resource": "IssueComment", "code": "custom", "field": "body", "message": "body is too long (maximum is 65536 characters)"}},
			"documentation_url": "https://docs.github.com/rest/issues/comments",
		})
		return "", false
	}
	return *in.Body, true
}

func (f *Server) refuseReadOnly(w http.ResponseWriter, doc string) bool {
	if !f.isReadOnly() {
		return false
	}
	writeJSON(w, http.StatusForbidden, map[string]any{
		"message":           "Resource not accessible by integration",
		"documentation_url": "https://docs.github.com/rest/issues/" + doc,
		"status":            "403",
	})
	return true
}

func (f *Server) createComment(w http.ResponseWriter, r *http.Request) {
	n, ok := f.issue(w, r)
	if !ok || f.refuseReadOnly(w, "comments#create-an-issue-comment") {
		return
	}
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	c := f.store(n, f.author(), body)
	out := f.commentJSON(c)
	f.mu.Unlock()
	w.Header().Set("Location", out["url"].(string))
	writeJSON(w, http.StatusCreated, out)
}

func (f *Server) editComment(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	f.mu.Lock()
	var c *Comment
	for _, x := range f.comments {
		if x.ID == id {
			c = x
		}
	}
	f.mu.Unlock()
	if err != nil || c == nil || !f.ownRepo(r) {
		writeJSON(w, http.StatusNotFound, ghError("Not Found", "https://docs.github.com/rest/issues/comments#update-an-issue-comment"))
		return
	}
	if f.refuseReadOnly(w, "comments#update-an-issue-comment") {
		return
	}
	if a := f.author(); !strings.EqualFold(c.User.Login, a.Login) || c.User.Type != a.Type {
		// GitHub lets only the author (or a maintainer) edit a comment.
		writeJSON(w, http.StatusForbidden, ghError("Must have admin rights to Repository.", "https://docs.github.com/rest/issues/comments#update-an-issue-comment"))
		return
	}
	body, ok := f.readBody(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	f.clock = f.clock.Add(time.Minute)
	c.Body, c.UpdatedAt = body, f.clock
	out := f.commentJSON(c)
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (f *Server) getPull(w http.ResponseWriter, r *http.Request) {
	n, ok := f.issue(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	sha := f.heads[n]
	f.mu.Unlock()
	owner, repo := f.repoName()
	writeJSON(w, http.StatusOK, map[string]any{
		"id": 5000 + n, "number": n, "state": "open", "title": "a change",
		"url":      fmt.Sprintf("%s/repos/%s/%s/pulls/%d", f.srv.URL, owner, repo, n),
		"html_url": fmt.Sprintf("https://github.com/%s/%s/pull/%d", owner, repo, n),
		"head":     map[string]any{"ref": "feature", "sha": sha, "label": owner + ":feature"},
		"base":     map[string]any{"ref": "main", "sha": "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0", "label": owner + ":main"},
	})
}
