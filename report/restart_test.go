package report

import (
	"strings"
	"testing"
)

// TestRestartIdentity: a run under load.restart says so on the identity
// line of both reports and in the claims; a run without says nothing.
func TestRestartIdentity(t *testing.T) {
	t.Parallel()
	in := adaptiveInput()
	for _, out := range []string{markdown(t, in), terminal(t, in)} {
		if strings.Contains(out, "fresh") || strings.Contains(out, "load.restart") {
			t.Errorf("a run that kept its targets up reads as restarted:\n%s", out)
		}
	}
	for every, want := range map[int][2]string{
		1: {"adaptive rounds 3–6, fresh targets every round (5 restarts) · ",
			"fresh instances started every round (`load.restart`, 5 restarts), each health-checked again and none measured while it started, " +
				"so what one instance brings (its heap layout, a JIT's choices, GC pacing, a cache warmed its own way) is drawn anew each round"},
		2: {"adaptive rounds 3–6, fresh targets every 2 rounds (5 restarts) · ",
			"is drawn anew for each block of rounds; the rounds of one block share it, so the rounds' spread holds it only in part."},
	} {
		in := adaptiveInput()
		in.Results.Scenario.Load.RestartEvery = every
		in.Results.Env.Restarts = 5
		md, term := markdown(t, in), terminal(t, in)
		if !strings.Contains(md, want[0]) || !strings.Contains(term, want[0]) {
			t.Errorf("every %d: identity lacks %q:\n%s\n%s", every, want[0], md, term)
		}
		if !strings.Contains(md, want[1]) {
			t.Errorf("every %d: claims lack %q:\n%s", every, want[1], md)
		}
	}
}
