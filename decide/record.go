package decide

import (
	"cmp"
	"errors"
	"fmt"
	"time"

	"github.com/benchgate/benchgate/benchdata"
)

// RecordOptions override what a results file says of its run: a date for
// results compared from files (they have no start time), and the commits
// a nightly workflow knows better than the build did. Zero values keep
// the file's. Now is the clock the record's date is checked against
// (benchdata.CheckDate) for a history; zero checks no date beyond its
// presence (an export's record needs none).
type RecordOptions struct {
	Date                            time.Time
	BaselineCommit, CandidateCommit string
	// RunURL is the workflow run's page (an absolute https URL),
	// in place of the one the results hold.
	RunURL string
	Now    time.Time
}

// Record is the history record of a complete run (benchdata.NewRecord),
// its summaries decided by Results. A run that did not complete is
// refused, with what it said: a cancelled or failed one measured fewer
// rounds than the runs its series would compare it with. So are a record
// without a date, or with opt.Now one a history does not take (before
// benchdata.HistoryFloor, after opt.Now and a day), and one without a
// measured cell: neither could join a series.
func Record(res *benchdata.Results, opt RecordOptions) (benchdata.Record, error) {
	if res.Status != "complete" {
		msg := fmt.Sprintf("the run is %s, not complete: only complete runs are history", cmp.Or(res.Status, `""`))
		if res.Error != "" {
			msg += "; the run said: " + res.Error
		}
		return benchdata.Record{}, errors.New(msg)
	}
	c, err := Results(res)
	if err != nil {
		return benchdata.Record{}, err
	}
	rec := benchdata.NewRecord(res, c)
	if !opt.Date.IsZero() {
		rec.Date = opt.Date
	}
	rec.BaselineCommit = cmp.Or(opt.BaselineCommit, rec.BaselineCommit)
	rec.CandidateCommit = cmp.Or(opt.CandidateCommit, rec.CandidateCommit)
	if opt.RunURL != "" {
		if err := benchdata.CheckRunURL(opt.RunURL); err != nil {
			return benchdata.Record{}, fmt.Errorf("-run-url: %w", err)
		}
		rec.RunURL = opt.RunURL
	}
	switch {
	case rec.Date.IsZero():
		return benchdata.Record{}, errors.New("the results have no start time (compared from files?): give -date")
	case len(rec.Cells) == 0:
		return benchdata.Record{}, errors.New("no cell has a measured metric: nothing to keep")
	}
	if opt.Now.IsZero() {
		return rec, nil
	}
	if err := benchdata.CheckDate(rec.Date, opt.Now); err != nil {
		if !opt.Date.IsZero() {
			return benchdata.Record{}, fmt.Errorf("-date: %w", err)
		}
		return benchdata.Record{}, fmt.Errorf("field \"environment.start\": %w (give -date)", err)
	}
	return rec, nil
}
