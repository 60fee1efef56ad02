package gate

import (
	"fmt"
	"math"
	"testing"
)

// ci is a reported "mean ±half-width" of five repetitions.
func ci(mean, hw float64) Summary { return Summary{N: 5, Mean: mean, HalfWidth: hw} }

func TestDecide(t *testing.T) {
	t.Parallel()
	check := func(name string, m Metric, base, cand Summary, s Settings, want Verdict, reason string) {
		t.Helper()
		d := Decide(m, base, cand, s)
		if d.Verdict != want || d.Reason != reason {
			t.Errorf("%s: Decide(%s, %v, %v) = %s %q, want %s %q",
				name, m, base, cand, d.Verdict, d.Reason, want, reason)
		}
		// Printed, so that a NaN input compares equal to itself.
		if d.Metric != m || fmt.Sprint(d.Baseline, d.Candidate) != fmt.Sprint(base, cand) {
			t.Errorf("%s: decision does not carry its inputs: %+v", name, d)
		}
	}
	def := DefaultSettings

	// Cells of reference-reports/tap-server-comparison.txt, argus (baseline)
	// vs egernia (candidate), rps, N = 5, with the verdict the report printed.
	check("Q01 c=1", RPS, ci(79.0, 10.8), ci(165.8, 1.0), def, Improvement,
		"candidate 109.9% higher, intervals apart") // 86.8/79.0
	check("Q01 c=4", RPS, ci(239.8, 74.6), ci(203.2, 0.5), def, Tie,
		"intervals overlap") // 165.2 <= 203.7
	check("Q01 c=8", RPS, ci(410.9, 5.2), ci(192.8, 0.5), def, Regression,
		"candidate 53.1% lower, intervals apart") // 218.1/410.9
	check("Q03 c=1", RPS, ci(37.5, 0.2), ci(34.4, 0.5), def, Tie,
		"means 8.3% apart (< 10%)") // [37.3, 37.7] vs [33.9, 34.9]; 3.1/37.5
	check("Q03 c=4", RPS, ci(121.1, 19.7), ci(103.2, 2.3), def, Tie,
		"intervals overlap") // 101.4 <= 105.5
	check("Q04 c=1", RPS, ci(46.2, 3.2), ci(46.5, 0.2), def, Tie, "intervals overlap")
	check("Q04 c=4", RPS, ci(144.7, 14.8), ci(114.2, 1.4), def, Regression,
		"candidate 21.1% lower, intervals apart") // 129.9 > 115.6; 30.5/144.7
	check("Q10 c=1", RPS, ci(31.3, 1.8), ci(30.5, 0.1), def, Tie, "intervals overlap")
	check("Q11 c=1", RPS, ci(5.7, 0), ci(4.3, 0.1), def, Regression,
		"candidate 24.6% lower, intervals apart") // 1.4/5.7
	check("Q13 c=4", RPS, ci(9.6, 0.5), ci(9.5, 0.1), def, Tie, "intervals overlap")
	check("Q03 c=32 run 2", RPS, ci(213.3, 101.3), ci(126.9, 2.0), def, Tie, "intervals overlap")

	// Latency: lower is better. p95 columns of the same cells.
	check("Q01 c=1 p95", P95, ci(0.015, 0), ci(0.008, 0), def, Improvement,
		"candidate 46.7% lower, intervals apart") // 0.007/0.015
	check("Q01 c=8 p95", P95, ci(0.024, 0), ci(0.059, 0.001), def, Regression,
		"candidate 145.8% higher, intervals apart") // 0.035/0.024
	check("Q11 c=4 p95", P95, ci(0.243, 0.004), ci(0.491, 0.044), def, Regression,
		"candidate 102.1% higher, intervals apart") // 0.248/0.243
	check("Q13 c=4 p95", P95, ci(0.515, 0.046), ci(0.562, 0.003), def, Tie, "intervals overlap")
	check("mean latency 5× slower", Mean, ci(0.010, 0.001), ci(0.050, 0.002), def, Regression,
		"candidate 400.0% higher, intervals apart")
	check("error rate down", ErrorRate, ci(0.04, 0.001), ci(0.01, 0.001), def, Improvement,
		"candidate 75.0% lower, intervals apart")

	// The 10% band.
	check("5% apart, tiny intervals", RPS, ci(100, 0.1), ci(105, 0.1), def, Tie,
		"means 5.0% apart (< 10%)")
	check("5% apart, latency", P99, ci(100, 0.1), ci(95, 0.1), def, Tie,
		"means 5.0% apart (< 10%)")
	check("5× slower", RPS, ci(500, 5), ci(100, 5), def, Regression,
		"candidate 80.0% lower, intervals apart")
	check("exactly 10% is outside the band", RPS, ci(100, 1), ci(110, 1), def, Improvement,
		"candidate 10.0% higher, intervals apart")
	check("just inside the band needs more digits", RPS, ci(100000, 1), ci(109996, 1), def, Tie,
		"means 9.996% apart (< 10%)")
	check("band off", RPS, ci(100, 0.1), ci(101, 0.1), Settings{Confidence: 0.95}, Improvement,
		"candidate 1.0% higher, intervals apart")
	check("band 7.5%", RPS, ci(100, 0.1), ci(93, 0.1), Settings{Confidence: 0.95, TieWithin: 0.075}, Tie,
		"means 7.0% apart (< 7.5%)")

	// Closed intervals: [9, 11] and [11, 13] touch, which is overlap.
	check("touching", RPS, ci(10, 1), ci(12, 1), def, Tie, "intervals overlap")
	check("equal points", P50, ci(5, 0), ci(5, 0), def, Tie, "intervals overlap")

	// A zero baseline has no relative band: the intervals alone decide.
	check("both zero", ErrorRate, ci(0, 0), ci(0, 0), def, Tie, "intervals overlap")
	check("zero baseline, overlap", ErrorRate, ci(0, 0), ci(0.001, 0.002), def, Tie, "intervals overlap")
	check("zero baseline, apart", ErrorRate, ci(0, 0), ci(0.02, 0.005), def, Regression,
		"candidate higher, intervals apart (baseline mean 0: intervals alone decide)")

	// Too few repetitions, and inputs no rule can use.
	one := Summary{N: 1, Mean: 100}
	check("N=1 both", RPS, one, one, def, Inconclusive, "need >= 2 repetitions, have 1")
	check("N=1 candidate", RPS, ci(100, 1), Summary{N: 1, Mean: 50}, def, Inconclusive,
		"need >= 2 repetitions, have 5 (baseline) and 1 (candidate)")
	check("no candidate", RPS, ci(100, 1), Summary{}, def, Inconclusive,
		"measured by the baseline only (5 repetitions, none of the candidate)")
	check("NaN", RPS, ci(100, 1), ci(math.NaN(), 1), def, Inconclusive,
		"a sample is not a finite number")
	check("bad confidence", RPS, ci(100, 1), ci(200, 1), Settings{Confidence: 95, TieWithin: 0.1}, Inconclusive,
		"confidence 95 is not between 0 and 1")
}

func TestDecideDelta(t *testing.T) {
	t.Parallel()
	check := func(base, cand Summary, want float64) {
		t.Helper()
		if got := Decide(RPS, base, cand, DefaultSettings).Delta; math.Abs(got-want) > 1e-12 {
			t.Errorf("Delta(%v → %v) = %v, want %v", base.Mean, cand.Mean, got, want)
		}
	}
	check(ci(5.7, 0), ci(4.3, 0.1), -1.4/5.7)
	check(ci(79, 10.8), ci(165.8, 1), 86.8/79)
	check(ci(0, 0), ci(3, 1), 0)
	check(Summary{N: 1, Mean: 10}, Summary{N: 1, Mean: 12}, 0.2)
}

// From raw repetitions to a verdict, numbers by hand:
// base [10 12 14 16 18]: 14 ± 3.9265 = [10.0735, 17.9265];
// cand [20 21 22 23 24]: mean 22, sd sqrt(10/4) = 1.5811,
// hw 2.7764*1.5811/2.2361 = 1.9632, [20.0368, 23.9632]. Apart; 8/14 = 57.1%.
func TestDecideFromSamples(t *testing.T) {
	t.Parallel()
	base := Summarize([]float64{10, 12, 14, 16, 18}, 0.95)
	cand := Summarize([]float64{20, 21, 22, 23, 24}, 0.95)
	if math.Abs(cand.HalfWidth-1.9632) > 5e-5 {
		t.Errorf("candidate half-width = %.5f, want 1.9632", cand.HalfWidth)
	}
	d := Decide(RPS, base, cand, DefaultSettings)
	if d.Verdict != Improvement || d.Reason != "candidate 57.1% higher, intervals apart" {
		t.Errorf("rps: %s %q", d.Verdict, d.Reason)
	}
	d = Decide(P95, base, cand, DefaultSettings)
	if d.Verdict != Regression {
		t.Errorf("p95 rising from 14 to 22: %s, want regression", d.Verdict)
	}
}

func TestSettingsValidate(t *testing.T) {
	t.Parallel()
	check := func(s Settings, wantErr string) {
		t.Helper()
		err := s.Validate()
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != wantErr {
			t.Errorf("%+v.Validate() = %q, want %q", s, got, wantErr)
		}
	}
	check(DefaultSettings, "")
	check(Settings{Confidence: 0.99}, "")
	check(Settings{Confidence: 0, TieWithin: 0.1}, "confidence 0 is not between 0 and 1")
	check(Settings{Confidence: 1, TieWithin: 0.1}, "confidence 1 is not between 0 and 1")
	check(Settings{Confidence: 0.95, TieWithin: -0.1}, "tie_within -0.1 is not a finite fraction >= 0")
	check(Settings{Confidence: 0.95, TieWithin: math.NaN()}, "tie_within NaN is not a finite fraction >= 0")
	check(Settings{Confidence: 0.95, Rule: RulePaired, Looks: 6, MaxRounds: 8, Batches: 3}, "")
	check(Settings{Confidence: 0.95, Looks: 6, MaxRounds: 5}, "max rounds 5 is fewer than the 6 looks")
	check(Settings{Confidence: 0.95, Rule: RuleOverlap}, "")
	check(Settings{Confidence: 0.95, Rule: "bayes"}, `rule "bayes" is not overlap or paired`)
	check(Settings{Confidence: 0.95, Looks: -1}, "looks -1 is negative")
	check(Settings{Confidence: 0.95, Batches: -2}, "batches -2 is negative")
}
