package report

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
)

const testMarker = "<!-- benchgate:comment header=benchgate -->"

func comment(t *testing.T, in Input, opt CommentOptions) string {
	t.Helper()
	var b strings.Builder
	if err := Comment(&b, in, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func jobSummary(t *testing.T, in Input, opt SummaryOptions) string {
	t.Helper()
	var b strings.Builder
	if err := Summary(&b, in, opt); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func markdown(t *testing.T, in Input) string {
	t.Helper()
	var b strings.Builder
	if err := Markdown(&b, in); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestCommentGolden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file  string
		input func() Input
		opt   CommentOptions
	}{
		{"comment.md", fullInput, CommentOptions{Marker: testMarker}},
		{"comment_pins.md", pinsInput, CommentOptions{Header: "benchgate: api", Marker: "<!-- benchgate:comment header=api -->"}},
		{"comment_correctness.md", correctnessInput, CommentOptions{Marker: testMarker}},
		{"comment_grpc.md", grpcInput, CommentOptions{Header: "benchgate: grpc", Marker: "<!-- benchgate:comment header=grpc -->"}},
		{"comment_paired_warn.md", func() Input { return slicedInput(gate.UnresolvedWarn) }, CommentOptions{Marker: testMarker}},
		{"comment_paired_fail.md", func() Input { return slicedInput(gate.UnresolvedFail) }, CommentOptions{Marker: testMarker}},
		{"comment_adaptive.md", adaptiveInput, CommentOptions{Marker: testMarker}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			got := comment(t, tc.input(), tc.opt)
			golden(t, tc.file, []byte(got))
			if again := comment(t, tc.input(), tc.opt); again != got {
				t.Error("two renderings differ")
			}
		})
	}
}

// TestCommentLayout pins the order of the head and checks the fold holds
// the markdown report's parts verbatim, less the title, status and failures
// the head shows.
func TestCommentLayout(t *testing.T) {
	t.Parallel()
	in := fullInput()
	got := comment(t, in, CommentOptions{Marker: testMarker})
	head := testMarker + "\n" +
		"## benchgate: demo-api — ❌ 1 regression, 1 error-rate failure\n\n" +
		"- ❌ **rps regression** in csv/Q01 c=8 (-17.9%): intervals do not overlap; means 17.9% apart (&gt;= 10%)\n" +
		"- ⚠️ **rps undecided** in json/Q01 c=1: need &gt;= 2 repetitions, have 1\n" +
		"- ❌ **error rate** in json/Q01 c=8 (12 of 1200 candidate requests failed): candidate error rate 1.00% &gt; 0.10%\n\n" +
		"5 cells: 1 regression · 1 improvement · 2 ties · 1 inconclusive — baseline **0c2afec** vs candidate **7aa14f6**, scenario demo-api, profile pr\n\n" +
		"<details><summary>Full report: 5 cells, tables, errors, environment</summary>\n\n" +
		"baseline **0c2afec** vs candidate **7aa14f6** · profile pr · 5 cells × 3 rounds · 95% intervals, tie within 10%\n\n" +
		"### csv\n\n"
	if !strings.HasPrefix(got, head) {
		t.Fatalf("comment head:\n%s\nwant prefix:\n%s", got, head)
	}
	full := markdown(t, in)
	_, body, _ := strings.Cut(full, "\n### csv\n")
	if !strings.HasSuffix(got, "### csv\n"+body+"\n</details>\n") {
		t.Errorf("the fold is not the report's body followed by a blank line and </details>:\n%s", got)
	}

	// Another gate on the same pull request names itself.
	got = comment(t, in, CommentOptions{Header: "benchgate: *api*"})
	if !strings.HasPrefix(got, "## benchgate: \\*api\\*: demo-api — ❌ ") {
		t.Errorf("header not in the title, or not escaped:\n%s", got)
	}

	// A cancelled run says so first, and the fold keeps its details.
	got = comment(t, cancelledInput(), CommentOptions{})
	if !strings.HasPrefix(got, "## benchgate: search @&#8203;api — ⚠️ run cancelled · inconclusive (2 gated metrics undecided)\n\n"+
		"> ⚠️ **Run cancelled**: decided on 1 complete round of 5 planned.\n\n- ⚠️ **rps undecided** in ") {
		t.Errorf("cancelled comment head:\n%s", got)
	}
}

// hostileDetails is a class name written to close the comment's fold, run
// a script and ping a team.
const hostileDetails = "</details><script>alert(1)</script>@team"

func TestCommentHostileClass(t *testing.T) {
	t.Parallel()
	in := fullInput()
	hostile := gate.CellKey{Variant: "csv", Class: hostileDetails, Concurrency: 8}
	c := &in.Comparison.Cells[1]
	c.Key = hostile
	for i := range c.Failures {
		c.Failures[i].Key = hostile
	}
	in.Comparison.Failures[0].Key = hostile
	in.Comparison.Failures[0].Reason = "<details open>@org/team"
	in.Results.Scenario.Name = "</summary>@team"
	for _, opt := range []CommentOptions{{}, {MaxRunes: 1200}, {MaxRunes: 600}} {
		got := comment(t, in, opt)
		if n := strings.Count(got, "<details>"); n != strings.Count(got, "</details>") || n > 1+len(ThroughputCharts(in)) {
			t.Errorf("MaxRunes %d: %d <details> and %d </details>:\n%s", opt.MaxRunes, n, strings.Count(got, "</details>"), got)
		}
		for _, bad := range []string{"<script", "<details open", "</summary>@", "@team", "@org"} {
			if strings.Contains(got, bad) {
				t.Errorf("MaxRunes %d: comment contains %q:\n%s", opt.MaxRunes, bad, got)
			}
		}
		if !strings.Contains(got, "- ❌ **rps regression** in csv/&lt;/details&gt;&lt;script&gt;alert(1)&lt;/script&gt;@&#8203;team c=8 (-17.9%): "+
			"&lt;details open&gt;@&#8203;org/team\n") {
			t.Errorf("MaxRunes %d: hostile failure not shown escaped:\n%s", opt.MaxRunes, got)
		}
		if !strings.HasPrefix(got, "## benchgate: &lt;/summary&gt;@&#8203;team — ") {
			t.Errorf("MaxRunes %d: hostile scenario not escaped in the title:\n%s", opt.MaxRunes, got)
		}
	}
}

// bigInput is a comparison of n cells over three variants whose first
// failing cells regress, with long names so the lists are long.
func bigInput(n, failing int) Input {
	res := &benchdata.Results{
		Version:  benchdata.FormatVersion,
		Scenario: benchdata.ScenarioInfo{Name: "big-grid", File: "benchgate.yml", Seed: 1, Profile: "nightly"},
		Env: benchdata.Environment{
			Baseline:  benchdata.TargetInfo{Name: "baseline", Kind: "image", Spec: "api:main", Commit: "0c2afec1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7"},
			Candidate: benchdata.TargetInfo{Name: "candidate", Kind: "image", Spec: "api:pr", Commit: "7aa14f6a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e"},
		},
		Status: "complete",
	}
	cmp := gate.Comparison{
		Settings: gate.DefaultSettings,
		Policy:   gate.Policy{FailOn: []gate.Rule{{Metric: gate.RPS}}, MaxErrorRate: -1},
		Outcome:  gate.Pass,
	}
	for i := range n {
		k := gate.CellKey{Variant: fmt.Sprintf("variant-%d", i%3), Class: fmt.Sprintf("ep%04d", i), Concurrency: 8}
		c := gate.CellResult{Key: k, Gated: []gate.Metric{gate.RPS}, Verdict: gate.Tie,
			Baseline: totals(1200, 0), Candidate: totals(1200, 0)}
		rps, p95 := dec(gate.RPS, sum(3, 1000, 10), sum(3, 1010, 10), gate.Tie, "intervals overlap"),
			dec(gate.P95, sum(3, 0.002, 0.0001), sum(3, 0.002, 0.0001), gate.Tie, "intervals overlap")
		if i < failing {
			c.Verdict = gate.Regression
			rps = dec(gate.RPS, sum(3, 1000, 10), sum(3, 800, 10), gate.Regression, "intervals do not overlap; means 20.0% apart (>= 10%)")
			f := gate.Failure{Key: k, Metric: gate.RPS, Kind: "regression", Reason: rps.Reason}
			c.Failures = []gate.Failure{f}
			cmp.Failures = append(cmp.Failures, f)
			cmp.Counts.Regressions++
			cmp.Outcome = gate.Fail
		} else {
			cmp.Counts.Ties++
		}
		c.Decisions = []gate.Decision{rps, p95}
		cmp.Cells = append(cmp.Cells, c)
	}
	return Input{Results: res, Comparison: cmp, Rounds: 3}
}

// checkComment checks what must hold of any comment.
func checkComment(t *testing.T, got string, opt CommentOptions) {
	t.Helper()
	limit := opt.MaxRunes
	if limit == 0 {
		limit = DefaultCommentRunes
	}
	if n := utf8.RuneCountInString(got); n > limit {
		t.Errorf("MaxRunes %d: comment has %d runes", limit, n)
	}
	if !utf8.ValidString(got) {
		t.Errorf("MaxRunes %d: comment is not valid UTF-8", limit)
	}
	if opt.Marker != "" && !strings.HasPrefix(got, opt.Marker+"\n") {
		t.Errorf("MaxRunes %d: comment does not start with the marker: %.80q", limit, got)
	}
	if open, closed := strings.Count(got, "<details>"), strings.Count(got, "</details>"); open != closed {
		t.Errorf("MaxRunes %d: %d <details> opened, %d closed", limit, open, closed)
	}
	if strings.Contains(got, "<details>") && !strings.HasSuffix(got, "\n</details>\n") {
		t.Errorf("MaxRunes %d: the fold does not end the comment", limit)
	}
}

const pointer = "The full report is too long for a comment: see the [job summary](<https://github.com/o/r/actions/runs/42>) " +
	"and report.md in the results.\n"

func TestCommentTruncation(t *testing.T) {
	t.Parallel()
	in := bigInput(3000, 500)
	url := "https://github.com/o/r/actions/runs/42"

	// The report does not fit, the 500 failures do: the fold gives way
	// to the pointer.
	opt := CommentOptions{Marker: testMarker, SummaryURL: url}
	got := comment(t, in, opt)
	checkComment(t, got, opt)
	if strings.Contains(got, "<details>") || strings.Contains(got, "### ") {
		t.Error("the fold was kept")
	}
	if n := strings.Count(got, "\n- ❌ **rps regression** in "); n != 500 {
		t.Errorf("%d failures listed, want all 500", n)
	}
	if !strings.HasSuffix(got, "3000 cells: 500 regressions · 0 improvements · 2500 ties · 0 inconclusive — baseline **0c2afec** vs candidate **7aa14f6**, "+
		"scenario big-grid, profile nightly\n\n"+pointer) {
		t.Errorf("comment does not end with the counts and the pointer:\n%s", got[len(got)-600:])
	}

	// Not even the failures fit: the list is cut at a line.
	for _, limit := range []int{20000, 5000, 1000} {
		opt := CommentOptions{Marker: testMarker, SummaryURL: url, MaxRunes: limit}
		got := comment(t, in, opt)
		checkComment(t, got, opt)
		kept := strings.Count(got, "\n- ❌ **rps regression** in ")
		m := regexp.MustCompile(`\n- … and (\d+) more\n\n3000 cells: 500 regressions · `).FindStringSubmatch(got)
		if m == nil {
			t.Fatalf("MaxRunes %d: no \"… and N more\" line before the counts:\n%s", limit, got)
		}
		if m[1] != fmt.Sprint(500-kept) {
			t.Errorf("MaxRunes %d: %d listed and %s more, want 500 in all", limit, kept, m[1])
		}
		if !strings.HasSuffix(got, pointer) {
			t.Errorf("MaxRunes %d: no pointer at the end", limit)
		}
		// The list is as long as the budget allows: one more line would
		// not fit, though the count after it might be a digit shorter.
		line := "- ❌ **rps regression** in variant-0/ep0000 c=8 (-20.0%): intervals do not overlap; means 20.0% apart (&gt;= 10%)\n"
		shorter := len(m[1]) - len(fmt.Sprint(500-kept-1))
		if n := utf8.RuneCountInString(got); n+utf8.RuneCountInString(line)-shorter <= limit {
			t.Errorf("MaxRunes %d: %d runes used, room for another failure", limit, n)
		}
	}

	// Whatever the budget, from the smallest that works to more than the
	// whole, the invariants hold.
	whole := utf8.RuneCountInString(comment(t, fullInput(), CommentOptions{Marker: testMarker}))
	// The charts leave the fold first; shorter than that, the pointer.
	folded := utf8.RuneCountInString(comment(t, fullInput(), CommentOptions{Marker: testMarker, MaxRunes: whole - 1}))
	for limit := 200; limit <= whole+10; limit += 7 {
		opt := CommentOptions{Marker: testMarker, MaxRunes: limit}
		var b strings.Builder
		if err := Comment(&b, fullInput(), opt); err != nil {
			if limit > 500 {
				t.Errorf("MaxRunes %d: %v", limit, err)
			}
			continue
		}
		checkComment(t, b.String(), opt)
		if limit < folded && !strings.Contains(b.String(), "The full report is too long for a comment: see the job summary and report.md in the results.\n") {
			t.Errorf("MaxRunes %d: shortened without the pointer", limit)
		}
	}
}

func TestCommentTooSmall(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	err := Comment(&b, bigInput(10, 5), CommentOptions{Marker: testMarker, MaxRunes: 100})
	if err == nil || !strings.Contains(err.Error(), "a comment of 100 runes cannot hold the marker, title and note") {
		t.Errorf("err = %v", err)
	}
}

// TestCommentLongName: a scenario name cannot push the outcome out.
func TestCommentLongName(t *testing.T) {
	t.Parallel()
	in := fullInput()
	in.Results.Scenario.Name = strings.Repeat("n", 70000)
	opt := CommentOptions{Marker: testMarker}
	got := comment(t, in, opt)
	checkComment(t, got, opt)
	if !strings.HasPrefix(got, testMarker+"\n## benchgate: "+strings.Repeat("n", 100)+"… — ❌ 1 regression, 1 error-rate failure\n\n- ❌ ") {
		t.Errorf("title:\n%.400s", got)
	}
}

func TestPointerLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want string }{
		{"", "see the job summary and"},
		{"https://github.com/o/r/actions/runs/1#summary-2", "see the [job summary](<https://github.com/o/r/actions/runs/1#summary-2>) and"},
		{"https://x.test/a<b>`c", "see the [job summary](<https://x.test/a%3Cb%3E%60c>) and"},
		{"https://x.test/a b", "see the [job summary](<https://x.test/a%20b>) and"},
		{"javascript:alert(1)", "see the job summary and"},
		{"//evil.test/x", "see the job summary and"},
		{"https://x.test/\u202eevil", "see the [job summary](<https://x.test/%E2%80%AEevil>) and"},
	} {
		if got := pointerLine(tc.url); !strings.Contains(got, tc.want) {
			t.Errorf("pointerLine(%q) = %q, want it to contain %q", tc.url, got, tc.want)
		}
	}
}

func TestSummaryFits(t *testing.T) {
	t.Parallel()
	for name, input := range map[string]func() Input{"full": fullInput, "cancelled": cancelledInput, "pins": pinsInput} {
		want := markdown(t, input())
		if got := jobSummary(t, input(), SummaryOptions{}); got != want {
			t.Errorf("%s: summary differs from the markdown report", name)
		}
		if got := jobSummary(t, input(), SummaryOptions{MaxBytes: len(want)}); got != want {
			t.Errorf("%s: summary at exactly its size differs from the markdown report", name)
		}
	}
}

// TestSummaryCap: the largest tables go first, then threats, then the
// environment, and the note says what went.
func TestSummaryCap(t *testing.T) {
	t.Parallel()
	full := markdown(t, pinsInput())
	sizes := map[sectionID]int{}
	for _, s := range newModel(pinsInput()).sections() {
		sizes[s.id] = len(s.text)
	}
	if sizes[secResources] <= sizes[secPerCore] {
		t.Fatalf("fixture: resources (%d bytes) should outweigh throughput per core (%d)", sizes[secResources], sizes[secPerCore])
	}
	note := func(what string) string {
		return "> ✂️ **Shortened** to fit the size limit of a job summary: this leaves out " + what +
			". report.md in the results has the full report.\n\n"
	}
	for _, tc := range []struct {
		limit int
		left  []sectionID
		what  string
	}{
		{len(full) - 1, []sectionID{secResources}, "the resources tables"},
		{len(full) - sizes[secResources], []sectionID{secResources, secPerCore}, "the resources tables and the throughput per core"},
		{len(full) - sizes[secResources] - sizes[secPerCore],
			[]sectionID{secResources, secPerCore, secThreats}, "the resources tables, the throughput per core and the threats to validity"},
		{len(full) - sizes[secResources] - sizes[secPerCore] - sizes[secThreats],
			[]sectionID{secResources, secPerCore, secThreats, secEnvironment},
			"the resources tables, the throughput per core, the threats to validity and the environment"},
	} {
		got := jobSummary(t, pinsInput(), SummaryOptions{MaxBytes: tc.limit})
		var want strings.Builder
		for _, s := range newModel(pinsInput()).sections() {
			if s.id == secTables {
				want.WriteString(note(tc.what))
			}
			if !slicesContains(tc.left, s.id) {
				want.WriteString(s.text)
			}
		}
		if got != want.String() {
			t.Errorf("MaxBytes %d:\n%s\nwant:\n%s", tc.limit, got, want.String())
		}
		if len(got) > tc.limit {
			t.Errorf("MaxBytes %d: %d bytes", tc.limit, len(got))
		}
	}
	golden(t, "summary_pins_capped.md", []byte(jobSummary(t, pinsInput(), SummaryOptions{MaxBytes: len(full) - 1})))
}

func slicesContains(ids []sectionID, id sectionID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// TestSummaryCut: verdict tables too large for any budget are cut at a
// row; what stays is valid markdown.
func TestSummaryCut(t *testing.T) {
	t.Parallel()
	in := bigInput(3000, 500)
	full := markdown(t, in)
	if len(full) < 300_000 {
		t.Fatalf("fixture: report of %d bytes", len(full))
	}
	note := "> ✂️ **Shortened** to fit the size limit of a job summary: this leaves out the rest of the verdict tables, " +
		"the claims, the threats to validity, how to reproduce and the environment. report.md in the results has the full report.\n\n"
	for _, limit := range []int{300_000, 150_000, 80_000} {
		got := jobSummary(t, in, SummaryOptions{MaxBytes: limit})
		if !strings.Contains(got, "\n\n"+note+"### variant-0\n") {
			t.Errorf("MaxBytes %d: note missing or misplaced:\n%s", limit, got[:3000])
		}
		got = strings.Replace(got, note, "", 1)
		if len(got) > limit {
			t.Errorf("MaxBytes %d: %d bytes", limit, len(got))
		}
		if !strings.HasPrefix(got, full[:strings.Index(full, "\n- ❌")]) {
			t.Errorf("MaxBytes %d: the title and identity do not lead", limit)
		}
		before, after, ok := strings.Cut(got, "\n\n"+cutLine)
		if !ok {
			t.Fatalf("MaxBytes %d: no cut line:\n%s", limit, got[len(got)-2000:])
		}
		last := before[strings.LastIndex(before, "\n")+1:]
		if !strings.HasPrefix(last, "| ") || isAlignRow(last) || !strings.HasPrefix(full, before+"\n") {
			t.Errorf("MaxBytes %d: cut after %q, not after a row of the report", limit, last)
		}
		if after != "" {
			t.Errorf("MaxBytes %d: %q after the cut line", limit, after)
		}
	}

	// At a budget below the failures, they are cut, and the note follows
	// the cut.
	got := jobSummary(t, in, SummaryOptions{MaxBytes: 5000})
	if len(got) > 5000 || !strings.HasSuffix(got, "%)\n\n"+cutLine+
		"> ✂️ **Shortened** to fit the size limit of a job summary: this leaves out the rest of the failures, the verdict tables, "+
		"the claims, the threats to validity, how to reproduce and the environment. report.md in the results has the full report.\n\n") {
		t.Errorf("failures cut:\n%s", got)
	}
	var b strings.Builder
	if err := Summary(&b, in, SummaryOptions{MaxBytes: 300}); err == nil {
		t.Error("a 300-byte summary did not fail")
	}
}

// TestSummaryCutFence: an error output cut short keeps its code block
// closed.
func TestSummaryCutFence(t *testing.T) {
	t.Parallel()
	in := cancelledInput()
	in.Results.Status = "failed"
	in.Results.Error = strings.Repeat("candidate exited: ``` status 2\n", 2000)
	got := jobSummary(t, in, SummaryOptions{MaxBytes: 4000})
	if len(got) > 4000 {
		t.Errorf("%d bytes", len(got))
	}
	if !strings.Contains(got, "\n````\ncandidate exited: ``` status 2\n") || !strings.Contains(got, "status 2\n````\n\n"+cutLine) {
		t.Errorf("error block not cut inside its fence:\n%s", got)
	}
}

func TestCutLines(t *testing.T) {
	t.Parallel()
	table := "### t\n\n| a | b |\n| --- | ---: |\n| x | 1 |\n| y | 2 |\n\n"
	code := "```sh\nrun it\n```\n\nafter\n"
	for _, tc := range []struct {
		text   string
		budget int
		want   string
	}{
		{table, len(table), "### t\n\n| a | b |\n| --- | ---: |\n| x | 1 |\n| y | 2 |\n"},
		{table, len(table) - 2, "### t\n\n| a | b |\n| --- | ---: |\n| x | 1 |\n"},
		{table, 40, ""}, // header and alignment without a row
		{table, 20, ""}, // header whose alignment did not fit
		{"para\n" + table, 25, "para\n"},
		{code, len(code), code},
		{code, len("```sh\nrun it\n") + 4, "```sh\nrun it\n```\n"},
		{code, len("```sh\nrun it\n") + 3, ""},
		{code, 3, ""},
	} {
		if got := cutLines(tc.text, tc.budget); got != tc.want {
			t.Errorf("cutLines(%q, %d) = %q, want %q", tc.text, tc.budget, got, tc.want)
		}
	}
}
