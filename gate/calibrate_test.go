package gate

import (
	"math"
	"testing"
)

func TestCalibrateOverlap(t *testing.T) {
	t.Parallel()
	// Both instances: 100, 110, 90 — mean 100, sd 10, cv 0.1. The
	// resolution is 2 · t(0.975, 2) · 10/√3 / 100 = 0.49683; the band of
	// 10% needs t(r-1)·0.2/√r <= 0.1: r = 18 (t(17)/√18 = 0.4973), not 17
	// (t(16)/√17 = 0.5141).
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
	if cal.Resolves || cal.RoundsNeeded != 18 || cal.Rounds != 3 || cal.Batches != 0 || cal.DurationFactor != 0 {
		t.Errorf("%+v", cal)
	}
}

func TestCalibratePaired(t *testing.T) {
	t.Parallel()
	// Two rounds of 4 slice pairs whose log ratios are ±0.1: 8 batches,
	// mean 0, sd √(8·0.01/7) = 0.106904. Resolution: exp(t(7)·sd/√8)-1 =
	// exp(2.364624·0.106904/2.828427)-1 = exp(0.089375)-1 = 0.093491. Rounds needed at 4
	// batches a round: t(4r-1)·sd/(2√r) <= ln 1.1: r = 2 already. Duration
	// factor: (t(7)·sd/(√8·ln 1.1))² = (0.089375/0.095310)² = 0.87932.
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
	near("resolution", cal.Resolution, 0.093491)
	near("duration factor", cal.DurationFactor, 0.87932)
	if !cal.Resolves || cal.RoundsNeeded != 2 || cal.Batches != 8 || cal.Rule != RulePaired {
		t.Errorf("%+v", cal)
	}

	// Twice the noise: 4 × the duration at these rounds, or the fewest
	// rounds r with exp(t(4r-1)·0.213809/√(4r))-1 <= 0.1, found below by
	// the same search written out.
	for i := range pairs {
		pairs[i].Cand = 100 * math.Exp(2*math.Log(pairs[i].Cand/100))
	}
	c = Compare([]CellInput{{Key: CellKey{Class: "a", Concurrency: 1}, Baseline: side, Candidate: side,
		Pairs: map[Metric][]Pair{RPS: pairs}}}, s, Policy{FailOn: []Rule{{Metric: RPS}}})
	cal = Calibrate(c)[0]
	near("duration factor ×2 noise", cal.DurationFactor, 4*0.87932)
	want := 0
	for r := 2; r <= MaxRounds && want == 0; r++ {
		if math.Expm1(TQuantile(0.975, float64(4*r-1))*2*0.106904/math.Sqrt(float64(4*r))) <= 0.1 {
			want = r
		}
	}
	if cal.Resolves || cal.RoundsNeeded != want || want < 3 {
		t.Errorf("rounds needed %d, want %d (%+v)", cal.RoundsNeeded, want, cal)
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
