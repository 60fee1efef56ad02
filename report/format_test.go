package report

import (
	"strings"
	"testing"

	"github.com/benchgate/benchgate/gate"
)

func TestLatencyUnit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []float64
		want string
	}{
		{[]float64{0.00192, 0.0214}, "ms 2 1.92 ±0.05"},
		{[]float64{0.0123, 0.0456}, "ms 1 1.9 ±0.1"},
		{[]float64{0.000450, 0.000900}, "µs 0 1920 ±50"},
		{[]float64{0.250, 2.4}, "s 3 0.002 ±0.000"},
		{nil, "ms 2 1.92 ±0.05"},
	} {
		u := chooseLatencyUnit(tc.in)
		got := u.name + " " + string(rune('0'+u.dec)) + " " + u.summary(sum(3, 0.00192, 0.00005))
		if got != tc.want {
			t.Errorf("chooseLatencyUnit(%v) then 1.92ms ±0.05 = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNumbers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ got, want string }{
		{percent(0.1234), "+12.3%"},
		{percent(-0.1789), "-17.9%"},
		{percent(-0.0004), "0.0%"},
		{rate(0), "0%"},
		{rate(12.0 / 1200), "1.00%"},
		{rate(1.0 / 65119), "0.0015%"},
		{rate(1e-9), "<0.001%"},
		{fraction(0.95), "95%"},
		{fraction(0.001), "0.1%"},
		{rpsSummary(sum(3, 812.44, 10.25)), "812.4 ±10.2"},
		{rpsSummary(sum(1, 801, 0)), "801.0 (n=1)"},
		{rpsSummary(gate.Summary{}), "—"},
		{shortCommit("0c2afec1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7"), "0c2afec"},
		{shortCommit("feature/x"), "feature/x"},
		{shortHash("9f9da00f45f1c3a7e2b4"), "9f9da00f45f1…"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

func TestOutcomeLines(t *testing.T) {
	t.Parallel()
	title := func(in Input) string {
		t.Helper()
		var b strings.Builder
		if err := Markdown(&b, in); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}

	pass := fullInput()
	pass.Comparison.Outcome = gate.Pass
	pass.Comparison.Failures = nil
	for i := range pass.Comparison.Cells {
		pass.Comparison.Cells[i].Failures = nil
	}
	pass.Comparison.Counts = gate.Counts{Ties: 3, Improvements: 1}
	if got := title(pass); !strings.HasPrefix(got, "## benchgate: demo-api — ✅ no regression (3 ties, 1 improvement)\n") {
		t.Errorf("pass title:\n%s", got)
	}
	// A regression no rule gates passes the gate but is not hidden.
	pass.Comparison.Counts.Regressions = 1
	got := title(pass)
	if !strings.HasPrefix(got, "## benchgate: demo-api — ✅ pass (1 ungated regression, 3 ties, 1 improvement)\n") {
		t.Errorf("pass title with ungated regression:\n%s", got)
	}
	if !strings.Contains(got, "| regression (not gated) |") {
		t.Errorf("ungated regression not marked in its row:\n%s", got)
	}

	failed := cancelledInput()
	failed.Results.Status = "failed"
	failed.Results.Error = "candidate exited: status 2\n<b>boom</b>"
	failed.Rounds = 0
	failed.Results.Rungs = failed.Results.Rungs[:1]
	got = title(failed)
	if !strings.Contains(got, "— ❌ run failed · ") {
		t.Errorf("failed run title:\n%s", got)
	}
	// The error keeps its lines in a code block, where markup is inert.
	if !strings.Contains(got, "> ⚠️ **Run failed**: no round completed, so nothing could be decided.\n\n"+
		"```\ncandidate exited: status 2\n<b>boom</b>\n```\n") {
		t.Errorf("failed run status:\n%s", got)
	}
	failed.Results.Error = "``` breaks out?\n[x](http://evil)"
	if got := title(failed); !strings.Contains(got, "````\n``` breaks out?\n[x](http://evil)\n````\n") {
		t.Errorf("the error's own fence must not close the block:\n%s", got)
	}
}

// TestUncountedRungs: errors of an incomplete round are not summed, and the
// report says so.
func TestUncountedRungs(t *testing.T) {
	t.Parallel()
	in := cancelledInput()
	last := &in.Results.Rungs[len(in.Results.Rungs)-1]
	last.Errors = map[string]int64{"timeout": 5}
	first := &in.Results.Rungs[0]
	first.Errors = map[string]int64{"connect": 2}
	var b strings.Builder
	if err := Markdown(&b, in); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"| connect ×2 |", "1 rung of the incomplete round not counted"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "timeout ×5") {
		t.Error("errors of the incomplete round were counted")
	}
}
