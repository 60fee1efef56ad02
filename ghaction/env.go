package ghaction

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/benchgate/benchgate/report"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sethvargo/go-githubactions"
)

// Inputs are the action's inputs (action.yml), as the runner passes them:
// INPUT_ followed by the input's name upper-cased, dashes kept
// (INPUT_FAIL-ON-REGRESSION).
type Inputs struct {
	Scenario  string // scenario file
	Profile   string // profile of the scenario
	Baseline  string // image that replaces the scenario's baseline image; empty keeps it
	Candidate string // image that replaces the scenario's candidate image; empty keeps it
	// Comment is when to post the sticky comment: always, on-change,
	// on-regression or never.
	Comment       string
	CommentHeader string // names this gate's comment among several on one PR
	// CommentAuthor is the login that comments with the token (a GitHub
	// App's <app-slug>[bot]), checked by CheckLogin; empty learns it from
	// the token (Commenter.Author).
	CommentAuthor    string
	ResultsDir       string // where results, reports and target logs go
	FailOnRegression bool
	Budget           string // a time.Duration, checked by Load; empty means no limit
	// RemoveLabel is the label benchgate comment removes from the PR once
	// it has posted (the on-demand workflow's); empty removes none.
	RemoveLabel string
	// DashboardURL is where the nightly publishes benchgate history site:
	// the comment and the summary link it and each failing cell's page.
	// Checked by report.CheckDashboardURL; empty links nothing.
	DashboardURL string
}

// DefaultInputs returns the inputs used for those that are unset or empty.
// They are action.yml's defaults, so that `benchgate gate` run by hand, where
// no INPUT_ variable is set, behaves as the action does. The comment default
// is always: a sticky comment is updated in place, so posting every time
// costs no noise, and a gate that passes silently looks like a gate that did
// not run.
func DefaultInputs() Inputs {
	return Inputs{
		Scenario:         "benchgate.yml",
		Profile:          "pr",
		Comment:          "always",
		CommentHeader:    "benchgate",
		ResultsDir:       "benchgate-results",
		FailOnRegression: true,
	}
}

// commentModes are the values of the comment input.
var commentModes = []string{"always", "on-change", "on-regression", "never"}

// Env is the Actions environment of a step. Outside Actions the fields the
// runner sets are empty (ServerURL and APIURL keep github.com's), InActions is
// false, and with OutputFile and SummaryFile empty the methods that write to
// the runner's files do nothing.
type Env struct {
	Inputs Inputs

	Repository string // owner/name of the repository the workflow runs in
	Owner      string
	Repo       string
	EventName  string

	// PR is the number of the pull request the event is about, 0 when there
	// is none or it cannot be told from the event: a workflow_run triggered by
	// a PR from a fork lists no pull requests, so the caller must get the
	// number another way (from the results the PR's run saved).
	PR int
	// BaseSHA and HeadSHA are the PR's base and head commits; for
	// workflow_run the head commit of the triggering run; for push the
	// commits before and after it. Empty when the event names no such commit.
	BaseSHA string
	HeadSHA string
	SHA     string // GITHUB_SHA: the commit the workflow runs on (for a PR, a merge commit)

	// HeadRepository is the full name of the repository the PR's (or the
	// triggering run's) head commit comes from; Fork is true when it is not
	// Repository, which means the token cannot write and PR-controlled code
	// must not see secrets.
	HeadRepository string
	Fork           bool

	ServerURL string // https://github.com, or a GitHub Enterprise Server
	APIURL    string // GITHUB_API_URL, default https://api.github.com
	RunURL    string // the workflow run's page; empty without GITHUB_RUN_ID

	// Token is the github-token input, else GITHUB_TOKEN. Env's String,
	// GoString and Format print it redacted and encoding/json leaves it out,
	// so an Env can be logged. Not guarded: a copy of the string, and an Env
	// in an unexported field of another struct, which fmt prints without
	// calling Format.
	Token string `json:"-"`

	OutputFile  string // GITHUB_OUTPUT
	SummaryFile string // GITHUB_STEP_SUMMARY
	InActions   bool   // GITHUB_ACTIONS == "true"
}

// Load reads the environment of a step through getenv (os.Getenv when nil)
// and the event payload at GITHUB_EVENT_PATH. Its errors name the input or
// the variable at fault.
func Load(getenv func(string) string) (*Env, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	// The writer is discarded: Env writes its own outputs and commands, with
	// a random delimiter and escaping, never through the library's.
	action := githubactions.New(githubactions.WithGetenv(getenv), githubactions.WithWriter(io.Discard))

	in, err := loadInputs(action)
	if err != nil {
		return nil, err
	}

	// Context() reports malformed numbers and booleans without naming the
	// variable, and fails on some that benchgate never uses. Check the one
	// number used here ourselves, and ignore Context's joined parse errors.
	if v := getenv("GITHUB_RUN_ID"); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err != nil || n <= 0 {
			return nil, fmt.Errorf("GITHUB_RUN_ID %q: not a run id", v)
		}
	}
	// Context() silently ignores a missing event file; for a pull request
	// that would mean no PR number and no comment, so it is an error.
	if p := getenv("GITHUB_EVENT_PATH"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("GITHUB_EVENT_PATH: %w", err)
		}
	}
	ghctx, err := action.Context()
	if ghctx == nil {
		return nil, fmt.Errorf("GITHUB_EVENT_PATH %s: %w", getenv("GITHUB_EVENT_PATH"), err)
	}

	env := &Env{
		Inputs:      in,
		Repository:  ghctx.Repository,
		EventName:   ghctx.EventName,
		SHA:         ghctx.SHA,
		ServerURL:   ghctx.ServerURL,
		APIURL:      ghctx.APIURL,
		OutputFile:  getenv("GITHUB_OUTPUT"),
		SummaryFile: ghctx.StepSummary,
		InActions:   getenv("GITHUB_ACTIONS") == "true",
	}
	if env.Repository != "" {
		owner, name, ok := strings.Cut(env.Repository, "/")
		if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
			return nil, fmt.Errorf("GITHUB_REPOSITORY %q: want owner/name", env.Repository)
		}
	}
	env.Owner, env.Repo = ghctx.Repo()
	if env.Repository == "" && env.Owner != "" && env.Repo != "" {
		env.Repository = env.Owner + "/" + env.Repo
	}
	if ghctx.RunID > 0 && env.Repository != "" {
		env.RunURL = strings.TrimRight(env.ServerURL, "/") + "/" + env.Repository +
			"/actions/runs/" + strconv.FormatInt(ghctx.RunID, 10)
	}
	env.Token = action.GetInput("github-token")
	if env.Token == "" {
		env.Token = strings.TrimSpace(getenv("GITHUB_TOKEN"))
	}

	if ghctx.Event != nil {
		if err := env.readEvent(ghctx.Event); err != nil {
			return nil, fmt.Errorf("GITHUB_EVENT_PATH %s: %s event: %w", ghctx.EventPath, env.EventName, err)
		}
	}
	return env, nil
}

// loadInputs reads the inputs through GetInput, which maps a name to its
// variable as the runner does: INPUT_ + upper case, spaces to underscores,
// dashes kept, value trimmed.
func loadInputs(action *githubactions.Action) (Inputs, error) {
	in := DefaultInputs()
	str := func(dst *string, name string) {
		if v := action.GetInput(name); v != "" {
			*dst = v
		}
	}
	str(&in.Scenario, "scenario")
	str(&in.Profile, "profile")
	str(&in.Baseline, "baseline")
	str(&in.Candidate, "candidate")
	str(&in.Comment, "comment")
	str(&in.CommentHeader, "comment-header")
	str(&in.CommentAuthor, "comment-author")
	str(&in.ResultsDir, "results-dir")
	str(&in.Budget, "budget")
	str(&in.RemoveLabel, "remove-label")
	str(&in.DashboardURL, "dashboard-url")

	if !slices.Contains(commentModes, in.Comment) {
		return Inputs{}, fmt.Errorf("input comment: %q is not one of %s", in.Comment, strings.Join(commentModes, ", "))
	}
	// The spellings @actions/core's getBooleanInput accepts (YAML 1.2 core
	// schema), so that the input means what it means in other actions.
	switch v := action.GetInput("fail-on-regression"); v {
	case "":
	case "true", "True", "TRUE":
		in.FailOnRegression = true
	case "false", "False", "FALSE":
		in.FailOnRegression = false
	default:
		return Inputs{}, fmt.Errorf("input fail-on-regression: %q is not true or false", v)
	}
	if in.RemoveLabel != "" {
		if err := CheckLabel(in.RemoveLabel); err != nil {
			return Inputs{}, fmt.Errorf("input remove-label: %w", err)
		}
	}
	if in.CommentAuthor != "" {
		if err := CheckLogin(in.CommentAuthor); err != nil {
			return Inputs{}, fmt.Errorf("input comment-author: %w", err)
		}
	}
	if in.DashboardURL != "" {
		if err := report.CheckDashboardURL(in.DashboardURL); err != nil {
			return Inputs{}, fmt.Errorf("input dashboard-url: %w", err)
		}
	}
	if in.Budget != "" {
		// Checked here so a typo fails naming the input, before any build
		// or target starts.
		if d, err := time.ParseDuration(in.Budget); err != nil || d < 0 {
			return Inputs{}, fmt.Errorf("input budget: %q is not a duration such as 20m", in.Budget)
		}
	}
	return in, nil
}

// The parts of the webhook payloads that Env reads. Field names follow
// GitHub's webhook schema; everything else in the payload is ignored.
type (
	eventRepo struct {
		FullName string `json:"full_name"`
		Name     string `json:"name"`
		URL      string `json:"url"` // in workflow_run.pull_requests, the only way to tell the repository
	}
	eventRef struct {
		SHA  string     `json:"sha"`
		Repo *eventRepo `json:"repo"` // null when the head fork was deleted
	}
	eventPR struct {
		Number int      `json:"number"`
		Base   eventRef `json:"base"`
		Head   eventRef `json:"head"`
	}
	eventWorkflowRun struct {
		HeadSHA        string     `json:"head_sha"`
		PullRequests   []eventPR  `json:"pull_requests"`
		Repository     *eventRepo `json:"repository"`
		HeadRepository *eventRepo `json:"head_repository"`
	}
	eventPayload struct {
		PullRequest *eventPR          `json:"pull_request"`
		WorkflowRun *eventWorkflowRun `json:"workflow_run"`
		Before      string            `json:"before"`
		After       string            `json:"after"`
	}
)

// zeroSHA is push's "before" when the push created the branch: there is no
// previous commit.
const zeroSHA = "0000000000000000000000000000000000000000"

func (e *Env) readEvent(raw map[string]any) error {
	// Context() decodes the payload into a map; typing it again through JSON
	// turns a field of the wrong type into an error instead of a silent zero.
	b, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	var p eventPayload
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}

	switch e.EventName {
	case "pull_request", "pull_request_target", "pull_request_review", "pull_request_review_comment":
		pr := p.PullRequest
		if pr == nil {
			return errors.New("no pull_request in the payload")
		}
		e.PR = pr.Number
		e.BaseSHA, e.HeadSHA = pr.Base.SHA, pr.Head.SHA
		base := e.Repository
		if pr.Base.Repo != nil && pr.Base.Repo.FullName != "" {
			base = pr.Base.Repo.FullName
		}
		if pr.Head.Repo == nil {
			// Only a fork can vanish while its PR stays open.
			e.Fork = true
		} else {
			e.HeadRepository = pr.Head.Repo.FullName
			e.Fork = !strings.EqualFold(e.HeadRepository, base)
		}

	case "workflow_run":
		run := p.WorkflowRun
		if run == nil {
			return errors.New("no workflow_run in the payload")
		}
		base := e.Repository
		if run.Repository != nil && run.Repository.FullName != "" {
			base = run.Repository.FullName
		}
		if run.HeadRepository == nil {
			e.Fork = true
		} else {
			e.HeadRepository = run.HeadRepository.FullName
			e.Fork = !strings.EqualFold(e.HeadRepository, base)
		}
		// head_sha is the commit the triggering run measured, so it is the
		// head even when a PR entry says otherwise.
		e.HeadSHA = run.HeadSHA
		for _, pr := range run.PullRequests {
			// The list is matched by branch name and can hold PRs of other
			// repositories (a fork's own PRs on a same-named branch);
			// commenting on one of those would be commenting on a stranger's
			// PR.
			if !sameRepo(pr.Base.Repo, base) {
				continue
			}
			e.PR = pr.Number
			e.BaseSHA = pr.Base.SHA
			if e.HeadSHA == "" {
				e.HeadSHA = pr.Head.SHA
			}
			break
		}

	case "push":
		e.HeadSHA = p.After
		if p.Before != zeroSHA {
			e.BaseSHA = p.Before
		}
		e.HeadRepository = e.Repository
	}
	return nil
}

// sameRepo reports whether a workflow_run pull request's repository, which
// carries only id, url and name, is fullName.
func sameRepo(r *eventRepo, fullName string) bool {
	switch {
	case r == nil || fullName == "":
		return true // nothing to tell them apart by
	case r.URL != "":
		return strings.HasSuffix(strings.ToLower(r.URL), "/repos/"+strings.ToLower(fullName))
	case r.Name != "":
		_, name, _ := strings.Cut(fullName, "/")
		return strings.EqualFold(r.Name, name)
	}
	return true
}

// redacted replaces a non-empty token wherever an Env is printed.
const redacted = "[redacted]"

// envFields has Env's fields and none of its methods, so printing it cannot
// call back into Format.
type envFields Env

func (e Env) redact() envFields {
	f := envFields(e)
	if f.Token != "" {
		f.Token = redacted
	}
	return f
}

// String returns the fields with their names, the token redacted.
func (e Env) String() string {
	return fmt.Sprintf("%+v", e.redact())
}

// GoString returns the Go syntax of e, the token redacted.
func (e Env) GoString() string {
	s := fmt.Sprintf("%#v", e.redact())
	return strings.Replace(s, "ghaction.envFields{", "ghaction.Env{", 1)
}

// Format makes every verb print the token redacted: without it %x or %q
// would print the struct's fields, the token among them, verbatim.
func (e Env) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		io.WriteString(f, e.GoString())
	case verb == 'v' || verb == 's':
		io.WriteString(f, e.String())
	default:
		fmt.Fprintf(f, fmt.FormatString(f, verb), e.redact())
	}
}

// outputName is what the runner and workflow expressions accept as an
// output name without quoting.
var outputName = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// randomToken returns prefix followed by 32 hex digits read from random
// (crypto/rand.Reader but in tests, which force a collision), occurring
// in none of avoid. It is random so that text a pull request controls
// cannot be written in advance to contain it; it is also checked, because
// a text may quote an earlier one (a log of a previous run, an output
// file).
func randomToken(random io.Reader, prefix string, avoid []string) (string, error) {
	for range 8 {
		b := make([]byte, 16)
		if _, err := io.ReadFull(random, b); err != nil {
			return "", err
		}
		t := prefix + hex.EncodeToString(b)
		clash := false
		for _, v := range avoid {
			clash = clash || strings.Contains(v, t)
		}
		if !clash {
			return t, nil
		}
	}
	return "", errors.New("no random token avoids the text")
}

// SetOutputs appends the outputs, in order, to GITHUB_OUTPUT in the runner's
// heredoc form, name<<DELIMITER, the value, DELIMITER, so any value,
// newlines included, reads back exactly. Names must match [A-Za-z0-9_-]+;
// they are checked even outside Actions, where nothing is written.
func (e *Env) SetOutputs(kv [][2]string) error { return e.setOutputs(kv, rand.Reader) }

// setOutputs is SetOutputs with the delimiter's randomness read from random.
func (e *Env) setOutputs(kv [][2]string, random io.Reader) error {
	values := make([]string, len(kv))
	for i, p := range kv {
		if !outputName.MatchString(p[0]) {
			return fmt.Errorf("output name %q: want letters, digits, '_' or '-'", p[0])
		}
		values[i] = p[1]
	}
	if e.OutputFile == "" || len(kv) == 0 {
		return nil
	}
	// A fixed delimiter (go-githubactions uses one) would let a value holding
	// a line equal to it end the heredoc early and set outputs of its own.
	delim, err := randomToken(random, "benchgate_", values)
	if err != nil {
		return fmt.Errorf("GITHUB_OUTPUT: %w", err)
	}
	var buf bytes.Buffer
	for _, p := range kv {
		fmt.Fprintf(&buf, "%s<<%s\n%s\n%s\n", p[0], delim, p[1], delim)
	}
	if err := appendFile(e.OutputFile, buf.Bytes()); err != nil {
		return fmt.Errorf("GITHUB_OUTPUT: %w", err)
	}
	return nil
}

// appendFile writes b at the end of the file in one write, so a partial
// failure is reported rather than left as a half-written heredoc unnoticed.
func appendFile(name string, b []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	return errors.Join(err, f.Close())
}

// SummaryLimit is the runner's limit on the size of a step's summary file.
// A larger file is not cut but refused whole: the step then shows no summary
// and an error.
const SummaryLimit = 1 << 20

// summaryRoom is kept free below SummaryLimit, so that WriteSummary's
// accounting never has to be exact to the byte for the runner to accept the
// file.
const summaryRoom = 4 << 10

// WriteSummary appends markdown, ending in a newline, to the step's job
// summary. When the file would grow past SummaryLimit less a little room,
// markdown is cut at the last line that fits (a single overlong line at a
// rune boundary), code fences and <details> blocks left open are closed, and
// a note says that the full report is in the results directory. Outside
// Actions it writes nothing.
func (e *Env) WriteSummary(markdown string) error {
	if e.SummaryFile == "" {
		return nil
	}
	var used int64
	switch st, err := os.Stat(e.SummaryFile); {
	case err == nil:
		used = st.Size()
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
	}
	text, err := fitSummary(markdown, SummaryLimit-summaryRoom-int(used), e.truncationNote())
	if err != nil {
		return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
	}
	if err := appendFile(e.SummaryFile, []byte(text)); err != nil {
		return fmt.Errorf("GITHUB_STEP_SUMMARY: %w", err)
	}
	return nil
}

// truncationNote is the last line of a cut summary. It begins with a blank
// line: markdown would read a line right after a table as one more row.
func (e *Env) truncationNote() string {
	where := "the full report is in the results directory (artifact)"
	if dir := e.Inputs.ResultsDir; dir != "" && !strings.ContainsAny(dir, "`\n") {
		where += " `" + dir + "`"
	}
	return "\n**This summary was truncated** to fit GitHub's 1 MiB limit: " + where + ".\n"
}

// fitSummary returns md, with a final newline, if it fits in budget bytes;
// otherwise the longest prefix of whole lines that fits together with the
// closers of the blocks it leaves open and note.
func fitSummary(md string, budget int, note string) (string, error) {
	if md != "" && !strings.HasSuffix(md, "\n") {
		md += "\n"
	}
	if len(md) <= budget {
		return md, nil
	}
	if len(note) > budget {
		return "", fmt.Errorf("the step summary is full (%d bytes of %d allowed), even a truncation note does not fit",
			SummaryLimit-summaryRoom-budget, SummaryLimit-summaryRoom)
	}
	// Reserve one byte for the newline that ends a line cut short.
	n := max(budget-len(note)-1, 0)
	kept := md[:n]
	if i := strings.LastIndexByte(kept, '\n'); i >= 0 {
		kept = kept[:i+1]
	} else {
		for n > 0 && !utf8.RuneStart(md[n]) {
			n--
		}
		kept = md[:n]
		if kept != "" {
			kept += "\n"
		}
	}
	for {
		closers := openBlocks(kept)
		if len(kept)+len(closers)+len(note) <= budget || kept == "" {
			return kept + closers + note, nil
		}
		// The closers did not fit: drop the last line and look again.
		kept = kept[:strings.LastIndexByte(kept[:len(kept)-1], '\n')+1]
	}
}

// openBlocks returns the lines that close what md leaves open and would
// otherwise swallow the truncation note: a fenced code block, and <details>
// blocks (reports fold their full tables into them).
func openBlocks(md string) string {
	var fence string // the opening fence's marker while inside a code block
	details := 0
	for line := range strings.Lines(md) {
		t := strings.TrimRight(strings.TrimLeft(line, " "), "\r\n")
		m := fenceMarker(t)
		switch {
		case fence == "" && m != "":
			fence = m
		case fence != "":
			// A closing fence: the same character, at least as long, nothing after it.
			if m != "" && m[0] == fence[0] && len(m) >= len(fence) && strings.TrimSpace(t[len(m):]) == "" {
				fence = ""
			}
		default:
			details += strings.Count(t, "<details") - strings.Count(t, "</details>")
			details = max(details, 0)
		}
	}
	var b strings.Builder
	if fence != "" {
		b.WriteString(fence + "\n")
	}
	for range details {
		b.WriteString("\n</details>\n")
	}
	return b.String()
}

// fenceMarker returns the run of three or more backticks or tildes that
// begins t, or "".
func fenceMarker(t string) string {
	if t == "" || (t[0] != '`' && t[0] != '~') {
		return ""
	}
	n := 0
	for n < len(t) && t[n] == t[0] {
		n++
	}
	if n < 3 {
		return ""
	}
	return t[:n]
}
