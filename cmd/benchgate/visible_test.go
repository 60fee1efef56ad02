package main

import "testing"

// An error's text reaches the terminal by textsafe's rule with its lines
// and tabs kept: escape sequences, a lone CSI byte, invalid UTF-8 and bidi
// overrides are shown, not acted on.
func TestVisible(t *testing.T) {
	in := "gate failed: pre-flight x fails (exit 1: \x1b[31mred\x1b[0m \x9b2J \u009b2J \xff ok \uFFFD ok\r\u202eevil)\nnext\tline"
	want := `gate failed: pre-flight x fails (exit 1: \x1b[31mred\x1b[0m \x9b2J \u009b2J \xff ok ` + "\uFFFD" + ` ok\r\u202eevil)` + "\nnext\tline"
	if got := visible(in); got != want {
		t.Errorf("visible =\n%q\nwant\n%q", got, want)
	}
}
