package report

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

// TestVerdictFixtures pins what the golden files of issue 12 rest on, so a
// change of the gate that moves a verdict shows here first.
func TestVerdictFixtures(t *testing.T) {
	t.Parallel()
	c := slicedInput(gate.UnresolvedWarn).Comparison
	want := map[string]struct {
		v          gate.Verdict
		unresolved bool
	}{
		"search": {gate.Regression, false}, "browse": {gate.Tie, false},
		"cart": {gate.Tie, true}, "checkout": {gate.Tie, true},
	}
	for _, cell := range c.Cells {
		d, _ := cell.Decision(gate.RPS)
		w := want[cell.Key.Class]
		if d.Rule != gate.RulePaired || d.Paired == nil || d.Paired.Pairs != 3*slicePairs {
			t.Errorf("%s: rule %q, paired %+v: want the paired rule over %d pairs", cell.Key.Class, d.Rule, d.Paired, 3*slicePairs)
		}
		if cell.Verdict != w.v || d.Unresolved != w.unresolved {
			t.Errorf("%s: %s, unresolved %v (resolution %.3f); want %s, %v", cell.Key.Class, cell.Verdict, d.Unresolved, d.Resolution, w.v, w.unresolved)
		}
	}
	if c.Outcome != gate.Fail || c.Counts.Unresolved != 2 {
		t.Errorf("outcome %s with %d unresolved cells, want fail with 2", c.Outcome, c.Counts.Unresolved)
	}

	in := adaptiveInput()
	for i, want := range []int{5, 3, 3} {
		if got := in.Results.RoundsOfCell(in.Results.Plan.Cells[i]); got != want {
			t.Errorf("%s: %d rounds, want %d", in.Results.Plan.Cells[i], got, want)
		}
	}
	if s := in.Comparison.Settings; s.Looks != 4 || s.MaxRounds != 6 {
		t.Errorf("looks %d up to round %d, want 4 up to 6", s.Looks, s.MaxRounds)
	}
	// Each cell is decided at its look's confidence: search after 5 rounds
	// (look 3), browse after 3 (look 1).
	s := in.Comparison.Settings
	for i, rounds := range []int{5, 3} {
		if d, _ := in.Comparison.Cells[i].Decision(gate.RPS); d.Confidence != s.ConfidenceAt(rounds) {
			t.Errorf("cell %d: confidence %v, want %v (%d rounds)", i, d.Confidence, s.ConfidenceAt(rounds), rounds)
		}
	}
	if d, _ := in.Comparison.Cells[0].Decision(gate.RPS); d.Baseline.N != 5 || d.Verdict != gate.Regression {
		t.Errorf("search rps: n=%d, %s; want 5 rounds and a regression", d.Baseline.N, d.Verdict)
	}
}

// withoutRegression is the sliced fixture less its regressing cell,
// decided by the gate as the whole is.
func withoutRegression(policy gate.Unresolved) Input {
	return slicedInputOf(policy, slicedCells()[1:])
}

func TestUnresolvedOutcomeLines(t *testing.T) {
	t.Parallel()
	title := func(in Input) string {
		t.Helper()
		md := markdown(t, in)
		return md[:strings.Index(md, "\n")]
	}
	term := func(in Input) string {
		t.Helper()
		return strings.SplitN(terminal(t, in), "\n", 2)[0]
	}
	const two = "2 gated cells could not rule out a 10% regression on this runner"
	for _, tc := range []struct {
		name      string
		in        Input
		title     string
		terminal  string
		outcome   gate.Outcome
		leads     bool
		failureOf string // the failure list's first line, "" for none
	}{
		{"warn", slicedInput(gate.UnresolvedWarn),
			"## benchgate: shop-api — ❌ 1 regression — " + two, "benchgate: shop-api — FAIL: 1 regression — " + two,
			gate.Fail, true, "- ❌ **rps regression** in search c=4"},
		{"fail with a regression", slicedInput(gate.UnresolvedFail),
			"## benchgate: shop-api — ❌ 1 regression — " + two, "benchgate: shop-api — FAIL: 1 regression — " + two,
			gate.Fail, true, "- ❌ **rps regression** in search c=4"},
		{"warn, ties only", withoutRegression(gate.UnresolvedWarn),
			"## benchgate: shop-api — ✅ no regression (3 ties) — " + two, "benchgate: shop-api — PASS: no regression (3 ties) — " + two,
			gate.Pass, true, ""},
		{"fail, ties only", withoutRegression(gate.UnresolvedFail),
			"## benchgate: shop-api — ⚠️ inconclusive: " + two, "benchgate: shop-api — INCONCLUSIVE: " + two,
			gate.OutcomeUndecided, true, ""},
		{"pass, ties only", withoutRegression(gate.UnresolvedPass),
			"## benchgate: shop-api — ✅ no regression (3 ties) — " + two, "benchgate: shop-api — PASS: no regression (3 ties) — " + two,
			gate.Pass, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.in.Comparison.Outcome != tc.outcome {
				t.Fatalf("fixture: outcome %s, want %s", tc.in.Comparison.Outcome, tc.outcome)
			}
			if got := title(tc.in); got != tc.title {
				t.Errorf("title %q\nwant  %q", got, tc.title)
			}
			if got := term(tc.in); got != tc.terminal {
				t.Errorf("terminal %q\nwant     %q", got, tc.terminal)
			}
			got := comment(t, tc.in, CommentOptions{Marker: testMarker})
			block := strings.Index(got, "> - rps in cart c=4: tie (rules out > 16%; band 10%)\n")
			counts := strings.Index(got, "\n4 cells: ")
			if tc.name != "warn" && tc.name != "fail with a regression" {
				counts = strings.Index(got, "\n3 cells: ")
			}
			if block < 0 || counts < 0 {
				t.Fatalf("comment lacks the unresolved tie or the counts:\n%s", got)
			}
			if tc.leads != (block < counts) {
				t.Errorf("the unresolved ties lead: %v, want %v:\n%s", block < counts, tc.leads, got)
			}
			if tc.failureOf != "" {
				if f := strings.Index(got, tc.failureOf); f < 0 || f < block {
					t.Errorf("the failures do not follow the unresolved ties:\n%s", got)
				}
			}
			// Under fail the ties are failures, listed once: in their own
			// list with their resolution, not again as failures.
			if strings.Contains(got, "**rps unresolved**") {
				t.Errorf("an unresolved tie listed twice:\n%s", got)
			}
			if js := jsonOf(t, tc.in); len(js.Unresolved) != 2 || js.Counts.Unresolved != 2 {
				t.Errorf("json: %d unresolved, count %d; want 2", len(js.Unresolved), js.Counts.Unresolved)
			}
		})
	}

	// Bands that differ are named as theirs.
	in := withoutRegression(gate.UnresolvedWarn)
	for i := range in.Comparison.Cells {
		c := &in.Comparison.Cells[i]
		for j := range c.Decisions {
			if c.Key.Class == "checkout" {
				c.Decisions[j].TieWithin = 0.05
			}
		}
	}
	if got := title(in); !strings.HasSuffix(got, "— 2 gated cells could not rule out a regression of their tie band on this runner") {
		t.Errorf("differing bands: %q", got)
	}
}

type jsonUnresolvedDoc struct {
	Counts     struct{ Unresolved int }
	Unresolved []struct {
		Metric     string
		Resolution float64
		RulesOut   float64 `json:"rules_out"`
	}
	Cells []struct {
		Rounds     int
		Unresolved []string
		Decisions  []struct {
			Metric     string
			Rule       string
			Confidence float64
			Resolution float64
			RulesOut   float64 `json:"rules_out"`
			Unresolved bool
			Paired     *struct {
				Ratio, Lo, Hi float64
				N, Pairs      int
			}
		}
		Resources *struct {
			Baseline struct{ Rungs int }
		}
		Latency *struct {
			Candidate struct{ Rungs int }
		}
	}
	Settings struct {
		Rule                string
		Looks               int
		LookConfidences     []float64 `json:"look_confidences"`
		EffectiveConfidence float64   `json:"effective_confidence"`
	}
	Rounds struct {
		Decided    int
		MaxPlanned int `json:"max_planned"`
	}
	Schedule struct {
		Interleave string
		SliceS     float64 `json:"slice_s"`
	}
}

func jsonOf(t *testing.T, in Input) jsonUnresolvedDoc {
	t.Helper()
	var b strings.Builder
	if err := JSON(&b, in); err != nil {
		t.Fatal(err)
	}
	var doc jsonUnresolvedDoc
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestVerdictJSON: the gate's fields reach the document.
func TestVerdictJSON(t *testing.T) {
	t.Parallel()
	doc := jsonOf(t, slicedInput(gate.UnresolvedWarn))
	if doc.Settings.Rule != "paired" || doc.Schedule.Interleave != "slice" || doc.Schedule.SliceS != sliceSeconds {
		t.Errorf("settings %+v, schedule %+v", doc.Settings, doc.Schedule)
	}
	cart := doc.Cells[2]
	d := cart.Decisions[0]
	if d.Metric != "rps" || d.Rule != "paired" || d.Confidence != 0.95 || !d.Unresolved || d.Paired == nil ||
		d.Paired.N != 15 || d.Paired.Pairs != 30 || len(cart.Unresolved) != 1 {
		t.Errorf("cart rps decision %+v, unresolved %v", d, cart.Unresolved)
	}
	if doc.Unresolved[0].Resolution != d.Resolution || doc.Unresolved[0].RulesOut != d.RulesOut ||
		d.RulesOut <= 0.10 || d.RulesOut > d.Resolution {
		t.Errorf("unresolved list resolution %v rules out %v, decision's %v %v",
			doc.Unresolved[0].Resolution, doc.Unresolved[0].RulesOut, d.Resolution, d.RulesOut)
	}

	doc = jsonOf(t, adaptiveInput())
	if doc.Rounds.Decided != 3 || doc.Rounds.MaxPlanned != 6 || doc.Settings.Looks != 4 || len(doc.Settings.LookConfidences) != 4 ||
		doc.Settings.EffectiveConfidence != doc.Settings.LookConfidences[3] {
		t.Errorf("rounds %+v, settings %+v", doc.Rounds, doc.Settings)
	}
	for i, want := range []int{5, 3, 3} {
		c := doc.Cells[i]
		if c.Rounds != want || c.Resources == nil || c.Resources.Baseline.Rungs != want || c.Latency == nil || c.Latency.Candidate.Rungs != want {
			t.Errorf("cell %d: rounds %d, resources %+v, latency %+v; want %d each", i, c.Rounds, c.Resources, c.Latency, want)
		}
	}
}

// TestAdaptiveCounts: every table counts the rounds each cell's verdict
// rests on: search's failed requests happened in its adaptive rounds only.
func TestAdaptiveCounts(t *testing.T) {
	t.Parallel()
	in := adaptiveInput()
	md := markdown(t, in)
	for _, want := range []string{
		" · 3 cells × 3–5 rounds · adaptive rounds 3–6 · 99.44%–96.24% intervals by look (95% over 4 looks, O'Brien–Fleming), tie within 10%\n",
		"| class | c | rounds | baseline rps |",
		"| search | 4 | 5 | ",
		"| browse | 4 | 3 | ",
		"| search c=4 | candidate | 21269 | 4 (0.019%) | timeout ×4 |",
		"The error rate 5% is spent over the 4 looks by O'Brien–Fleming-type (Lan–DeMets) spending",
		"a cell's intervals are at the confidence of its look, 99.44% after round 3, 98.56% after 4, 97.43% after 5, 96.24% after 6,",
		"3 repetitions planned (up to 6 where a verdict was open), 3–5 complete rounds decided",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "not counted") {
		t.Errorf("adaptive rounds read as incomplete ones:\n%s", md)
	}

	// Cancelled in an adaptive round, after one side only: that rung is
	// not counted, and says so.
	res := *in.Results
	res.Rungs = append([]benchdata.Rung(nil), res.Rungs...)
	last := res.Rungs[len(res.Rungs)-1]
	last.Round = 5
	last.Errors = map[string]int64{"reset": 9}
	res.Rungs = append(res.Rungs, last)
	res.Status = "cancelled"
	md = markdown(t, Input{Results: &res, Comparison: in.Comparison})
	if !strings.Contains(md, "1 rung of the incomplete round not counted") || strings.Contains(md, "reset ×9") {
		t.Errorf("a rung of an unfinished adaptive round was counted:\n%s", md)
	}
	if !strings.Contains(md, "decided on 3–5 complete rounds of 3 planned") {
		t.Errorf("status does not give the range:\n%s", md)
	}
}

// TestCommentUnresolvedBudget: at every budget from the least that can
// hold it to more than the whole comment, the comment keeps its
// invariants, leads with the unresolved ties, and keeps what they mean and
// what to do; the failures give way first.
func TestCommentUnresolvedBudget(t *testing.T) {
	t.Parallel()
	for name, input := range map[string]func() Input{
		"warn": func() Input { return slicedInput(gate.UnresolvedWarn) },
		"fail": func() Input { return slicedInput(gate.UnresolvedFail) },
		"pass": func() Input { return withoutRegression(gate.UnresolvedPass) },
	} {
		t.Run(name, func(t *testing.T) {
			m := newModel(input())
			head := m.unresolvedHead(true)
			advice := m.adviceText(true)
			whole := utf8.RuneCountInString(comment(t, input(), CommentOptions{Marker: testMarker}))
			worked := false
			var cutFailures, cutTies bool
			for limit := 300; limit <= whole+10; limit += 7 {
				opt := CommentOptions{Marker: testMarker, MaxRunes: limit}
				var b strings.Builder
				if err := Comment(&b, input(), opt); err != nil {
					if worked {
						t.Errorf("MaxRunes %d fails after a smaller budget worked: %v", limit, err)
					}
					continue
				}
				worked = true
				got := b.String()
				checkComment(t, got, opt)
				if !strings.Contains(got, head) || !strings.Contains(got, advice) {
					t.Errorf("MaxRunes %d: the unresolved ties lost their head or advice:\n%s", limit, got)
				}
				ties := strings.Count(got, "> - rps in ")
				more := regexp.MustCompile(`> - … and (\d+) more\n`).FindStringSubmatch(got)
				cutFailures = cutFailures || ties == 2 && strings.Contains(got, "\n- … and ")
				cutTies = cutTies || more != nil
				switch {
				case ties == 2 && more == nil:
				case more != nil && ties+atoi(more[1]) == 2:
					// The list of ties was cut: the failures went first.
					if strings.Contains(got, "- ❌ **rps regression**") {
						t.Errorf("MaxRunes %d: the ties were cut before the failures:\n%s", limit, got)
					}
				default:
					t.Errorf("MaxRunes %d: %d ties listed, more %v:\n%s", limit, ties, more, got)
				}
			}
			if !worked {
				t.Fatal("no budget worked")
			}
			if name == "warn" && !(cutFailures && cutTies) {
				t.Errorf("budgets cut the failures: %v, the ties: %v; want both seen", cutFailures, cutTies)
			}
		})
	}
}

func atoi(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + int(r-'0')
	}
	return n
}

// TestUnresolvedSummary: the job summary is the markdown report, and when
// cut its note follows the unresolved ties, which stay.
func TestUnresolvedSummary(t *testing.T) {
	t.Parallel()
	in := slicedInput(gate.UnresolvedWarn)
	full := markdown(t, in)
	if got := jobSummary(t, in, SummaryOptions{}); got != full {
		t.Error("summary differs from the markdown report")
	}
	got := jobSummary(t, in, SummaryOptions{MaxBytes: len(full) - 1})
	block := strings.Index(got, "> ⚠️ **2 gated cells could not rule out")
	note := strings.Index(got, "> ✂️ **Shortened**")
	failures := strings.Index(got, "- ❌ **rps regression**")
	if block < 0 || note < 0 || failures < 0 || !(block < failures && failures < note) {
		t.Errorf("cut summary: ties at %d, failures at %d, note at %d:\n%s", block, failures, note, got)
	}
}

func TestDeltaText(t *testing.T) {
	t.Parallel()
	// paired is a decision made on its paired ratio: Delta is the
	// ratio's change.
	paired := func(r, lo, hi float64) gate.Decision {
		return gate.Decision{Rule: gate.RulePaired, Delta: r - 1, Paired: &gate.Ratio{Ratio: r, Lo: lo, Hi: hi}}
	}
	for _, tc := range []struct {
		d    gate.Decision
		want string
	}{
		{paired(0.8333, 0.8123, 0.8540), "-16.7% [-18.8%, -14.6%]"},
		// A lopsided interval as it is: a ± of its wider side (33.9%)
		// would read as reaching below 0 beside a regression.
		{paired(1.282, 1.014, 1.621), "+28.2% [+1.4%, +62.1%]"},
		{paired(1.02, 0.95, 1.12), "+2.0% [-5.0%, +12.0%]"},
		// Decided by the overlap rule, the change the decision was made
		// on, the means', which its reason gives: the pairs' ratio
		// (-12.0%) is another figure for the same change.
		{gate.Decision{Rule: gate.RuleOverlap, Baseline: sum(3, 100, 1), Candidate: sum(3, 90, 1), Delta: -0.1,
			Paired: &gate.Ratio{Ratio: 0.88, Lo: 0.86, Hi: 0.90}}, "-10.0%"},
		{gate.Decision{Baseline: sum(3, 100, 1), Candidate: sum(3, 90, 1), Delta: -0.1}, "-10.0%"},
		{gate.Decision{Baseline: sum(0, 0, 0), Candidate: sum(3, 90, 1)}, dash},
	} {
		if got := deltaText(tc.d); got != tc.want {
			t.Errorf("deltaText(%+v) = %q, want %q", tc.d.Paired, got, tc.want)
		}
	}
}

func TestResolutionText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		r    float64
		want string
	}{
		{0.31, "31%"}, {0.3012, "31%"}, {0.30, "30%"}, {0.1001, "11%"}, {0.0512, "5.2%"},
		{0.05, "5.0%"}, {0.0999, "10.0%"}, {2.5, "250%"},
	} {
		if got := resolutionText(tc.r); got != tc.want {
			t.Errorf("resolutionText(%v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}

func TestVerdictWordsUnresolved(t *testing.T) {
	t.Parallel()
	unresolved := func(m gate.Metric, r float64) gate.Decision {
		return gate.Decision{Metric: m, Verdict: gate.Tie, Unresolved: true, Resolution: r + 0.2, RulesOut: r}
	}
	for _, tc := range []struct {
		r        row
		md, term string
	}{
		{row{verdict: gate.Tie, own: gate.RPS, unresolved: []gate.Decision{unresolved(gate.RPS, 0.304)}},
			"tie (rules out > 31%)", "tie (rules out > 31%)"},
		{row{verdict: gate.Tie, own: gate.RPS, unresolved: []gate.Decision{unresolved(gate.P95, 0.12), unresolved("my_unit", 0.4)}},
			`tie (rules out > 12% in p95, > 40% in my\_unit)`, "tie (rules out > 12% in p95, > 40% in my_unit)"},
		// A resolved tie stays a tie.
		{row{verdict: gate.Tie, own: gate.RPS}, "tie", "tie"},
	} {
		if got := verdictText(tc.r, true); got != tc.md {
			t.Errorf("markdown %q, want %q", got, tc.md)
		}
		if got := verdictText(tc.r, false); got != tc.term {
			t.Errorf("terminal %q, want %q", got, tc.term)
		}
	}
}

// TestUnresolvedHostileNames: a class name in the list of ties is escaped
// with each medium's one escaper.
func TestUnresolvedHostileNames(t *testing.T) {
	t.Parallel()
	in := slicedInput(gate.UnresolvedWarn)
	hostile := "</details>@team|`x`\x1b[31m"
	for i := range in.Comparison.Cells {
		if in.Comparison.Cells[i].Key.Class == "cart" {
			in.Comparison.Cells[i].Key.Class = hostile
		}
	}
	got := comment(t, in, CommentOptions{})
	if !strings.Contains(got, "> - rps in "+EscapeMarkdown(hostile)+" c=4: tie (rules out > 16%; band 10%)\n") {
		t.Errorf("hostile class not escaped in the list:\n%s", got)
	}
	for _, bad := range []string{"</details>@", "@team", "\x1b"} {
		if strings.Contains(got, bad) {
			t.Errorf("comment holds %q", bad)
		}
	}
	if term := terminal(t, in); strings.ContainsRune(term, '\x1b') || !strings.Contains(term, "    rps in "+cleanTerminal(hostile)+" c=4: ") {
		t.Errorf("terminal list not escaped:\n%s", term)
	}
}
