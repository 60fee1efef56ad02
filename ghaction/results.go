package ghaction

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/report"
)

// CheckGate refuses a gate run this event must not make: a fork's code
// under pull_request_target, whose job has a write token and the docker
// socket. The error matches ErrRefused.
func (e *Env) CheckGate() error {
	if e.EventName == "pull_request_target" && e.Fork {
		return refusal{errors.New("refusing to run a fork's code under pull_request_target: the job has a write token and the docker socket, which is root on the runner; use pull_request (see docs/action.md)")}
	}
	return nil
}

// GitHubInfo is what a gate run's results record of the workflow that
// measured them: what ResultsPR checks before they are posted.
func (e *Env) GitHubInfo() *benchdata.GitHubInfo {
	return &benchdata.GitHubInfo{
		Repository: e.Repository, EventName: e.EventName, PR: e.PR,
		BaseSHA: e.BaseSHA, HeadSHA: e.HeadSHA, RunURL: e.RunURL,
	}
}

// resultsNote heads a pull request's comment of results its own run saved.
const resultsNote = "These results were uploaded by the pull request's own workflow run: a pull request can change what they say. They are shown, not verified."

// PostResults posts the results an earlier gate saved in file ("": the
// results-dir input's results.json) as a sticky comment, as "benchgate
// comment" does: on tracking issue issue when it is not 0, if CheckIssue
// allows it, else on pull request pr (0: the one they recorded) once
// ResultsPR has checked them. It returns the comment's URL and the report
// posted, decided by decide.Results. The errors that refuse what was asked
// (a results file that does not read or decide, an event that may not
// post it) match ErrRefused; the others are failures at GitHub.
//
// The results file may come from a fork's workflow run: benchdata.Read
// refuses anything but a regular file, reads it through a size limit and
// bounds its lists and histograms before decoding them, and every value
// taken from it is checked before it is used or printed.
func (e *Env) PostResults(ctx context.Context, file string, pr, issue int, log io.Writer) (string, report.Input, error) {
	if file == "" {
		file = filepath.Join(e.Inputs.ResultsDir, "results.json")
	}
	what, note := "comment", resultsNote
	if issue != 0 {
		if err := e.CheckIssue(issue, pr); err != nil {
			return "", report.Input{}, refusal{err}
		}
		what, note, pr = fmt.Sprintf("comment on issue #%d", issue), "", issue
	}
	res, err := benchdata.Read(file)
	if err != nil {
		// No results (the run failed before it measured): the label is
		// still removed from the PR GitHub itself names, when it does.
		if issue == 0 && e.EventName == "workflow_run" && e.PR > 0 {
			err = errors.Join(err, e.removeLabel(ctx, e.PR, log))
		}
		return "", report.Input{}, refusal{err}
	}
	if issue == 0 {
		if pr, err = e.ResultsPR(ctx, res.GitHub, pr, file); err != nil {
			return "", report.Input{}, err
		}
	}
	c, err := decide.Results(res)
	if err != nil {
		return "", report.Input{}, refusal{err}
	}
	rep := report.Input{Results: res, Comparison: c, Dashboard: e.Inputs.DashboardURL, Where: report.LoadWhere(filepath.Dir(file), res)}
	url, err := e.CommentOn(ctx, pr, rep, note, log)
	if err != nil {
		err = fmt.Errorf("%s: %w", what, err)
	}
	if issue == 0 {
		err = errors.Join(err, e.removeLabel(ctx, pr, log))
	}
	return url, rep, err
}

// removeLabel removes the remove-label input's label from pull request pr
// (one checked by ResultsPR, or the one the event names), if the input is
// set: the on-demand workflow's run is over, and adding the label again
// asks for another. A label already gone is no error.
func (e *Env) removeLabel(ctx context.Context, pr int, log io.Writer) error {
	if e.Inputs.RemoveLabel == "" {
		return nil
	}
	cm, err := e.commenter()
	if err == nil {
		err = cm.RemoveLabel(ctx, pr, e.Inputs.RemoveLabel)
	}
	if err != nil {
		return fmt.Errorf("removing the label: %w", err)
	}
	Notice(log, fmt.Sprintf("label %q removed from PR #%d", e.Inputs.RemoveLabel, pr))
	return nil
}

// WriteCalibrationSummary writes the markdown calibration report of in as
// the job summary.
func (e *Env) WriteCalibrationSummary(in report.CalibrationInput) error {
	var md strings.Builder
	if err := report.Calibration(&md, in, "markdown"); err != nil {
		return err
	}
	return e.WriteSummary(md.String())
}
