package main

import "testing"

func TestVisible(t *testing.T) {
	in := "gate failed: pre-flight x fails (exit 1: \x1b[31mred\x1b[0m \x9b2J \xff ok \uFFFD)\nnext\tline"
	want := `gate failed: pre-flight x fails (exit 1: \x1b[31mred\x1b[0m \x9b2J \xff ok ` + "\uFFFD)\nnext\tline"
	if got := visible(in); got != want {
		t.Errorf("visible =\n%q\nwant\n%q", got, want)
	}
}
