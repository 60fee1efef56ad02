package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/load"
	"github.com/benchgate/benchgate/scenario"
	"github.com/benchgate/benchgate/target"
	"github.com/benchgate/benchgate/target/targettest"
)

func TestSliceOrder(t *testing.T) {
	t.Parallel()
	// Pinned: a change here reorders every slice-interleaved schedule.
	var got []string
	for pair := range 6 {
		got = append(got, SliceOrder(424242, 0, 2, pair))
	}
	if want := []string{"BA", "AB", "BA", "AB", "BA", "AB"}; !slices.Equal(got, want) {
		t.Errorf("seed 424242 round 0 cell 2: %v, want %v", got, want)
	}
	for _, seed := range []uint64{424242, 7, 1 << 40} {
		for cell := range 20 {
			for round := range 4 {
				if SliceOrder(seed, round, cell, 0) != Order(seed, round, cell) {
					t.Errorf("seed %d cell %d round %d: the first pair does not take the round's order", seed, cell, round)
				}
				for _, pairs := range []int{1, 2, 5, 8, 25} {
					// The slices in time order: "A" baseline, "B" candidate.
					var seq []byte
					for k := range pairs {
						o := SliceOrder(seed, round, cell, k)
						if o != SliceOrder(seed, round, cell, k) {
							t.Fatalf("SliceOrder is not a function of its arguments")
						}
						seq = append(seq, o...)
					}
					first := map[byte]int{}
					follows := map[string]int{} // "AA": A's slice right after A's
					for k := range pairs {
						first[seq[2*k]]++
					}
					for i := 1; i < len(seq); i++ {
						follows[string(seq[i-1:i+1])]++
					}
					// Each side goes first in half the pairs (one over
					// when the number is odd); each follows itself and
					// the other as often (one apart when odd).
					if d := first['A'] - first['B']; d < -1 || d > 1 || (pairs%2 == 0 && d != 0) {
						t.Errorf("seed %d cell %d round %d, %d pairs %s: first %v", seed, cell, round, pairs, seq, first)
					}
					if pairs >= 3 {
						if follows["AA"] == 0 || follows["BB"] == 0 {
							t.Errorf("%s: a side always follows the other", seq)
						}
						if d := follows["BA"] - follows["AA"]; d < -1 || d > 1 {
							t.Errorf("%s: A follows B %d times, itself %d", seq, follows["BA"], follows["AA"])
						}
						if d := follows["AB"] - follows["BB"]; d < -1 || d > 1 {
							t.Errorf("%s: B follows A %d times, itself %d", seq, follows["AB"], follows["BB"])
						}
					}
				}
			}
		}
	}
	// Consecutive rounds of a cell start their pairs the other way round.
	if SliceOrder(7, 0, 3, 0) == SliceOrder(7, 1, 3, 0) {
		t.Error("rounds 0 and 1 start alike")
	}
}

// seqSource numbers its requests: worker w of cell c in round r sends
// /a?c=C&r=R&w=W&i=0, 1, 2, … without end, as a stream would.
type seqSource struct {
	prefix string
	i      int
	req    load.Request
}

func newSeqSource(cell benchdata.Cell, round, worker int) Source {
	return &seqSource{prefix: fmt.Sprintf("/a?c=%d&r=%d&w=%d&i=", cell.Concurrency, round, worker), req: load.Request{Class: cell.Class, Method: "GET"}}
}

func (s *seqSource) Next() *load.Request {
	s.req.Target = s.prefix + strconv.Itoa(s.i)
	s.i++
	return &s.req
}

// arrivals is what a test server saw: every load request's query, and
// when it arrived.
type arrivals struct {
	mu    sync.Mutex
	at    []time.Time
	query []string
}

// recordingServer answers load requests with status code and records
// their arrival; the health check "/" is answered and not recorded.
func recordingServer(t *testing.T, code int, a *arrivals) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/a" {
			now := time.Now()
			a.mu.Lock()
			a.at = append(a.at, now)
			a.query = append(a.query, r.URL.RawQuery)
			a.mu.Unlock()
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func sliceScenario(base, cand scenario.Target) *scenario.Scenario {
	sc := testScenario(base, cand)
	sc.Load.Interleave = scenario.InterleaveSlice
	// No warm-up: the scenario's slices stand whatever the requests take
	// (ChooseSlicing), so these tests' slices are theirs however loaded
	// the machine is; TestRunSlowRequestsSliced has the warm-up's cut.
	sc.Load.Warmup = 0
	sc.Load.Duration = 100 * time.Millisecond
	sc.Load.Slice, sc.Load.Settle = 20*time.Millisecond, 5*time.Millisecond
	sc.Load.MaxRepetitions = sc.Load.Repetitions
	return sc
}

// timed is one measured slice of a side, on the generator's clock.
type timed struct {
	side     string // "A" baseline, "B" candidate
	pair     int
	from, to time.Time
}

func sliceTimes(r benchdata.Rung, side string) []timed {
	var out []timed
	for _, sl := range r.Slices {
		from := r.Start.Add(time.Duration(sl.Start * float64(time.Second)))
		out = append(out, timed{side, sl.Pair, from, from.Add(time.Duration(sl.Duration * float64(time.Second)))})
	}
	return out
}

func TestRunSliceInterleaved(t *testing.T) {
	t.Parallel()
	var base, cand arrivals
	sc := sliceScenario(
		scenario.Target{Name: "baseline", URL: recordingServer(t, 200, &base), Health: "/", StartupTimeout: 5 * time.Second},
		scenario.Target{Name: "candidate", URL: recordingServer(t, 202, &cand), Health: "/", StartupTimeout: 5 * time.Second})
	pairs := sc.Load.SlicePairs()
	if pairs != 5 {
		t.Fatalf("%d slice pairs", pairs)
	}
	out := t.TempDir()
	var progress syncBuffer
	res, err := Run(t.Context(), sc, Options{OutDir: out, Progress: &progress, source: newSeqSource})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "complete" || len(res.Rungs) != 8 || res.CompleteRounds() != 2 {
		t.Fatalf("status %q, %d rungs, %d complete rounds", res.Status, len(res.Rungs), res.CompleteRounds())
	}
	if got := readResults(t, out); len(got.Rungs) != 8 || len(got.Rungs[0].Slices) != pairs {
		t.Errorf("results.json: %d rungs", len(got.Rungs))
	}
	if s := res.Scenario.Load; s.Interleave != "slice" || s.Slice != 0.02 || s.Settle != 0.005 {
		t.Errorf("load info %+v", s)
	}
	// 2 cells × 2 rounds × 2 targets × (5 × 25ms + 5ms a rung), and the writes of results.json
	lines := strings.Split(strings.TrimSuffix(progress.String(), "\n"), "\n")
	if lines[0] != "plan: 2 cells × 2 rounds × 2 targets × 130ms = 1.042s" || len(lines) != 9 {
		t.Fatalf("progress:\n%s", progress.String())
	}
	rungLine := regexp.MustCompile(`^\[round [12]/2\] a c=[12] (baseline|candidate): \d+\.\d rps, p95 [0-9.]+(µs|ms|s), 0 errors \(rung \d/8, 5 slices\)$`)
	for _, l := range lines[1:] {
		if !rungLine.MatchString(l) {
			t.Errorf("progress line %q", l)
		}
	}

	i := 0
	for round := range 2 {
		for ci, cell := range res.Plan.Cells {
			order := Order(sc.Seed, round, ci)
			names := []string{"baseline", "candidate"}
			if order == "BA" {
				slices.Reverse(names)
			}
			var sides [2]benchdata.Rung // baseline, candidate
			for pos, name := range names {
				g := res.Rungs[i]
				i++
				if g.Cell != cell || g.Round != round || g.Target != name || g.Position != pos || g.Order != order {
					t.Fatalf("rung %d = %v round %d %s pos %d %s; want %v round %d %s pos %d %s",
						i-1, g.Cell, g.Round, g.Target, g.Position, g.Order, cell, round, name, pos, order)
				}
				sides[map[string]int{"baseline": 0, "candidate": 1}[name]] = g
			}
			if !sides[0].Start.Equal(sides[1].Start) {
				t.Errorf("%v round %d: the two rungs start at %v and %v, want the session's start", cell, round, sides[0].Start, sides[1].Start)
			}
			for s, g := range sides {
				code := []string{"200", "202"}[s]
				if len(g.Slices) != pairs {
					t.Fatalf("%v round %d %s: %d slices", cell, round, g.Target, len(g.Slices))
				}
				var requests, answered, errs int64
				for k, sl := range g.Slices {
					if sl.Pair != k || sl.Duration != 0.02 || sl.Requests != sl.Answered || sl.Errors != 0 ||
						sl.Value(gate.RPS) != float64(sl.Answered)/0.02 || sl.CPUSeconds != 0 {
						t.Errorf("%v round %d %s slice %d: %+v", cell, round, g.Target, k, sl)
					}
					if sl.Answered > 0 && !(sl.Value(gate.P50) > 0 && sl.Value(gate.P50) <= sl.Value(gate.P90) && sl.Value(gate.P90) <= sl.Value(gate.P95) && sl.Value(gate.P95) <= sl.Value(gate.P99) && sl.Value(gate.Mean) > 0) {
						t.Errorf("slice %d latencies %+v", k, sl)
					}
					requests += sl.Requests
					answered += sl.Answered
					errs += sl.Errors
				}
				if g.Requests != requests || g.Answered() != answered || g.Statuses[code] != answered || len(g.Statuses) != 1 ||
					g.ErrorCount() != errs || decodeCount(t, g) != answered || answered == 0 {
					t.Errorf("%v round %d %s: rung requests %d statuses %v errors %v histogram %d; slices: requests %d answered %d errors %d",
						cell, round, g.Target, g.Requests, g.Statuses, g.Errors, decodeCount(t, g), requests, answered, errs)
				}
				if math.Abs(g.Duration-float64(pairs)*0.02) > 1e-12 || g.Value(gate.RPS) != float64(answered)/g.Duration {
					t.Errorf("%s: duration %v rps %v", g.Target, g.Duration, g.Value(gate.RPS))
				}
				if g.ResourceSource != "" || g.CPUSeconds != 0 {
					t.Errorf("a url target's resources measured: %q %v", g.ResourceSource, g.CPUSeconds)
				}
			}

			// In time, the slices follow SliceOrder, one after the other.
			all := append(sliceTimes(sides[0], "A"), sliceTimes(sides[1], "B")...)
			sort.Slice(all, func(a, b int) bool { return all[a].from.Before(all[b].from) })
			var seq, want string
			for k := range pairs {
				want += SliceOrder(sc.Seed, round, ci, k)
			}
			for j, s := range all {
				seq += s.side
				if s.pair != j/2 {
					t.Errorf("slice %d in time is of pair %d", j, s.pair)
				}
				if j > 0 && s.from.Before(all[j-1].to) {
					t.Errorf("%v round %d: slice %d (%s) starts %v before the previous one ended", cell, round, j, s.side, all[j-1].to.Sub(s.from))
				}
			}
			if seq != want {
				t.Errorf("%v round %d: slices in time %s, want %s", cell, round, seq, want)
			}

			// Neither server saw a request of this session while the
			// other side was measured: the requests in flight at a
			// slice's end were answered before the next slice began.
			key := fmt.Sprintf("c=%d&r=%d&", cell.Concurrency, round)
			for _, srv := range []struct {
				name  string
				a     *arrivals
				other string
			}{{"baseline", &base, "B"}, {"candidate", &cand, "A"}} {
				srv.a.mu.Lock()
				for j, q := range srv.a.query {
					if !strings.HasPrefix(q, key) {
						continue
					}
					for _, s := range all {
						if s.side == srv.other && !srv.a.at[j].Before(s.from) && srv.a.at[j].Before(s.to) {
							t.Errorf("%v round %d: the %s got %s while the other side's slice of pair %d was measured", cell, round, srv.name, q, s.pair)
						}
					}
				}
				srv.a.mu.Unlock()
			}
		}
	}

	// Each worker's requests on each side are its stream's prefix: every
	// request of the stream up to the last one sent, once, in order.
	for _, a := range []*arrivals{&base, &cand} {
		seen := map[string][]int{}
		for _, q := range a.query {
			k, n, _ := strings.Cut(q, "&i=")
			i, _ := strconv.Atoi(n)
			seen[k] = append(seen[k], i)
		}
		if len(seen) != 2*(1+2) { // 2 rounds × (1 worker at c=1 + 2 at c=2)
			t.Errorf("workers seen: %v", len(seen))
		}
		for k, is := range seen {
			for j, i := range is {
				if i != j {
					t.Errorf("worker %s: request %d is number %d of its stream", k, j, i)
					break
				}
			}
		}
	}
}

// capped ends a source after n more requests.
type capped struct {
	Source
	n int
}

func (c *capped) Next() *load.Request {
	if c.n == 0 {
		return nil
	}
	c.n--
	return c.Source.Next()
}

// A slice-interleaved session is cancelled like a rung: the session's
// rungs are dropped, the complete rounds before it kept.
func TestRunSliceCancelledMidSession(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var once sync.Once
	hit := func(w http.ResponseWriter, r *http.Request) {
		// The first load request of the second round cancels the run,
		// in the middle of its first session.
		if strings.Contains(r.URL.RawQuery, "r=1&") {
			once.Do(cancel)
		}
	}
	target := func(name string) scenario.Target {
		srv := httptest.NewServer(http.HandlerFunc(hit))
		t.Cleanup(srv.Close)
		return scenario.Target{Name: name, URL: srv.URL, Health: "/", StartupTimeout: 5 * time.Second}
	}
	sc := sliceScenario(target("baseline"), target("candidate"))
	out := t.TempDir()
	res, err := Run(ctx, sc, Options{OutDir: out, source: newSeqSource})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want one wrapping context.Canceled", err)
	}
	if res.Status != "cancelled" || len(res.Rungs) != 4 || res.CompleteRounds() != 1 {
		t.Errorf("status %q, %d rungs, %d complete rounds", res.Status, len(res.Rungs), res.CompleteRounds())
	}
	for _, g := range res.Rungs {
		if g.Round != 0 || len(g.Slices) != 5 {
			t.Errorf("rung of round %d with %d slices kept", g.Round, len(g.Slices))
		}
	}
	if disk := readResults(t, out); disk.Status != "cancelled" || len(disk.Rungs) != 4 {
		t.Errorf("results.json: status %q, %d rungs", disk.Status, len(disk.Rungs))
	}
}

// Against command targets every slice has its target's CPU, read at its
// edges, and a side's resources are over its slices.
func TestRunSliceResources(t *testing.T) {
	t.Parallel()
	sc := sliceScenario(targettest.ServerSpec("baseline"), targettest.ServerSpec("candidate"))
	sc.Load.Concurrency = []int{1}
	sc.Load.Repetitions, sc.Load.MaxRepetitions = 1, 1
	out := t.TempDir()
	res, err := Run(t.Context(), sc, Options{OutDir: out, source: fixedSource})
	if err != nil {
		t.Fatal(err)
	}
	allGone(t, out, "baseline", "candidate")
	if len(res.Rungs) != 2 {
		t.Fatalf("%d rungs", len(res.Rungs))
	}
	for _, g := range res.Rungs {
		var sum float64
		for _, sl := range g.Slices {
			sum += sl.CPUSeconds
		}
		t.Logf("%s: %s cpu %.4fs over %d slices, mem mean %d peak %d, generator %.4fs", g.Target, g.ResourceSource, g.CPUSeconds, len(g.Slices), g.MemMean, g.MemPeak, g.GenCPUSeconds)
		if g.ResourceSource == "" || g.CPUSeconds != sum || g.MemMean <= 0 || g.MemPeak < g.MemMean || g.GenCPUSeconds < 0 {
			t.Errorf("%s: resources %q cpu %v (slices %v) mem mean %d peak %d generator %v",
				g.Target, g.ResourceSource, g.CPUSeconds, sum, g.MemMean, g.MemPeak, g.GenCPUSeconds)
		}
	}
}

// A target that dies in a session ends the run as it does under round
// interleaving; only whole sessions' rungs are kept.
func TestRunSliceTargetDies(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	sc := sliceScenario(targettest.ServerSpec("baseline"), targettest.ServerSpec("candidate", "-exit-after", "3000"))
	sc.Load.Repetitions, sc.Load.MaxRepetitions = 50, 50
	res, err := Run(t.Context(), sc, Options{OutDir: out, source: fixedSource})
	te := targettest.AsTargetError(t, err, target.PhaseDied)
	allGone(t, out, "baseline", "candidate")
	if te.Target != "candidate" || res.Status != "failed" {
		t.Errorf("error %v, status %q", err, res.Status)
	}
	t.Logf("%d rungs kept", len(res.Rungs))
	if len(res.Rungs)%2 != 0 {
		t.Fatalf("%d rungs: a session's rung was kept alone", len(res.Rungs))
	}
	for i := 0; i < len(res.Rungs); i += 2 {
		a, b := res.Rungs[i], res.Rungs[i+1]
		if a.Cell != b.Cell || a.Round != b.Round || a.Target == b.Target || len(a.Slices) != 5 || len(b.Slices) != 5 {
			t.Errorf("rungs %d and %d are not one session's: %v/%d/%s, %v/%d/%s", i, i+1, a.Cell, a.Round, a.Target, b.Cell, b.Round, b.Target)
		}
	}
}

func TestSliceResources(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	measured := []sliceWindow{{at(10), at(30)}, {at(110), at(130)}}
	busy := []sliceWindow{{at(0), at(32)}, {at(100), at(132)}}
	// Every slice has its own: their sum.
	u := sliceUsage{source: "proc", cpu: []float64{0.01, 0.02}, cpuOK: []bool{true, true}}
	if cpu, ok := sliceResources(u, measured, busy); !ok || cpu != 0.01+0.02 {
		t.Errorf("all slices: %v %v", cpu, ok)
	}
	// The stream's: the span's CPU (from 10 to 130 ms) times the
	// measured share of the load in it: 40ms of 22ms (10 to 32) + 30ms
	// (100 to 130) = 52ms.
	u = sliceUsage{source: "docker", cpu: []float64{0, 0}, cpuOK: []bool{false, false},
		spanFrom: at(10), spanTo: at(130), spanCPU: 0.052, spanOK: true}
	if cpu, ok := sliceResources(u, measured, busy); !ok || math.Abs(cpu-0.04) > 1e-12 {
		t.Errorf("span: %v %v, want 0.04", cpu, ok)
	}
	u.spanOK = false
	if _, ok := sliceResources(u, measured, busy); ok {
		t.Error("measured without a span figure")
	}
	if _, ok := sliceResources(sliceUsage{}, measured, busy); ok {
		t.Error("a target without readings measured")
	}
}

// TestSampleSlicesLateReadings: the engine's stream, read late, gives no
// slice its own CPU, and the span of the slices its CPU by rate.
func TestSampleSlicesLateReadings(t *testing.T) {
	t.Parallel()
	t0 := time.Now()
	svc := &lateReadings{t0: t0, rate: 0.5, lag: 300 * time.Millisecond, tick: 100 * time.Millisecond}
	from := t0.Add(50 * time.Millisecond)
	windows := make(chan sliceWindow, 4)
	for i := range 4 {
		w := from.Add(time.Duration(i) * 200 * time.Millisecond)
		windows <- sliceWindow{w, w.Add(100 * time.Millisecond)}
	}
	close(windows)
	u := <-sampleSlices(context.Background(), svc, windows, sampleEvery)
	if len(u.cpuOK) != 4 || slices.Contains(u.cpuOK, true) || u.source != "docker" || u.memMean != 1<<20 || u.memPeak != 1<<20 {
		t.Errorf("usage %+v: want 4 slices without CPU of their own, memory 1MiB", u)
	}
	// From the first slice's start to the last one's end: 700ms at 0.5.
	if !u.spanOK || !u.spanFrom.Equal(from) || u.spanTo.Sub(u.spanFrom) != 700*time.Millisecond || math.Abs(u.spanCPU-0.35) > 1e-9 {
		t.Errorf("span %v to %v: CPU %v (%v), want 0.35 s over 700ms", u.spanFrom, u.spanTo, u.spanCPU, u.spanOK)
	}
}
