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

func terminal(t *testing.T, in Input) string {
	t.Helper()
	var b strings.Builder
	if err := Terminal(&b, in, TerminalOptions{}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// codeElements are the <code> elements of a markdown text.
var codeElements = regexp.MustCompile(`<code>(.*?)</code>`)

// checkCorrectnessMarkdown checks what must hold of any markdown holding
// correctnessInput's findings: the hostile excerpt and the long last line
// shown escaped and cut, never raw.
func checkCorrectnessMarkdown(t *testing.T, what, got string) {
	t.Helper()
	for _, bad := range []string{"<script", "</script", "<b>", "@team", "END</code>"} {
		if strings.Contains(got, bad) {
			t.Errorf("%s contains %q:\n%s", what, bad, got)
		}
	}
	for _, m := range codeElements.FindAllStringSubmatch(got, -1) {
		if strings.ContainsAny(m[1], "`|<>*\n") {
			t.Errorf("%s: a <code> element holds a raw markup character: %q", what, m[0])
		}
	}
	if n, want := strings.Count(got, "<code>"), strings.Count(got, "</code>"); n != want {
		t.Errorf("%s: %d <code> opened, %d closed", what, n, want)
	}
}

func TestCorrectnessMarkdown(t *testing.T) {
	t.Parallel()
	got := markdown(t, correctnessInput())
	checkCorrectnessMarkdown(t, "markdown", got)
	for _, want := range []string{
		// Failures of the correctness checks, first, in words.
		"- ❌ **agreement**: class mix (variant csv) answers differ at request 3 (GET /search?q=&lt;b&gt;x&lt;/b&gt;&amp;fmt=csv): " +
			"\\$.items\\[0\\].price: 12 vs 13\n" +
			"- ❌ **pre-flight** conformance fails on the candidate (exit 1: FAIL /search?q=&lt;b&gt;x&lt;/b&gt;: response does not match",
		// A reason quoting a long line is cut in its middle, so it keeps
		// its end.
		"expected number, got s…r, got string; expected number, got string; END) and passes on the baseline\n- ❌ **rps regression**",
		// The correctness checks after the failures, before the tables.
		"\n\n### Correctness\n\n| target | conformance | lint |\n| --- | --- | --- |\n| baseline | PASS | PASS |\n" +
			"| candidate | **FAIL** (exit 1) | PASS |\n",
		// The last line, escaped and cut at 160 runes.
		"  - candidate: <code>FAIL /search?q=&#60;b&#62;x&#60;/b&#62;: response does not match the schema &#96;#&#8203;/items&#96; &#124; expected number",
		"got string; e…</code> (whole output in <code>gates/conformance-candidate.log</code>)\n",
		"\nAgreement check: 2 classes agree, 2 disagree, over 5 requests each.\n\n",
		"- ❌ **mix (variant csv)** answers differently, fails the gate: request 3, " +
			"<code>GET /search?q=&#60;b&#62;x&#60;/b&#62;&#38;fmt=csv</code> (json) — \\$.items\\[0\\].price: 12 vs 13\n" +
			"  - baseline: <code>{\"price\": 12, \"note\": \"&#60;script&#62;&#96;&#124;&#42;&#60;/script&#62; @&#8203;team\"}</code>\n" +
			"  - candidate: <code>{\"price\": 13, \"note\": \"ok\"}</code>\n",
		// Statuses only where they differ; a warning does not fail.
		"- ⚠️ **mix (variant json)** answers differently, warning only: request 1, <code>POST /mix</code> (text) — status 200 vs 500\n" +
			"  - baseline (status 200): <code>ok</code>\n" +
			"  - candidate (status 500): <code>internal error &#96;&#96;&#96;  &#91;31mpanic</code>\n",
		"Absent classes, left out of the grid by a correctness check:\n\n- **export** — pre-flight conformance failed on candidate\n\n### csv\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks\n%s\n---\n%s", want, got)
		}
	}
	if i, j := strings.Index(got, "### Correctness"), strings.Index(got, "### csv"); i < 0 || j < i {
		t.Error("the correctness checks do not come before the tables")
	}
}

func TestCorrectnessTerminal(t *testing.T) {
	t.Parallel()
	got := terminal(t, correctnessInput())
	if strings.ContainsRune(got, '\x1b') {
		t.Errorf("an escape sequence from a body reached the terminal:\n%q", got)
	}
	for _, want := range []string{
		"\ncorrectness\n  pre-flight conformance: baseline PASS, candidate FAIL (exit 1)\n" +
			"    candidate: FAIL /search?q=<b>x</b>: response does not match the schema `#/items` | expected number",
		"expected number, got string; e…\n  pre-flight lint: baseline PASS, candidate PASS\n",
		"  Agreement check: 2 classes agree, 2 disagree, over 5 requests each.\n" +
			"    DISAGREES mix (variant csv), fails the gate: request 3 GET /search?q=<b>x</b>&fmt=csv: $.items[0].price: 12 vs 13\n" +
			"      baseline:  {\"price\": 12, \"note\": \"<script>`|*</script> @team\"}\n" +
			"      candidate: {\"price\": 13, \"note\": \"ok\"}\n",
		"      candidate (status 500): internal error\\n```\\n\\x1b[31mpanic\n",
		"  absent: export (pre-flight conformance failed on candidate)\n\ncsv\n",
		"\nfailures:\n  agreement: class mix (variant csv) answers differ at request 3 (GET /search?q=<b>x</b>&fmt=csv): $.items[0].price: 12 vs 13\n" +
			"  pre-flight conformance fails on the candidate (exit 1: FAIL /search?q=<b>x</b>: response",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("terminal lacks\n%s\n---\n%s", want, got)
		}
	}
	if checks, _, _ := strings.Cut(got, "\ncsv\n"); strings.Contains(checks, "END") || strings.Contains(got, "c=0") {
		t.Errorf("terminal shows the uncut line or a correctness failure as a cell:\n%s", got)
	}
}

func TestAgreementLine(t *testing.T) {
	t.Parallel()
	class := func(agree bool, requests int) benchdata.ClassAgreement {
		return benchdata.ClassAgreement{Class: "c", Agree: agree, Requests: requests}
	}
	for _, tc := range []struct {
		classes []benchdata.ClassAgreement
		want    string
	}{
		{[]benchdata.ClassAgreement{class(true, 5), class(true, 5)}, "Agreement check: 2 classes agree, none disagree, over 5 requests each."},
		{[]benchdata.ClassAgreement{class(true, 1)}, "Agreement check: 1 class agrees, none disagree, over 1 request each."},
		{[]benchdata.ClassAgreement{class(true, 5), class(false, 3)}, "Agreement check: 1 class agrees, 1 disagrees."},
		{[]benchdata.ClassAgreement{class(false, 5), class(false, 5), class(true, 5)}, "Agreement check: 1 class agrees, 2 disagree, over 5 requests each."},
		{[]benchdata.ClassAgreement{class(false, 2), class(false, 2)}, "Agreement check: 0 classes agree, 2 disagree, over 2 requests each."},
		{nil, "Agreement check: no class was probed."},
	} {
		if got := agreementLine(&benchdata.AgreementResult{Classes: tc.classes}, requestNoun); got != tc.want {
			t.Errorf("agreementLine = %q, want %q", got, tc.want)
		}
	}
}

func TestPreflightStatus(t *testing.T) {
	t.Parallel()
	id := func(s string) string { return s }
	for _, tc := range []struct {
		p    benchdata.PreflightResult
		want string
	}{
		{benchdata.PreflightResult{Pass: true}, "PASS"},
		{benchdata.PreflightResult{ExitCode: 1}, "FAIL (exit 1)"},
		{benchdata.PreflightResult{ExitCode: -1, Error: "timed out after 1m0s"}, "FAIL (timed out after 1m0s)"},
		{benchdata.PreflightResult{ExitCode: -1}, "FAIL"},
	} {
		if got := preflightStatus(tc.p, id, id); got != tc.want {
			t.Errorf("preflightStatus(%+v) = %q, want %q", tc.p, got, tc.want)
		}
	}
	if got := preflightStatus(benchdata.PreflightResult{ExitCode: -1, Error: "exec: \"|x\": not found"}, md,
		func(s string) string { return "**" + s + "**" }); got != `**FAIL** (exec: "\|x": not found)` {
		t.Errorf("markdown status = %q", got)
	}
}

// TestCorrectnessFailureText: the correctness checks' failures read as
// what they are, not as a cell at c=0 with an empty metric.
func TestCorrectnessFailureText(t *testing.T) {
	t.Parallel()
	agreement := failureItem{f: gate.Failure{Key: gate.CellKey{Variant: "csv", Class: "a|b"}, Kind: gate.FailAgreement,
		Reason: "$.items[0].price: 12 vs 13"}}
	noVariant := failureItem{f: gate.Failure{Key: gate.CellKey{Class: "search"}, Kind: gate.FailAgreement}}
	preflight := failureItem{f: gate.Failure{Kind: gate.FailPreflight, Reason: "conformance: candidate FAIL, baseline PASS: " + strings.Repeat("x", 400)}}
	// As decide words them.
	worded := failureItem{f: gate.Failure{Key: gate.CellKey{Variant: "csv", Class: "S"}, Kind: gate.FailAgreement,
		Reason: "answers differ at request 3 (GET /s?q=1): $.n: 1 vs 2"}}
	wordedPreflight := failureItem{f: gate.Failure{Kind: gate.FailPreflight,
		Reason: "pre-flight broke fails on the candidate (exit 2: broke said so) and passes on the baseline"}}
	for _, tc := range []struct {
		it       failureItem
		markdown bool
		want     string
	}{
		{agreement, true, `❌ **agreement**: class a\|b (variant csv) answers differently: \$.items\[0\].price: 12 vs 13`},
		{agreement, false, "agreement: class a|b (variant csv) answers differently: $.items[0].price: 12 vs 13"},
		{noVariant, false, "agreement: class search answers differently"},
		{preflight, false, "pre-flight check failed: conformance: candidate FAIL, baseline PASS: " + strings.Repeat("x", 225-44) + "…" + strings.Repeat("x", 75)},
		{worded, true, `❌ **agreement**: class S (variant csv) answers differ at request 3 (GET /s?q=1): \$.n: 1 vs 2`},
		{worded, false, "agreement: class S (variant csv) answers differ at request 3 (GET /s?q=1): $.n: 1 vs 2"},
		{wordedPreflight, true, "❌ **pre-flight** broke fails on the candidate (exit 2: broke said so) and passes on the baseline"},
	} {
		if got := failureText(tc.it, tc.markdown); got != tc.want {
			t.Errorf("failureText = %q\nwant %q", got, tc.want)
		}
	}
}

// TestCorrectnessNone: without correctness checks, or with checks that
// found nothing, no report says a word about them.
func TestCorrectnessNone(t *testing.T) {
	t.Parallel()
	empty := fullInput()
	empty.Results.Correctness = &benchdata.Correctness{}
	for _, in := range []Input{fullInput(), empty} {
		if got := markdown(t, in); strings.Contains(got, "Correctness") || strings.Contains(got, "Agreement") || strings.Contains(got, "Absent") {
			t.Errorf("markdown without correctness checks mentions them:\n%s", got)
		}
		if got := comment(t, in, CommentOptions{}); strings.Contains(got, "Correctness") || strings.Contains(got, "pre-flight") {
			t.Errorf("comment without correctness checks mentions them:\n%s", got)
		}
		if got := terminal(t, in); strings.Contains(got, "correctness") {
			t.Errorf("terminal without correctness checks mentions them:\n%s", got)
		}
		var b strings.Builder
		if err := JSON(&b, in); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(b.String(), `"correctness"`) || strings.Contains(b.String(), `"gates"`) {
			t.Error("JSON without correctness checks has a correctness object")
		}
	}
}

func TestCorrectnessJSON(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := JSON(&b, correctnessInput()); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "<script>") {
		t.Error("JSON holds a raw <script>: encoding/json escapes it")
	}
	var doc struct {
		Version     int
		Correctness struct {
			Preflight []struct {
				Name, Target string
				LastLine     string `json:"last_line"`
				Pass         bool
				ExitCode     int `json:"exit_code"`
			}
			Agreement struct {
				Agree, Disagree int
				Classes         []struct {
					Class, Variant, Mode string
					Agree                bool
					First                *struct {
						Index                     int
						Baseline, Candidate, Path string
						CandidateStatus           int `json:"candidate_status"`
					}
				}
			}
			Absent []struct{ Class, Reason string }
		}
		Failures []struct {
			Kind string
			Cell struct{ Class, Variant string }
		}
		Cells []struct {
			Cell    struct{ Class, Variant string }
			Latency *struct {
				Baseline, Candidate *struct {
					Rungs       int
					Count       int64
					Min, Max    float64
					Percentiles map[string]float64
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(b.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Version != 2 || strings.Contains(b.String(), `"gates"`) {
		t.Errorf("version %d, or a gates key: the document's version 2 names them correctness", doc.Version)
	}
	g := doc.Correctness
	if len(g.Preflight) != 4 || g.Preflight[2].Name != "conformance" || g.Preflight[2].Pass || g.Preflight[2].ExitCode != 1 ||
		g.Preflight[2].LastLine != longLastLine {
		t.Errorf("preflight %+v", g.Preflight)
	}
	a := g.Agreement
	if a.Agree != 2 || a.Disagree != 2 || len(a.Classes) != 4 || a.Classes[0].First != nil ||
		a.Classes[1].First == nil || a.Classes[1].First.Baseline != hostileExcerpt || a.Classes[1].First.Index != 2 ||
		a.Classes[3].Mode != "warn" || a.Classes[3].First.CandidateStatus != 500 {
		t.Errorf("agreement %+v", a)
	}
	if len(g.Absent) != 1 || g.Absent[0].Class != "export" {
		t.Errorf("absent %+v", g.Absent)
	}
	if len(doc.Failures) < 2 || doc.Failures[0].Kind != "agreement" || doc.Failures[0].Cell.Class != "mix" || doc.Failures[1].Kind != "preflight" {
		t.Errorf("failures %+v", doc.Failures)
	}
	lat := doc.Cells[1].Latency
	if lat == nil || lat.Baseline == nil || lat.Candidate == nil {
		t.Fatalf("csv Q01 c=8 has no latency: %+v", doc.Cells[1])
	}
	if lat.Baseline.Rungs != 3 || lat.Baseline.Count != 1200 {
		t.Errorf("baseline latency over %d rungs, %d requests", lat.Baseline.Rungs, lat.Baseline.Count)
	}
	// Seconds: the baseline's median is 4 ms by construction.
	if p := lat.Baseline.Percentiles["p50"]; p < 0.0039 || p > 0.0041 {
		t.Errorf("baseline p50 = %v s", p)
	}
	if len(lat.Candidate.Percentiles) != 8 || lat.Candidate.Percentiles["p99.9"] < lat.Candidate.Percentiles["p99"] {
		t.Errorf("candidate percentiles %v", lat.Candidate.Percentiles)
	}
	if doc.Cells[2].Latency != nil {
		t.Errorf("a cell without histograms has latency: %+v", doc.Cells[2].Latency)
	}
}

// TestCorrectnessComment: the correctness checks' findings are above the
// fold; as the budget shrinks the latency goes first, then the fold, then
// the checks' details, and the failures still name the disagreement.
func TestCorrectnessComment(t *testing.T) {
	t.Parallel()
	// One input for every rendering: Comment does not change it, and
	// encoding its histograms is the slow part.
	input := correctnessInput()
	in := func() Input { return input }
	whole := comment(t, in(), CommentOptions{Marker: testMarker})
	checkCorrectnessMarkdown(t, "comment", whole)
	head, fold, ok := strings.Cut(whole, "<details><summary>Full report: 5 cells, pre-flight, tables, latency, errors, environment</summary>")
	if !ok {
		t.Fatalf("no fold:\n%s", whole)
	}
	disagreement := "- ❌ **mix (variant csv)** answers differently, fails the gate: request 3"
	for _, want := range []string{
		"- ❌ **pre-flight** conformance fails on the candidate (exit 1: FAIL /search?q=",
		"Agreement check: 2 classes agree, 2 disagree, over 5 requests each.",
		disagreement,
		"- **export** — pre-flight conformance failed on candidate",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("comment head lacks %q:\n%s", want, head)
		}
	}
	if !strings.Contains(fold, "### Correctness\n\n| target | conformance | lint |") || strings.Contains(fold, "Agreement check") {
		t.Errorf("the fold should hold the pre-flight table and only that of the correctness checks:\n%s", fold)
	}
	if !strings.Contains(fold, "### Latency distribution") {
		t.Error("the fold has no latency")
	}

	n := utf8.RuneCountInString(whole)
	noLatency := comment(t, in(), CommentOptions{Marker: testMarker, MaxRunes: n - 1})
	if strings.Contains(noLatency, "Latency distribution") || !strings.Contains(noLatency, "<details><summary>Full report: 5 cells, pre-flight, tables, errors, environment</summary>") ||
		!strings.Contains(noLatency, "### Correctness") {
		t.Errorf("one rune short, the latency should leave the fold, and only it:\n%s", noLatency)
	}
	const failure = "- ❌ **agreement**: class mix (variant csv) answers differ at request 3"
	shown := map[string]bool{}
	for limit := 300; limit <= n; limit += 37 {
		opt := CommentOptions{Marker: testMarker, MaxRunes: limit}
		var b strings.Builder
		if err := Comment(&b, in(), opt); err != nil {
			continue
		}
		got := b.String()
		checkComment(t, got, opt)
		checkCorrectnessMarkdown(t, "comment", got)
		switch {
		case strings.Contains(got, disagreement):
			shown["disagreement"] = true
		case strings.Contains(got, failure):
			shown["failure"] = true
		default:
			if limit > 1200 {
				t.Errorf("MaxRunes %d: the disagreement is not shown:\n%s", limit, got)
			}
		}
		if strings.Contains(got, disagreement) && !strings.Contains(got, "<details>") {
			shown["disagreement without fold"] = true
		}
	}
	for _, k := range []string{"disagreement", "failure", "disagreement without fold"} {
		if !shown[k] {
			t.Errorf("no budget showed the %s", k)
		}
	}
}

// TestSummaryDropsLatencyFirst: a job summary too long for its cap loses
// the latency distributions before anything else, never the correctness
// checks.
func TestSummaryDropsLatencyFirst(t *testing.T) {
	t.Parallel()
	full := markdown(t, correctnessInput())
	got := jobSummary(t, correctnessInput(), SummaryOptions{MaxBytes: len(full) - 1})
	if strings.Contains(got, "### Latency distribution") || !strings.Contains(got, "this leaves out the latency distributions.") {
		t.Errorf("summary:\n%s", got)
	}
	for _, want := range []string{"### Correctness", "Agreement check:", "### csv", "### Errors", "### Environment"} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lost %q", want)
		}
	}
}

// TestLatencyDecidedRounds: a round not every cell completed is left out
// of the latency, as of the verdicts; rungs without a histogram are
// skipped, and one that cannot be read is counted.
func TestLatencyDecidedRounds(t *testing.T) {
	t.Parallel()
	in := correctnessInput()
	res := in.Results
	res.Rungs = res.Rungs[:len(res.Rungs)-1] // the last round is incomplete
	res.Rungs[0].Histogram = "garbage"       // csv Q01 c=1, round 0
	in.Rounds = 0
	m := newModel(in)
	c8 := benchdata.Cell{Variant: "csv", Class: "Q01", Concurrency: 8}
	if d := m.latency[sideKey{c8, "baseline"}]; d == nil || d.rungs != 2 || d.count != 800 {
		t.Errorf("csv Q01 c=8 baseline: %+v, want 2 rungs of 400", d)
	}
	c1 := benchdata.Cell{Variant: "csv", Class: "Q01", Concurrency: 1}
	if d := m.latency[sideKey{c1, res.Rungs[0].Target}]; d == nil || d.rungs != 1 || m.unreadable != 1 {
		t.Errorf("csv Q01 c=1 %s: %+v, %d unreadable", res.Rungs[0].Target, d, m.unreadable)
	}
	if got := markdown(t, in); !strings.Contains(got, "1 rung's histogram could not be read and is left out.") {
		t.Error("the unreadable histogram is not mentioned")
	}
}

// TestCorrectnessHostileNames: names of classes and variants in the
// correctness checks' findings are escaped like any other.
func TestCorrectnessHostileNames(t *testing.T) {
	t.Parallel()
	in := correctnessInput()
	g := in.Results.Correctness
	g.Absent[0].Class = hostileDetails
	g.Agreement.Classes[1].Variant = "</summary>@org"
	g.Preflight[1].Name = "a|b"
	g.Preflight[3].Name = "a|b"
	in.Comparison.Cells[0].Key.Class = "<details>"
	for _, got := range []string{markdown(t, in), comment(t, in, CommentOptions{}), comment(t, in, CommentOptions{MaxRunes: 3000})} {
		for _, bad := range []string{"<script", "</details><", "</summary>@", "@team", "@org", "<details>c"} {
			if strings.Contains(got, bad) {
				t.Errorf("output contains %q:\n%s", bad, got)
			}
		}
		if strings.Count(got, "<details>") != strings.Count(got, "</details>") {
			t.Errorf("unbalanced <details>:\n%s", got)
		}
	}
	if got := markdown(t, in); !strings.Contains(got, "| target | conformance | a\\|b |") {
		t.Errorf("a pre-flight name breaks the table:\n%s", got)
	}
}

// TestCorrectnessFailuresWithCellFailures: a comparison whose summary
// list holds only the correctness checks' failures still shows the
// failures its cells carry.
func TestCorrectnessFailuresWithCellFailures(t *testing.T) {
	t.Parallel()
	in := fullInput()
	in.Comparison.Failures = []gate.Failure{{Key: gate.CellKey{Class: "search"}, Kind: gate.FailAgreement, Reason: "x"}}
	got := markdown(t, in)
	for _, want := range []string{"**agreement**: class search answers differently: x", "**rps regression** in csv/Q01 c=8", "**error rate** in json/Q01 c=8"} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
}

// TestCorrectnessThreatsPlural: two classes of a kind are "their", as two
// unreadable histograms "are".
func TestCorrectnessThreatsPlural(t *testing.T) {
	t.Parallel()
	in := correctnessInput()
	g := in.Results.Correctness
	g.Agreement.Classes[1].Mode = "warn" // csv mix, as json mix
	g.Absent = append(g.Absent, benchdata.AbsentClass{Class: "import", Reason: "pre-flight conformance failed on candidate"})
	in.Results.Rungs[0].Histogram = "garbage"
	in.Results.Rungs[1].Histogram = "garbage"
	got := markdown(t, in)
	for _, want := range []string{
		"- 2 classes answer differently on the two targets under agreement mode warn (see Correctness): their speed compares different work.\n",
		"- 2 classes were left out of the grid by a correctness check (see Correctness): this run says nothing of their speed.\n",
		"2 rungs' histograms could not be read and are left out.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("markdown lacks %q:\n%s", want, got)
		}
	}
}
