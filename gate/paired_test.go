package gate

import (
	"math"
	"reflect"
	"slices"
	"testing"
)

// t(0.975, 3): R's qt(0.975, 3), also checked in TestTQuantile.
const t975df3 = 3.182446305284263

// logPairs returns one pair per round (round interleaving) whose log ratio
// is each x: base 100, candidate 100·e^x.
func logPairs(xs ...float64) []Pair {
	ps := make([]Pair, len(xs))
	for i, x := range xs {
		ps[i] = Pair{Round: i, Base: 100, Cand: 100 * math.Exp(x)}
	}
	return ps
}

// inRound returns pairs (base, cand) of one round.
func inRound(r int, bc ...float64) []Pair {
	var ps []Pair
	for i := 0; i+1 < len(bc); i += 2 {
		ps = append(ps, Pair{Round: r, Base: bc[i], Cand: bc[i+1]})
	}
	return ps
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*math.Max(1, math.Abs(b)) }

func TestPairedRatio(t *testing.T) {
	t.Parallel()
	check := func(name string, pairs []Pair, batches int, want Ratio) {
		t.Helper()
		got, err := PairedRatio(pairs, 0.95, batches)
		if want.Spread == "" {
			want.Spread = SpreadBatches
		}
		if err != nil || got.N != want.N || got.Pairs != want.Pairs || got.Spread != want.Spread ||
			!near(got.Ratio, want.Ratio) || !near(got.Lo, want.Lo) || !near(got.Hi, want.Hi) {
			t.Errorf("%s: PairedRatio = %+v, %v; want %+v", name, got, err, want)
		}
	}

	// 4 pairs in one round, batches 5: 4 batches of one pair, log ratios
	// 0.1, -0.1, 0.2, 0. Mean 0.05; squared deviations 0.0025 + 0.0225 +
	// 0.0225 + 0.0025 = 0.05, sd = sqrt(0.05/3) = 0.1290994449; h = t(.975,3)
	// · sd / 2 = 0.2054260257. Ratio e^0.05 = 1.0512710964, interval
	// [e^-0.1554260257, e^0.2554260257] = [0.8560504003, 1.2910115078].
	h := t975df3 * math.Sqrt(0.05/3) / 2
	fourLogs := Ratio{Ratio: math.Exp(0.05), Lo: math.Exp(0.05 - h), Hi: math.Exp(0.05 + h), N: 4, Pairs: 4}
	if !near(fourLogs.Lo, 0.8560504003363467) || !near(fourLogs.Hi, 1.291011507782042) {
		t.Fatalf("hand computation: %+v", fourLogs)
	}
	one := logPairs(0.1, -0.1, 0.2, 0)
	for i := range one {
		one[i].Round = 0
	}
	check("4 pairs, 1 round, batches 5", one, 5, fourLogs)
	// The same log ratios, one pair per round (round interleaving).
	check("4 rounds of 1 pair", logPairs(0.1, -0.1, 0.2, 0), 5, fourLogs)

	// 10 pairs in 2 rounds, batches 2: sizes 3, 2 in each round, ratio of
	// the batch's sums. Round 0: (10+10+10, 12+0+18) = 30/30 = 1 (the empty
	// slice only lowers its batch), (20, 24) = 1.2; round 1: 27/30 = 0.9,
	// 22/20 = 1.1. Logs 0, 0.1823215568, -0.1053605157, 0.0953101798:
	// mean ln(1.2·0.9·1.1)/4 = ln(1.188)/4 = 0.0430678052, Ratio 1.188^¼ =
	// 1.0440086817; sd 0.1238368218, h = t(.975,3)·sd/2 = 0.1970520180;
	// [0.8572855550, 1.2714014847] from the batches. But the two rounds'
	// means, ln(1.2)/2 = 0.0911607784 and ln(0.99)/2 = -0.0050251679, are
	// further apart than the batches say: their interval, t(.975,1) ·
	// (|0.0911607784 + 0.0050251679| / √2) / √2 = 12.7062047362 · 0.0480929732
	// = 0.6110785560, is wider, and is the one (N 2, the rounds): [e^-0.5680107508,
	// e^0.6541463612] = [0.5666511852, 1.9235010106]. Batches that ignored
	// the rounds (3, 3, 2, 2 of the 10) would be other sums.
	two := slices.Concat(
		inRound(0, 10, 12, 10, 0, 10, 18, 10, 11, 10, 13),
		inRound(1, 10, 9, 10, 8, 10, 10, 10, 10, 10, 12))
	hr := TQuantile(0.975, 1) * math.Abs(math.Log(1.2)/2-math.Log(0.99)/2) / 2
	mean := math.Log(1.188) / 4
	twoRounds := Ratio{Ratio: math.Exp(mean), Lo: math.Exp(mean - hr), Hi: math.Exp(mean + hr), N: 2, Pairs: 10, Spread: SpreadRounds}
	if !near(twoRounds.Lo, 0.5666511852473451) || !near(twoRounds.Hi, 1.9235010105896602) {
		t.Fatalf("hand computation: %+v", twoRounds)
	}
	check("10 pairs, 2 rounds, batches 2", two, 2, twoRounds)
	// A round's pairs need not be contiguous: they are grouped by round.
	mixed := []Pair{two[5], two[0], two[6], two[1], two[2], two[7], two[8], two[3], two[9], two[4]}
	check("grouped by round", mixed, 2, twoRounds)
	// Rounds that agree leave the batches' interval: two rounds of the
	// same batches have equal means, a round interval of 0, and the
	// batches' interval (logs 0, ln 1.2, 0, ln 1.2) stands.
	same := slices.Concat(
		inRound(0, 10, 12, 10, 0, 10, 18, 10, 11, 10, 13),
		inRound(1, 10, 12, 10, 0, 10, 18, 10, 11, 10, 13))
	lb := []float64{0, math.Log(1.2), 0, math.Log(1.2)}
	m := math.Log(1.2) / 2
	var ss float64
	for _, l := range lb {
		ss += (l - m) * (l - m)
	}
	hb := t975df3 * math.Sqrt(ss/3) / 2
	check("rounds that agree", same, 2, Ratio{Ratio: math.Exp(m), Lo: math.Exp(m - hb), Hi: math.Exp(m + hb), N: 4, Pairs: 10})

	// batches 0 is DefaultBatches (5): 12 pairs in one round make batches
	// of 3, 3, 2, 2, 2. Sums 3/3, 6/3, 4/2, 8/2, 2/2: logs 0, ln2, ln2,
	// 2ln2, 0; mean 0.8 ln2, Ratio 2^0.8 = 1.7411011266; sd ln2·sqrt(2.8/4),
	// h = t(.975,4)·sd/√5: [0.8474201662, 3.5772492252].
	twelve := inRound(0, 1, 1, 1, 1, 1, 1, 1, 2, 1, 2, 1, 2, 1, 1, 1, 3, 1, 4, 1, 4, 1, 1, 1, 1)
	check("default batches", twelve, 0, Ratio{
		Ratio: 1.7411011265922482, Lo: 0.8474201662219238, Hi: 3.577249225181785, N: 5, Pairs: 12})

	// Identical sides: a point at 1.
	check("A/A identical", inRound(0, 5, 5, 7, 7, 6, 6), 5, Ratio{Ratio: 1, Lo: 1, Hi: 1, N: 3, Pairs: 3})

	checkErr := func(name string, pairs []Pair, conf float64, batches int, want string) {
		t.Helper()
		got, err := PairedRatio(pairs, conf, batches)
		if err == nil || err.Error() != want || got != (Ratio{}) {
			t.Errorf("%s: PairedRatio = %+v, %v; want error %q", name, got, err, want)
		}
	}
	checkErr("none", nil, 0.95, 5, "need >= 2 paired observations, have 0")
	checkErr("one", logPairs(0.1), 0.95, 5, "need >= 2 paired observations, have 1")
	checkErr("one batch", twelve, 0.95, 1, "need >= 2 batches of paired observations, have 1 (of 12 pairs)")
	checkErr("empty baseline batch merged, one batch left", inRound(3, 1, 1, 0, 2), 0.95, 5,
		"need >= 2 batches of paired observations, have 1 (of 2 pairs)")
	checkErr("a round of nothing", inRound(3, 1, 0, 2, 0), 0.95, 5,
		"the candidate measured 0 in every slice of round 3 (for a rate: it answered nothing), so the round has no ratio")
	checkErr("a round of nothing on both sides", inRound(1, 1, 1, 1, 1, 0, 0, 0, 0), 0.95, 1,
		"need >= 2 batches of paired observations, have 1 (of 4 pairs)")
	checkErr("NaN candidate", inRound(0, 1, 1, 1, math.NaN()), 0.95, 5,
		"a paired observation is negative or not a number (candidate, round 0)")
	checkErr("infinite baseline", inRound(2, math.Inf(1), 1, 1, 1), 0.95, 5,
		"a paired observation is not a finite number (baseline, round 2)")
	checkErr("negative", inRound(1, 1, 1, -2, 1), 0.95, 5,
		"a paired observation is negative or not a number (baseline, round 1)")

	// A batch with nothing on one side is merged with the next of its
	// round: (1,2) (1,0) (1,1) (2,2) in 4 batches are ln2, then (1,0)
	// carried into (1,1) as (2,1): -ln2, then 0. Mean 0, sd ln2, h =
	// t(.975,2)·ln2/√3.
	// t(.975,2) = 0.95·√(2/0.0975) and t(.975,1) = tan(0.475π), in closed form.
	const t975df2, t975df1 = 4.302652729749461, 12.706204736174696
	h2 := t975df2 * math.Ln2 / math.Sqrt(3)
	check("empty batch merged with the next", inRound(0, 1, 2, 1, 0, 1, 1, 2, 2), 4,
		Ratio{Ratio: 1, Lo: math.Exp(-h2), Hi: math.Exp(h2), N: 3, Pairs: 4})
	// The last batch empty: merged with the one before. (1,2) (1,1) (1,0)
	// in 3 batches: ln2, then (1,1)+(1,0) = (2,1): -ln2. sd ln2·√2, h =
	// t(.975,1)·ln2.
	h1 := t975df1 * math.Ln2
	check("last batch merged with the one before", inRound(0, 1, 2, 1, 1, 1, 0), 3,
		Ratio{Ratio: 1, Lo: math.Exp(-h1), Hi: math.Exp(h1), N: 2, Pairs: 3})
	checkErr("confidence 1", logPairs(0.1, 0.2), 1, 5, "confidence 1 is not between 0 and 1")
}

var pairedSettings = Settings{Confidence: 0.95, TieWithin: 0.10, Rule: RulePaired}

func TestDecidePairedRule(t *testing.T) {
	t.Parallel()
	s5 := ci(100, 1) // summaries beside the pairs; the paired rule does not read them
	check := func(name string, m Metric, pairs []Pair, s Settings, want Verdict, reason string, resolution, rulesOut float64, unresolved, open bool) {
		t.Helper()
		d := DecidePaired(m, s5, s5, pairs, s)
		if d.Verdict != want || d.Reason != reason || !near(d.Resolution, resolution) || !near(d.RulesOut, rulesOut) ||
			d.Unresolved != unresolved || d.Open() != open || d.Rule != RulePaired || d.Confidence != 0.95 {
			t.Errorf("%s: %s %q resolution %v rules out %v unresolved %v open %v rule %s; want %s %q %v %v %v %v",
				name, d.Verdict, d.Reason, d.Resolution, d.RulesOut, d.Unresolved, d.Open(), d.Rule,
				want, reason, resolution, rulesOut, unresolved, open)
		}
		if want != Inconclusive && (d.Paired == nil || !near(d.Delta, d.Paired.Ratio-1)) {
			t.Errorf("%s: paired %+v, delta %v: want delta = ratio - 1", name, d.Paired, d.Delta)
		}
	}
	// Numbers by hand as in TestPairedRatio: mean ± t(.975,3)·sd/2 of the logs.
	// 0.1, -0.1, 0.2, 0: [0.856050, 1.291012] contains 1; it cannot rule out
	// a fall of 14.4% in rps: an unresolved tie, open.
	check("contains 1", RPS, logPairs(0.1, -0.1, 0.2, 0), pairedSettings, Tie,
		"ratio interval contains 1", 0.291011507782042, 0.14394959966365328, true, true)
	// The same interval of a latency: its regression side is the rise of
	// 29.1%.
	check("contains 1, latency", P95, logPairs(0.1, -0.1, 0.2, 0), pairedSettings, Tie,
		"ratio interval contains 1", 0.291011507782042, 0.291011507782042, true, true)
	// 0.3, 0, 0.15, 0.15: mean 0.15, sd 0.122474, h 0.194883, [0.956108,
	// 1.411826], ratio 1.161834: a tie that rules out any fall in rps
	// beyond 4.4%, resolved for the gate; it could still become an
	// improvement (+41.2% is not ruled out), which would not change the
	// gate, so it is settled: an adaptive design spends no round on it.
	check("rules out a regression, not an improvement", RPS, logPairs(0.3, 0, 0.15, 0.15), pairedSettings, Tie,
		"ratio interval contains 1", 0.411826476530718, 0.04389184505661636, false, false)
	// For a latency the same interval's regression side is +41.2%.
	check("a latency that may have risen", P99, logPairs(0.3, 0, 0.15, 0.15), pairedSettings, Tie,
		"ratio interval contains 1", 0.411826476530718, 0.411826476530718, true, true)
	// 0.04, 0.05, 0.04, 0.05: mean 0.045, sd 0.0057735, h 0.0091869,
	// [1.036462, 1.055682], ratio 1.046028: inside the band, resolved.
	check("inside the band", RPS, logPairs(0.04, 0.05, 0.04, 0.05), pairedSettings, Tie,
		"ratio 4.6% from 1 (< 10%)", 0.0556819235532269, 0, false, false)
	// -0.2, -0.1, -0.2, -0.1: mean -0.15, sd 0.057735, h 0.0918693,
	// [0.785159, 0.943527], ratio 0.860708: 13.9% lower; the interval's end
	// nearer 1 is 5.6% from it, inside the band: open.
	check("regression reaching the band", RPS, logPairs(-0.2, -0.1, -0.2, -0.1), pairedSettings, Regression,
		"candidate 13.9% lower, ratio interval 0.79–0.94", 1-0.7851587820298326, 1-0.7851587820298326, false, true)
	check("latency falls", P95, logPairs(-0.2, -0.1, -0.2, -0.1), pairedSettings, Improvement,
		"candidate 13.9% lower, ratio interval 0.79–0.94", 1-0.7851587820298326, 0, false, true)
	// -0.3, -0.25, -0.3, -0.25: mean -0.275, sd 0.0288675, h 0.0459347,
	// [0.725471, 0.795277], ratio 0.759572: wholly beyond the band, settled.
	check("regression beyond the band", RPS, logPairs(-0.3, -0.25, -0.3, -0.25), pairedSettings, Regression,
		"candidate 24.0% lower, ratio interval 0.73–0.80", 1-0.7254706547583603, 1-0.7254706547583603, false, false)
	// The mirror: [1.257424, 1.378416], ratio 1.316531.
	check("improvement beyond the band", RPS, logPairs(0.3, 0.25, 0.3, 0.25), pairedSettings, Improvement,
		"candidate 31.7% higher, ratio interval 1.26–1.38", 0.3784155064591552, 0, false, false)
	check("latency rises", P99, logPairs(0.3, 0.25, 0.3, 0.25), pairedSettings, Regression,
		"candidate 31.7% higher, ratio interval 1.26–1.38", 0.3784155064591552, 0.3784155064591552, false, false)
	// Band 0: 0.008, 0.009, 0.008, 0.009 give [1.007610, 1.009463], which
	// two decimals would print as 1.01–1.01.
	noBand := pairedSettings
	noBand.TieWithin = 0
	check("more digits", RPS, logPairs(0.008, 0.009, 0.008, 0.009), noBand, Improvement,
		"candidate 0.9% higher, ratio interval 1.008–1.009", 0.009463188592219, 0, false, false)
	// Identical sides: [1, 1], a resolved tie even with band 0.
	check("A/A identical, band 0", RPS, inRound(0, 5, 5, 7, 7), noBand, Tie,
		"ratio interval contains 1", 0, 0, false, false)

	// No ratio: inconclusive with the reason, resolution 0, open.
	check("one pair", RPS, logPairs(0.1), pairedSettings, Inconclusive,
		"need >= 2 paired observations, have 1", 0, 0, false, true)
	check("a round with nothing answered", RPS, inRound(0, 1, 1, 0, 1, 0, 1), pairedSettings, Inconclusive,
		"need >= 2 batches of paired observations, have 1 (of 3 pairs)", 0, 0, false, true)
	check("a side answered nothing", RPS, append(inRound(0, 0, 1, 0, 1), inRound(1, 1, 1, 1, 1)...), pairedSettings, Inconclusive,
		"the baseline measured 0 in every slice of round 0 (for a rate: it answered nothing), so the round has no ratio", 0, 0, false, true)
	if d := DecidePaired(RPS, ci(100, 1), Summary{}, nil, pairedSettings); d.Verdict != Inconclusive ||
		d.Reason != "measured by the baseline only (5 repetitions, none of the candidate)" || d.Paired != nil {
		t.Errorf("candidate missing: %+v", d)
	}
	// Invalid settings are inconclusive under either rule.
	bad := pairedSettings
	bad.Batches = -1
	if d := DecidePaired(RPS, s5, s5, logPairs(0.1, 0.2), bad); d.Verdict != Inconclusive || d.Reason != "batches -1 is negative" {
		t.Errorf("invalid settings: %s %q", d.Verdict, d.Reason)
	}
}

func TestDecidePairedRuleChoice(t *testing.T) {
	t.Parallel()
	pairs := logPairs(-0.3, -0.25, -0.3, -0.25)
	// Under overlap the ratio is carried for the Δ column's ±, and the
	// summaries decide: these overlap.
	d := DecidePaired(RPS, ci(100, 5), ci(103, 4), pairs, DefaultSettings)
	if d.Rule != RuleOverlap || d.Verdict != Tie || d.Paired == nil || !near(d.Paired.Ratio, 0.7595721232249685) ||
		!near(d.Delta, 0.03) || !near(d.Resolution, 0.12) {
		t.Errorf("overlap with pairs: %+v", d)
	}
	// Decide is the overlap rule, whatever the settings say.
	if d := Decide(RPS, ci(100, 5), ci(103, 4), pairedSettings); d.Rule != RuleOverlap || d.Verdict != Tie || d.Paired != nil {
		t.Errorf("Decide under paired settings: %+v", d)
	}
	// The error rate is never paired.
	d = DecidePaired(ErrorRate, ci(0.04, 0.001), ci(0.01, 0.001), pairs, pairedSettings)
	if d.Rule != RuleOverlap || d.Paired != nil || d.Verdict != Improvement ||
		d.Reason != "candidate 75.0% lower, intervals apart" {
		t.Errorf("error rate under paired settings: %+v", d)
	}
}

func TestOverlapResolution(t *testing.T) {
	t.Parallel()
	check := func(name string, m Metric, base, cand Summary, want Verdict, resolution, rulesOut float64, unresolved, open bool) {
		t.Helper()
		d := Decide(m, base, cand, DefaultSettings)
		if d.Verdict != want || !near(d.Resolution, resolution) || !near(d.RulesOut, rulesOut) || d.Unresolved != unresolved ||
			d.Open() != open || d.TieWithin != 0.10 || d.Confidence != 0.95 {
			t.Errorf("%s: %s %q resolution %v rules out %v unresolved %v open %v; want %s %v %v %v %v",
				name, d.Verdict, d.Reason, d.Resolution, d.RulesOut, d.Unresolved, d.Open(), want, resolution, rulesOut, unresolved, open)
		}
	}
	// Resolution (|mc-mb| + hb + hc) / |mb|; RulesOut the difference's
	// interval Δ ± (hb + hc)/|mb| at its worse end.
	// rps 103 against 100, ±9%: the interval -6%…+12% rules out any fall
	// beyond 6%, resolved for the gate, but not a rise of 12%: settled
	// for the gate all the same.
	check("wide overlap", RPS, ci(100, 5), ci(103, 4), Tie, (3+5+4)/100.0, (5+4-3)/100.0, false, false)
	check("wide overlap, candidate lower", RPS, ci(100, 5), ci(97, 4), Tie, (3+5+4)/100.0, (3+5+4)/100.0, true, true)
	check("wide overlap, latency higher", P95, ci(100, 5), ci(103, 4), Tie, (3+5+4)/100.0, (3+5+4)/100.0, true, true)
	check("narrow overlap", RPS, ci(100, 1), ci(103, 1), Tie, (3+1+1)/100.0, 0, false, false)
	check("inside the band", RPS, ci(100, 0.1), ci(105, 0.1), Tie, (5+0.2)/100, 0, false, false)
	check("exactly the band", RPS, ci(100, 4), ci(104, 2), Tie, 0.10, 0.02, false, false) // not above it
	// Nearest ends 94 and 85: 9% apart, inside the band: open.
	check("regression reaching the band", RPS, ci(100, 6), ci(80, 5), Regression, (20+6+5)/100.0, (20+6+5)/100.0, false, true)
	// 95 and 85: 10% apart, not inside: settled.
	check("regression at the band", RPS, ci(100, 5), ci(80, 5), Regression, (20+5+5)/100.0, (20+5+5)/100.0, false, false)
	check("regression beyond the band", RPS, ci(100, 2), ci(80, 2), Regression, (20+2+2)/100.0, (20+2+2)/100.0, false, false)
	check("improvement reaching the band", P95, ci(100, 6), ci(80, 5), Improvement, 0.31, 0, false, true)
	check("latency regression beyond", P95, ci(100, 2), ci(130, 2), Regression, 0.34, 0.34, false, false)
	// A zero baseline has no relative resolution and no band.
	check("zero baseline tie", ErrorRate, ci(0, 0), ci(0.001, 0.002), Tie, 0, 0, false, false)
	check("zero baseline apart", ErrorRate, ci(0, 0), ci(0.02, 0.005), Regression, 0, 0, false, false)
	check("too few", RPS, Summary{N: 1, Mean: 100}, ci(100, 1), Inconclusive, 0, 0, false, true)
	check("NaN", RPS, ci(100, 1), ci(math.NaN(), 1), Inconclusive, 0, 0, false, true)
	// Band 0: any width is unresolved, a point is not.
	zero := Settings{Confidence: 0.95}
	if d := Decide("allocs/op", ci(10, 0), ci(10, 0), zero); d.Verdict != Tie || d.Unresolved || d.Open() {
		t.Errorf("deterministic tie: %+v", d)
	}
	if d := Decide("allocs/op", ci(10, 0.1), ci(10, 0.1), zero); d.Verdict != Tie || !d.Unresolved || !d.Open() {
		t.Errorf("noisy tie at band 0: %+v", d)
	}
}

// TestConfidenceAt: a fixed design decides at its confidence; an adaptive
// one at its look's, by the rounds decided (rounds 3…8 of 8: the
// boundaries of TestSpendingLevels), fewer than the first look at the
// first's and more than the last at the last's.
func TestConfidenceAt(t *testing.T) {
	t.Parallel()
	check := func(s Settings, rounds int, want float64) {
		t.Helper()
		if got := s.ConfidenceAt(rounds); math.Abs(got-want) > 1e-5 {
			t.Errorf("%+v.ConfidenceAt(%d) = %.6f, want %.6f", s, rounds, got, want)
		}
	}
	check(Settings{Confidence: 0.95}, 3, 0.95)
	check(Settings{Confidence: 0.95, Looks: 1, MaxRounds: 5}, 3, 0.95)
	adaptive := Settings{Confidence: 0.95, Looks: 6, MaxRounds: 8}
	// 1 - 2(1 - Φ(c)) of the boundaries 3.2006 (t = 3/8: α(t) itself),
	// 2.8018, …, 2.1042.
	want := []float64{0.998629, 0.994918, 0.988878, 0.981361, 0.973111, 0.964643}
	for k, w := range want {
		check(adaptive, 3+k, w)
	}
	check(adaptive, 2, want[0])
	check(adaptive, 9, want[5])
	if got := adaptive.LookConfidences(); len(got) != 6 || math.Abs(got[5]-want[5]) > 1e-5 {
		t.Errorf("LookConfidences %v, want %v", got, want)
	}
	if got := adaptive.Effective(); got != adaptive.ConfidenceAt(8) {
		t.Errorf("Effective %v, want the last look's %v", got, adaptive.ConfidenceAt(8))
	}
	if got := (Settings{Confidence: 0.95, Looks: 4}).ConfidenceAt(3); got != 0.95 {
		t.Errorf("looks without max rounds: %v (Validate refuses them)", got)
	}

	// Compare makes every interval at the look's confidence. Three
	// samples have df 2, where t has a closed form: t_p = (2p-1)/sqrt(2p(1-p)).
	// A cell of 3 rounds is at the first look.
	s := Settings{Confidence: 0.95, TieWithin: 0.10, Looks: 6, MaxRounds: 8}
	p := 1 - (1-s.ConfidenceAt(3))/2
	tq := (2*p - 1) / math.Sqrt(2*p*(1-p))
	pairs := []Pair{{0, 1, 1.1}, {1, 2, 2}, {2, 3, 2.7}}
	in := CellInput{Key: kQ01c4,
		Baseline:  Side{Samples: map[Metric][]float64{RPS: {1, 2, 3}}},
		Candidate: Side{Samples: map[Metric][]float64{RPS: {1.1, 2, 2.7}}},
		Pairs:     map[Metric][]Pair{RPS: pairs}}
	for _, rule := range []DecisionRule{RuleOverlap, RulePaired} {
		s.Rule = rule
		d := Compare([]CellInput{in}, s, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: -1}).Cells[0].Decisions[0]
		want, _ := PairedRatio(pairs, s.ConfidenceAt(3), 5)
		// Base: mean 2, sd 1, hw = t·1/√3.
		if !near(d.Baseline.HalfWidth, tq/math.Sqrt(3)) || d.Confidence != s.ConfidenceAt(3) ||
			d.Paired == nil || *d.Paired != want || d.Rule != rule {
			t.Errorf("%s: hw %v (want %v), confidence %v, paired %+v (want %+v)",
				rule, d.Baseline.HalfWidth, tq/math.Sqrt(3), d.Confidence, d.Paired, want)
		}
	}
}

// unresolvedGrid: Q01 c=4 an unresolved rps tie (five(200, 5) vs five(205,
// 5): hw 9.816 each, resolution (5 + 19.632)/200 = 12.3%) beside an
// unresolved p95 tie no rule gates; Q01 c=8 a resolved tie.
func unresolvedGrid() []CellInput {
	wide := CellInput{Key: kQ01c4,
		Baseline:  Side{Samples: map[Metric][]float64{RPS: five(200, 5), P95: five(0.02, 0.001)}, Requests: 1000},
		Candidate: Side{Samples: map[Metric][]float64{RPS: five(195, 5), P95: five(0.0205, 0.001)}, Requests: 1000}}
	return []CellInput{wide, {Key: kQ01c8, Baseline: side(200, 0.02), Candidate: side(203, 0.02)}}
}

func TestCompareUnresolved(t *testing.T) {
	t.Parallel()
	rps := []Metric{RPS}
	unresolved := Failure{Key: kQ01c4, Metric: RPS, Kind: FailUnresolved,
		Reason: "tie, but the intervals cannot rule out a regression of up to 13% (band 10%)"}
	for _, c := range []struct {
		policy   Unresolved
		failures []Failure
		outcome  Outcome
	}{
		{"", []Failure{}, Pass},
		{UnresolvedWarn, []Failure{}, Pass},
		{UnresolvedPass, []Failure{}, Pass},
		{UnresolvedFail, []Failure{unresolved}, OutcomeUndecided},
	} {
		p := Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: -1, Unresolved: c.policy}
		cmp := Compare(unresolvedGrid(), DefaultSettings, p)
		checkComparison(t, "unresolved "+string(c.policy), cmp,
			[]cellWant{{rps, Tie}, {rps, Tie}}, Counts{Ties: 2, Unresolved: 1}, c.failures, c.outcome)
		if !reflect.DeepEqual(cmp.Unresolved, []Failure{unresolved}) ||
			!slices.Equal(cmp.Cells[0].Unresolved, rps) || cmp.Cells[1].Unresolved != nil {
			t.Errorf("policy %q: unresolved %+v, cells %v %v", c.policy, cmp.Unresolved, cmp.Cells[0].Unresolved, cmp.Cells[1].Unresolved)
		}
		if d, _ := cmp.Cells[0].Decision(P95); !d.Unresolved {
			t.Errorf("policy %q: the ungated p95 tie is not marked unresolved: %+v", c.policy, d)
		}
	}

	// Under fail, a regression still fails the gate.
	in := append(unresolvedGrid(), grid[1]) // Q01 c=8 of the grid regresses
	in[1].Key = kQ11c1
	cmp := Compare(in, DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: -1, Unresolved: UnresolvedFail})
	if cmp.Outcome != Fail || len(cmp.Failures) != 2 || cmp.Failures[0] != unresolved || cmp.Failures[1].Kind != FailRegression {
		t.Errorf("unresolved beside a regression: %s %+v", cmp.Outcome, cmp.Failures)
	}

	// The paired rule's reason speaks of one interval.
	pin := CellInput{Key: kQ01c4,
		Baseline:  Side{Samples: map[Metric][]float64{RPS: {100, 100, 100, 100}}},
		Candidate: Side{Samples: map[Metric][]float64{RPS: {110, 90, 122, 100}}},
		Pairs:     map[Metric][]Pair{RPS: logPairs(0.1, -0.1, 0.2, 0)}}
	cmp = Compare([]CellInput{pin}, pairedSettings, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: -1, Unresolved: UnresolvedFail})
	want := []Failure{{Key: kQ01c4, Metric: RPS, Kind: FailUnresolved,
		Reason: "tie, but the interval cannot rule out a regression of up to 15% (band 10%)"}}
	if cmp.Outcome != OutcomeUndecided || !reflect.DeepEqual(cmp.Failures, want) || !reflect.DeepEqual(cmp.Unresolved, want) {
		t.Errorf("paired unresolved: %s %+v %+v", cmp.Outcome, cmp.Failures, cmp.Unresolved)
	}

	// A tie that rules out a fall beyond 4.4% (its interval 0.956–1.412
	// reaches far only on the better side) passes under fail: it is not
	// unresolved for the gate.
	pin.Pairs[RPS] = logPairs(0.3, 0, 0.15, 0.15)
	cmp = Compare([]CellInput{pin}, pairedSettings, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: -1, Unresolved: UnresolvedFail})
	if cmp.Outcome != Pass || len(cmp.Failures) != 0 || len(cmp.Unresolved) != 0 || cmp.Counts.Unresolved != 0 {
		t.Errorf("tie that rules out a regression: %s %+v %+v", cmp.Outcome, cmp.Failures, cmp.Unresolved)
	}

	// Nothing unresolved: an empty list, not null.
	cmp = Compare(grid, DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: -1})
	if cmp.Unresolved == nil || len(cmp.Unresolved) != 0 || cmp.Counts.Unresolved != 0 {
		t.Errorf("grid: unresolved %#v, counts %+v", cmp.Unresolved, cmp.Counts)
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	// Cells: an unresolved tie (open), a resolved tie (settled), a
	// regression beyond the band (settled), a regression reaching into the
	// band (open: ±6 and ±5 around 100 and 80 have nearest ends 9% apart),
	// and an inconclusive one (open).
	reach := CellInput{Key: kQ02c8v,
		Baseline:  Side{Samples: map[Metric][]float64{RPS: five(100, 6/1.9632)}},
		Candidate: Side{Samples: map[Metric][]float64{RPS: five(80, 5/1.9632)}}}
	short := CellInput{Key: kQ05c16,
		Baseline:  Side{Samples: map[Metric][]float64{RPS: {100}}},
		Candidate: Side{Samples: map[Metric][]float64{RPS: {100}}}}
	in := append(unresolvedGrid(), grid[2], reach, short) // grid[2]: Q11 c=1, 100 → 80 ±1.96
	c := Compare(in, DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: -1})
	var verdicts []Verdict
	for _, cell := range c.Cells {
		verdicts = append(verdicts, cell.Verdict)
	}
	if want := []Verdict{Tie, Tie, Regression, Regression, Inconclusive}; !slices.Equal(verdicts, want) {
		t.Fatalf("verdicts %v, want %v", verdicts, want)
	}
	if got, want := c.OpenCells(), []CellKey{kQ01c4, kQ02c8v, kQ05c16}; !slices.Equal(got, want) {
		t.Errorf("OpenCells() = %v, want %v", got, want)
	}

	// Only gated metrics count: ungated, the same cells are all settled.
	c = Compare(in, DefaultSettings, Policy{MaxErrorRate: -1})
	if got := c.OpenCells(); got != nil {
		t.Errorf("nothing gated: OpenCells() = %v", got)
	}
	// A gated metric that was not measured is open.
	c = Compare(in[1:2], DefaultSettings, Policy{FailOn: []Rule{{Metric: P50}}, MaxErrorRate: -1})
	if !Open(c.Cells[0]) {
		t.Errorf("gated p50 not measured: settled")
	}
	// An error-rate failure neither opens nor settles a cell.
	errs := in[1]
	errs.Candidate.Errors = 100
	c = Compare([]CellInput{errs}, DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: 0.01})
	if c.Outcome != Fail || Open(c.Cells[0]) {
		t.Errorf("error-rate failure on a resolved tie: %s, open %v", c.Outcome, Open(c.Cells[0]))
	}
	errs = in[0]
	errs.Candidate.Errors = 100
	c = Compare([]CellInput{errs}, DefaultSettings, Policy{FailOn: []Rule{{Metric: RPS}}, MaxErrorRate: 0.01})
	if c.Outcome != Fail || !Open(c.Cells[0]) {
		t.Errorf("error-rate failure on an unresolved tie: %s, open %v", c.Outcome, Open(c.Cells[0]))
	}
}

// TestPairedZeroSide: under the paired rule a side that measured 0 in
// every pair (a Go benchmark that allocated nothing) has no ratio; the
// metric is decided by the two sides' intervals instead, and says so:
// 0 → 1 allocation a regression, 0 → 0 a tie.
func TestPairedZeroSide(t *testing.T) {
	t.Parallel()
	s := Settings{Confidence: 0.95, TieWithin: 0, Rule: RulePaired}
	pairs := func(base, cand float64) []Pair {
		var ps []Pair
		for r := range 5 {
			ps = append(ps, Pair{Round: r, Base: base, Cand: cand})
		}
		return ps
	}
	sum := func(v float64) Summary { return summarize([]float64{v, v, v, v, v}, 0.95, nil) }
	d := DecidePaired("allocs/op", sum(0), sum(1), pairs(0, 1), s)
	if d.Verdict != Regression || d.Rule != RuleOverlap || d.Paired != nil {
		t.Errorf("0 → 1: %s by %s, paired %v: %s", d.Verdict, d.Rule, d.Paired, d.Reason)
	}
	if d := DecidePaired("allocs/op", sum(0), sum(0), pairs(0, 0), s); d.Verdict != Tie || d.Rule != RuleOverlap {
		t.Errorf("0 → 0: %s by %s: %s", d.Verdict, d.Rule, d.Reason)
	}
	// A round of zeros on one side only is still no ratio: inconclusive.
	ps := pairs(1, 1)
	ps[0].Base = 0
	if d := DecidePaired(RPS, sum(1), sum(1), ps, s); d.Verdict != Inconclusive || d.Rule != RulePaired {
		t.Errorf("one round of zeros: %s by %s: %s", d.Verdict, d.Rule, d.Reason)
	}
}
