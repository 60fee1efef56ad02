package report

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// zwsp is a zero-width space as an HTML entity. GitHub links mentions,
// issue references and bare URLs in the rendered text, after markdown
// escapes and entities have been resolved, so the only way to stop them is a
// character that is really there but not seen.
const zwsp = "&#8203;"

// EscapeMarkdown returns s as GitHub-flavoured markdown text that renders as
// the same characters and as nothing else: no emphasis, code, links, images,
// HTML, math, mentions, issue references, autolinked URLs, and no line or
// table-cell break. Use it on every string a pull request can control
// (class, variant, pin set and scenario names, target specs, commits, error
// texts, reasons) wherever it lands: a table cell, a list item or a heading.
// Control characters become spaces and bidirectional overrides are dropped,
// so a name cannot reorder the text around it.
func EscapeMarkdown(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		next := s[i+size:]
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case isBidiControl(r):
		case unicode.IsControl(r):
			b.WriteByte(' ')
		case r == '&':
			// Escaped so that "&#64;team" stays text rather than becoming
			// a mention once GitHub resolves the entity.
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '@' || r == '#':
			b.WriteRune(r)
			b.WriteString(zwsp)
		case r == ':' && strings.HasPrefix(next, "//"):
			b.WriteString(":" + zwsp)
		case (r == 'w' || r == 'W') && len(next) >= 3 && strings.EqualFold(next[:3], "ww."):
			b.WriteString(s[i : i+3])
			b.WriteString(zwsp)
			size = 3
		case strings.ContainsRune("\\`*_[]!|~$", r):
			// Every ASCII punctuation character may be backslash-escaped in
			// CommonMark, and GFM honours "\|" inside a table cell.
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// escapeHTML returns s as text that renders as the same characters
// whether GitHub reads it as HTML or as markdown, for inside an HTML element
// such as <summary> or <code>, where it may do either: every character
// either would give a meaning to is a numeric character reference, which
// neither reads as syntax, and "\" is never needed, so none shows. Like
// EscapeMarkdown it breaks mentions, issue references and bare URLs with a
// zero-width space, turns control characters into spaces and drops
// bidirectional overrides.
func escapeHTML(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		next := s[i+size:]
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case isBidiControl(r):
		case unicode.IsControl(r):
			b.WriteByte(' ')
		case r == '@' || r == '#':
			b.WriteRune(r)
			b.WriteString(zwsp)
		case r == ':' && strings.HasPrefix(next, "//"):
			b.WriteString(":" + zwsp)
		case (r == 'w' || r == 'W') && len(next) >= 3 && strings.EqualFold(next[:3], "ww."):
			b.WriteString(s[i : i+3])
			b.WriteString(zwsp)
			size = 3
		case strings.ContainsRune("&<>\\`*_[]!|~$", r):
			b.WriteString("&#" + strconv.Itoa(int(r)) + ";")
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// codeText shows an untrusted string (a body excerpt, a request, a line of
// output) in monospace as the characters it holds, in a table cell or a
// list item: a <code> element around escapeHTML's text, so no backtick or
// pipe in it can end the element, the cell or the line. "" shows as
// "(empty)".
func codeText(s string) string {
	if s == "" {
		return "(empty)"
	}
	return "<code>" + escapeHTML(s) + "</code>"
}

// isBidiControl reports the invisible characters that reorder displayed
// text (the "trojan source" characters).
func isBidiControl(r rune) bool {
	return r == '\u200e' || r == '\u200f' || r == '\u061c' ||
		('\u202a' <= r && r <= '\u202e') || ('\u2066' <= r && r <= '\u2069')
}

// TerminalText makes an untrusted string inert on a terminal: escape
// sequences, tabs (which would break a tabwriter's columns), newlines,
// invalid UTF-8 and bidirectional overrides are shown as Go escapes
// instead of acting. Other commands printing untrusted text use it too.
func TerminalText(s string) string { return cleanTerminal(s) }

func cleanTerminal(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x` + strconv.FormatUint(uint64(s[i]), 16))
		case (r != ' ' && !unicode.IsPrint(r)) || isBidiControl(r):
			q := strconv.QuoteRuneToASCII(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// shellWord quotes s for a POSIX shell, so a reproduce command copied from a
// report runs on the file it names and nothing else. Non-printing characters
// are shown escaped instead: they have no business in a command line, and
// inside a code block they would be invisible.
func shellWord(s string) string {
	s = cleanTerminal(s)
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=@%+,-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// fence returns a code fence longer than any run of backticks in body, so
// no content can close the block early.
func fence(body string) string {
	longest, run := 0, 0
	for _, r := range body {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}
