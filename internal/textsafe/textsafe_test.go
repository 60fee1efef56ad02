package textsafe

import (
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in         string
		line, text string
	}{
		{"Q01 héllo ✓ µs ±1", "Q01 héllo ✓ µs ±1", "Q01 héllo ✓ µs ±1"},
		{"", "", ""},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
		{"a\tb\nc", `a\tb\nc`, "a\tb\nc"},
		{"ok\rFAIL", `ok\rFAIL`, `ok\rFAIL`},
		{"nul\x00 bel\x07 del\x7f", `nul\x00 bel\a del\x7f`, `nul\x00 bel\a del\x7f`},
		// U+009B is CSI as a character; a lone byte 0x9b is not UTF-8,
		// and some terminals take it for CSI too. They stay apart.
		{"c1 \u009b31m", `c1 \u009b31m`, `c1 \u009b31m`},
		{"bad \x9b31m \xff", `bad \x9b31m \xff`, `bad \x9b31m \xff`},
		{"\uFFFD stays", "\uFFFD stays", "\uFFFD stays"},
		// The bidi overrides, embeddings and isolates, and the marks.
		{"abc\u202edcba\u202c", `abc\u202edcba\u202c`, `abc\u202edcba\u202c`},
		{"\u202a\u202b\u202d \u2066\u2067\u2068\u2069 \u200e\u200f\u061c", `\u202a\u202b\u202d \u2066\u2067\u2068\u2069 \u200e\u200f\u061c`, `\u202a\u202b\u202d \u2066\u2067\u2068\u2069 \u200e\u200f\u061c`},
		// Invisible characters that make one name look like another.
		{"ad\u200bmin \u2060\ufeff\u00ad", `ad\u200bmin \u2060\ufeff\u00ad`, `ad\u200bmin \u2060\ufeff\u00ad`},
		{"\u3164 \u115f \ufe0f", `\u3164 \u115f \ufe0f`, `\u3164 \u115f \ufe0f`},
		{"tag\U000e0041", `tag\U000e0041`, `tag\U000e0041`},
		{"a\u2028b\u2029c\u0085", `a\u2028b\u2029c\u0085`, `a\u2028b\u2029c\u0085`},
		{"nbsp\u00a0", `nbsp\u00a0`, `nbsp\u00a0`},
		{"private\ue000", `private\ue000`, `private\ue000`},
		// Escapes already in the text are text: a second pass changes nothing.
		{`\x1b[31m`, `\x1b[31m`, `\x1b[31m`},
	} {
		if got := Line(tc.in); got != tc.line {
			t.Errorf("Line(%q) = %q, want %q", tc.in, got, tc.line)
		}
		if got := Text(tc.in); got != tc.text {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.text)
		}
	}
	if got := Escape("a\tb\nc", Tab); got != `a	b\nc` {
		t.Errorf("Escape(Tab) = %q", got)
	}
	if got := Escape("a\tb\nc", Newline); got != "a\\tb\nc" {
		t.Errorf("Escape(Newline) = %q", got)
	}
}

func TestEscapeNoAllocation(t *testing.T) {
	s := "plain\ttext, héllo ✓ 12.5 ms"
	if n := testing.AllocsPerRun(100, func() { Escape(s, Tab) }); n != 0 {
		t.Errorf("clean text: %v allocations, want 0", n)
	}
}

// unsafeRune is the property's own list of what must never reach a
// terminal, written independently of Shown: C0 and C1 controls and DEL,
// the bidi controls, every format character (zero-width ones, tags, the
// byte order mark), the line and paragraph separators, and the invisible
// fillers.
func unsafeRune(r rune) bool {
	switch {
	case r < 0x20, 0x7f <= r && r <= 0x9f:
		return true
	case 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069, r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	case r == 0x2028, r == 0x2029, r == 0x3164, r == 0x115f, r == 0x1160, r == 0xffa0, r == 0x034f:
		return true
	case 0xfe00 <= r && r <= 0xfe0f, 0xe0000 <= r && r <= 0xe0fff:
		return true
	}
	return unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Cc, r)
}

// FuzzEscape checks the rule's promises on any input, for each choice of
// what passes: the output is valid UTF-8, holds no control but an allowed
// tab or newline and no bidi, format or invisible character, and a second
// pass changes nothing. Without backslashes or quotes in the input, the
// one-line form is a Go string literal's body that reads back as the input,
// so nothing was lost or invented.
func FuzzEscape(f *testing.F) {
	for _, s := range []string{
		"\x1b[31mred\x1b[0m", "\x1b]0;title\x07", "\x1b[2J\x1b[H", "\u009b31m", "\x9b31m", "\xff\xfe",
		"abc\u202edcba", "\u2066\u2067\u2068\u2069", "\u200e\u200f\u061c", "ad\u200bmin", "\ufeff",
		"a\tb\nc\r\n", "\n::set-output name=x::y", "::error::x", "##[error]x", "@org/team #1",
		"](javascript:alert(1))", "<img src=x>", "&#64;team", "\U000e0041\U000e007f", "\u3164", "❤\ufe0f",
		"\xed\xa0\x80", "\xf4\x90\x80\x80", "é", "\x00",
	} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(Tab|Newline))
	}
	f.Fuzz(func(t *testing.T, s string, a uint8) {
		allow := Allow(a) & (Tab | Newline)
		out := Escape(s, allow)
		if !utf8.ValidString(out) {
			t.Fatalf("Escape(%q, %d) = %q: not UTF-8", s, allow, out)
		}
		for _, r := range out {
			if allowed(r, allow) {
				continue
			}
			if unsafeRune(r) || !unicode.IsPrint(r) {
				t.Fatalf("Escape(%q, %d) = %q: holds %U", s, allow, out, r)
			}
		}
		if again := Escape(out, allow); again != out {
			t.Fatalf("Escape is not idempotent on %q: %q, then %q", s, out, again)
		}
		if !strings.ContainsAny(s, `\"`) {
			if back, err := strconv.Unquote(`"` + Line(s) + `"`); err != nil || back != s {
				t.Fatalf("Line(%q) = %q reads back as %q (%v)", s, Line(s), back, err)
			}
		}
	})
}

func TestSlug(t *testing.T) {
	t.Parallel()
	alnum := func(r rune) bool { return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' }
	file := func(r rune) bool { return alnum(r) || r >= 'A' && r <= 'Z' || r == '.' || r == '_' || r == '-' }
	for _, c := range []struct {
		s, trim, want string
		keep          func(rune) bool
		max           int
	}{
		{"demo-api q01 c=8", "-", "demo-api-q01-c-8", alnum, 48},
		{"  ../..//x  ", ".-", "x", file, 48},
		{"a--b", ".-", "a--b", file, 48},     // kept dashes stay, none added after them
		{"a -b", ".-", "a--b", file, 48},     // a refused run, then a kept '-'
		{"ünïcödé", "-", "n-c-d", alnum, 48}, // only ASCII is kept
		{"abcdef-ghij", "-", "abcdef", alnum, 7},
		{"<>", "-", "cell", alnum, 48},
	} {
		fallback := "cell"
		if got := Slug(c.s, c.keep, c.trim, c.max, fallback); got != c.want {
			t.Errorf("Slug(%q) = %q, want %q", c.s, got, c.want)
		}
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s          string
		n          int
		clip, quot string
	}{
		{"", 3, "", `""`},
		{"abc", 3, "abc", `"abc"`},
		{"abcd", 3, "abc… (4 characters)", `"abc…" (4 characters)`},
		{"ééé", 3, "ééé", `"ééé"`},
		{"éééé", 2, "éé… (4 characters)", `"éé…" (4 characters)`},
		{"a\x1bb", 2, "a\x1b… (3 characters)", `"a\x1b…" (3 characters)`},
		{"\xff\xfe\xfd", 1, "\xff… (3 characters)", `"\xff…" (3 characters)`},
		{"abc", 0, "… (3 characters)", `"…" (3 characters)`},
		{"abc", -1, "… (3 characters)", `"…" (3 characters)`},
	} {
		if got := Clip(c.s, c.n); got != c.clip {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.s, c.n, got, c.clip)
		}
		if got := Quote(c.s, c.n); got != c.quot {
			t.Errorf("Quote(%q, %d) = %q, want %q", c.s, c.n, got, c.quot)
		}
	}
	long := strings.Repeat("x", 10_000_000)
	if got := Quote(long, QuoteRunes); len(got) > QuoteRunes+40 || !strings.HasSuffix(got, `…" (10000000 characters)`) {
		t.Errorf("Quote of 10 MB: %d bytes, ends %q", len(got), got[len(got)-30:])
	}
}

func FuzzClip(f *testing.F) {
	f.Add("abc", 2)
	f.Add("é\xff", 1)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n > 1000 {
			n %= 1000
		}
		got := Clip(s, n)
		if got == s {
			if utf8.RuneCountInString(s) > max(n, 0) {
				t.Fatalf("Clip(%q, %d) left it whole", s, n)
			}
			return
		}
		head, _, ok := strings.Cut(got, "… (")
		if !ok || !strings.HasPrefix(s, head) || utf8.RuneCountInString(head) != max(n, 0) {
			t.Fatalf("Clip(%q, %d) = %q", s, n, got)
		}
	})
}
