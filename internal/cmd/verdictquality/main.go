// Command verdictquality aggregates the gates scripts/verdict-quality.sh
// ran into one markdown table row: how often an A/A gate (the same build on
// both sides) failed, how often an A/B gate (a slowed candidate) found the
// regression, by run and by gated cell, how many A/A ties could not have
// resolved a change of the tie band, and the mean wall time of a gate.
//
//	verdictquality -condition quiet -metric rps OUT/runs.tsv
//
// runs.tsv has one line per gate, tab-separated: kind (aa or ab), index,
// seed, exit code, wall seconds, and the gate's -out directory (relative
// to the file's own directory), whose decisions.json is read. A gate that
// exited other than 0 or 1, or left no readable decisions.json, is broken:
// it is counted apart and left out of every other column.
//
// A decision's "unresolved" field says whether a tie is unresolved. A
// decisions.json written before that field existed is read too: the tie is
// then unresolved when its "resolution", or else the overlap rule's
// resolution (|mc-mb| + hb + hc)/|mb|, exceeds the tie band, and the
// column is marked "(computed)".
//
// With -replay it reads each gate's results.json instead and re-decides it
// with the one decision path (package decide) under the design -rule,
// -reps, -maxreps and -metric give (each unset: the gate's own): the first
// -reps rounds of every cell, then one more round of each cell still open
// (gate.Open, as the runner's looks) up to -maxreps. So one benchmark that
// measured enough rounds gives the verdicts of every rule, fixed or
// adaptive design and gated metric on the same rungs; the wall time of a
// replayed gate is estimated from the sessions it would not have run.
//
// The row goes to stdout; -header prints the table's header first. What
// each gate found goes to stderr.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/internal/fsx"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	switch {
	case err == nil:
	case errors.Is(err, errUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "verdictquality:", err)
		os.Exit(1)
	}
}

var errUsage = errors.New("usage")

// labels name the design measured: the scenario fields the script set,
// "" where it left the scenario's default.
type labels struct {
	condition, metric               string
	rule, interleave, reps, maxReps string
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("verdictquality", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var l labels
	fs.StringVar(&l.condition, "condition", "quiet", "the condition measured, e.g. quiet or \"noisy 30%\"")
	fs.StringVar(&l.metric, "metric", "rps", "the gated metric, or a comma list of them")
	fs.StringVar(&l.rule, "rule", "", "gate.rule the scenario set (empty: its default)")
	fs.StringVar(&l.interleave, "interleave", "", "load.interleave the scenario set (empty: its default)")
	fs.StringVar(&l.reps, "reps", "", "load.repetitions the scenario set (empty: its default)")
	fs.StringVar(&l.maxReps, "maxreps", "", "load.max_repetitions the scenario set (empty: its default)")
	header := fs.Bool("header", false, "print the table's header before the row")
	replay := fs.Bool("replay", false, "re-decide each gate from its results.json under -rule, -reps, -maxreps, -metric and -false-failure (each unset: the gate's own) instead of reading its decisions.json")
	falseFailure := fs.String("false-failure", "", "with -replay: gate.false_failure to re-decide at, a level or off (empty: the gate's own)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: verdictquality [flags] runs.tsv\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return errUsage
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	var d *design
	if *replay {
		d = &design{rule: l.rule, metric: l.metric}
		switch f, err := strconv.ParseFloat(*falseFailure, 64); {
		case *falseFailure == "":
		case *falseFailure == "off":
			d.falseFailure = new(float64)
		case err == nil && f > 0 && f < 1:
			d.falseFailure = &f
		default:
			fmt.Fprintf(stderr, "verdictquality: -false-failure %q: want a level in (0, 1) or off\n", *falseFailure)
			return errUsage
		}
		for _, v := range []struct {
			name, text string
			n          *int
		}{{"reps", l.reps, &d.reps}, {"maxreps", l.maxReps, &d.maxReps}} {
			if v.text == "" {
				continue
			}
			n, err := strconv.Atoi(v.text)
			if err != nil || n < 1 {
				fmt.Fprintf(stderr, "verdictquality: -%s %q: want a whole number >= 1\n", v.name, v.text)
				return errUsage
			}
			*v.n = n
		}
	}
	runs, err := readRuns(fs.Arg(0), d)
	if err != nil {
		return err
	}
	a := aggregate(runs)
	for _, r := range runs {
		fmt.Fprintln(stderr, r.describe())
	}
	if *header {
		fmt.Fprintln(stdout, tableHeader)
		fmt.Fprintln(stdout, tableRule)
	}
	fmt.Fprintln(stdout, a.row(l))
	fmt.Fprintln(stderr, "* in rule/interleave/reps: the scenario's default (the script did not set it); reps: the rounds the gates decided on")
	return nil
}

const (
	tableHeader = "| condition | metric | rule/interleave/reps | A/A false failures | A/B runs detected | A/B cells detected | A/A unresolved ties | mean s/gate | broken runs |"
	tableRule   = "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
)

// gateRun is one gate of the benchmark and what its decisions.json says.
type gateRun struct {
	kind  string // "aa" or "ab"
	index int
	seed  string
	exit  int
	wall  float64
	dir   string

	broken string // why the run is left out; "" when it counts

	rounds    int    // rounds decided
	rule      string // the rule the decisions record; "" when they do not
	gated     int    // gated decisions (cell × gated metric)
	regressed int    // of which regressions
	ties      int    // of which ties
	open      int    // of which unresolved ties
	undecided int    // of which inconclusive (or missing)
	computed  bool   // some tie's resolution was computed here, not read
	failKinds []string

	cellRounds []int  // replayed: the rounds each cell took
	replayed   string // replayed: the design, for the description
}

// decisionsDoc is the part of decisions.json read here.
type decisionsDoc struct {
	Outcome string `json:"outcome"`
	Rounds  struct {
		Decided int `json:"decided"`
	} `json:"rounds"`
	Settings struct {
		TieWithin    float64            `json:"tie_within"`
		TieWithinFor map[string]float64 `json:"tie_within_for"`
	} `json:"settings"`
	Cells []struct {
		Gated     []string   `json:"gated"`
		Decisions []decision `json:"decisions"`
	} `json:"cells"`
	Failures []struct {
		Kind string `json:"kind"`
	} `json:"failures"`
}

type decision struct {
	Metric    string  `json:"metric"`
	Baseline  summary `json:"baseline"`
	Candidate summary `json:"candidate"`
	Verdict   string  `json:"verdict"`
	Rule      string  `json:"rule"`
	// Absent from files written before they existed.
	Unresolved *bool    `json:"unresolved"`
	Resolution *float64 `json:"resolution"`
}

type summary struct {
	Mean      float64 `json:"mean"`
	HalfWidth float64 `json:"half_width"`
}

// unresolved says whether d is an unresolved tie at band, and whether that
// was computed here rather than read.
func (d decision) unresolved(band float64) (open, computed bool) {
	if d.Verdict != "tie" {
		return false, false
	}
	if d.Unresolved != nil {
		return *d.Unresolved, false
	}
	if d.Resolution != nil {
		return *d.Resolution > band, false
	}
	mb := math.Abs(d.Baseline.Mean)
	if mb == 0 {
		return true, true
	}
	res := (math.Abs(d.Candidate.Mean-d.Baseline.Mean) + d.Baseline.HalfWidth + d.Candidate.HalfWidth) / mb
	return res > band, true
}

// readRuns reads runs.tsv and what each gate decided: its decisions.json,
// or with a design, its results.json re-decided under it.
func readRuns(path string, d *design) ([]*gateRun, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	base := filepath.Dir(path)
	var runs []*gateRun
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Split(text, "\t")
		if len(fields) != 6 {
			return nil, fmt.Errorf("%s:%d: %d fields, want 6 (kind, index, seed, exit, wall seconds, dir)", path, line, len(fields))
		}
		r := &gateRun{kind: fields[0], seed: fields[2], dir: fields[5]}
		var e1, e2, e3 error
		r.index, e1 = strconv.Atoi(fields[1])
		r.exit, e2 = strconv.Atoi(fields[3])
		r.wall, e3 = strconv.ParseFloat(fields[4], 64)
		if err := errors.Join(e1, e2, e3); err != nil || (r.kind != "aa" && r.kind != "ab") {
			return nil, fmt.Errorf("%s:%d: want kind aa or ab, and numbers for index, exit and wall seconds: %q", path, line, text)
		}
		if !filepath.IsAbs(r.dir) {
			r.dir = filepath.Join(base, r.dir)
		}
		if d != nil {
			r.replay(*d)
		} else {
			r.read()
		}
		runs = append(runs, r)
	}
	return runs, sc.Err()
}

// read fills in what the run's decisions.json says, or why it is broken.
func (r *gateRun) read() {
	if r.exit != 0 && r.exit != 1 {
		r.broken = fmt.Sprintf("exit %d", r.exit)
		return
	}
	b, err := fsx.ReadFileLimited(filepath.Join(r.dir, "decisions.json"), benchdata.MaxDecisionsBytes)
	if err != nil {
		r.broken = fmt.Sprintf("exit %d without decisions.json", r.exit)
		return
	}
	var doc decisionsDoc
	if err := json.Unmarshal(b, &doc); err != nil {
		r.broken = fmt.Sprintf("decisions.json: %v", err)
		return
	}
	r.rounds = doc.Rounds.Decided
	for _, f := range doc.Failures {
		if !slices.Contains(r.failKinds, f.Kind) {
			r.failKinds = append(r.failKinds, f.Kind)
		}
	}
	for _, c := range doc.Cells {
		for _, m := range c.Gated {
			r.gated++
			i := slices.IndexFunc(c.Decisions, func(d decision) bool { return d.Metric == m })
			if i < 0 {
				r.undecided++
				continue
			}
			d := c.Decisions[i]
			if r.rule == "" {
				r.rule = d.Rule
			}
			band := doc.Settings.TieWithin
			if t, ok := doc.Settings.TieWithinFor[m]; ok {
				band = t
			}
			switch d.Verdict {
			case "regression":
				r.regressed++
			case "tie":
				r.ties++
				open, computed := d.unresolved(band)
				if open {
					r.open++
				}
				r.computed = r.computed || computed
			case "inconclusive":
				r.undecided++
			}
		}
	}
}

func (r *gateRun) describe() string {
	head := fmt.Sprintf("%s-%02d seed %s: exit %d, %.1fs", r.kind, r.index, r.seed, r.exit, r.wall)
	if r.broken != "" {
		return head + ": BROKEN (" + r.broken + "), " + r.dir
	}
	if r.replayed != "" {
		head += " (" + r.replayed + fmt.Sprintf(", wall estimated; cell rounds %v)", r.cellRounds)
	}
	s := fmt.Sprintf("%s, %d rounds: %d gated cells, %d regressed, %d ties (%d unresolved), %d inconclusive", head, r.rounds, r.gated, r.regressed, r.ties, r.open, r.undecided)
	if len(r.failKinds) > 0 {
		s += "; failures: " + strings.Join(r.failKinds, ",")
	}
	return s
}

// totals over the runs that count.
type totals struct {
	aa, ab                 int // runs
	aaFailed               int // A/A runs that failed the gate (exit 1)
	abDetected             int // A/B runs with a gated regression
	abCells, abRegressed   int // A/B gated cells, regressed
	aaCells, aaOpen        int // A/A gated cells, unresolved ties
	computed               bool
	wall                   float64
	gates                  int // that count
	minRounds, maxRounds   int
	sumRounds, roundsCount int
	rules                  []string
	broken                 []string
}

func aggregate(runs []*gateRun) totals {
	var t totals
	for _, r := range runs {
		if r.broken != "" {
			t.broken = append(t.broken, fmt.Sprintf("%s-%02d: %s", r.kind, r.index, r.broken))
			continue
		}
		t.wall += r.wall
		t.gates++
		// Replayed, the rounds are each cell's; read, the gate's.
		counted := r.cellRounds
		if counted == nil {
			counted = []int{r.rounds}
		}
		for _, n := range counted {
			if t.roundsCount == 0 || n < t.minRounds {
				t.minRounds = n
			}
			t.maxRounds = max(t.maxRounds, n)
			t.sumRounds += n
			t.roundsCount++
		}
		if r.rule != "" && !slices.Contains(t.rules, r.rule) {
			t.rules = append(t.rules, r.rule)
		}
		switch r.kind {
		case "aa":
			t.aa++
			if r.exit == 1 {
				t.aaFailed++
			}
			t.aaCells += r.gated
			t.aaOpen += r.open
			t.computed = t.computed || r.computed
		case "ab":
			t.ab++
			if r.regressed > 0 {
				t.abDetected++
			}
			t.abCells += r.gated
			t.abRegressed += r.regressed
		}
	}
	return t
}

func (t totals) row(l labels) string {
	orDefault := func(set, seen string) string {
		if set != "" {
			return set
		}
		if seen == "" {
			return "default"
		}
		return seen + "*"
	}
	reps := l.reps
	if t.roundsCount > 0 {
		if t.minRounds == t.maxRounds {
			reps = strconv.Itoa(t.minRounds)
		} else {
			reps = fmt.Sprintf("%d-%d, mean %.1f", t.minRounds, t.maxRounds, float64(t.sumRounds)/float64(t.roundsCount))
		}
		if l.reps == "" {
			reps += "*"
		}
	} else if reps == "" {
		reps = "default"
	}
	if l.maxReps != "" {
		reps += " (max " + l.maxReps + ")"
	}
	design := orDefault(l.rule, strings.Join(t.rules, ",")) + "/" + orDefault(l.interleave, "") + "/" + reps
	frac := func(k, n int) string { return fmt.Sprintf("%d/%d", k, n) }
	open := frac(t.aaOpen, t.aaCells)
	if t.computed {
		open += " (computed)"
	}
	mean := "-"
	if t.roundsCount > 0 {
		mean = fmt.Sprintf("%.1f", t.wall/float64(t.gates))
	}
	broken := strconv.Itoa(len(t.broken))
	if len(t.broken) > 0 {
		broken += " (" + strings.Join(t.broken, "; ") + ")"
	}
	cells := []string{
		l.condition, l.metric, design,
		frac(t.aaFailed, t.aa), frac(t.abDetected, t.ab), frac(t.abRegressed, t.abCells), open,
		mean, broken,
	}
	for i, c := range cells {
		cells[i] = strings.ReplaceAll(c, "|", `\|`)
	}
	return "| " + strings.Join(cells, " | ") + " |"
}
