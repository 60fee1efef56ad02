package gate

import (
	"fmt"
	"math"
	"slices"
)

// PairedRatio returns the ratio candidate/baseline of paired observations
// with its two-sided interval at the given confidence.
//
// The pairs are grouped by round (in order of first appearance; within a
// round in the order given, which must be time order). Each round's pairs
// are split into min(batches, pairs in the round) contiguous batches of
// near-equal size (sizes differ by at most 1, the larger first); batches < 1
// means DefaultBatches. A batch's observation is ln(Σcand / Σbase) over its
// pairs. The interval is Student-t over the batch observations (n-1 degrees
// of freedom); Ratio is exp of their mean and Lo, Hi are exp(mean ∓ h).
//
// Why batches: slices next to each other in time share noise (a side's
// own state, its garbage collector or caches, or a neighbour's burst that
// overlaps one side's slices more than the other's, changes more slowly
// than a slice), so the log ratios of adjacent pairs are autocorrelated and
// a t interval over single pairs, which assumes independence, would be too
// narrow. The means of contiguous batches of pairs correlate less, since
// only the pairs at a batch's edges share noise with the next batch, but
// at a few pairs a batch they are not independent (AR(1) noise at 0.4–0.8
// from pair to pair, 4 pairs a batch: 0.14–0.57), so one round's batches
// alone make too narrow an interval; with 2 rounds or more the rounds'
// spread widens it (below), and a scenario of the paired rule runs at
// least 2. Rounds are separated by the other cells' rungs and never share
// a batch. Under round interleaving each round has one pair, so each
// batch is one pair.
//
// Why a ratio of sums: a slice in which nothing was answered has a value
// of 0, which would make its own log ratio infinite; summed with the rest of
// its batch it only lowers that batch's observation. A batch whose every
// slice is 0 on one side (a stall longer than the batch: at 5–9 slice
// pairs a round, a batch is one or two pairs) is merged with the next
// batch of its round, or the last with the one before, so the stall still
// counts, as the low sum of a longer batch, rather than making the whole
// cell inconclusive; the round then has one batch fewer. Only a round whose
// every slice is 0 on one side makes the ratio impossible.
//
// Why logs: a change is a factor, and an interval for a factor is symmetric
// on the log scale (×1.25 and ×0.8 are the same distance from 1), and the
// spread of a log ratio does not depend on the metric's unit or size; exp of
// the mean log ratio is the geometric mean of the batch ratios, which
// weighs ×2 and ×½ alike.
//
// Data the interval cannot be made from is an error, never a panic: fewer
// than 2 batches, a batch whose sum on either side is not a finite number
// above 0, or a confidence outside (0, 1). A single round's interval
// assumes its batches independent, which is not checked: it is too narrow
// when the noise in the log ratio lasts longer than a batch
// (docs/statistics.md#how-many-rounds).
func PairedRatio(pairs []Pair, confidence float64, batches int) (Ratio, error) {
	return pairedRatio(pairs, confidence, batches, nil)
}

func pairedRatio(pairs []Pair, confidence float64, batches int, q *quantiles) (Ratio, error) {
	if !(confidence > 0 && confidence < 1) {
		return Ratio{}, fmt.Errorf("confidence %v is not between 0 and 1", confidence)
	}
	if batches < 1 {
		batches = DefaultBatches
	}
	rounds := groupRounds(pairs)
	logs := make([]float64, 0, len(pairs))
	roundMeans := make([]float64, 0, len(rounds))
	for _, ps := range rounds {
		first := len(logs)
		round, n := ps[0].Round, len(ps)
		k := min(batches, n)
		start := 0
		// sums of the batches of this round, an empty one merged on.
		var sums [][2]float64
		carry, pending := [2]float64{}, false
		for b := range k {
			size := n / k
			if b < n%k {
				size++
			}
			sb, sc := carry[0], carry[1]
			for _, p := range ps[start : start+size] {
				if math.IsNaN(p.Base) || math.IsNaN(p.Cand) || p.Base < 0 || p.Cand < 0 {
					side := "baseline"
					if math.IsNaN(p.Cand) || p.Cand < 0 {
						side = "candidate"
					}
					return Ratio{}, fmt.Errorf("a paired observation is negative or not a number (%s, round %d)", side, round)
				}
				sb += p.Base
				sc += p.Cand
			}
			start += size
			for _, side := range []struct {
				name string
				sum  float64
			}{{"baseline", sb}, {"candidate", sc}} {
				if math.IsInf(side.sum, 1) {
					return Ratio{}, fmt.Errorf("a paired observation is not a finite number (%s, round %d)", side.name, round)
				}
			}
			if sb > 0 && sc > 0 {
				sums, carry, pending = append(sums, [2]float64{sb, sc}), [2]float64{}, false
				continue
			}
			carry, pending = [2]float64{sb, sc}, true
		}
		if pending {
			if len(sums) == 0 {
				side := "baseline"
				if carry[0] > 0 {
					side = "candidate"
				}
				return Ratio{}, fmt.Errorf("the %s measured 0 in every slice of round %d (for a rate: it answered nothing), so the round has no ratio", side, round)
			}
			last := &sums[len(sums)-1]
			last[0] += carry[0]
			last[1] += carry[1]
		}
		for _, sum := range sums {
			logs = append(logs, math.Log(sum[1]/sum[0]))
		}
		var sum float64
		for _, l := range logs[first:] {
			sum += l
		}
		roundMeans = append(roundMeans, sum/float64(len(logs)-first))
	}
	if len(logs) < 2 {
		if len(logs) < len(pairs) {
			return Ratio{}, fmt.Errorf("need >= 2 batches of paired observations, have %d (of %d pairs)", len(logs), len(pairs))
		}
		return Ratio{}, fmt.Errorf("need >= 2 paired observations, have %d", len(logs))
	}
	// Summarize is the same Student-t interval as the sides' summaries.
	s := summarize(logs, confidence, q)
	n, spread := len(logs), SpreadBatches
	se := LogSpread{Batches: len(logs), SEBatches: s.SD / math.Sqrt(float64(len(logs)))}
	if len(roundMeans) >= 2 && len(roundMeans) < len(logs) {
		// Batches see the noise within a round; what differs between
		// the two sides for a whole round (one process's own state, a
		// neighbour that stayed on one side's CPU) only the spread of
		// the rounds' means shows. The interval is the wider of the two,
		// so a round-long difference between two instances of the same
		// build cannot pass for a change (measured: an A/A gate under
		// a noisy neighbour failed on batches alone).
		r := summarize(roundMeans, confidence, q)
		se.Rounds, se.SERounds = len(roundMeans), r.SD/math.Sqrt(float64(len(roundMeans)))
		if r.HalfWidth > s.HalfWidth {
			s.HalfWidth, n, spread = r.HalfWidth, len(roundMeans), SpreadRounds
		}
	}
	return Ratio{
		Ratio:  math.Exp(s.Mean),
		Lo:     math.Exp(s.Mean - s.HalfWidth),
		Hi:     math.Exp(s.Mean + s.HalfWidth),
		N:      n,
		Pairs:  len(pairs),
		Spread: spread,
		Log:    se,
	}, nil
}

// groupRounds splits pairs into rounds in order of first appearance. The
// pairs of a round are normally contiguous and then are not copied.
func groupRounds(pairs []Pair) [][]Pair {
	var runs [][]Pair
	start := 0
	for i := 1; i <= len(pairs); i++ {
		if i == len(pairs) || pairs[i].Round != pairs[start].Round {
			runs = append(runs, pairs[start:i])
			start = i
		}
	}
	seen := make(map[int]int, len(runs)) // round → index in merged
	var merged [][]Pair
	for _, run := range runs {
		if j, ok := seen[run[0].Round]; ok {
			merged[j] = append(slices.Clip(merged[j]), run...)
			continue
		}
		seen[run[0].Round] = len(merged)
		merged = append(merged, run)
	}
	return merged
}
