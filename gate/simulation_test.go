package gate

import "testing"

// simulation skips a seeded simulation of thousands of gates under
// -short: one goroutine each, they are what the race detector slows
// tenfold and has nothing to find in (.ci/run's race pass runs -short;
// the full run, the README's test command, runs them all).
func simulation(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("a seeded simulation of thousands of gates: left to the run without -short")
	}
}

// Simulation is simulation for the external tests (package gate_test).
var Simulation = simulation
