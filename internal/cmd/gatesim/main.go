// Command gatesim prints the operating curve of the whole gate by seeded
// simulation through gate.Compare (internal/gatesim says how): the share
// of gates that fail, and of cell decisions that regress, against the
// true change at each noise level.
//
//	go run ./internal/cmd/gatesim [-gates 2000] [-cells 12] [-changes 0,5,10,15,20,30] [-noise 0.5,1,1.5,2,3,6,spread] [-false-failure 0.01]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/gatesim"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "gatesim:", err)
		os.Exit(2)
	}
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("gatesim", flag.ContinueOnError)
	gates := fs.Int("gates", 2000, "gates per row")
	cells := fs.Int("cells", 12, "cells per gate, each with rps and cpu_per_req gated")
	changes := fs.String("changes", "0,5,10,15,20,30", "true changes in percent (more time per request), comma list")
	noises := fs.String("noise", "0.5,1,1.5,2,3,6,spread", "noise factors, comma list; spread for each cell its own")
	ff := fs.Float64("false-failure", gate.DefaultFalseFailure, "the whole gate's error (gate.false_failure); 0 for none")
	rounds := fs.Int("rounds", 5, "rounds (load.repetitions)")
	maxRounds := fs.Int("max-rounds", 0, "adaptive: the most rounds an open cell takes (load.max_repetitions); 0 for a fixed design")
	seed := fs.Uint64("seed", 1, "seed; each row draws from its own, made of this, its noise and its change")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *gates < 1 || *cells < 1 {
		return fmt.Errorf("-gates and -cells must be >= 1")
	}
	var ns []gatesim.Noise
	for _, s := range strings.Split(*noises, ",") {
		if s == "spread" {
			ns = append(ns, gatesim.Noise{Spread: true})
			continue
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || !(f > 0) {
			return fmt.Errorf("-noise %q: want a factor > 0 or spread", s)
		}
		ns = append(ns, gatesim.Noise{Factor: f})
	}
	var cs []float64
	for _, s := range strings.Split(*changes, ",") {
		c, err := strconv.ParseFloat(s, 64)
		if err != nil || c < 0 {
			return fmt.Errorf("-changes %q: want a percentage >= 0", s)
		}
		cs = append(cs, c)
	}
	if *rounds < 2 || *maxRounds != 0 && *maxRounds < *rounds {
		return fmt.Errorf("-rounds must be >= 2 and -max-rounds 0 or >= -rounds")
	}
	d := gatesim.DefaultDesign(*cells).Adaptive(*rounds, max(*rounds, *maxRounds))
	d.Settings.FalseFailure = *ff
	design := fmt.Sprintf("%d rounds", d.Rounds)
	if d.MaxRounds > d.Rounds {
		design = fmt.Sprintf("adaptive, %d–%d rounds", d.Rounds, d.MaxRounds)
	}
	fmt.Fprintf(w, "%d gates a row, %d cells × 2 gated metrics, %s, false_failure %g\n\n", *gates, *cells, design, *ff)
	fmt.Fprintln(w, "| noise | true change | gates failed | cell decisions regressed | withheld a gate | rounds a cell |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: |")
	for _, n := range ns {
		for _, c := range cs {
			r := gatesim.Row(d, n, c/100, *gates, *seed)
			fmt.Fprintf(w, "| %s | %g%% | %.4f | %.4f | %.3f | %.2f |\n", n, c,
				float64(r.Failed)/float64(r.Gates), float64(r.CellsFound)/float64(r.Cells), float64(r.Withheld)/float64(r.Gates),
				float64(r.Rounds)/float64(r.Gates*d.Cells))
		}
	}
	return nil
}
