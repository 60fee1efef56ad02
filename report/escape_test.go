package report

import (
	"regexp"
	"strings"
	"testing"
)

func TestEscapeMarkdown(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Q01", "Q01"},
		{"", ""},
		{hostileClass, `Q1\|&lt;img src=x&gt;\` + "`" + `@&#8203;team`},
		{"a|b", `a\|b`},
		{"*bold* _em_ ~~del~~", `\*bold\* \_em\_ \~\~del\~\~`},
		{"[x](http://evil)", `\[x\](http:&#8203;//evil)`},
		{"![i](y)", `\!\[i\](y)`},
		{"line\nbreak\r\tend", "line break  end"},
		{`back\slash`, `back\\slash`},
		{"@team and #123", "@&#8203;team and #&#8203;123"},
		{"&#64;team", "&amp;#&#8203;64;team"},
		{"<script>", "&lt;script&gt;"},
		{"www.evil.com", "www&#8203;.evil.com"},
		{"WWW.evil.com", "WWW&#8203;.evil.com"},
		{"$x$", `\$x\$`},
		{"abc\u202edef", "abcdef"},
		{"caf\xe9", "caf\uFFFD"},
		{"µs ±1", "µs ±1"},
		{"GH-12 and gh-3", "GH-&#8203;12 and gh-&#8203;3"},
		{"- item", `\- item`},
		{"+ x", `\+ x`},
		{"---", `\---`},
		{"12. x", `12\. x`},
		{"3) x", `3\) x`},
		{"1.5 ms -5% a-b x+y", "1.5 ms -5% a-b x+y"},
		// What is dropped cannot join its neighbours into a link.
		{":\u202e//evil", ":&#8203;//evil"},
		{"w\u200bww.evil", "www&#8203;.evil"},
		{"@\u2066team", "@&#8203;team"},
		{"ad\u200bmin\ufeff \u00ad", "admin "},
		{"a\u2028b\u00a0c\x1b[31m", `a b c \[31m`},
	} {
		if got := EscapeMarkdown(tc.in); got != tc.want {
			t.Errorf("EscapeMarkdown(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestEscapeMarkdownInvariants checks what must hold for any input: one
// line, every pipe, backtick and bracket escaped, no raw angle bracket, no
// mention.
func TestEscapeMarkdownInvariants(t *testing.T) {
	t.Parallel()
	inputs := []string{
		hostileClass, "|||", "``code``", "a\\|b", "\\`", "@@x", "x@y.com", "<a href=x>", "\n# heading\n",
		"http://x https://y", "[a]: http://x", "|\\|\\\\|",
	}
	unescaped := regexp.MustCompile(`(^|[^\\])(\\\\)*[|` + "`" + `\[\]*_]`)
	for _, in := range inputs {
		got := EscapeMarkdown(in)
		if strings.ContainsAny(got, "\n\r<>") {
			t.Errorf("EscapeMarkdown(%q) = %q: has a line break or angle bracket", in, got)
		}
		if unescaped.MatchString(got) {
			t.Errorf("EscapeMarkdown(%q) = %q: has an unescaped markdown character", in, got)
		}
		if regexp.MustCompile(`@[A-Za-z0-9]`).MatchString(got) {
			t.Errorf("EscapeMarkdown(%q) = %q: a mention survives", in, got)
		}
		if strings.Contains(got, "://") {
			t.Errorf("EscapeMarkdown(%q) = %q: a URL survives", in, got)
		}
	}
}

// TestHostileTableRow renders the hostile class through the markdown report
// and checks its row still has exactly the table's number of cells.
func TestHostileTableRow(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	if err := Markdown(&b, cancelledInput()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	var header, row string
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| class |") {
			header = line
		}
		if strings.HasPrefix(line, "| Q1") {
			row = line
		}
	}
	if header == "" || row == "" {
		t.Fatalf("table or hostile row missing:\n%s", out)
	}
	cells := func(line string) int { return len(regexp.MustCompile(`(^|[^\\])\|`).FindAllString(line, -1)) }
	if cells(row) != cells(header) {
		t.Errorf("hostile row has %d cell borders, header %d:\n%s\n%s", cells(row), cells(header), header, row)
	}
	for _, bad := range []string{"<img", "@team"} {
		if strings.Contains(out, bad) {
			t.Errorf("report contains %q unescaped", bad)
		}
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "Q1") && regexp.MustCompile("(^|[^\\\\])`").MatchString(line) {
			t.Errorf("unescaped backtick would open a code span: %s", line)
		}
	}
}

func TestCleanTerminal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Q01", "Q01"},
		{"\x1b[31mred", `\x1b[31mred`},
		{"a\tb\nc", `a\tb\nc`},
		{"abc\u202edef", `abc\u202edef`},
		{"µs", "µs"},
		{"\xff", `\xff`},
		{"ad\u200bmin \u2066x\u2069 \u009b", `ad\u200bmin \u2066x\u2069 \u009b`},
	} {
		if got := cleanTerminal(tc.in); got != tc.want {
			t.Errorf("cleanTerminal(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestReproduceCommand(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, want string }{
		{"examples/demo/benchgate.yml", "benchgate gate -scenario examples/demo/benchgate.yml"},
		{"it's.yml", `benchgate gate -scenario 'it'\''s.yml'`},
		{"x; rm -rf ~", `benchgate gate -scenario 'x; rm -rf ~'`},
		{"$(id).yml", `benchgate gate -scenario '$(id).yml'`},
		{"a\n```\nb", "benchgate gate -scenario 'a\\n```\\nb'"},
		{"", "benchgate gate -scenario benchgate.yml"},
	} {
		var s = fullInput().Results.Scenario
		s.File, s.Profile = tc.file, ""
		if got := reproduceCommand(s); got != tc.want {
			t.Errorf("reproduceCommand(%q) = %q, want %q", tc.file, got, tc.want)
		}
	}
	if got := fence("a ``` b ```` c"); got != "`````" {
		t.Errorf("fence = %q, want five backticks", got)
	}
	if got := fence("plain"); got != "```" {
		t.Errorf("fence = %q, want three backticks", got)
	}
}

func TestEscapeHTML(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"Q01", "Q01"},
		{"<script>`|*", "&#60;script&#62;&#96;&#124;&#42;"},
		{`{"a": 'b'}`, `{"a": 'b'}`},
		{"a\\b & c", "a&#92;b &#38; c"},
		{"[x](y) ![i](z) _e_ ~s~ $m$", "&#91;x&#93;(y) &#33;&#91;i&#93;(z) &#95;e&#95; &#126;s&#126; &#36;m&#36;"},
		{"@team #1 http://x www.y", "@&#8203;team #&#8203;1 http:&#8203;//x www&#8203;.y"},
		{"line\nbreak\x1b[2J", "line break &#91;2J"},
		{"abc\u202edef", "abcdef"},
		{"caf\xe9", "caf\uFFFD"},
		{"- x GH-1 1) y", "&#45; x GH-&#8203;1 1) y"},
		{":\u202e//x", ":&#8203;//x"},
	} {
		if got := escapeHTML(tc.in); got != tc.want {
			t.Errorf("escapeHTML(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := codeText(""); got != "(empty)" {
		t.Errorf("codeText(\"\") = %q", got)
	}
	// Whatever the input, the element holds one line and no character
	// that markdown or HTML would read as syntax, so it cannot be closed
	// early or close anything around it.
	for _, in := range []string{hostileClass, hostileDetails, "{\"n\": \"<script>`|*</script> @team\"}", "``` \n</code></td>", "a|b\\|c", "&lt;"} {
		got := codeText(in)
		inner := strings.TrimSuffix(strings.TrimPrefix(got, "<code>"), "</code>")
		if strings.ContainsAny(inner, "<>`|*_[]\\\n\r") || regexp.MustCompile(`&[a-z]`).MatchString(inner) {
			t.Errorf("codeText(%q) = %q", in, got)
		}
	}
}

// TestCheckName: a name given to results takes printable text up to 200
// characters; what a report, a comment or a site page could not show as
// written is refused with the reason.
func TestCheckName(t *testing.T) {
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
		err := CheckName(tc.in)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("CheckName(%q): %v", tc.in, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("CheckName(%q) = %v, want %q", tc.in, err, tc.err)
		}
	}
}
