package runner

import (
	"fmt"
	"time"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/internal/numtext"
	"github.com/benchgate/benchgate/scenario"
)

// How a cell's slices are cut when its requests are slow. A slice counts
// the requests that ended inside it, so a request that takes longer than
// the slice never counts anywhere (a 120 ms endpoint in 50 ms slices
// reads 0 rps on both sides), and one that takes a good share of it
// counts whole or not at all. From the first round's warm-up of a cell,
// which measures how long its requests take on both sides, the runner
// makes every slice of the cell last SliceRequests requests' time at
// least and settle one request's time (so every worker is in its steady
// state when the count starts, whatever the two sides' latencies); where
// that leaves fewer than MinSlicePairs pairs in the round's duration, the
// cell is measured by round interleaving instead (one rung each, in the
// seeded order), which any latency shorter than the duration can use.
const (
	// SliceRequests is the fewest request times a slice lasts: a request
	// cut by the slice's end costs it at most 1/SliceRequests of its
	// count, and the drain and settle around it about 2/SliceRequests of
	// the round's time.
	SliceRequests = 20
	// MinSlicePairs is the fewest slice pairs a round may be cut into
	// when its slices are lengthened: the paired rule's batches per round
	// (gate.DefaultBatches).
	MinSlicePairs = 5
)

// Slicing is how one cell's rounds are cut: the scenario's slices, longer
// ones, or round interleaving. It is chosen once per cell, from the cell's
// first round, so that every round of it is cut alike.
type Slicing struct {
	Round         bool // round interleaving: no slice length fits
	Slice, Settle time.Duration
	Pairs         int
	// Latency is the warm-up's mean time of a request on the slower side
	// (its length when that side answered none); 0 when there was no
	// warm-up to measure it.
	Latency time.Duration
	// Why says why the cell is cut otherwise than the scenario says; ""
	// when it is not.
	Why string
}

// Warmed is what one side's warm-up of a cell measured.
type Warmed struct {
	Answered int64
	Mean     time.Duration // of the answered requests
}

// ChooseSlicing is the slicing of a cell of the given open-loop rate (0:
// closed loop) under ls, from its two sides' warm-ups. Without a warm-up
// the scenario's slices stand. A side that answered nothing in its
// warm-up takes longer than the warm-up a request, how much longer is not
// known: the cell is measured by rounds, so a side that became that slow
// still has its requests measured.
func ChooseSlicing(ls scenario.LoadSettings, rate int, warm [2]Warmed) Slicing {
	sl := Slicing{Slice: ls.Slice, Settle: ls.Settle, Pairs: ls.SlicePairs()}
	if ls.Warmup <= 0 {
		return sl
	}
	silent := false
	for _, w := range warm {
		if w.Answered == 0 {
			silent = true
			sl.Latency = max(sl.Latency, ls.Warmup)
			continue
		}
		sl.Latency = max(sl.Latency, w.Mean)
	}
	lat := numtext.Seconds(sl.Latency.Seconds())
	if silent {
		lat = "at least the " + numtext.Seconds(ls.Warmup.Seconds()) + " warm-up (a side answered no request in it)"
	}
	need := SliceRequests * sl.Latency
	what := fmt.Sprintf("%d requests' time", SliceRequests)
	if rate > 0 {
		// An open loop's slice must also hold that many calls.
		if n := time.Duration(SliceRequests) * time.Second / time.Duration(rate); n > need {
			need, what = n, fmt.Sprintf("%d calls at %d/s", SliceRequests, rate)
		}
	}
	if silent {
		// How long its requests take is not known, only that it is
		// longer than the warm-up: no slice can be said to fit them.
		sl.Round = true
		sl.Why = fmt.Sprintf("a request takes %s: measured by round interleaving", lat)
		sl.Slice, sl.Settle, sl.Pairs = 0, 0, 0
		return sl
	}
	if need <= ls.Slice && sl.Latency <= ls.Settle {
		return sl
	}
	if need > ls.Slice {
		// Whole milliseconds, so the slice reads as it is.
		sl.Slice = (need + time.Millisecond - 1).Truncate(time.Millisecond)
	}
	sl.Settle = max(ls.Settle, (sl.Latency + time.Millisecond - 1).Truncate(time.Millisecond))
	sl.Pairs = max(1, int(ls.Duration/sl.Slice))
	if sl.Slice > ls.Slice && sl.Pairs < MinSlicePairs {
		sl.Round = true
		sl.Why = fmt.Sprintf("a request takes %s: a slice of %s (%s) leaves %d pair(s) in the %s duration, fewer than %d; measured by round interleaving",
			lat, numtext.Seconds(sl.Slice.Seconds()), what, int(ls.Duration/sl.Slice), numtext.Seconds(ls.Duration.Seconds()), MinSlicePairs)
		sl.Slice, sl.Settle, sl.Pairs = 0, 0, 0
		return sl
	}
	sl.Why = fmt.Sprintf("a request takes %s: slices of %s (%s) after %s settle, %d pairs a round",
		lat, numtext.Seconds(sl.Slice.Seconds()), what, numtext.Seconds(sl.Settle.Seconds()), sl.Pairs)
	return sl
}

// info is sl as the results file records it on a cell's rungs; nil when
// the scenario's slices stand.
func (sl Slicing) info() *benchdata.Slicing {
	if sl.Why == "" {
		return nil
	}
	i := &benchdata.Slicing{Interleave: scenario.InterleaveSlice, Slice: sl.Slice.Seconds(), Settle: sl.Settle.Seconds(),
		Latency: sl.Latency.Seconds(), Why: sl.Why}
	if sl.Round {
		i.Interleave = scenario.InterleaveRound
	}
	return i
}

// SlicingRule says before a run how ls's slices will be cut, for the dry
// run: the scenario's slices, the latency above which a cell's are
// lengthened, and the one above which it is measured by rounds.
func SlicingRule(ls scenario.LoadSettings) string {
	s := fmt.Sprintf("%s after %s settle, %d pairs a round", fmtSlice(ls.Slice), fmtSlice(ls.Settle), ls.SlicePairs())
	if ls.Warmup <= 0 {
		return s + "; with no warm-up a cell's requests are not timed before its slices: slices shorter than its requests measure nothing"
	}
	longer := min(ls.Slice/SliceRequests, ls.Settle)
	rounds := ls.Duration / (SliceRequests * MinSlicePairs)
	s += fmt.Sprintf("; a cell whose requests take over %s (timed in its first warm-up) gets slices of %d requests' time after a settle of one",
		fmtSlice(longer), SliceRequests)
	if rounds > longer {
		s += fmt.Sprintf(", and round interleaving over %s (fewer than %d such slices in %s)", fmtSlice(rounds), MinSlicePairs, fmtSlice(ls.Duration))
	} else {
		s += ", or round interleaving where fewer than " + fmt.Sprint(MinSlicePairs) + " such slices fit " + fmtSlice(ls.Duration)
	}
	if len(ls.Rate) > 0 {
		s += fmt.Sprintf("; an open-loop cell's slices hold %d calls at its rate", SliceRequests)
	}
	return s
}

func fmtSlice(d time.Duration) string { return numtext.Seconds(d.Seconds()) }
