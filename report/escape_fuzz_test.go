package report

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchgate/benchgate/internal/textsafe"
)

// markdownSeeds are names and texts a pull request or its target could
// write, each trying one of GitHub's ways to make text more than text.
var markdownSeeds = []string{
	"", "Q01", hostileClass, hostileDetails, "\x1b[31mred", "abc\u202edcba", "\u2066x\u2069", "@org/team", "@@x",
	"x@y.com", "#1", "o/r#12", "GH-12", "gh-1", "::error::x", "](javascript:alert(1))", "[x](http://evil)",
	"![i](y)", "[a]: http://x", "[x][1]", "[^1]", "<img src=x>", "<http://x>", "&#64;team", "&commat;x", "&lt;",
	"`code`", "``x``", "*em* _em_ ~~s~~", "a|b", `a\|b`, `\`, "$x$", "line\nbreak", "\r\n", "- item", "+ x",
	"1. x", "123) x", "1234567890. x", "---", "# h", "> q", "http://x https://y", "www.evil.com", "WwW.x", "w\u200bww.x", ":\u202e//x", "@\u200bteam",
	"h\ttp://x", "caf\xe9", "\xff\xfe", "µs ±1", "ad\u200bmin", "\u00a0nbsp", "a  ", "\\\n",
}

// mdSpecial are the characters EscapeMarkdown must leave only behind a
// backslash.
const mdSpecial = "\\`*_[]!|~$"

// asciiPunct are the characters CommonMark lets a backslash escape.
const asciiPunct = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"

// linkish finds, in the text as GitHub shows it (escapes and entities
// resolved), what GitHub would turn into a mention, an issue reference or
// a link.
var linkish = regexp.MustCompile(`(?i)@[a-z0-9]|#[a-z0-9]|gh-[0-9]|://|www\.`)

// listStart is a list marker or a thematic break at the start of a line.
var listStart = regexp.MustCompile(`^([-+]( |$)|--|[0-9]{1,9}[.)]( |$))`)

// renderMarkdown reads EscapeMarkdown's output as CommonMark reads text,
// or fails: a backslash only before ASCII punctuation, no special
// character without one, '&' only in the entities EscapeMarkdown writes,
// no '<' or '>', no line break. It returns the text shown.
func renderMarkdown(t *testing.T, in, out string) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < len(out); {
		c := out[i]
		switch {
		case c == '\\':
			if i+1 >= len(out) || !strings.ContainsRune(asciiPunct, rune(out[i+1])) {
				t.Fatalf("EscapeMarkdown(%q) = %q: a backslash at %d escapes nothing", in, out, i)
			}
			b.WriteByte(out[i+1])
			i += 2
			continue
		case strings.IndexByte(mdSpecial, c) >= 0:
			t.Fatalf("EscapeMarkdown(%q) = %q: %q at %d unescaped", in, out, c, i)
		case c == '<' || c == '>' || c == '\n' || c == '\r':
			t.Fatalf("EscapeMarkdown(%q) = %q: %q at %d", in, out, c, i)
		case c == '&':
			i += readEntity(t, in, out, i, &b, []string{"&amp;", "&lt;", "&gt;", zwsp})
			continue
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// readEntity writes the character of the entity at out[i], one of allowed
// or, when allowed is nil, any numeric one, and returns its length.
func readEntity(t *testing.T, in, out string, i int, b *strings.Builder, allowed []string) int {
	t.Helper()
	end := strings.IndexByte(out[i:], ';')
	if end < 0 {
		t.Fatalf("escaping %q gave %q: a raw '&' at %d", in, out, i)
	}
	e := out[i : i+end+1]
	if allowed != nil {
		ok := false
		for _, a := range allowed {
			ok = ok || a == e
		}
		if !ok {
			t.Fatalf("escaping %q gave %q: entity %q at %d", in, out, e, i)
		}
	}
	switch e {
	case "&amp;":
		b.WriteByte('&')
	case "&lt;":
		b.WriteByte('<')
	case "&gt;":
		b.WriteByte('>')
	default:
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(e, "&#"), ";"))
		if err != nil || !strings.HasPrefix(e, "&#") {
			t.Fatalf("escaping %q gave %q: entity %q at %d", in, out, e, i)
		}
		b.WriteRune(rune(n))
	}
	return len(e)
}

// checkShown fails unless the text shown has no link, mention or
// reference, no character textsafe would not show (the zero-width spaces
// put in aside), and reads, without them, as the input does: shownText's
// text, which is the input itself when textsafe shows all of it.
func checkShown(t *testing.T, name, in, out, shown string) {
	t.Helper()
	want := shownText(in)
	allShown := utf8.ValidString(in)
	for _, r := range in {
		allShown = allShown && textsafe.Shown(r)
	}
	if allShown && want != in || utf8.RuneCountInString(want) > utf8.RuneCountInString(in) {
		t.Fatalf("shownText(%q) = %q", in, want)
	}
	if m := linkish.FindString(shown); m != "" {
		t.Fatalf("%s(%q) = %q shows %q: GitHub would link it", name, in, out, m)
	}
	for _, r := range shown {
		if r != '\u200b' && !textsafe.Shown(r) {
			t.Fatalf("%s(%q) = %q shows %U", name, in, out, r)
		}
	}
	if got := strings.ReplaceAll(shown, "\u200b", ""); got != want {
		t.Fatalf("%s(%q) = %q shows %q, want %q", name, in, out, got, want)
	}
}

// FuzzEscapeMarkdown checks EscapeMarkdown's promise on any input: the
// output opens no tag, link, image, code span, emphasis, math, table cell
// or line, no list at its start, and GitHub finds in it no mention, issue
// reference or URL; and it shows the input's visible text, exactly.
func FuzzEscapeMarkdown(f *testing.F) {
	for _, s := range markdownSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := EscapeMarkdown(s)
		if !utf8.ValidString(out) {
			t.Fatalf("EscapeMarkdown(%q) = %q: not UTF-8", s, out)
		}
		if listStart.MatchString(out) {
			t.Fatalf("EscapeMarkdown(%q) = %q: a list marker", s, out)
		}
		checkShown(t, "EscapeMarkdown", s, out, renderMarkdown(t, s, out))
	})
}

// FuzzCodeText checks codeText's promise, for inside a table cell: the
// element's text holds no character HTML or markdown reads as syntax, only
// numeric references, and shows the input's visible text exactly, with no
// mention, reference or link in it.
func FuzzCodeText(f *testing.F) {
	for _, s := range markdownSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := codeText(s)
		if s == "" {
			return
		}
		inner, ok := strings.CutPrefix(out, "<code>")
		inner, ok2 := strings.CutSuffix(inner, "</code>")
		if !ok || !ok2 {
			t.Fatalf("codeText(%q) = %q", s, out)
		}
		var b strings.Builder
		for i := 0; i < len(inner); {
			c := inner[i]
			switch {
			case c == '&':
				i += readEntity(t, s, inner, i, &b, nil)
				continue
			case strings.IndexByte("<>`|*_[]!~$\\\n\r", c) >= 0:
				t.Fatalf("codeText(%q) = %q: %q at %d", s, out, c, i)
			}
			b.WriteByte(c)
			i++
		}
		if listStart.MatchString(inner) {
			t.Fatalf("codeText(%q) = %q: a list marker", s, out)
		}
		checkShown(t, "codeText", s, out, b.String())
	})
}
