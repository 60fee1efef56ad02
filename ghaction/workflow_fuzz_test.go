package ghaction

import (
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchgate/benchgate/internal/textsafe"
)

// workflowSeeds are texts a pull request or its target could write.
var workflowSeeds = []string{
	"", "plain", "\x1b[31mred\x1b[0m", "abc\u202edcba\u202c", "\u2066x\u2069", "\n::set-output name=verdict::pass",
	"::error::x", "  ::add-mask::x", "##[set-output name=verdict;]pass", "::stop-commands::t\n::t::",
	"%0A%0D%25%3A%2C", "100%", "a\r\nb", "title=x,file=y,line=1::", "@org/team #1", "](javascript:alert(1))",
	"<img src=x>", "&#64;team", "\x9b2J\xff", "\u00a0::error::nbsp", "\u2028::error::ls", "x ", " ",
	"::BENCHGATE-00000000000000000000000000000000::",
}

// rawUnsafe reports a character that must not reach the log: what a
// terminal or the log viewer acts on (controls but tab and newline, ESC,
// C1) and bidi controls.
func rawUnsafe(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || 0x7f <= r && r <= 0x9f ||
		0x202a <= r && r <= 0x202e || 0x2066 <= r && r <= 0x2069 || r == 0x200e || r == 0x200f || r == 0x061c
}

// FuzzAnnotate checks, as the runner parses a log, that an annotation is
// one line and one command, the one asked for, whatever its title, file
// and message hold: the runner reads back the title and file as
// textsafe.Line shows them (outer spaces trimmed) and the message as
// textsafe.Text shows it, every '%' in the line starts one of the runner's
// escapes, and nothing in it can colour the log or reorder it.
func FuzzAnnotate(f *testing.F) {
	for i, s := range workflowSeeds {
		f.Add(uint8(i), s, s, s, i)
	}
	f.Fuzz(func(t *testing.T, lv uint8, title, msg, file string, line int) {
		level := []string{"error", "warning", "notice"}[lv%3]
		var b strings.Builder
		if err := Annotate(&b, level, title, msg, file, line); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.HasSuffix(out, "\n") || strings.Count(out, "\n") != 1 || strings.ContainsRune(out, '\r') {
			t.Fatalf("Annotate wrote %q: not one line", out)
		}
		if !utf8.ValidString(out) {
			t.Fatalf("Annotate wrote %q: not UTF-8", out)
		}
		for _, r := range out[:len(out)-1] {
			if rawUnsafe(r) || !textsafe.Shown(r) && r != '\t' {
				t.Fatalf("Annotate wrote %q: holds %U", out, r)
			}
		}
		for i := strings.IndexByte(out, '%'); i >= 0; i = nextPercent(out, i) {
			if e := out[i:min(i+3, len(out))]; e != "%25" && e != "%0A" && e != "%3A" && e != "%2C" {
				t.Fatalf("Annotate wrote %q: raw %% at %d (%q)", out, i, e)
			}
		}
		props := map[string]string{}
		if v := strings.TrimSpace(textsafe.Line(title)); v != "" {
			props["title"] = v
		}
		if v := strings.TrimSpace(textsafe.Line(file)); v != "" {
			props["file"] = v
		}
		if line > 0 {
			props["line"] = strconv.Itoa(line)
		}
		want := []command{{Name: level, Props: props, Data: textsafe.Text(msg)}}
		if got := runnerLog(out); !reflect.DeepEqual(got, want) {
			t.Fatalf("the runner reads %q as\n%q\nwant\n%q", out, got, want)
		}
	})
}

func nextPercent(s string, i int) int {
	j := strings.IndexByte(s[i+1:], '%')
	if j < 0 {
		return -1
	}
	return i + 1 + j
}

// FuzzEscapeData checks the escapers alone: their output has no line
// break and no raw '%', a property no ':' or ',', and the runner's
// unescaping gives back what textsafe shows of the input.
func FuzzEscapeData(f *testing.F) {
	for _, s := range workflowSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data, prop := EscapeData(s), EscapeProperty(s)
		if strings.ContainsAny(data, "\r\n") || strings.ContainsAny(prop, "\r\n:,") {
			t.Fatalf("EscapeData(%q) = %q, EscapeProperty = %q: a line break, ':' or ','", s, data, prop)
		}
		if got := unescape(data, unescapeData); got != textsafe.Text(s) {
			t.Fatalf("the runner reads EscapeData(%q) = %q as %q, want %q", s, data, got, textsafe.Text(s))
		}
		if got := unescape(prop, unescapeProperty); got != textsafe.Line(s) {
			t.Fatalf("the runner reads EscapeProperty(%q) = %q as %q, want %q", s, prop, got, textsafe.Line(s))
		}
	})
}

// FuzzWriteUntrusted checks that no text, however it guesses the token,
// makes the runner act on a command of its own or swallow the one after
// it, and that what is printed is textsafe's text.
func FuzzWriteUntrusted(f *testing.F) {
	for _, s := range workflowSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var b strings.Builder
		if err := WriteUntrusted(&b, text); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		lines := strings.SplitAfter(strings.TrimSuffix(out, "\n"), "\n")
		body := strings.Join(lines[1:len(lines)-1], "")
		if want := textsafe.Text(text); strings.TrimSuffix(body, "\n") != strings.TrimSuffix(want, "\n") {
			t.Fatalf("WriteUntrusted(%q) printed %q, want %q", text, body, want)
		}
		for _, r := range out {
			if rawUnsafe(r) {
				t.Fatalf("WriteUntrusted(%q) wrote %q: holds %U", text, out, r)
			}
		}
		if got := runnerLog(out + "::notice::after\n"); len(got) != 1 || got[0].Name != "notice" || got[0].Data != "after" {
			t.Fatalf("after WriteUntrusted(%q) the runner acts on %q, want only the notice after it", text, got)
		}
	})
}

// FuzzLogWriter checks that no text, in whatever pieces it is written,
// leaves a line the runner would take for a command of any name, and that
// text holding no command comes out as it went in.
func FuzzLogWriter(f *testing.F) {
	for i, s := range workflowSeeds {
		f.Add(s, uint16(i))
	}
	f.Add("ok ##[stop-commands]t\n", uint16(4))
	f.Add(" \u3000::x::y", uint16(2))
	f.Fuzz(func(t *testing.T, text string, cut uint16) {
		var b strings.Builder
		w := NewLogWriter(&b)
		at := int(cut) % (len(text) + 1)
		io.WriteString(w, text[:at])
		io.WriteString(w, text[at:])
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, line := range runnerLines(out) {
			if anyCommand(line) {
				t.Fatalf("LogWriter wrote %q for %q: %q is a command", out, text, line)
			}
		}
		want := text
		if want != "" && !strings.HasSuffix(want, "\n") && !strings.HasSuffix(want, "\r") {
			want += "\n"
		}
		if !strings.Contains(text, `\x`) {
			if back := strings.NewReplacer(`\u003a`, ":", `\u005b`, "[").Replace(out); back != want {
				t.Fatalf("LogWriter wrote %q for %q: reads back as %q", out, text, back)
			}
		}
	})
}
