package gate

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestCalibrateOverlap(t *testing.T) {
	t.Parallel()
	// Both instances: 100, 110, 90 — mean 100, sd 10, cv 0.1. The
	// resolution is 2 · t(0.975, 2) · 10/√3 / 100 = 0.49683, and as the
	// means agree it is also what the interval rules out. 80% power at
	// the band: 29 rounds, 28 not (TestCalibrationProjection draws it);
	// as max_repetitions from 3, the last look of 3…34 at its spending
	// confidence. At 3 rounds 80% of A/A ties rule out 62.4%.
	side := Side{Samples: map[Metric][]float64{RPS: {100, 110, 90}}}
	c := Compare([]CellInput{{Key: CellKey{Class: "a", Concurrency: 1}, Baseline: side, Candidate: side}},
		DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS}}})
	cals := Calibrate(c)
	if len(cals) != 1 {
		t.Fatalf("%d calibrations", len(cals))
	}
	cal := cals[0]
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-4 {
			t.Errorf("%s = %.6f, want %.6f", what, got, want)
		}
	}
	near("unpaired", cal.Unpaired, 0.1)
	near("resolution", cal.Resolution, 0.49683)
	near("rules out", cal.RulesOut, 0.49683)
	near("detectable", cal.Detectable, 0.62354)
	near("false regression", cal.FalseRegression, 0.00166)
	if cal.Resolves || cal.RoundsNeeded != 29 || cal.MaxRoundsNeeded != 34 || cal.Rounds != 3 || cal.Batches != 0 || cal.DurationFactor != 0 {
		t.Errorf("%+v", cal)
	}
}

func TestCalibratePaired(t *testing.T) {
	t.Parallel()
	// Two rounds of 4 slice pairs whose log ratios are ±0.1: 8 batches,
	// mean 0, sd √(8·0.01/7) = 0.106904, a round's mean 0.106904/√4 =
	// 0.053452. Resolution: exp(t(7)·sd/√8)-1 = exp(0.089375)-1 =
	// 0.093491; rps is better higher, so the interval rules out a fall of
	// 1-exp(-0.089375) = 0.085497: resolved. The projection, at the
	// round's sd and the band −ln(0.9) below: 80% power at 5 rounds (the
	// rounds' t(4) with the spread of their sd; the old projection, the
	// batches' expected half-width alone, said 2). At 2 rounds the
	// rounds' t(1) = 12.7 makes the duration factor large.
	var pairs []Pair
	for r := range 2 {
		for _, x := range []float64{0.1, -0.1, 0.1, -0.1} {
			pairs = append(pairs, Pair{Round: r, Base: 100, Cand: 100 * math.Exp(x)})
		}
	}
	side := Side{Samples: map[Metric][]float64{RPS: {100, 100}}}
	s := DefaultSettings
	s.Rule = RulePaired
	c := Compare([]CellInput{{Key: CellKey{Class: "a", Concurrency: 1}, Baseline: side, Candidate: side,
		Pairs: map[Metric][]Pair{RPS: pairs}}}, s, Policy{FailOn: []Rule{{Metric: RPS}}})
	cal := Calibrate(c)[0]
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-5 {
			t.Errorf("%s = %.6f, want %.6f", what, got, want)
		}
	}
	near("paired", cal.Paired, 0.106904)
	near("paired round", cal.PairedRound, 0.053452)
	near("resolution", cal.Resolution, 0.093491)
	near("rules out", cal.RulesOut, 0.085497)
	p := projection{band: 0.1, limit: -math.Log(0.9), sd: 0.053452, perRound: 4, minRounds: 3, log: true, higher: true}
	near("detectable", cal.Detectable, p.detectable(2, 0.95))
	near("duration factor / 100", cal.DurationFactor/100, math.Pow(0.053452/p.sdFor(2, 0.95), 2)/100)
	if !cal.Resolves || cal.RoundsNeeded != 5 || p.resolved(4, 0.95) >= CalibrationPower || p.resolved(5, 0.95) < CalibrationPower ||
		cal.Batches != 8 || cal.Rule != RulePaired || cal.DurationFactor < 20 {
		t.Errorf("%+v", cal)
	}

	// Twice the noise: 4 × the duration at these rounds, and more rounds.
	for i := range pairs {
		pairs[i].Cand = 100 * math.Exp(2*math.Log(pairs[i].Cand/100))
	}
	c = Compare([]CellInput{{Key: CellKey{Class: "a", Concurrency: 1}, Baseline: side, Candidate: side,
		Pairs: map[Metric][]Pair{RPS: pairs}}}, s, Policy{FailOn: []Rule{{Metric: RPS}}})
	cal2 := Calibrate(c)[0]
	if math.Abs(cal2.DurationFactor/cal.DurationFactor-4) > 1e-6 {
		t.Errorf("duration factor ×2 noise %.4f, want 4 × %.4f", cal2.DurationFactor, cal.DurationFactor)
	}
	p.sd *= 2
	if cal2.Resolves || cal2.RoundsNeeded != 11 || p.resolved(10, 0.95) >= CalibrationPower || p.resolved(11, 0.95) < CalibrationPower {
		t.Errorf("rounds needed %d, want 11 (%+v)", cal2.RoundsNeeded, cal2)
	}
}

func TestCalibrateInconclusive(t *testing.T) {
	t.Parallel()
	side := Side{Samples: map[Metric][]float64{RPS: {100}}}
	c := Compare([]CellInput{{Key: CellKey{Class: "a"}, Baseline: side, Candidate: side}},
		DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS}, {Metric: P95}}})
	cals := Calibrate(c)
	if len(cals) != 2 || cals[0].Reason == "" || cals[0].RoundsNeeded != 0 || cals[1].Reason != "not measured" {
		t.Errorf("%+v", cals)
	}
}

// TestCalibrationProjection checks the projection's quadrature against a
// second method: seeded draws of what it integrates over, the estimate's
// normal error and the sample standard deviations (each side's own under
// overlap, which the quadrature pools into one of 2(R−1) degrees of
// freedom), decided as the rules decide.
func TestCalibrationProjection(t *testing.T) {
	t.Parallel()
	simulation(t)
	const draws = 100000
	rng := rand.New(rand.NewPCG(28, 4))
	chi := func(df int) float64 { // √(χ²_df / df)
		var s float64
		for range df {
			z := rng.NormFloat64()
			s += z * z
		}
		return math.Sqrt(s / float64(df))
	}
	// Overlap, cv 0.1 on both sides (TestCalibrateOverlap's runner);
	// paired, sd of a round's mean log ratio 0.1, 4 batches a round.
	overlap := projection{band: 0.1, limit: 0.1, sd: math.Hypot(0.1, 0.1), ratio: math.Sqrt2, minRounds: 2}
	paired := projection{band: 0.1, limit: math.Log1p(0.1), sd: 0.1, perRound: 4, minRounds: 3, log: true}
	for _, c := range []struct {
		name string
		p    projection
		r    int
	}{{"overlap", overlap, 28}, {"overlap", overlap, 29}, {"overlap", overlap, 3}, {"paired", paired, 3}, {"paired", paired, 6}} {
		tq := TQuantile(0.975, float64(c.r-1))
		lambda := c.p.limit * math.Sqrt(float64(c.r)) / c.p.sd
		var resolved, failed int
		for range draws {
			z := rng.NormFloat64()
			var h float64
			if c.p.log {
				h = math.Max(tq*chi(c.r-1), TQuantile(0.975, float64(c.r)*c.p.perRound-1))
			} else {
				h = tq * (chi(c.r-1) + chi(c.r-1)) / math.Sqrt2 // (cv_b·V_b + cv_c·V_c) / sd
			}
			if z+h <= lambda {
				resolved++
			}
			if z >= math.Max(lambda, h) {
				failed++
			}
		}
		mc, mcFail := float64(resolved)/draws, float64(failed)/draws
		got, gotFail := c.p.resolved(c.r, 0.95), c.p.falseRegression(c.r, 0.95)
		se := math.Sqrt(mc*(1-mc)/draws) + 0.002
		if math.Abs(got-mc) > 4*se || math.Abs(gotFail-mcFail) > 4*math.Sqrt(mcFail/draws)+0.0005 {
			t.Errorf("%s at %d rounds: resolved %.4f, false regression %.5f; drawn %.4f, %.5f", c.name, c.r, got, gotFail, mc, mcFail)
		}
		if c.name == "overlap" && c.r >= 28 && (mc >= CalibrationPower) != (c.r == 29) {
			t.Errorf("overlap: drawn power %.4f at %d rounds, want 29 the first at 80%%", mc, c.r)
		}
	}
}

// TestCalibrateManyLooks: an adaptive design of more looks than the
// spending computes is not projected (its last look's confidence would
// read near 0 and any rounds would seem to do).
func TestCalibrateManyLooks(t *testing.T) {
	t.Parallel()
	// cv 0.15 on both sides, 3 rounds: some 60 rounds needed.
	side := Side{Samples: map[Metric][]float64{RPS: {100, 115, 85}}}
	c := Compare([]CellInput{{Key: CellKey{Class: "a", Concurrency: 1}, Baseline: side, Candidate: side}},
		DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS}}})
	cal := Calibrate(c)[0]
	if cal.RoundsNeeded-cal.Rounds+1 <= maxLooks || cal.MaxRoundsNeeded != 0 {
		t.Errorf("rounds needed %d, as max_repetitions %d, want 0 beyond %d looks", cal.RoundsNeeded, cal.MaxRoundsNeeded, maxLooks)
	}
}
