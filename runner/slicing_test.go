package runner

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/scenario"
)

// TestChooseSlicing: a cell's slices are the scenario's while its requests
// are short; lengthened to SliceRequests requests' time, with a settle of
// one request, when they are not; and round interleaving where fewer than
// MinSlicePairs such slices fit the duration, or a side answered nothing
// in its warm-up. Without a warm-up nothing is known and the scenario's
// slices stand.
func TestChooseSlicing(t *testing.T) {
	t.Parallel()
	ls := scenario.LoadSettings{Duration: 10 * time.Second, Warmup: time.Second, Slice: 50 * time.Millisecond, Settle: 10 * time.Millisecond}
	ms := time.Millisecond
	warm := func(a, b time.Duration) [2]Warmed {
		w := [2]Warmed{{Answered: 100, Mean: a}, {Answered: 100, Mean: b}}
		for i := range w {
			if w[i].Mean == 0 {
				w[i].Answered = 0
			}
		}
		return w
	}
	cases := []struct {
		name          string
		ls            scenario.LoadSettings
		rate          int
		warm          [2]Warmed
		round         bool
		slice, settle time.Duration
		pairs         int
		why           string
	}{
		{"fast", ls, 0, warm(ms, 2*ms), false, 50 * ms, 10 * ms, 200, ""},
		// 2.5ms × 20 = 50ms: the slice holds; the settle too.
		{"at the edge", ls, 0, warm(2500*time.Microsecond, ms), false, 50 * ms, 10 * ms, 200, ""},
		// A request longer than the settle: settled one request's time.
		{"settle only", ls, 0, warm(ms, 12*ms/5), false, 50 * ms, 10 * ms, 200, ""},
		{"40ms", ls, 0, warm(40*ms, 41*ms), false, 820 * ms, 41 * ms, 12,
			"a request takes 41.0ms: slices of 820ms (20 requests' time) after 41.0ms settle, 12 pairs a round"},
		// The slower side sets the cut, whichever it is.
		{"slower baseline", ls, 0, warm(41*ms, 40*ms), false, 820 * ms, 41 * ms, 12, ""},
		{"100ms: 5 pairs", ls, 0, warm(100*ms, 100*ms), false, 2 * time.Second, 100 * ms, 5, ""},
		{"120ms: round", ls, 0, warm(120*ms, 121*ms), true, 0, 0, 0,
			"a request takes 121ms: a slice of 2.42s (20 requests' time) leaves 4 pair(s) in the 10.0s duration, fewer than 5; measured by round interleaving"},
		{"silent side: round", ls, 0, warm(ms, 0), true, 0, 0, 0,
			"a request takes at least the 1.00s warm-up (a side answered no request in it): measured by round interleaving"},
		// However long the duration: a side silent in its warm-up has
		// requests of unknown length, which no slice can be fitted to.
		{"silent side, long duration", scenario.LoadSettings{Duration: 30 * time.Second, Warmup: 200 * ms, Slice: 50 * ms, Settle: 10 * ms},
			0, warm(ms, 0), true, 0, 0, 0, ""},
		// An open loop's slice holds 20 calls: 40/s needs 500ms slices.
		{"open loop", ls, 40, warm(ms, ms), false, 500 * ms, 10 * ms, 20,
			"a request takes 1.00ms: slices of 500ms (20 calls at 40/s) after 10.0ms settle, 20 pairs a round"},
		{"no warm-up", scenario.LoadSettings{Duration: ls.Duration, Slice: ls.Slice, Settle: ls.Settle}, 0, warm(0, 0), false, 50 * ms, 10 * ms, 200, ""},
	}
	for _, tc := range cases {
		got := ChooseSlicing(tc.ls, tc.rate, tc.warm)
		if got.Round != tc.round || got.Slice != tc.slice || got.Settle != tc.settle || got.Pairs != tc.pairs {
			t.Errorf("%s: %+v; want round %v, slice %v, settle %v, %d pairs", tc.name, got, tc.round, tc.slice, tc.settle, tc.pairs)
		}
		if tc.why != "" && got.Why != tc.why {
			t.Errorf("%s: why %q\n want %q", tc.name, got.Why, tc.why)
		}
		if (got.Why == "") != (got.Slice == tc.ls.Slice && got.Settle == tc.ls.Settle && !got.Round) {
			t.Errorf("%s: cut otherwise (%+v) but why %q", tc.name, got, got.Why)
		}
		if info := got.info(); (info == nil) != (got.Why == "") || info != nil && info.Interleave == "round" != got.Round {
			t.Errorf("%s: recorded as %+v", tc.name, info)
		}
		if got.Round && !strings.Contains(got.Why, "round interleaving") {
			t.Errorf("%s: a round cell's why does not say so: %q", tc.name, got.Why)
		}
	}
}

// sleepServer answers every request after d.
func sleepServer(t *testing.T, d time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			time.Sleep(d)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestRunSlowRequestsSliced: under the default slices, a cell whose
// requests take 25ms (half a 50ms slice, which would count few of them
// and lose the rest at every edge) is cut from its warm-up into slices of
// at least 20 requests' time, or measured by rounds when the machine made
// its requests slow enough that too few such slices fit; every rung
// answered, and every rung records the cut and why. Which of the two a
// loaded machine picks is its own; that the cell is measured is not.
func TestRunSlowRequestsSliced(t *testing.T) {
	t.Parallel()
	target := func(name string) scenario.Target {
		return scenario.Target{Name: name, URL: sleepServer(t, 25*time.Millisecond), Health: "/", StartupTimeout: 5 * time.Second}
	}
	sc := testScenario(target("baseline"), target("candidate"))
	sc.Load.Concurrency = []int{2}
	sc.Load.Interleave, sc.Load.Slice, sc.Load.Settle = scenario.InterleaveSlice, 50*time.Millisecond, 10*time.Millisecond
	sc.Load.Duration, sc.Load.Warmup = 3*time.Second, 200*time.Millisecond
	sc.Load.MaxRepetitions = sc.Load.Repetitions
	var progress syncBuffer
	res, err := Run(t.Context(), sc, Options{OutDir: t.TempDir(), Progress: &progress, source: fixedSource})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rungs) != 4 {
		t.Fatalf("%d rungs", len(res.Rungs))
	}
	first := res.Rungs[0].Slicing
	if first == nil || first.Latency < 0.025 || !strings.Contains(progress.String(), "a c=2: a request takes ") {
		t.Fatalf("slicing %+v; progress:\n%s", first, progress.String())
	}
	for _, r := range res.Rungs {
		if r.Slicing == nil || *r.Slicing != *first {
			t.Errorf("%s round %d: slicing %+v, the first rung's %+v", r.Target, r.Round, r.Slicing, first)
		}
		if r.Value(gate.RPS) == 0 || r.Value(gate.P95) < 0.025 {
			t.Errorf("%s round %d: %v rps, p95 %v", r.Target, r.Round, r.Value(gate.RPS), r.Value(gate.P95))
		}
		switch first.Interleave {
		case scenario.InterleaveSlice:
			want := int(sc.Load.Duration.Seconds() / first.Slice)
			if first.Slice < 20*0.025 || first.Settle < 0.025 || len(r.Slices) != want || want < MinSlicePairs {
				t.Errorf("%s round %d: %d slices of %vs after %vs settle, want %d of at least 500ms after 25ms",
					r.Target, r.Round, len(r.Slices), first.Slice, first.Settle, want)
			}
			for _, sl := range r.Slices {
				if sl.Answered == 0 || sl.Duration != first.Slice {
					t.Errorf("%s round %d: slice %+v", r.Target, r.Round, sl)
				}
			}
		case scenario.InterleaveRound:
			if len(r.Slices) != 0 || first.Latency*20*MinSlicePairs <= sc.Load.Duration.Seconds() {
				t.Errorf("%s round %d: round interleaving of %d slices at %vs a request", r.Target, r.Round, len(r.Slices), first.Latency)
			}
		default:
			t.Errorf("interleave %q", first.Interleave)
		}
	}
}

// TestSlicingRule: the dry run relates the slice to the requests' time
// before anything runs: the latency that lengthens a cell's slices and
// the one that makes it round-interleaved.
func TestSlicingRule(t *testing.T) {
	t.Parallel()
	ls := scenario.LoadSettings{Duration: 10 * time.Second, Warmup: time.Second, Slice: 50 * time.Millisecond, Settle: 10 * time.Millisecond}
	want := "50.0ms after 10.0ms settle, 200 pairs a round; a cell whose requests take over 2.50ms (timed in its first warm-up) " +
		"gets slices of 20 requests' time after a settle of one, and round interleaving over 100ms (fewer than 5 such slices in 10.0s)"
	if got := SlicingRule(ls); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	ls.Warmup = 0
	if got := SlicingRule(ls); !strings.Contains(got, "with no warm-up a cell's requests are not timed") {
		t.Errorf("no warm-up: %s", got)
	}
}
