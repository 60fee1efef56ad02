package main

import (
	"strings"
	"testing"
)

// TestNameFlag: compare's -name takes printable text up to 200
// characters; what a report, a comment or a site page could not show as
// written is refused with the reason.
func TestNameFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, err string }{
		{"sums-nightly", ""},
		{"go test -bench (store)", ""},
		{strings.Repeat("é", 200), ""},
		{"", "must not be blank"},
		{" \t", "must not be blank"},
		{strings.Repeat("a", 201), "more than 200 characters"},
		{"a\x1b[31mred", "printable text"},
		{"a\nb", "printable text"},
		{"a\xffb", "printable text"},
	} {
		var n nameFlag
		err := n.Set(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("Set(%q): %v", tc.in, err)
		case tc.err == "" && string(n) != tc.in:
			t.Errorf("Set(%q) holds %q", tc.in, n)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("Set(%q) = %v, want %q", tc.in, err, tc.err)
		}
	}
}
