package gate_test

import (
	"testing"

	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/internal/gatesim"
)

// TestWholeGateFalseFailure is the whole gate's error control, simulated
// (internal/gatesim: 12 cells × rps and cpu_per_req gated, the defaults'
// 5 rounds of 20 slice pairs, the measured noisy runner's noise scaled):
// with nothing changed, at most 1% of gates fail at every noise level and
// with each cell's noise its own, where without the control up to a
// quarter fail; and the changes the runner can resolve are still found
// in the cells as often as without it. Deterministic: seeded rows.
func TestWholeGateFalseFailure(t *testing.T) {
	t.Parallel()
	gate.Simulation(t)
	const gates = 2000
	on, off := gatesim.DefaultDesign(12), gatesim.DefaultDesign(12)
	off.Settings.FalseFailure = 0
	rate := func(d gatesim.Design, n gatesim.Noise, change float64) (gatesFailed, cellsFound float64) {
		r := gatesim.Row(d, n, change, gates, 1)
		return float64(r.Failed) / float64(r.Gates), float64(r.CellsFound) / float64(r.Cells)
	}
	for _, n := range []gatesim.Noise{{Factor: 0.5}, {Factor: 1}, {Factor: 1.5}, {Factor: 2}, {Factor: 3}, {Factor: 6}, {Spread: true}} {
		if got, _ := rate(on, n, 0); got > 0.01 {
			t.Errorf("%s, A/A: %.4f of gates failed, want <= 0.01", n, got)
		}
	}
	if got, _ := rate(off, gatesim.Noise{Factor: 2}, 0); got < 0.15 {
		t.Errorf("×2 without the control: %.4f of A/A gates failed; the simulation no longer shows what the control is for (audit: 24%%)", got)
	}
	for _, c := range []struct {
		change, min float64
	}{{0.15, 0.88}, {0.20, 0.99}} {
		n := gatesim.Noise{Factor: 1}
		_, with := rate(on, n, c.change)
		_, without := rate(off, n, c.change)
		if with < c.min || with < without-0.02 {
			t.Errorf("×1, +%g%%: %.4f of cells found with the control, %.4f without; want >= %g and within 0.02",
				100*c.change, with, without, c.min)
		}
	}
}

// TestWholeGateFailsOnARealChange: the control never hides a change
// every cell shows; at twice the measured noise a gate still fails on a
// 15% change in most runs, and on 30% in nearly all (the cells it
// withholds are unresolved ties, which an adaptive design measures again).
func TestWholeGateFailsOnARealChange(t *testing.T) {
	t.Parallel()
	gate.Simulation(t)
	d := gatesim.DefaultDesign(12)
	for _, c := range []struct {
		factor, change, min float64
	}{{1, 0.15, 0.999}, {2, 0.15, 0.85}, {2, 0.30, 0.999}} {
		r := gatesim.Row(d, gatesim.Noise{Factor: c.factor}, c.change, 1000, 2)
		if got := float64(r.Failed) / float64(r.Gates); got < c.min {
			t.Errorf("×%g, +%g%%: %.4f of gates failed, want >= %g", c.factor, 100*c.change, got, c.min)
		}
	}
}

// TestWholeGateAdaptive: under an adaptive design (3 rounds, then one
// more for each open cell up to 8) the whole gate's error stays within
// its level (each look's decisions over that look's share of it), and the
// rounds it adds to the cells the control withheld recover the detection
// a fixed design of 5 rounds loses on a noisy runner. Deterministic.
func TestWholeGateAdaptive(t *testing.T) {
	t.Parallel()
	gate.Simulation(t)
	fixed := gatesim.DefaultDesign(12)
	adaptive := fixed.Adaptive(3, 8)
	for _, f := range []float64{1.5, 3} {
		r := gatesim.Row(adaptive, gatesim.Noise{Factor: f}, 0, 1000, 3)
		if got := float64(r.Failed) / float64(r.Gates); got > 0.01 {
			t.Errorf("adaptive, ×%g, A/A: %.4f of gates failed, want <= 0.01", f, got)
		}
	}
	n := gatesim.Noise{Factor: 2}
	a, x := gatesim.Row(adaptive, n, 0.20, 1000, 3), gatesim.Row(fixed, n, 0.20, 1000, 3)
	found := func(r gatesim.Result) float64 { return float64(r.CellsFound) / float64(r.Cells) }
	if found(a) < 0.7 || found(a) < found(x)+0.3 {
		t.Errorf("×2, +20%%: cells found %.4f adaptive 3–8, %.4f fixed 5; want >= 0.7 and 0.3 more", found(a), found(x))
	}
}
