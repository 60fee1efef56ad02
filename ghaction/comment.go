package ghaction

// A sticky comment is one comment per pull request and header that benchgate
// edits on every run instead of adding a new one per push. It is found by a
// hidden marker in its body *and* by its author: anyone can paste our marker
// (quoting the report is enough), and editing someone else's comment would
// either fail or, with a maintainer's token, overwrite their words.
//
// Who the author is depends on the token. A user's token says, through
// GET /user. An installation token (the Actions GITHUB_TOKEN, a GitHub
// App's) cannot call GET /user, nor GET /app (that needs the App's JWT), and
// its comments are its App's bot's, <app-slug>[bot] of type Bot: so any bot
// may be us, and the most recent bot's marked comment is taken. A person's
// comment never is. If the bot's comment is another App's (the repository
// moved from GITHUB_TOKEN to an App, or back), GitHub refuses the edit and a
// new comment is made, which the next runs find as the most recent.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-github/v60/github"
)

// MaxCommentRunes is GitHub's limit on a comment body, in characters (runes),
// marker included. Upsert refuses longer bodies; cutting a report to fit is
// the report package's job, since only it knows what can go.
const MaxCommentRunes = 65536

// ErrReadOnly is matched (errors.Is) by the error Upsert returns when the
// token may read the pull request but not comment on it: the Actions token of
// a pull request from a fork is read-only. The caller should warn, skip the
// comment and still gate.
var ErrReadOnly = errors.New("token cannot comment on this pull request (read-only token, e.g. a pull request from a fork)")

// Marker returns the hidden HTML comment that tags benchgate's comment for
// header, e.g. <!-- benchgate:comment header="perf" -->. The header is
// percent-encoded wherever it could end the HTML comment or the quoted value
// ('-', '>', '<', '!', '"', '%', control characters), so a marker can neither
// break out into the rendered comment nor match a different header's marker.
// The encoding must never change: old comments would stop being found.
func Marker(header string) string {
	var b strings.Builder
	b.WriteString(`<!-- benchgate:comment header="`)
	for i := 0; i < len(header); i++ {
		switch c := header[i]; {
		case c == '-' || c == '>' || c == '<' || c == '!' || c == '"' || c == '%' || c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString(`" -->`)
	return b.String()
}

// Commenter keeps one sticky comment per pull request in Owner/Repo, tagged
// with Marker(Header). Its methods are not safe for concurrent use.
type Commenter struct {
	Client      *github.Client
	Owner, Repo string
	Header      string
	// Author is the login that comments with the token, for a set-up where
	// guessing it from an installation token's 403 is not enough (two Apps'
	// bots keeping comments under one header); empty asks GET /user.
	Author string
	// Sleep waits between a create GitHub may not have done and the look
	// that tells (Upsert); nil means a real wait. Tests record it.
	Sleep func(ctx context.Context, d time.Duration) error

	// self is who the token authenticates as, learnt once.
	self *identity
	// refused holds the comments GitHub would not let us edit: another
	// bot's, taken for ours by an installation token.
	refused map[int64]bool
}

// identity is "us": a login (from GET /user or Author), or, for an
// installation token, which cannot call GET /user, any App's bot.
type identity struct {
	login        string
	installation bool
}

// authored reports whether the comment's author may be us.
func (id *identity) authored(cm *listedComment) bool {
	u := cm.GetUser()
	if id.installation {
		// Type Bot is GitHub's word, which no person's account has;
		// performed_via_github_app is null on a comment made without an
		// App, and only bots' logins end in "[bot]".
		return u.GetType() == "Bot" && (cm.App != nil || strings.HasSuffix(u.GetLogin(), "[bot]"))
	}
	// Logins are case-insensitive on GitHub.
	return strings.EqualFold(u.GetLogin(), id.login)
}

// listedComment is an issue comment as GitHub lists it, with the App it was
// made through, which go-github's IssueComment does not decode.
type listedComment struct {
	github.IssueComment
	App *github.App `json:"performed_via_github_app"`
}

// Find returns our comment on pull request pr, or nil if there is none. Ours
// means the body starts with Marker(c.Header) and a newline, as Upsert
// writes it, and the author is the token's own identity (see the package's
// comment on installation tokens). A marker anywhere else (in text quoted by
// a bot, or in another gate's comment that embeds a target's output) does
// not count: its author did not put it there as a tag. If several match (a
// past race between two jobs), the oldest is returned, so every run settles
// on the same one; for an installation token the most recent, which is the
// one this token last made if another bot's is there too.
func (c *Commenter) Find(ctx context.Context, pr int) (*github.IssueComment, error) {
	if err := checkPR(pr); err != nil {
		return nil, err
	}
	self, err := c.whoami(ctx)
	if err != nil {
		return nil, err
	}
	prefix := c.prefix()
	var found *github.IssueComment
	for page := 1; ; {
		comments, next, err := c.listComments(ctx, pr, page)
		if err != nil {
			return nil, err
		}
		// GitHub lists issue comments oldest first.
		for _, cm := range comments {
			if strings.HasPrefix(cm.GetBody(), prefix) && self.authored(cm) && !c.refused[cm.GetID()] {
				found = &cm.IssueComment
				if !self.installation {
					return found, nil
				}
			}
		}
		// A next page that does not advance would loop forever.
		if next <= page {
			return found, nil
		}
		page = next
	}
}

// listComments returns page page of pr's comments (100 a page) and the
// number of the next page, 0 after the last.
func (c *Commenter) listComments(ctx context.Context, pr, page int) ([]*listedComment, int, error) {
	q := url.Values{"per_page": {"100"}, "page": {strconv.Itoa(page)}}
	req, err := c.Client.NewRequest(http.MethodGet, fmt.Sprintf("repos/%s/%s/issues/%d/comments?%s", url.PathEscape(c.Owner), url.PathEscape(c.Repo), pr, q.Encode()), nil)
	if err != nil {
		return nil, 0, fmt.Errorf("ghaction: listing comments on %s/%s#%d: %w", c.Owner, c.Repo, pr, err)
	}
	var comments []*listedComment
	resp, err := c.Client.Do(ctx, req, &comments)
	if err != nil {
		return nil, 0, fmt.Errorf("ghaction: listing comments on %s/%s#%d: %w", c.Owner, c.Repo, pr, err)
	}
	return comments, resp.NextPage, nil
}

// Upsert makes body our comment on pull request pr: it edits our comment in
// place, or creates it, and returns its html_url and whether it was created.
// The marker and a newline are prepended to body unless body already starts
// with them (a marker elsewhere in body does not count, as in Find). A body of
// more than MaxCommentRunes runes (marker included) is refused, as is a pr
// below 1, before any request is made. If the token cannot write, the error
// matches ErrReadOnly.
//
// If GitHub answers the creating POST with a 5xx or the connection fails after
// sending it, the comment may exist anyway; the POST is not resent (that could
// post it twice): Upsert looks for it once more and reports success if it is
// there, the original error if not.
func (c *Commenter) Upsert(ctx context.Context, pr int, body string) (url string, created bool, err error) {
	if err := checkPR(pr); err != nil {
		return "", false, err
	}
	if prefix := c.prefix(); !strings.HasPrefix(body, prefix) {
		body = prefix + body
	}
	if n := utf8.RuneCountInString(body); n > MaxCommentRunes {
		return "", false, fmt.Errorf("ghaction: comment body is %d characters, over GitHub's limit of %d", n, MaxCommentRunes)
	}
	ours, err := c.Find(ctx, pr)
	if err != nil {
		return "", false, err
	}
	if ours != nil {
		// Each edit is kept in the comment's visible history; a re-run that
		// produced the same report adds nothing.
		if ours.GetBody() == body {
			return ours.GetHTMLURL(), false, nil
		}
		edited, _, err := c.Client.Issues.EditComment(ctx, c.Owner, c.Repo, ours.GetID(), &github.IssueComment{Body: &body})
		if err == nil {
			return edited.GetHTMLURL(), false, nil
		}
		switch err := writeError(fmt.Sprintf("editing comment %d on %s/%s#%d", ours.GetID(), c.Owner, c.Repo, pr), err); {
		case c.self.installation && errors.Is(err, ErrReadOnly):
			// Another App's bot's comment (or a read-only token, which
			// the create will tell): ours is to be made.
			if c.refused == nil {
				c.refused = map[int64]bool{}
			}
			c.refused[ours.GetID()] = true
		default:
			return "", false, err
		}
	}
	return c.create(ctx, pr, body)
}

// maxCreates bounds the POSTs of one comment: a create answered with a
// server error is sent again only once a listing shows it was not made.
const maxCreates = 3

// create posts body as a new comment on pr. A POST answered with a server
// error (or whose answer was lost) may have been done all the same: after
// a wait, the comments are listed; the comment found is the answer, and a
// listing without it proves it was not made, so it is sent again, up to
// maxCreates times. A listing that fails leaves it unknown, and stops.
func (c *Commenter) create(ctx context.Context, pr int, body string) (url string, created bool, err error) {
	sleep := c.Sleep
	if sleep == nil {
		sleep = sleepContext
	}
	for attempt := 1; ; attempt++ {
		made, _, err := c.Client.Issues.CreateComment(ctx, c.Owner, c.Repo, pr, &github.IssueComment{Body: &body})
		if err == nil {
			return made.GetHTMLURL(), true, nil
		}
		werr := writeError(fmt.Sprintf("creating comment on %s/%s#%d", c.Owner, c.Repo, pr), err)
		if !mayHaveLanded(ctx, err) {
			return "", false, werr
		}
		// A comment GitHub made may take a moment to be listed.
		if serr := sleep(ctx, backoff(attempt)); serr != nil {
			return "", false, fmt.Errorf("%w; not resent, since GitHub may have created it", werr)
		}
		ours, ferr := c.Find(ctx, pr)
		switch {
		case ferr != nil:
			return "", false, fmt.Errorf("%w; not resent, since GitHub may have created it and the comments could not be listed: %v", werr, ferr)
		case ours != nil && ours.GetBody() == body:
			return ours.GetHTMLURL(), true, nil
		case ours != nil:
			// Another run's comment appeared meanwhile: ours is the
			// sticky one to edit, not a second to create.
			edited, _, err := c.Client.Issues.EditComment(ctx, c.Owner, c.Repo, ours.GetID(), &github.IssueComment{Body: &body})
			if err != nil {
				return "", false, writeError(fmt.Sprintf("editing comment %d on %s/%s#%d", ours.GetID(), c.Owner, c.Repo, pr), err)
			}
			return edited.GetHTMLURL(), false, nil
		case attempt == maxCreates:
			return "", false, fmt.Errorf("%w; sent %d times, and not created", werr, maxCreates)
		}
	}
}

// prefix is how our comment's body starts: the marker on a line of its own.
func (c *Commenter) prefix() string { return Marker(c.Header) + "\n" }

// OutcomeLine returns the line that follows the marker line in body (without
// its newline), or "" if body does not start with Marker(c.Header) and a
// newline. Callers that record state in that line (such as the gate's
// outcome) should compare it exactly rather than search the whole body,
// where a pull request's author can plant any text.
func (c *Commenter) OutcomeLine(body string) string {
	rest, ok := strings.CutPrefix(body, c.prefix())
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(rest, "\n")
	return strings.TrimSuffix(line, "\r")
}

// PRHead returns the SHA of pull request pr's current head commit, so that
// a result computed for an older push is not posted as current.
func (c *Commenter) PRHead(ctx context.Context, pr int) (sha string, err error) {
	if err := checkPR(pr); err != nil {
		return "", err
	}
	p, _, err := c.Client.PullRequests.Get(ctx, c.Owner, c.Repo, pr)
	if err != nil {
		return "", fmt.Errorf("ghaction: reading %s/%s#%d: %w", c.Owner, c.Repo, pr, err)
	}
	if sha = p.GetHead().GetSHA(); sha == "" {
		return "", fmt.Errorf("ghaction: %s/%s#%d has no head SHA", c.Owner, c.Repo, pr)
	}
	return sha, nil
}

// RemoveLabel removes the label named name from pull request pr. A label
// the PR does not have (GitHub's 404 "Label does not exist") is no error;
// a PR that does not exist is.
func (c *Commenter) RemoveLabel(ctx context.Context, pr int, name string) error {
	if err := checkPR(pr); err != nil {
		return err
	}
	if err := CheckLabel(name); err != nil {
		return err
	}
	// go-github puts the name into the path as it is.
	_, err := c.Client.Issues.RemoveLabelForIssue(ctx, c.Owner, c.Repo, pr, url.PathEscape(name))
	var ghErr *github.ErrorResponse
	if errors.As(err, &ghErr) && ghErr.Response.StatusCode == http.StatusNotFound && ghErr.Message == "Label does not exist" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("ghaction: removing label %q from %s/%s#%d: %w", name, c.Owner, c.Repo, pr, err)
	}
	return nil
}

// CheckLabel refuses what cannot be a GitHub label name: empty, longer
// than GitHub's 50 characters, or holding a control character.
func CheckLabel(name string) error {
	if name == "" || utf8.RuneCountInString(name) > 50 || !utf8.ValidString(name) {
		return fmt.Errorf("label %q: want 1 to 50 characters", name)
	}
	for _, r := range name {
		if unicode.IsControl(r) {
			return fmt.Errorf("label %q: holds a control character", name)
		}
	}
	return nil
}

// loginPattern is a GitHub login: up to 39 letters, digits and hyphens, not
// starting with one; a GitHub App's bot adds "[bot]" to its slug.
var loginPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}(\[bot\])?$`)

// CheckLogin refuses what cannot be a GitHub login, such as a user's
// (octocat) or an App's bot's (myapp[bot]).
func CheckLogin(login string) error {
	if !loginPattern.MatchString(login) {
		return fmt.Errorf("%q is not a GitHub login (letters, digits and '-', an App's bot as myapp[bot])", login)
	}
	return nil
}

// checkPR refuses PR numbers below 1: an unset number is 0, and go-github
// turns a comment listing for issue 0 into the listing of the whole
// repository's comments.
func checkPR(pr int) error {
	if pr <= 0 {
		return fmt.Errorf("ghaction: invalid pull request number %d", pr)
	}
	return nil
}

// whoami learns who the token authenticates as: Author if set, else GET
// /user's login. A personal access token can call GET /user; an
// installation token (the Actions GITHUB_TOKEN, a GitHub App's) gets 403
// "Resource not accessible by integration", and comments made with it are
// authored by its App's bot.
func (c *Commenter) whoami(ctx context.Context) (*identity, error) {
	if c.self != nil {
		return c.self, nil
	}
	if c.Author != "" {
		c.self = &identity{login: c.Author}
		return c.self, nil
	}
	u, _, err := c.Client.Users.Get(ctx, "")
	var er *github.ErrorResponse
	switch {
	case err == nil && u.GetLogin() != "":
		c.self = &identity{login: u.GetLogin()}
	case errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusForbidden &&
		!isRateLimited(er.Response.Header, er.Message+" "+er.DocumentationURL):
		c.self = &identity{installation: true}
	case err == nil:
		return nil, errors.New("ghaction: GET /user returned no login")
	default:
		return nil, fmt.Errorf("ghaction: finding the token's user: %w", err)
	}
	return c.self, nil
}

// writeError wraps a failed write, marking it ErrReadOnly when GitHub refused
// it for lack of permission: a 403 that is not a rate limit, or a 404 (GitHub
// answers 404 instead of 403 where it hides what exists; the listing before
// the write has already shown the pull request is there).
func writeError(what string, err error) error {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		code := er.Response.StatusCode
		if code == http.StatusNotFound ||
			(code == http.StatusForbidden && !isRateLimited(er.Response.Header, er.Message+" "+er.DocumentationURL)) {
			return fmt.Errorf("ghaction: %s: %w: %w", what, ErrReadOnly, err)
		}
	}
	return fmt.Errorf("ghaction: %s: %w", what, err)
}

// mayHaveLanded reports whether a failed POST may nonetheless have been acted
// on: GitHub answered 5xx, or the transport failed after connecting. Errors
// with a 4xx answer, rate limits included, were decided before processing.
func mayHaveLanded(ctx context.Context, err error) bool {
	if ctx.Err() != nil || isDialError(err) {
		return false
	}
	var rl *github.RateLimitError
	var arl *github.AbuseRateLimitError
	if errors.As(err, &rl) || errors.As(err, &arl) {
		return false
	}
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode >= 500
	}
	return true
}
