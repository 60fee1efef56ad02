// Package textsafe is benchgate's one rule for showing text that someone
// else wrote (a target's output and error texts, a JSON key from its answer,
// names from a pull request's scenario, values from a fork's results file)
// on a terminal or in a workflow log: the text is shown, never acted on.
//
// The rule: a character is shown as itself when unicode.IsPrint calls it
// printable (letters, marks, numbers, punctuation, symbols and the ASCII
// space) and it is not default-ignorable (a variation selector or another of
// Unicode's Other_Default_Ignorable_Code_Point, such as a Hangul filler); tab
// and newline are shown as themselves where the caller allows them. Every
// other character is written as Go writes it in a quoted string, "\x1b",
// "\r", "\u009b", "\u202e", "\U000e0041", and every byte that is not UTF-8
// as "\xff". That covers what a terminal acts on (C0 controls, DEL, C1
// controls, among them ESC and CSI), what reorders or hides text (the bidi
// overrides and isolates, zero-width characters, the line and paragraph
// separators, tag characters) and what some terminals take for a C1 control
// (a stray byte 0x9b).
//
// The output is valid UTF-8 made of shown characters only, so the rule is
// idempotent: text that went through it once (and was stored, say in
// results.json) is unchanged by a second pass. A backslash is not escaped,
// so the rule is not reversible in general; it is not meant to be: it is for
// a person's eyes.
package textsafe

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Allow names the whitespace controls a caller lets through as themselves.
// Text laid out in columns (a tabwriter) or written as one line (a field, a
// table cell, a single log line) allows neither; a message of several lines
// allows both.
type Allow uint8

const (
	// Tab lets '\t' through.
	Tab Allow = 1 << iota
	// Newline lets '\n' through. '\r' is always escaped: alone it moves the
	// cursor back and the rest of the line overwrites what was shown.
	Newline
)

// Escape returns s with every character the rule does not show as itself
// written as a visible escape. Text that needs none is returned as it is,
// without allocating.
func Escape(s string, allow Allow) string {
	i := 0
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf && (printableASCII(c) || allowed(rune(c), allow)) {
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || !Shown(r) && !allowed(r, allow) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	buf := make([]byte, 0, 12)
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[s[i]>>4])
			b.WriteByte(hexDigits[s[i]&0xf])
		case Shown(r) || allowed(r, allow):
			b.WriteString(s[i : i+size])
		default:
			// As ASCII, strconv writes every rune but a printable ASCII
			// one as an escape: \a, \x1b, \u202e, \U000e0041.
			buf = strconv.AppendQuoteRuneToASCII(buf[:0], r)
			b.Write(buf[1 : len(buf)-1])
		}
		i += size
	}
	return b.String()
}

// Line returns s as one line: no control passes, tab and newline included,
// so the text cannot end the line or break a tabwriter's columns.
func Line(s string) string { return Escape(s, 0) }

// Text returns s as text of one or more lines: tab and newline pass, every
// other control is escaped.
func Text(s string) string { return Escape(s, Tab|Newline) }

// Shown reports whether the rule shows r as itself, whatever the caller
// allows: tab and newline are not shown. Other escapers (markdown, HTML,
// SVG) use it to decide what they drop or replace, so that every output of
// benchgate agrees on which characters a person can see.
func Shown(r rune) bool {
	if r < utf8.RuneSelf {
		return printableASCII(byte(r))
	}
	return unicode.IsPrint(r) &&
		!unicode.Is(unicode.Variation_Selector, r) &&
		!unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r)
}

func printableASCII(c byte) bool { return ' ' <= c && c < 0x7f }

func allowed(r rune, allow Allow) bool {
	return r == '\t' && allow&Tab != 0 || r == '\n' && allow&Newline != 0
}

const hexDigits = "0123456789abcdef"
