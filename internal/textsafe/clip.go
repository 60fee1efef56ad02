package textsafe

import (
	"strconv"
	"unicode/utf8"
)

// QuoteRunes is how much of a name or value read from input an error
// quotes: enough to recognise it (a benchmark's name is at most 1024
// characters, most far fewer), while a 10 MB one still makes an error of
// a few hundred bytes rather than a 10 MB line in a workflow log.
const QuoteRunes = 200

// Clip returns s cut to at most n runes at a rune boundary. A cut s ends
// in "…" and says how long s was: `abc… (10000000 characters)`. An s of n
// runes or fewer is returned as it is. A character is a rune, as
// utf8.RuneCountInString counts them (a byte of invalid UTF-8 is one).
// Clip does not escape: use Quote, or Line on its result, for text shown
// on a terminal.
func Clip(s string, n int) string {
	head, cut := clip(s, n)
	if !cut {
		return s
	}
	return head + "… (" + strconv.Itoa(utf8.RuneCountInString(s)) + " characters)"
}

// Quote is Clip for an error that quotes its input with %q: s cut as Clip
// cuts it, quoted as strconv.Quote quotes it, with the length of s outside
// the quotes so that it is not read as part of s: `"abc…" (10000000
// characters)`. Use it with %s in place of %q.
func Quote(s string, n int) string {
	head, cut := clip(s, n)
	if !cut {
		return strconv.Quote(s)
	}
	return strconv.Quote(head+"…") + " (" + strconv.Itoa(utf8.RuneCountInString(s)) + " characters)"
}

// clip returns the first n runes of s (fewer when n < 1: none), and whether
// that left anything off.
func clip(s string, n int) (string, bool) {
	if n < 0 {
		n = 0
	}
	if len(s) <= n {
		return s, false
	}
	i := 0
	for k := 0; k < n; k++ {
		if i == len(s) {
			return s, false
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	if i == len(s) {
		return s, false
	}
	return s[:i], true
}
