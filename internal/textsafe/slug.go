package textsafe

import "strings"

// Slug reduces s to a name fit for a file or a URL path: the characters
// keep accepts stay, and each run of others becomes one '-' (a kept '-'
// counts as the run's dash); then the characters of trim go from both
// ends, the rest is cut to maxBytes (keep accepts only ASCII, so the cut
// splits no character) and trimmed again, and a name with nothing left is
// fallback. The chart files' names and the history site's pages are
// slugs: one function, so the two never disagree on what a name becomes.
func Slug(s string, keep func(rune) bool, trim string, maxBytes int, fallback string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		switch {
		case r < 128 && keep(r):
			b.WriteRune(r)
			dash = r == '-'
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), trim)
	if len(out) > maxBytes {
		out = strings.TrimRight(out[:maxBytes], trim)
	}
	if out == "" {
		return fallback
	}
	return out
}
