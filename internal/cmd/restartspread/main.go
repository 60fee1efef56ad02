// Command restartspread measures whether instance effects exist: for
// results files of A/A runs, some measured with load.restart and some
// without, it compares the spread of the rounds' mean log ratios between
// the two designs. Each round's mean log ratio of a cell is the paired
// ratio of that round alone, and each cell's interval the one the gate
// made, both through the product's own decision path (decide.Results), so
// the figures are what benchgate sees. scripts/restart-effect.sh runs it.
//
//	restartspread [-metric rps] results.json...
//
// It prints one line per cell of each file and, per design, the pooled
// variance of the rounds' means (Σ squares / Σ degrees of freedom over
// cells), the mean log half-width of the gate's intervals, how many
// intervals the rounds' spread made, and the ratio of the designs' pooled
// variances with an approximate 95% interval (log of a variance ratio,
// sd √(2/df₁ + 2/df₂)).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "restartspread:", err)
		os.Exit(1)
	}
}

// design pools the cells of the files of one design.
type design struct {
	ss, df    float64 // Σ squared deviations of round means, Σ (rounds − 1)
	halfWidth []float64
	byRounds  int
	cells     int
	verdicts  map[gate.Verdict]int
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("restartspread", flag.ContinueOnError)
	metric := fs.String("metric", "rps", "the metric whose paired ratio is compared")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("usage: restartspread [-metric rps] results.json...")
	}
	m := gate.Metric(*metric)
	designs := map[string]*design{}
	var order []string
	fmt.Fprintf(w, "# file\tdesign\tcell\trounds\tsd_round_means\thalf_width_log\tspread\tverdict\n")
	for _, path := range fs.Args() {
		res, err := benchdata.Read(path)
		if err != nil {
			return err
		}
		name := "kept up"
		if e := res.Scenario.Load.RestartEvery; e > 0 {
			name = fmt.Sprintf("restart every %d", e)
		}
		d := designs[name]
		if d == nil {
			d = &design{verdicts: map[gate.Verdict]int{}}
			designs[name] = d
			order = append(order, name)
		}
		whole, err := decide.Results(res)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		rounds := res.CellRounds()
		for _, c := range res.Plan.Cells {
			var means []float64
			for r := range rounds[c] {
				x, err := roundMean(res, c, r, m)
				if err != nil {
					return fmt.Errorf("%s: %s round %d: %w", path, c, r+1, err)
				}
				means = append(means, x)
			}
			if len(means) < 2 {
				continue
			}
			mean := 0.0
			for _, x := range means {
				mean += x / float64(len(means))
			}
			ss := 0.0
			for _, x := range means {
				ss += (x - mean) * (x - mean)
			}
			d.ss += ss
			d.df += float64(len(means) - 1)
			d.cells++
			dec := decision(whole, c, m)
			hw, spread, verdict := math.NaN(), "", gate.Verdict("")
			if dec != nil {
				verdict = dec.Verdict
				if p := dec.Paired; p != nil && p.Lo > 0 {
					hw, spread = math.Log(p.Hi/p.Lo)/2, p.Spread
					d.halfWidth = append(d.halfWidth, hw)
					if spread == gate.SpreadRounds {
						d.byRounds++
					}
				}
			}
			d.verdicts[verdict]++
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%.4f\t%.4f\t%s\t%s\n", path, name, c, len(means),
				math.Sqrt(ss/float64(len(means)-1)), hw, spread, verdict)
		}
	}
	fmt.Fprintf(w, "\n| design | cells | pooled sd of a round's mean log ratio (df) | mean log half-width of the interval | intervals made by the rounds' spread | verdicts |\n| --- | ---: | ---: | ---: | ---: | --- |\n")
	for _, name := range order {
		d := designs[name]
		var vs []string
		for _, v := range slices.Sorted(func(yield func(gate.Verdict) bool) {
			for v := range d.verdicts {
				if !yield(v) {
					return
				}
			}
		}) {
			vs = append(vs, fmt.Sprintf("%s %d", v, d.verdicts[v]))
		}
		fmt.Fprintf(w, "| %s | %d | %.4f (%g) | %.4f | %d of %d | %v |\n", name, d.cells, math.Sqrt(d.ss/d.df), d.df,
			meanOf(d.halfWidth), d.byRounds, len(d.halfWidth), vs)
	}
	if len(order) == 2 {
		a, b := designs[order[0]], designs[order[1]]
		ratio := (b.ss / b.df) / (a.ss / a.df)
		se := math.Sqrt(2/a.df + 2/b.df)
		fmt.Fprintf(w, "\nvariance of a round's mean, %s / %s: %.2f (approximate 95%%: %.2f–%.2f)\n",
			order[1], order[0], ratio, ratio*math.Exp(-1.96*se), ratio*math.Exp(1.96*se))
	}
	return nil
}

// roundMean is the mean log ratio of cell's round r alone: the paired
// ratio decide.Results makes of a results file holding that round only.
func roundMean(res *benchdata.Results, c benchdata.Cell, r int, m gate.Metric) (float64, error) {
	one := *res
	one.Rungs = nil
	for _, g := range res.Rungs {
		if g.Cell == c && g.Round == r {
			g.Round = 0
			one.Rungs = append(one.Rungs, g)
		}
	}
	one.Plan.Cells = []benchdata.Cell{c}
	one.Plan.Rounds, one.Plan.MaxRounds = 1, 0
	one.Scenario.Load.Repetitions, one.Scenario.Load.MaxRepetitions = 1, 1
	cmp, err := decide.Results(&one)
	if err != nil {
		return 0, err
	}
	d := decision(cmp, c, m)
	if d != nil && d.Paired != nil && d.Paired.Ratio > 0 {
		return math.Log(d.Paired.Ratio), nil
	}
	// A cell measured by round interleaving (its requests too slow for
	// slices) has one pair a round, from which no interval and so no
	// Ratio is made: its round's log ratio is that pair's, the means'.
	if d != nil && d.Baseline.N == 1 && d.Candidate.N == 1 && d.Baseline.Mean > 0 && d.Candidate.Mean > 0 {
		return math.Log(d.Candidate.Mean / d.Baseline.Mean), nil
	}
	return 0, fmt.Errorf("no paired ratio of %s", m)
}

// decision is cell c's decision of m in cmp; nil when there is none.
func decision(cmp gate.Comparison, c benchdata.Cell, m gate.Metric) *gate.Decision {
	for i := range cmp.Cells {
		if cmp.Cells[i].Key != gate.CellKey(c) {
			continue
		}
		for j := range cmp.Cells[i].Decisions {
			if cmp.Cells[i].Decisions[j].Metric == m {
				return &cmp.Cells[i].Decisions[j]
			}
		}
	}
	return nil
}

func meanOf(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x / float64(len(xs))
	}
	return s
}
