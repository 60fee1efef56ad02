package main

import "testing"

// TestNameFlag: compare's -name holds a name report.CheckName takes, and
// refuses one it does not (TestCheckName has the cases).
func TestNameFlag(t *testing.T) {
	t.Parallel()
	var n nameFlag
	if err := n.Set("sums-nightly"); err != nil || n != "sums-nightly" {
		t.Errorf("Set(sums-nightly): %v, holds %q", err, n)
	}
	if err := n.Set("a\nb"); err == nil || n != "sums-nightly" {
		t.Errorf("Set(a newline): %v, holds %q", err, n)
	}
}
