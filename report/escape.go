package report

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/benchgate/benchgate/internal/textsafe"
)

// CheckName checks s as a name given to results on the command line (the
// scenario name of results read from files, which history keys its series
// by): a report, a comment and a history site's pages show it, so it is
// printable text of up to textsafe.QuoteRunes characters, refused with the
// reason rather than shown otherwise than written.
func CheckName(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return errors.New("a name must not be blank")
	case utf8.RuneCountInString(s) > textsafe.QuoteRunes:
		return fmt.Errorf("a name of more than %d characters", textsafe.QuoteRunes)
	case strings.IndexFunc(s, unicode.IsControl) >= 0 || !utf8.ValidString(s):
		return errors.New("a name must be printable text (no control characters, valid UTF-8)")
	}
	return nil
}

// zwsp is a zero-width space as an HTML entity. GitHub links mentions,
// issue references and bare URLs in the rendered text, after markdown
// escapes and entities have been resolved, so the only way to stop them is a
// character that is really there but not seen.
const zwsp = "&#8203;"

// EscapeMarkdown returns s as GitHub-flavoured markdown text that renders as
// the same characters and as nothing else: no emphasis, code, links, images,
// HTML, math, mentions, issue references, autolinked URLs, list markers or
// thematic breaks, and no line or table-cell break. Use it on every string a pull request can
// control (class, variant, pin set and scenario names, target specs,
// commits, error texts, reasons) wherever it lands: a table cell, a list
// item or a heading. What textsafe would not show is not shown here either:
// control and space characters become spaces and the invisible ones (bidi
// controls, zero-width and other format characters) are dropped, so a name
// cannot reorder the text around it.
func EscapeMarkdown(s string) string {
	s = shownText(s)
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '&':
			// Escaped so that "&#64;team" stays text rather than becoming
			// a mention once GitHub resolves the entity.
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case listMarker(s, i):
			// A list marker or a thematic break at the start of a list
			// item or heading.
			b.WriteByte('\\')
			b.WriteRune(r)
		case strings.ContainsRune("\\`*_[]!|~$", r):
			// Every ASCII punctuation character may be backslash-escaped in
			// CommonMark, and GFM honours "\|" inside a table cell.
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			size = writeUnlinked(&b, s, i)
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
// zero-width space, turns control characters into spaces and drops the
// invisible ones.
func escapeHTML(s string) string {
	s = shownText(s)
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case strings.ContainsRune("&<>\\`*_[]!|~$", r) || listMarker(s, i):
			b.WriteString("&#" + strconv.Itoa(int(r)) + ";")
		default:
			size = writeUnlinked(&b, s, i)
		}
		i += size
	}
	return b.String()
}

// listMarker reports whether s[i] would make s a list item or a thematic
// break if s started a line: a leading "-" or "+" before a space or the end
// ("-" also before another, "---"), or the "." or ")" after up to nine
// leading digits, before a space or the end.
func listMarker(s string, i int) bool {
	end := i+1 == len(s) || s[i+1] == ' '
	switch s[i] {
	case '-':
		return i == 0 && (end || s[1] == '-')
	case '+':
		return i == 0 && end
	case '.', ')':
		return end && 0 < i && i <= 9 && strings.Trim(s[:i], "0123456789") == ""
	}
	return false
}

// writeUnlinked writes the character at s[i] and returns how many bytes of
// s it took, with a zero-width space where GitHub would otherwise link: a
// mention or team (@name), an issue reference (#1, GH-1), a URL (x://) or a
// bare www. address.
func writeUnlinked(b *strings.Builder, s string, i int) int {
	r, size := utf8.DecodeRuneInString(s[i:])
	next := s[i+size:]
	switch {
	case r == '@' || r == '#':
		b.WriteRune(r)
		b.WriteString(zwsp)
	case r == ':' && strings.HasPrefix(next, "//"):
		b.WriteString(":" + zwsp)
	case (r == 'w' || r == 'W') && len(next) >= 3 && strings.EqualFold(next[:3], "ww."):
		b.WriteString(s[i : i+3])
		b.WriteString(zwsp)
		return 3
	case (r == 'g' || r == 'G') && len(next) >= 3 && strings.EqualFold(next[:2], "h-") && '0' <= next[2] && next[2] <= '9':
		b.WriteString(s[i : i+3])
		b.WriteString(zwsp)
		return 3
	default:
		b.WriteRune(r)
	}
	return size
}

// shownText returns s as the characters a person sees of it, by textsafe's
// rule: invalid UTF-8 becomes U+FFFD, a control or space character that
// rule does not show becomes a space, and the other characters it does not
// show (bidi controls, zero-width and format characters) are dropped. The
// escapers work on this text, so what they look at next to a character is
// what is seen next to it: "w\u200bww." is "www." and is broken as one.
func shownText(s string) string {
	clean := true
	for _, r := range s {
		if !textsafe.Shown(r) || r == utf8.RuneError {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s { // invalid UTF-8 ranges as U+FFFD
		switch {
		case textsafe.Shown(r):
			b.WriteRune(r)
		case unicode.IsControl(r) || unicode.IsSpace(r):
			b.WriteByte(' ')
		}
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

// isBidiControl reports the characters textsafe does not show: the bidi
// controls that reorder displayed text (the "trojan source" characters),
// and with them every control, format and invisible character. A link
// target holding one is refused.
func isBidiControl(r rune) bool { return !textsafe.Shown(r) }

// TerminalText makes an untrusted string inert on a terminal, as one line:
// textsafe.Line, so escape sequences, tabs (which would break a tabwriter's
// columns), newlines, invalid UTF-8, bidi controls and invisible characters
// are shown as Go escapes instead of acting. Other commands printing
// untrusted text use it too.
func TerminalText(s string) string { return textsafe.Line(s) }

func cleanTerminal(s string) string { return textsafe.Line(s) }

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
