package site

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
)

// TestDateTicks: a chart's x ticks are at most maxDateTicks whatever its
// dates span, from a week to year 1 to 9999, spaced by the finest step
// that keeps to the bound.
func TestDateTicks(t *testing.T) {
	t.Parallel()
	d := func(y int, m time.Month, day int) time.Time { return time.Date(y, m, day, 2, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		first, last time.Time
		want        string
	}{
		{d(2026, 1, 1), d(2026, 1, 20), "[Jan 5 Jan 12 Jan 19]"},
		{d(2026, 1, 1), d(2026, 3, 1), "[Jan 5 Jan 12 Jan 19 Jan 26 Feb 2 Feb 9 Feb 16 Feb 23]"},
		{d(2026, 1, 1), d(2026, 5, 1), "[Jan 5 Jan 19 Feb 2 Feb 16 Mar 2 Mar 16 Mar 30 Apr 13 Apr 27]"},
		{d(2025, 11, 15), d(2026, 11, 1), "[Dec 2025 Jan 2026 Feb Mar Apr May Jun Jul Aug Sep Oct Nov]"},
		{d(2025, 1, 15), d(2026, 12, 1), "[Feb 2025 Apr Jun Aug Oct Dec Feb 2026 Apr Jun Aug Oct Dec]"},
		{d(2020, 1, 15), d(2026, 12, 1), "[2021 2022 2023 2024 2025 2026]"},
		{d(2000, 1, 1), d(2026, 12, 1), "[2005 2010 2015 2020 2025]"},
		{d(1, 1, 1), d(2026, 1, 1), "[200 400 600 800 1000 1200 1400 1600 1800 2000]"},
		{d(1, 1, 1), d(9999, 12, 31), "[1000 2000 3000 4000 5000 6000 7000 8000 9000]"},
		{d(2026, 1, 1), d(2026, 1, 1), "[]"},
	} {
		ticks := dateTicks(c.first, c.last)
		var labels []string
		for _, tk := range ticks {
			labels = append(labels, tk.Label)
		}
		if got := fmt.Sprint(labels); got != c.want {
			t.Errorf("%s to %s: %s, want %s", day(c.first), day(c.last), got, c.want)
		}
		if len(ticks) > maxDateTicks {
			t.Errorf("%s to %s: %d ticks", day(c.first), day(c.last), len(ticks))
		}
	}
}

// siteBytes is the size of the site of recs.
func siteBytes(t *testing.T, recs []benchdata.Record, opt Options) int {
	t.Helper()
	s, err := Render(recs, opt)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range s.Files {
		n += len(f.Data)
	}
	return n
}

// TestSiteSizeBoundedBySpan: a site's size does not grow with the span of
// its dates. Two records of 200 cells 26 years apart (about the widest
// span a history takes) make a site about the size of the same two
// records a year apart (whose charts have a tick a month): ticks every 3
// months made it over twice as large, and from year 1, 730 MB.
func TestSiteSizeBoundedBySpan(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	two := func(first, last time.Time) []benchdata.Record {
		a := synthesize(synthOptions{nights: 1, cells: 200, start: first})
		b := synthesize(synthOptions{nights: 1, cells: 200, start: last})
		b[0].RunID = "run-2"
		return append(a, b...)
	}
	opt := Options{Months: 0, Now: now}
	year := siteBytes(t, two(time.Date(2025, 1, 1, 2, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)), opt)
	wide := siteBytes(t, two(time.Date(2000, 1, 1, 2, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)), opt)
	if wide > year*11/10 {
		t.Errorf("a site of records 26 years apart is %d bytes, of records a year apart %d", wide, year)
	}
}

// TestSiteRefusesDates: the site refuses a record dated before the floor
// or after now and a day, naming it; Months does not hide it.
func TestSiteRefusesDates(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	recs := synthesize(synthOptions{nights: 3, cells: 2, start: time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)})
	for _, c := range []struct {
		date time.Time
		want string
	}{
		{time.Date(1, 1, 1, 2, 0, 0, 0, time.UTC), `history record 2 (run "run-3f2a9c1b7d4e-001"): field "date": 0001-01-01T02:00:00Z is before 2000-01-01`},
		{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), `history record 2 (run "run-3f2a9c1b7d4e-001"): field "date": 9999-01-01T00:00:00Z is after now (2026-06-01T00:00:00Z)`},
	} {
		bad := slices.Clone(recs)
		bad[1].Date = c.date
		if _, err := Render(bad, Options{Months: 6, Now: now}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.date, err, c.want)
		}
	}
	if _, err := Render(recs, Options{Months: 6, Now: now}); err != nil {
		t.Errorf("the good records: %v", err)
	}
}
