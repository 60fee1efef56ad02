package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/ghaction"
	"github.com/benchgate/benchgate/internal/environ"
	"github.com/benchgate/benchgate/report"
	"github.com/benchgate/benchgate/scenario"
)

// actionGate is "benchgate gate" inside GitHub Actions (GITHUB_ACTIONS=true):
// the same run and decision, with the action's inputs as defaults for the
// flags, and then what only a workflow has: the job summary, annotations,
// the sticky comment and the step outputs. Flags given explicitly still win
// over inputs, so the action and a hand-run gate behave the same.
func actionGate(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	env, err := ghaction.Load(getenv)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("action: %w", err))
	}
	if env.EventName == "pull_request_target" && env.Fork {
		return withCode(exitUsage, errors.New("refusing to run a fork's code under pull_request_target: the job has a write token and the docker socket, which is root on the runner; use pull_request (see docs/action.md)"))
	}
	in := env.Inputs
	profile := in.Profile
	if profile == ghaction.DefaultInputs().Profile && flagValue(args, "profile") == "" && !hasProfile(in.Scenario, profile, getenv) {
		// The input's default names the usual PR profile; a scenario
		// without one runs its whole grid rather than fail on a default
		// nobody chose.
		ghaction.Notice(stderr, fmt.Sprintf("the scenario has no %q profile: running its full grid", profile))
		profile = ""
	}
	defaults := []string{"-scenario", in.Scenario, "-profile", profile, "-out", in.ResultsDir}
	if in.Budget != "" {
		defaults = append(defaults, "-budget", in.Budget)
	}
	args = append(defaults, args...)
	out := in.ResultsDir
	if v := flagValue(args, "out"); v != "" {
		out = v
	}

	res, rep, gateErr := runGate(ctx, args, stdout, stderr, getenv, &gateHooks{
		override: imageOverrides(in.Baseline, in.Candidate),
		annotate: func(r *baselines.Results) {
			r.GitHub = &baselines.GitHubInfo{
				Repository: env.Repository, EventName: env.EventName, PR: env.PR,
				BaseSHA: env.BaseSHA, HeadSHA: env.HeadSHA, RunURL: env.RunURL,
			}
		},
	})
	outputs := [][2]string{
		{"report", filepath.Join(out, "report.md")},
		{"results", filepath.Join(out, "results.json")},
	}
	verdict := "error"
	if rep != nil && res != nil && res.Status == "complete" {
		verdict = string(rep.Comparison.Outcome)
	}
	outputs = append(outputs, [2]string{"verdict", verdict})
	if rep != nil {
		c := rep.Comparison.Counts
		for _, kv := range [][2]any{{"regressions", c.Regressions}, {"improvements", c.Improvements}, {"ties", c.Ties}, {"inconclusive", c.Inconclusive}, {"unresolved", c.Unresolved}} {
			outputs = append(outputs, [2]string{kv[0].(string), strconv.Itoa(kv[1].(int))})
		}
		disagree := 0
		if g := rep.Results.Gates; g != nil && g.Agreement != nil {
			_, disagree = g.Agreement.Counts()
		}
		outputs = append(outputs, [2]string{"disagreements", strconv.Itoa(disagree)})
		var summary strings.Builder
		err := report.Summary(&summary, *rep, report.SummaryOptions{})
		if err == nil {
			err = env.WriteSummary(summary.String())
		}
		if err != nil {
			ghaction.Warning(stderr, "job summary: "+err.Error())
		}
		annotateFailures(stdout, rep.Comparison, annotationFile(flagValue(args, "scenario"), getenv("GITHUB_WORKSPACE")))
		url, err := postComment(ctx, env, *rep, "", stderr)
		if err != nil {
			ghaction.Warning(stderr, "comment: "+err.Error())
		}
		outputs = append(outputs, [2]string{"comment-url", url})
	}
	if err := env.SetOutputs(outputs); err != nil {
		return withCode(exitRunFailed, fmt.Errorf("action outputs: %w", err))
	}

	if exitCode(gateErr) == exitRegression && !in.FailOnRegression {
		ghaction.Notice(stderr, "regressions found, but fail-on-regression is false: the step passes")
		return nil
	}
	return gateErr
}

// hasProfile reports whether the scenario loads with the profile. A file
// that does not load at all says true, so the real run reports its errors.
func hasProfile(file, profile string, getenv func(string) string) bool {
	env := newScenarioEnv(getenv)
	if _, err := scenario.Load(file, profile, env.Getenv); err == nil {
		return true
	}
	_, err := scenario.Load(file, "", env.Getenv)
	return err != nil
}

// flagValue returns the last value given to -name in args ("" if none),
// in any of the flag package's spellings; as there, a later one wins.
func flagValue(args []string, name string) string {
	v := ""
	for i := 0; i < len(args); i++ {
		a := strings.TrimPrefix(strings.TrimPrefix(args[i], "-"), "-")
		if a == args[i] {
			continue // not a flag
		}
		if a == name && i+1 < len(args) {
			v = args[i+1]
			i++
		} else if rest, ok := strings.CutPrefix(a, name+"="); ok {
			v = rest
		}
	}
	return v
}

// imageOverrides replaces the images of the scenario's image targets with
// the action's baseline and candidate inputs (empty: keep the scenario's).
// A target that is not an image cannot take one: that is an error, not a
// silent mix of what the scenario and the workflow meant.
func imageOverrides(baseline, candidate string) func(*scenario.Scenario) error {
	return func(sc *scenario.Scenario) error {
		for _, o := range []struct {
			ref string
			t   *scenario.Target
		}{{baseline, &sc.Baseline}, {candidate, &sc.Candidate}} {
			if o.ref == "" {
				continue
			}
			if o.t.Image == "" {
				return fmt.Errorf("input %s: the scenario's %s is not an image target, so an image cannot replace it", o.t.Name, o.t.Name)
			}
			o.t.Image, o.t.Shown = o.ref, o.ref
		}
		return nil
	}
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
		msg := fmt.Sprintf("%s: %s", cellName(f.Key), f.Reason)
		switch f.Kind {
		case gate.FailAgreement:
			title = "benchgate: agreement"
			name := f.Key.Class
			if f.Key.Variant != "" {
				name = f.Key.Variant + "/" + name
			}
			msg = fmt.Sprintf("class %s answers differently: %s", name, f.Reason)
		case gate.FailPreflight:
			title, msg = "benchgate: pre-flight", f.Reason
		}
		ghaction.Annotate(w, "error", title, msg, file, 0)
	}
}

// outcomeMarker is a hidden line after the comment's marker recording the
// outcome, so "on-change" can tell whether it changed.
func outcomeMarker(c gate.Comparison) string {
	return fmt.Sprintf("<!-- benchgate:outcome %s regressions=%d -->", c.Outcome, c.Counts.Regressions)
}

// postComment posts or updates the sticky comment as the comment input
// says, and returns its URL ("" when none was posted). A read-only token (a
// PR from a fork) or an event without a PR skips it with a warning: the
// gate's decision stands either way.
func postComment(ctx context.Context, env *ghaction.Env, rep report.Input, note string, log io.Writer) (string, error) {
	mode := env.Inputs.Comment
	if mode == "never" {
		return "", nil
	}
	if env.PR <= 0 {
		ghaction.Notice(log, "no pull request in this "+env.EventName+" event: no comment")
		return "", nil
	}
	if env.Token == "" {
		return "", errors.New("no github-token: no comment")
	}
	cli, err := ghaction.NewClient(env.Token, env.APIURL, ghaction.DefaultRetryOptions)
	if err != nil {
		return "", err
	}
	cm := &ghaction.Commenter{Client: cli, Owner: env.Owner, Repo: env.Repo, Header: env.Inputs.CommentHeader}
	outcome := outcomeMarker(rep.Comparison)
	// Only the conditional modes need to see the comment first; Upsert
	// looks for it anyway, and a second listing would cost every run
	// another page or more of API calls.
	if mode != "always" {
		existing, err := cm.Find(ctx, env.PR)
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
	if env.HeadSHA != "" {
		head, err := cm.PRHead(ctx, env.PR)
		if err != nil {
			return "", err
		}
		if head != env.HeadSHA {
			ghaction.Notice(log, fmt.Sprintf("PR #%d's head is now %s, this run measured %s: the comment is left to the newer run", env.PR, short(head), short(env.HeadSHA)))
			return "", nil
		}
	}
	var body strings.Builder
	err = report.Comment(&body, rep, report.CommentOptions{
		Header:     env.Inputs.CommentHeader,
		SummaryURL: env.RunURL,
		Marker:     ghaction.Marker(env.Inputs.CommentHeader) + "\n" + outcome,
		Note:       note,
	})
	if err != nil {
		return "", err
	}
	url, _, err := cm.Upsert(ctx, env.PR, body.String())
	if errors.Is(err, ghaction.ErrReadOnly) {
		ghaction.Warning(log, "the token cannot comment (a pull request from a fork gets a read-only token): the report is in the job summary and the results; see docs/action.md for the fork-safe workflow pair")
		return "", nil
	}
	return url, err
}

const commentSummary = `Posts the saved results of an earlier gate as the sticky PR comment: the
second workflow of the fork-safe pattern (workflow_run), which checks out
nothing of the PR. The comment is posted only when the results' head commit
is the PR's current head and, under workflow_run, the run's head commit.

With -issue N it posts them as the sticky comment of issue N instead: the
nightly workflow's tracking issue. Only for results of a trusted workflow
(a schedule on the default branch), never for a pull request's.`

// cmdComment is "benchgate comment".
func cmdComment(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) error {
	var results string
	var pr, issue int
	err := parseFlags("comment", commentSummary, args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&results, "results", "", "results `file` (default: the results-dir input's results.json)")
		fs.IntVar(&pr, "pr", 0, "pull request `number` (default: the one the results recorded)")
		fs.IntVar(&issue, "issue", 0, "post to this tracking issue `number` instead (the nightly workflow's)")
	})
	if err != nil {
		return err
	}
	env, err := ghaction.Load(getenv)
	if err != nil {
		return withCode(exitUsage, fmt.Errorf("comment: %w", err))
	}
	if results == "" {
		results = filepath.Join(env.Inputs.ResultsDir, "results.json")
	}
	if issue != 0 {
		return commentIssue(ctx, env, results, issue, pr, stdout, stderr)
	}
	// The results file may come from a fork's workflow run: baselines.Read
	// refuses anything but a regular file, reads it through a size limit
	// and bounds its lists and histograms before decoding them, and every
	// value taken from it is checked before it is used or printed.
	res, err := baselines.Read(results)
	if err != nil {
		return withCode(exitUsage, err)
	}
	gh := res.GitHub
	if gh == nil || !shaPattern.MatchString(gh.HeadSHA) || !repoPattern.MatchString(gh.Repository) {
		return withCode(exitUsage, fmt.Errorf("%s records no valid repository and head commit: it was not made by benchgate gate in GitHub Actions", results))
	}
	if env.EventName != "workflow_run" && pr == 0 {
		return withCode(exitUsage, errors.New("outside a workflow_run event, give the pull request with -pr"))
	}
	if env.PR > 0 && gh.PR != env.PR {
		return withCode(exitUsage, fmt.Errorf("the results are of PR #%d, this %s event is of PR #%d", gh.PR, env.EventName, env.PR))
	}
	if pr == 0 {
		pr = gh.PR
	}
	if pr <= 0 {
		return withCode(exitUsage, fmt.Errorf("%s records no pull request number: give -pr", results))
	}
	if env.Repository != "" && !strings.EqualFold(gh.Repository, env.Repository) {
		return withCode(exitUsage, fmt.Errorf("the results are of %q, this workflow runs in %s", gh.Repository, env.Repository))
	}
	// The results come from a workflow the PR's code ran in: they are only
	// trusted to describe the commit this event says was measured, and only
	// posted to the PR whose head that commit still is.
	if env.EventName == "workflow_run" && env.HeadSHA != gh.HeadSHA {
		return withCode(exitUsage, fmt.Errorf("the results measured %s, but this workflow_run is of %s", short(gh.HeadSHA), short(env.HeadSHA)))
	}
	if env.Token == "" {
		return withCode(exitUsage, errors.New("comment: no github-token"))
	}
	cli, err := ghaction.NewClient(env.Token, env.APIURL, ghaction.DefaultRetryOptions)
	if err != nil {
		return withCode(exitUsage, err)
	}
	cm := &ghaction.Commenter{Client: cli, Owner: env.Owner, Repo: env.Repo, Header: env.Inputs.CommentHeader}
	head, err := cm.PRHead(ctx, pr)
	if err != nil {
		return withCode(exitRunFailed, fmt.Errorf("reading PR #%d: %w", pr, err))
	}
	if head != gh.HeadSHA {
		return withCode(exitUsage, fmt.Errorf("PR #%d's head is %s, the results measured %s: not posting stale or foreign results", pr, short(head), short(gh.HeadSHA)))
	}
	rep, err := decideInput(res)
	if err != nil {
		return withCode(exitUsage, err)
	}
	env.PR = pr
	env.HeadSHA = "" // checked against the PR's head above, no need again
	env.Inputs.Comment = "always"
	url, err := postComment(ctx, env, rep, "These results were uploaded by the pull request's own workflow run: a pull request can change what they say. They are shown, not verified.", stderr)
	if err != nil {
		return withCode(exitRunFailed, fmt.Errorf("comment: %w", err))
	}
	if url != "" {
		fmt.Fprintln(stdout, url)
	}
	return env.SetOutputs([][2]string{{"comment-url", url}, {"verdict", string(rep.Comparison.Outcome)}})
}

var (
	shaPattern  = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
	repoPattern = regexp.MustCompile(`^[A-Za-z0-9-]+/[A-Za-z0-9._-]+$`)
)

// scenarioEnv is the getenv a scenario's ${VAR} expands with, in every
// command that loads one: the runner's credentials and the action's inputs
// (environ.Secret) read as unset, since the scenario may come from a pull
// request. It notes those the scenario asked for that are set, so that an
// error can say why they read as unset.
type scenarioEnv struct {
	getenv func(string) string
	mu     sync.Mutex // the runner may ask from several goroutines
	hidden []string   // set secrets a ${VAR} asked for, in order
}

func newScenarioEnv(getenv func(string) string) *scenarioEnv {
	return &scenarioEnv{getenv: getenv}
}

func (e *scenarioEnv) Getenv(name string) string {
	if !environ.Secret(name) {
		return e.getenv(name)
	}
	if e.getenv(name) != "" {
		e.mu.Lock()
		if !slices.Contains(e.hidden, name) {
			e.hidden = append(e.hidden, name)
		}
		e.mu.Unlock()
	}
	return ""
}

// explain adds to a scenario's load error why the secrets it asked for
// read as unset.
func (e *scenarioEnv) explain(err error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err == nil || len(e.hidden) == 0 {
		return err
	}
	return fmt.Errorf("%w\n%s: a scenario cannot read the runner's credentials nor the action's inputs, which to it are unset (see docs/action.md)", err, strings.Join(e.hidden, ", "))
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// commentIssue posts results as the sticky comment of a tracking issue.
// The nightly workflow runs on the default branch: its results are the
// repository's own, but a pull_request event's are not, and are refused.
func commentIssue(ctx context.Context, env *ghaction.Env, results string, issue, pr int, stdout, stderr io.Writer) error {
	switch {
	case issue < 0:
		return withCode(exitUsage, fmt.Errorf("-issue %d: want an issue number", issue))
	case pr != 0:
		return withCode(exitUsage, errors.New("-issue and -pr are exclusive"))
	case strings.HasPrefix(env.EventName, "pull_request") || env.EventName == "workflow_run":
		return withCode(exitUsage, fmt.Errorf("-issue posts a trusted workflow's results (schedule, push, workflow_dispatch), not a %s event's", env.EventName))
	case env.Token == "":
		return withCode(exitUsage, errors.New("comment: no github-token"))
	}
	res, err := baselines.Read(results)
	if err != nil {
		return withCode(exitUsage, err)
	}
	rep, err := decideInput(res)
	if err != nil {
		return withCode(exitUsage, err)
	}
	env.PR, env.HeadSHA = issue, ""
	env.Inputs.Comment = "always"
	url, err := postComment(ctx, env, rep, "", stderr)
	if err != nil {
		return withCode(exitRunFailed, fmt.Errorf("comment on issue #%d: %w", issue, err))
	}
	if url != "" {
		fmt.Fprintln(stdout, url)
	}
	return env.SetOutputs([][2]string{{"comment-url", url}, {"verdict", string(rep.Comparison.Outcome)}})
}
