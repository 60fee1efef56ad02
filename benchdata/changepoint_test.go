package benchdata

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// noisy is a series of n points around 1000 with Gaussian noise of the
// given relative size, multiplied by steps[i] from point i on.
func noisy(seed uint64, n int, noise float64, steps map[int]float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 0x6265_6e63_6867_6174))
	v := make([]float64, n)
	level := 1000.0
	for i := range v {
		if f, ok := steps[i]; ok {
			level *= f
		}
		v[i] = level * (1 + noise*rng.NormFloat64())
	}
	return v
}

func indexes(cps []ChangePoint) []int {
	var out []int
	for _, c := range cps {
		out = append(out, c.Index)
	}
	return out
}

func TestChangePointsStep(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 20; seed++ {
		cps := ChangePoints(noisy(seed, 60, 0.02, map[int]float64{37: 0.85}), ChangePointOptions{})
		if len(cps) != 1 || cps[0].Index != 37 {
			t.Fatalf("seed %d: change points %+v, want one at 37", seed, cps)
		}
		c := cps[0]
		if !(c.PValue < 0.001) {
			t.Errorf("seed %d: p = %g, want < 0.001", seed, c.PValue)
		}
		if math.Abs(c.Change-(-0.15)) > 0.02 {
			t.Errorf("seed %d: change %.4f, want about -0.15", seed, c.Change)
		}
		if math.Abs(c.Before-1000) > 15 || math.Abs(c.After-850) > 15 {
			t.Errorf("seed %d: means %.1f → %.1f, want about 1000 → 850", seed, c.Before, c.After)
		}
	}
}

func TestChangePointsFlat(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 50; seed++ {
		for _, n := range []int{60, 200} {
			if cps := ChangePoints(noisy(seed, n, 0.02, nil), ChangePointOptions{}); len(cps) != 0 {
				t.Errorf("seed %d, %d points: flat series gave %+v", seed, n, cps)
			}
		}
	}
	// Constant: no variance, no change.
	if cps := ChangePoints([]float64{5, 5, 5, 5, 5, 5, 5, 5}, ChangePointOptions{}); len(cps) != 0 {
		t.Errorf("constant series gave %+v", cps)
	}
}

func TestChangePointsTwoSteps(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		steps map[int]float64
	}{
		{"down, down", map[int]float64{20: 0.85, 40: 0.85}},
		{"up, down", map[int]float64{20: 1.2, 40: 1 / 1.2}},
		{"down, up", map[int]float64{15: 0.8, 45: 1.3}},
	} {
		for seed := uint64(1); seed <= 10; seed++ {
			v := noisy(seed, 60, 0.02, tc.steps)
			got := fmt.Sprint(indexes(ChangePoints(v, ChangePointOptions{})))
			var want []int
			for i := range 60 {
				if _, ok := tc.steps[i]; ok {
					want = append(want, i)
				}
			}
			if got != fmt.Sprint(want) {
				t.Errorf("%s, seed %d: change points at %s, want %v", tc.name, seed, got, want)
			}
		}
	}
}

func TestChangePointsMinMagnitude(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 20; seed++ {
		v := noisy(seed, 60, 0.02, map[int]float64{37: 0.97})
		if cps := ChangePoints(v, ChangePointOptions{}); len(cps) != 0 {
			t.Errorf("seed %d: a 3%% step under the 5%% minimum gave %+v", seed, cps)
		}
	}
	// The same step is significant: with a lower minimum it is found.
	v := noisy(1, 60, 0.01, map[int]float64{37: 0.97})
	if cps := ChangePoints(v, ChangePointOptions{MinMagnitude: 0.01}); fmt.Sprint(indexes(cps)) != "[37]" {
		t.Errorf("a 3%% step in 1%% noise with a 1%% minimum: %+v, want one at 37", cps)
	}
}

func TestChangePointsShort(t *testing.T) {
	t.Parallel()
	v := []float64{100, 100, 100, 50, 50}
	if cps := ChangePoints(v, ChangePointOptions{}); cps != nil {
		t.Errorf("5 points with min window 3 gave %+v", cps)
	}
	if cps := ChangePoints(nil, ChangePointOptions{}); cps != nil {
		t.Errorf("no points gave %+v", cps)
	}
	// Six points are enough for a clear step of two windows of three.
	v = []float64{100, 101, 99, 50, 51, 49}
	cps := ChangePoints(v, ChangePointOptions{})
	if len(cps) != 1 || cps[0].Index != 3 || cps[0].Change != -0.5 {
		t.Errorf("6 points with a step at 3: %+v", cps)
	}
	// A larger window leaves it alone.
	if cps := ChangePoints(v, ChangePointOptions{MinWindow: 4}); cps != nil {
		t.Errorf("min window 4 over 6 points gave %+v", cps)
	}
}

func TestChangePointsFromZero(t *testing.T) {
	t.Parallel()
	v := []float64{0, 0, 0, 0, 0, 0.01, 0.011, 0.009, 0.01, 0.012}
	cps := ChangePoints(v, ChangePointOptions{})
	if len(cps) != 1 || cps[0].Index != 5 || cps[0].Change != 1 {
		t.Errorf("errors appearing: %+v, want one at 5 with change +1", cps)
	}
}

// bestSplit's running sums give the statistic computed from its
// definition.
func TestBestSplitMatchesDefinition(t *testing.T) {
	t.Parallel()
	q := func(z []float64, tau int) float64 {
		x, y := z[:tau], z[tau:]
		m, k := float64(len(x)), float64(len(y))
		var cross, wx, wy float64
		for _, a := range x {
			for _, b := range y {
				cross += math.Abs(a - b)
			}
		}
		for i := range x {
			for j := i + 1; j < len(x); j++ {
				wx += math.Abs(x[i] - x[j])
			}
		}
		for i := range y {
			for j := i + 1; j < len(y); j++ {
				wy += math.Abs(y[i] - y[j])
			}
		}
		return m * k / (m + k) * (2*cross/(m*k) - wx/(m*(m-1)/2) - wy/(k*(k-1)/2))
	}
	for seed := uint64(1); seed <= 10; seed++ {
		z := noisy(seed, 25, 0.05, map[int]float64{int(seed) + 5: 0.9})
		best, bestQ := -1, math.Inf(-1)
		for tau := 3; tau <= len(z)-3; tau++ {
			if v := q(z, tau); v > bestQ {
				best, bestQ = tau, v
			}
		}
		if got, ok := bestSplit(z, 3); !ok || got != best {
			t.Errorf("seed %d: bestSplit = %d, %v; by definition %d", seed, got, ok, best)
		}
	}
}

func TestStudentT(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b []float64
		p    float64
	}{
		// t = -2, df = 8: p = 0.080516 (R's t.test(1:5, 3:7, var.equal=TRUE))
		{[]float64{1, 2, 3, 4, 5}, []float64{3, 4, 5, 6, 7}, 0.08051623},
		// t = 9.4058, df = 5; for odd df the tail has a closed form:
		// 1 - 2/π·(θ + sin θ cos θ (1 + 2/3 cos²θ)), θ = atan(t/√5).
		{[]float64{10, 12, 11, 13}, []float64{20, 19, 21}, 0.00022914629},
		{[]float64{1, 1, 1}, []float64{1, 1, 1}, 1},
		{[]float64{1, 1, 1}, []float64{2, 2, 2}, 0},
	} {
		if got := studentT(tc.a, tc.b); math.Abs(got-tc.p) > 1e-6*math.Max(tc.p, 1e-3) {
			t.Errorf("studentT(%v, %v) = %.8g, want %.8g", tc.a, tc.b, got, tc.p)
		}
	}
}

// records makes a nightly history: one record a day, candidate commits
// c00, c01, ..., one cell with rps and p95 on both targets; rps(i) and
// p95(i) give the candidate's values, the baseline (a pinned reference)
// stays flat.
func records(fp string, n int, seed uint64, start time.Time, rps, p95 func(i int) float64) []Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	cell := Cell{Class: "Q01", Concurrency: 8}
	var out []Record
	for i := range n {
		jit := func(v float64) float64 { return v * (1 + 0.02*rng.NormFloat64()) }
		out = append(out, Record{
			Version: HistoryVersion, Date: start.Add(time.Duration(i) * 24 * time.Hour),
			Scenario: "demo-api", Profile: "nightly", RunID: fmt.Sprintf("run-%s-%02d", fp, i),
			BaselineCommit: "v1.0.0", CandidateCommit: fmt.Sprintf("c%02d", i),
			Fingerprint: fp, Machine: "machine " + fp,
			Cells: []RecordCell{
				{Cell: cell, Target: "baseline", Metric: "rps", Mean: jit(1000), HalfWidth: 12, N: 5},
				{Cell: cell, Target: "candidate", Metric: "rps", Mean: jit(rps(i)), HalfWidth: 12, N: 5},
				{Cell: cell, Target: "baseline", Metric: "p95", Mean: jit(0.004), HalfWidth: 0.0001, N: 5},
				{Cell: cell, Target: "candidate", Metric: "p95", Mean: jit(p95(i)), HalfWidth: 0.0001, N: 5},
			},
		})
	}
	return out
}

var day0 = time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)

func stepAt(at int, before, after float64) func(int) float64 {
	return func(i int) float64 {
		if i >= at {
			return after
		}
		return before
	}
}

func flat(v float64) func(int) float64 { return func(int) float64 { return v } }

func TestDriftNamesCommitRange(t *testing.T) {
	t.Parallel()
	recs := records("aaaaaaaaaaaa", 60, 1, day0, stepAt(37, 1000, 850), flat(0.004))
	got := AnalyzeDrift(recs, ChangePointOptions{})
	if len(got.Findings) != 1 {
		t.Fatalf("findings %+v, want one", got.Findings)
	}
	f := got.Findings[0]
	if f.FromCommit != "c36" || f.ToCommit != "c37" || f.Target != "candidate" || f.Metric != "rps" || !f.Worse {
		t.Errorf("finding %+v, want candidate rps worse in c36..c37", f)
	}
	if !f.FromDate.Equal(day0.Add(36*24*time.Hour)) || !f.ToDate.Equal(day0.Add(37*24*time.Hour)) {
		t.Errorf("dates %v .. %v", f.FromDate, f.ToDate)
	}
	if f.Change.Index != 37 || !(f.Change.PValue < 0.001) || f.Cell != (Cell{Class: "Q01", Concurrency: 8}) || f.Scenario != "demo-api" || f.Profile != "nightly" {
		t.Errorf("finding %+v", f)
	}
	if f.FromBaseline != "v1.0.0" || f.ToBaseline != "v1.0.0" {
		t.Errorf("baseline commits %q..%q", f.FromBaseline, f.ToBaseline)
	}
	if len(got.Fingerprints) != 1 || got.Fingerprints[0].Series != 4 || got.Fingerprints[0].Skipped != "" {
		t.Errorf("fingerprints %+v", got.Fingerprints)
	}
	if got.Worse() != 1 {
		t.Errorf("Worse() = %d", got.Worse())
	}
	// The findings do not depend on the order of the records.
	rev := make([]Record, len(recs))
	for i, r := range recs {
		rev[len(recs)-1-i] = r
	}
	if d := AnalyzeDrift(rev, ChangePointOptions{}).Findings; len(d) != 1 || d[0].FromCommit != "c36" {
		t.Errorf("Drift of reversed records: %+v", d)
	}
}

func TestDriftDirection(t *testing.T) {
	t.Parallel()
	// Throughput up and latency down are better; latency up is worse.
	recs := records("aaaaaaaaaaaa", 40, 2, day0, stepAt(20, 1000, 1200), stepAt(10, 0.004, 0.005))
	d := AnalyzeDrift(recs, ChangePointOptions{}).Findings
	if len(d) != 2 {
		t.Fatalf("findings %+v, want two", d)
	}
	for _, f := range d {
		switch f.Metric {
		case "rps":
			if f.Worse || f.ToCommit != "c20" {
				t.Errorf("rps up at c20: %+v", f)
			}
		case "p95":
			if !f.Worse || f.ToCommit != "c10" {
				t.Errorf("p95 up at c10: %+v", f)
			}
		}
	}
}

func TestDriftOnlyEqualFingerprints(t *testing.T) {
	t.Parallel()
	// Another machine, 15% slower throughout, runs on the same nights: its
	// records interleave with the first's but are never mixed in.
	a := records("aaaaaaaaaaaa", 60, 1, day0, stepAt(37, 1000, 850), flat(0.004))
	b := records("bbbbbbbbbbbb", 60, 3, day0.Add(time.Hour), flat(850), flat(0.005))
	d := AnalyzeDrift(append(b, a...), ChangePointOptions{})
	if len(d.Findings) != 1 || d.Findings[0].Fingerprint != "aaaaaaaaaaaa" || d.Findings[0].ToCommit != "c37" {
		t.Errorf("findings %+v, want only machine a's step at c37", d.Findings)
	}
	if len(d.Fingerprints) != 2 || d.Fingerprints[0].Fingerprint != "bbbbbbbbbbbb" || d.Fingerprints[0].Series != 4 {
		t.Errorf("fingerprints %+v", d.Fingerprints)
	}

	// The runner changes after 30 nights to one 15% slower: no step is
	// reported, as each machine's own series is flat.
	a = records("aaaaaaaaaaaa", 30, 4, day0, flat(1000), flat(0.004))
	b = records("bbbbbbbbbbbb", 30, 5, day0.Add(30*24*time.Hour), flat(850), flat(0.005))
	if d := AnalyzeDrift(append(a, b...), ChangePointOptions{}).Findings; len(d) != 0 {
		t.Errorf("a change of runner read as a step: %+v", d)
	}

	// A machine with too few records is skipped, and says so.
	a = records("aaaaaaaaaaaa", 30, 4, day0, flat(1000), flat(0.004))
	b = records("cccccccccccc", 4, 6, day0.Add(40*24*time.Hour), flat(500), flat(0.005))
	r := AnalyzeDrift(append(a, b...), ChangePointOptions{})
	if len(r.Fingerprints) != 2 {
		t.Fatalf("fingerprints %+v", r.Fingerprints)
	}
	c := r.Fingerprints[0]
	if c.Fingerprint != "cccccccccccc" || c.Records != 4 || c.Series != 0 || c.Short != 4 ||
		c.Skipped != "4 record(s); change points need at least 6 (2 × min window 3)" || c.Machine != "machine cccccccccccc" {
		t.Errorf("skipped fingerprint %+v", c)
	}
	if r.Fingerprints[1].Skipped != "" || r.Fingerprints[1].Records != 30 {
		t.Errorf("tested fingerprint %+v", r.Fingerprints[1])
	}
}

func TestHistorySeries(t *testing.T) {
	t.Parallel()
	recs := records("aaaaaaaaaaaa", 3, 1, day0, flat(1000), flat(0.004))
	recs[0], recs[2] = recs[2], recs[0]
	ss := HistorySeries(recs)
	var keys []string
	for _, s := range ss {
		keys = append(keys, s.Key.Target+" "+s.Key.Metric)
		if len(s.Points) != 3 || s.Points[0].CandidateCommit != "c00" || s.Points[2].CandidateCommit != "c02" {
			t.Errorf("%v: points %+v", s.Key, s.Points)
		}
	}
	if fmt.Sprint(keys) != "[baseline rps baseline p95 candidate rps candidate p95]" {
		t.Errorf("series order %v", keys)
	}
}

func TestChangePointOptionsCheck(t *testing.T) {
	t.Parallel()
	ok := ChangePointOptions{MaxPValue: DefaultMaxPValue, MinMagnitude: DefaultMinMagnitude, MinWindow: DefaultMinWindow}
	if err := ok.Check(); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	for _, c := range []struct {
		change func(*ChangePointOptions)
		want   string
	}{
		{func(o *ChangePointOptions) { o.MaxPValue = 0 }, "-max-pvalue"},
		{func(o *ChangePointOptions) { o.MaxPValue = 1.5 }, "-max-pvalue"},
		{func(o *ChangePointOptions) { o.MaxPValue = math.NaN() }, "-max-pvalue"},
		{func(o *ChangePointOptions) { o.MinMagnitude = 0 }, "-min-magnitude"},
		{func(o *ChangePointOptions) { o.MinMagnitude = -0.1 }, "-min-magnitude"},
		{func(o *ChangePointOptions) { o.MinWindow = 1 }, "-min-window"},
	} {
		o := ok
		c.change(&o)
		if err := o.Check(); err == nil || !strings.HasPrefix(err.Error(), c.want+":") {
			t.Errorf("%+v: got %v, want an error of %s", o, err, c.want)
		}
	}
}
