package doctor

import "testing"

// A finding is one line by textsafe's rule: a process name holding an
// escape sequence, a newline or a bidi override shows them as escapes.
func TestVisible(t *testing.T) {
	t.Parallel()
	in := "evil\x1b[2J\nFAIL\tx \u202eabc \x9b \u009b"
	want := `evil\x1b[2J\nFAIL\tx \u202eabc \x9b \u009b`
	if got := visible(in); got != want {
		t.Errorf("visible(%q) = %q, want %q", in, got, want)
	}
}
