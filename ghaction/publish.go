package ghaction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/report"
)

// GateRun is a gate run as the workflow is told of it.
type GateRun struct {
	// Report is the decided report; nil when the run decided nothing.
	Report     *report.Input
	ResultsDir string // where the run wrote results.json and report.md
	Scenario   string // the scenario file, as the run was given it
	Workspace  string // GITHUB_WORKSPACE, which annotations' paths are relative to
}

// PublishGate tells the workflow what a gate run decided: the job summary,
// one error annotation per failure on the scenario file (on out, the
// step's log), the sticky comment as the comment input says, and the step
// outputs. A run that decided nothing has the outputs report, results and
// verdict error only. A summary or a comment that fails is a warning on
// log, since the gate's decision stands; the error is the outputs'.
func (e *Env) PublishGate(ctx context.Context, run GateRun, out, log io.Writer) error {
	rep := run.Report
	verdict := "error"
	if rep != nil && rep.Results != nil && rep.Results.Status == "complete" {
		verdict = string(rep.Comparison.Outcome)
	}
	outputs := [][2]string{
		{"report", filepath.Join(run.ResultsDir, "report.md")},
		{"results", filepath.Join(run.ResultsDir, "results.json")},
		{"verdict", verdict},
	}
	if rep != nil {
		c := rep.Comparison.Counts
		disagree := 0
		if g := rep.Results.Correctness; g != nil && g.Agreement != nil {
			_, disagree = g.Agreement.Counts()
		}
		outputs = append(outputs,
			[2]string{"regressions", strconv.Itoa(c.Regressions)},
			[2]string{"improvements", strconv.Itoa(c.Improvements)},
			[2]string{"ties", strconv.Itoa(c.Ties)},
			[2]string{"inconclusive", strconv.Itoa(c.Inconclusive)},
			[2]string{"unresolved", strconv.Itoa(c.Unresolved)},
			[2]string{"disagreements", strconv.Itoa(disagree)})
		var summary strings.Builder
		err := report.Summary(&summary, *rep, report.SummaryOptions{})
		if err == nil {
			err = e.WriteSummary(summary.String())
		}
		if err != nil {
			Warning(log, "job summary: "+err.Error())
		}
		annotateFailures(out, rep.Comparison, annotationFile(run.Scenario, run.Workspace))
		url, err := e.postComment(ctx, *rep, "", log)
		if err != nil {
			Warning(log, "comment: "+err.Error())
		}
		outputs = append(outputs, [2]string{"comment-url", url})
	}
	return e.SetOutputs(outputs)
}

// annotationFile is the scenario's path as an annotation's file property
// wants it: relative to the repository root (the workspace), with slashes.
// A relative path is taken as relative to the workspace, which is where the
// action runs; an absolute one outside the workspace gives "" (no file), as
// GitHub could not place it.
func annotationFile(scenario, workspace string) string {
	if scenario == "" {
		return ""
	}
	p := filepath.Clean(scenario)
	if filepath.IsAbs(p) {
		if workspace == "" {
			return ""
		}
		rel, err := filepath.Rel(filepath.Clean(workspace), p)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return ""
		}
		p = rel
	}
	return filepath.ToSlash(p)
}

// annotateFailures puts one ::error annotation per failure on the scenario
// file (a path relative to the repository root), so the checks tab lists
// them and links them to the file.
func annotateFailures(w io.Writer, c gate.Comparison, file string) {
	for _, f := range c.Failures {
		title := "benchgate: " + string(f.Metric) + " " + f.Kind
		k := f.Key
		msg := fmt.Sprintf("%s: %s", k, f.Reason)
		switch f.Kind {
		case gate.FailAgreement:
			// The key names the class and variant probed, not a cell.
			title = "benchgate: agreement"
			msg = fmt.Sprintf("class %s answers differently: %s", k, f.Reason)
		case gate.FailPreflight:
			title, msg = "benchgate: pre-flight", f.Reason
		}
		Annotate(w, "error", title, msg, file, 0)
	}
}

// outcomeMarker is a hidden line after the comment's marker recording the
// outcome, so "on-change" can tell whether it changed.
func outcomeMarker(c gate.Comparison) string {
	return fmt.Sprintf("<!-- benchgate:outcome %s regressions=%d -->", c.Outcome, c.Counts.Regressions)
}

// postComment posts or updates the sticky comment as the comment input
// says, and returns its URL ("" when none was posted). A read-only token (a
// PR from a fork) or an event without a PR skips it with a notice or a
// warning on log: the gate's decision stands either way.
func (e *Env) postComment(ctx context.Context, rep report.Input, note string, log io.Writer) (string, error) {
	mode := e.Inputs.Comment
	if mode == "never" {
		return "", nil
	}
	if e.PR <= 0 {
		Notice(log, "no pull request in this "+e.EventName+" event: no comment")
		return "", nil
	}
	if e.Token == "" {
		return "", errors.New("no github-token: no comment")
	}
	cm, err := e.commenter()
	if err != nil {
		return "", err
	}
	outcome := outcomeMarker(rep.Comparison)
	// Only the conditional modes need to see the comment first; Upsert
	// looks for it anyway, and a second listing would cost every run
	// another page or more of API calls.
	if mode != "always" {
		existing, err := cm.Find(ctx, e.PR)
		if err != nil {
			return "", err
		}
		switch {
		case mode == "on-regression" && rep.Comparison.Outcome == gate.Pass && existing == nil:
			return "", nil // nothing to report and nothing to correct
		case mode == "on-change" && existing != nil && cm.OutcomeLine(existing.GetBody()) == outcome:
			return existing.GetHTMLURL(), nil
		}
	}
	// Runs of two commits of one PR may finish out of order: only the
	// PR's current head may set its comment.
	if e.HeadSHA != "" {
		head, err := cm.PRHead(ctx, e.PR)
		if err != nil {
			return "", err
		}
		if head != e.HeadSHA {
			Notice(log, fmt.Sprintf("PR #%d's head is now %s, this run measured %s: the comment is left to the newer run", e.PR, short(head), short(e.HeadSHA)))
			return "", nil
		}
	}
	var body strings.Builder
	err = report.Comment(&body, rep, report.CommentOptions{
		Header:     e.Inputs.CommentHeader,
		SummaryURL: e.RunURL,
		Marker:     Marker(e.Inputs.CommentHeader) + "\n" + outcome,
		Note:       note,
	})
	if err != nil {
		return "", err
	}
	url, _, err := cm.Upsert(ctx, e.PR, body.String())
	if errors.Is(err, ErrReadOnly) {
		Warning(log, "the token cannot comment (a pull request from a fork gets a read-only token): the report is in the job summary and the results; see docs/action.md for the fork-safe workflow pair")
		return "", nil
	}
	return url, err
}

// commenter is the sticky comment's Commenter, with the step's token.
func (e *Env) commenter() (*Commenter, error) {
	cli, err := NewClient(e.Token, e.APIURL, DefaultRetryOptions)
	if err != nil {
		return nil, err
	}
	return &Commenter{Client: cli, Owner: e.Owner, Repo: e.Repo, Header: e.Inputs.CommentHeader, Author: e.Inputs.CommentAuthor}, nil
}

// CommentOn posts rep as the sticky comment of pull request or issue n
// whatever the comment input says, and returns its URL: results checked by
// ResultsPR or CheckIssue, so no head commit is compared again.
func (e *Env) CommentOn(ctx context.Context, n int, rep report.Input, note string, log io.Writer) (string, error) {
	c := *e
	c.PR, c.HeadSHA = n, ""
	c.Inputs.Comment = "always"
	return c.postComment(ctx, rep, note, log)
}

// ErrRefused is matched (errors.Is) by the errors of ResultsPR,
// PostResults and CheckGate that refuse what the step was asked to do,
// rather than report a failure at GitHub: a CLI makes them usage errors.
var ErrRefused = errors.New("refused")

// refusal is an error that reads as its own and matches ErrRefused.
type refusal struct{ error }

func (refusal) Is(target error) bool { return target == ErrRefused }
func (r refusal) Unwrap() error      { return r.error }

func refuse(format string, args ...any) error { return refusal{fmt.Errorf(format, args...)} }

var (
	shaPattern  = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
	repoPattern = regexp.MustCompile(`^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$`)
)

// ResultsPR checks that the results a gate run saved in file, which
// recorded gh, may be posted as the sticky comment of pull request pr (0:
// the one they recorded) under this event, and returns its number. The
// results may come from a fork's workflow run: they are only trusted to
// describe the commit this event says was measured, and only posted to
// the PR whose head that commit still is, which it asks GitHub.
func (e *Env) ResultsPR(ctx context.Context, gh *benchdata.GitHubInfo, pr int, file string) (int, error) {
	if gh == nil || !shaPattern.MatchString(gh.HeadSHA) || !repoPattern.MatchString(gh.Repository) {
		return 0, refuse("%s records no valid repository and head commit: it was not made by benchgate gate in GitHub Actions", file)
	}
	if e.EventName != "workflow_run" && pr == 0 {
		return 0, refuse("outside a workflow_run event, give the pull request with -pr")
	}
	if e.PR > 0 && gh.PR != e.PR {
		return 0, refuse("the results are of PR #%d, this %s event is of PR #%d", gh.PR, e.EventName, e.PR)
	}
	if pr == 0 {
		pr = gh.PR
	}
	if pr <= 0 {
		return 0, refuse("%s records no pull request number: give -pr", file)
	}
	if e.Repository != "" && !strings.EqualFold(gh.Repository, e.Repository) {
		return 0, refuse("the results are of %q, this workflow runs in %s", gh.Repository, e.Repository)
	}
	if e.EventName == "workflow_run" && e.HeadSHA != gh.HeadSHA {
		return 0, refuse("the results measured %s, but this workflow_run is of %s", short(gh.HeadSHA), short(e.HeadSHA))
	}
	if e.Token == "" {
		return 0, refuse("comment: no github-token")
	}
	cm, err := e.commenter()
	if err != nil {
		return 0, refusal{err}
	}
	head, err := cm.PRHead(ctx, pr)
	if err != nil {
		return 0, fmt.Errorf("reading PR #%d: %w", pr, err)
	}
	if head != gh.HeadSHA {
		return 0, refuse("PR #%d's head is %s, the results measured %s: not posting stale or foreign results", pr, short(head), short(gh.HeadSHA))
	}
	return pr, nil
}

// CheckIssue checks that this event may post results to tracking issue
// issue, pr being the pull request also asked for (0: none). The nightly
// workflow runs on the default branch: its results are the repository's
// own, but a pull_request event's are not, and are refused.
func (e *Env) CheckIssue(issue, pr int) error {
	switch {
	case issue < 0:
		return fmt.Errorf("-issue %d: want an issue number", issue)
	case pr != 0:
		return errors.New("-issue and -pr are exclusive")
	case strings.HasPrefix(e.EventName, "pull_request") || e.EventName == "workflow_run":
		return fmt.Errorf("-issue posts a trusted workflow's results (schedule, push, workflow_dispatch), not a %s event's", e.EventName)
	case e.Token == "":
		return errors.New("comment: no github-token")
	}
	return nil
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}
