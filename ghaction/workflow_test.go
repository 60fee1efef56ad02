package ghaction

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

// command is a workflow command as the runner sees it.
type command struct {
	Name  string
	Props map[string]string
	Data  string
}

// Unescaping as the runner does it (ActionCommand.cs): each sequence in turn,
// %25 last.
var (
	unescapeData     = []string{"%0D", "\r", "%0A", "\n", "%25", "%"}
	unescapeProperty = []string{"%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%"}
)

func unescape(s string, pairs []string) string {
	for i := 0; i < len(pairs); i += 2 {
		s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
	}
	return s
}

// parseCommand is the runner's ActionCommand.TryParseV2: after leading
// space, "::", the command info up to the next "::", its name up to a space
// and properties split at ',' then at the first '=', and the data after.
func parseCommand(line string, registered map[string]bool) (command, bool) {
	line = strings.TrimLeft(line, " \t")
	if !strings.HasPrefix(line, "::") {
		return command{}, false
	}
	end := strings.Index(line[2:], "::")
	if end < 0 {
		return command{}, false
	}
	info := line[2 : 2+end]
	name, props, _ := strings.Cut(info, " ")
	if !registered[name] {
		return command{}, false
	}
	c := command{Name: name, Props: map[string]string{}, Data: unescape(line[2+end+2:], unescapeData)}
	for _, p := range strings.Split(strings.TrimSpace(props), ",") {
		if k, v, ok := strings.Cut(p, "="); ok && k != "" && v != "" {
			c.Props[k] = unescape(v, unescapeProperty)
		}
	}
	return c, true
}

var runnerCommands = map[string]bool{
	"error": true, "warning": true, "notice": true, "debug": true, "add-mask": true,
	"stop-commands": true, "group": true, "endgroup": true, "echo": true,
	"save-state": true, "set-output": true, "add-matcher": true, "remove-matcher": true,
}

// runnerLog returns the commands the runner acts on in a step's log,
// following stop-commands: while stopped, only "::TOKEN::" is a command.
func runnerLog(log string) []command {
	var cmds []command
	stop := ""
	for _, line := range strings.Split(log, "\n") {
		if stop != "" {
			if c, ok := parseCommand(line, map[string]bool{stop: true}); ok && c.Name == stop {
				stop = ""
			}
			continue
		}
		c, ok := parseCommand(line, runnerCommands)
		switch {
		case !ok:
		case c.Name == "stop-commands":
			stop = c.Data
		default:
			cmds = append(cmds, c)
		}
	}
	return cmds
}

func TestEscape(t *testing.T) {
	tests := []struct{ in, data, property string }{
		{"plain text", "plain text", "plain text"},
		{"100%", "100%25", "100%25"},
		{"%0A", "%250A", "%250A"},
		{"%25", "%2525", "%2525"},
		{"a\r\nb", "a%0D%0Ab", "a%0D%0Ab"},
		{"Q01::error::pwned", "Q01::error::pwned", "Q01%3A%3Aerror%3A%3Apwned"},
		{"a,b=c", "a,b=c", "a%2Cb=c"},
		{"%3A%2C:,", "%253A%252C:,", "%253A%252C%3A%2C"},
		{"é ±", "é ±", "é ±"},
	}
	for _, tt := range tests {
		if got := EscapeData(tt.in); got != tt.data {
			t.Errorf("EscapeData(%q) = %q, want %q", tt.in, got, tt.data)
		}
		if got := EscapeProperty(tt.in); got != tt.property {
			t.Errorf("EscapeProperty(%q) = %q, want %q", tt.in, got, tt.property)
		}
		if got := unescape(tt.data, unescapeData); got != tt.in {
			t.Errorf("runner reads EscapeData(%q) back as %q", tt.in, got)
		}
		if got := unescape(tt.property, unescapeProperty); got != tt.in {
			t.Errorf("runner reads EscapeProperty(%q) back as %q", tt.in, got)
		}
	}
}

func TestAnnotate(t *testing.T) {
	tests := []struct {
		name              string
		level, title, msg string
		file              string
		line              int
		want              string
		wantProps         map[string]string
	}{
		{"message only", "error", "", "gate failed", "", 0,
			"::error::gate failed\n", map[string]string{}},
		{"all properties", "warning", "Q01 c=8", "p95 regressed 12%", "benchgate.yml", 31,
			"::warning title=Q01 c=8,file=benchgate.yml,line=31::p95 regressed 12%25\n",
			map[string]string{"title": "Q01 c=8", "file": "benchgate.yml", "line": "31"}},
		{"hostile class name", "error", "Q01::error::pwned, c=8", "class ::error::pwned\n::add-mask::x %0A 100%", "bench/a,b:c.yml", 12,
			"::error title=Q01%3A%3Aerror%3A%3Apwned%2C c=8,file=bench/a%2Cb%3Ac.yml,line=12::class ::error::pwned%0A::add-mask::x %250A 100%25\n",
			map[string]string{"title": "Q01::error::pwned, c=8", "file": "bench/a,b:c.yml", "line": "12"}},
		{"newlines in the title", "notice", "a\r\nline=1", "m", "", 0,
			"::notice title=a%0D%0Aline=1::m\n", map[string]string{"title": "a\r\nline=1"}},
		{"line without file", "notice", "", "m", "", 7,
			"::notice line=7::m\n", map[string]string{"line": "7"}},
		{"a line below 1 is left out", "notice", "", "m", "x.yml", -3,
			"::notice file=x.yml::m\n", map[string]string{"file": "x.yml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := Annotate(&b, tt.level, tt.title, tt.msg, tt.file, tt.line); err != nil {
				t.Fatal(err)
			}
			if b.String() != tt.want {
				t.Errorf("Annotate:\n got %q\nwant %q", b.String(), tt.want)
			}
			// The runner sees exactly this one command, with the text intact.
			want := []command{{Name: tt.level, Props: tt.wantProps, Data: tt.msg}}
			if got := runnerLog(b.String()); !reflect.DeepEqual(got, want) {
				t.Errorf("runner reads:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestAnnotateLevel(t *testing.T) {
	for _, level := range []string{"", "Error", "debug", "error::pwned", "add-mask"} {
		var b strings.Builder
		err := Annotate(&b, level, "", "m", "", 0)
		want := `annotation level "` + level + `": want error, warning or notice`
		if err == nil || err.Error() != want {
			t.Errorf("Annotate(%q) error = %v, want %s", level, err, want)
		}
		if b.Len() != 0 {
			t.Errorf("Annotate(%q) wrote %q", level, b.String())
		}
	}
}

func TestWarningNotice(t *testing.T) {
	var b strings.Builder
	if err := Warning(&b, "comment skipped: read-only token\n(fork)"); err != nil {
		t.Fatal(err)
	}
	if err := Notice(&b, "3 cells inconclusive: 100% of 3"); err != nil {
		t.Fatal(err)
	}
	want := "::warning::comment skipped: read-only token%0A(fork)\n::notice::3 cells inconclusive: 100%25 of 3\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}

// targetLog is what a pull request's build could print: workflow commands
// of every kind, escaped sequences, and a guess at a resume token.
const targetLog = "listening on :8080\n" +
	"::error::pwned\n" +
	"  ::add-mask::ghs_x\n" +
	"::set-output name=verdict::pass\n" +
	"::benchgate-00000000000000000000000000000000::\n" +
	"::warning title=a%0A::b\n" +
	"::stop-commands::mine\n" +
	"::mine::\n" +
	"::error::still pwned"

func TestStopCommands(t *testing.T) {
	stubRand(t, 0x5a)
	var b strings.Builder
	resume, err := StopCommands(&b)
	if err != nil {
		t.Fatal(err)
	}
	b.WriteString(targetLog + "\n")
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	if err := resume(); err != nil { // a second call writes nothing
		t.Fatal(err)
	}
	if err := Annotate(&b, "error", "", "after", "", 0); err != nil {
		t.Fatal(err)
	}
	const token = "benchgate-5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
	want := "::stop-commands::" + token + "\n" + targetLog + "\n::" + token + "::\n::error::after\n"
	if b.String() != want {
		t.Errorf("log:\n got %q\nwant %q", b.String(), want)
	}
	if got, want := runnerLog(b.String()), []command{{Name: "error", Props: map[string]string{}, Data: "after"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("runner acts on %q, want only %q", got, want)
	}
}

func TestWriteUntrusted(t *testing.T) {
	// The first token is in the text, as if guessed: the second is used.
	stubRand(t, 0x00, 0x5a)
	var b strings.Builder
	if err := WriteUntrusted(&b, targetLog); err != nil {
		t.Fatal(err)
	}
	const token = "benchgate-5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a"
	want := "::stop-commands::" + token + "\n" + targetLog + "\n::" + token + "::\n"
	if b.String() != want {
		t.Errorf("log:\n got %q\nwant %q", b.String(), want)
	}
	if got := runnerLog(b.String() + "::notice::after\n"); len(got) != 1 || got[0].Data != "after" {
		t.Errorf("runner acts on %q, want only the notice after the text", got)
	}
}

// failWriter fails from its n-th write on, and records what it was asked.
type failWriter struct {
	n      int
	writes []string
}

func (w *failWriter) Write(p []byte) (int, error) {
	w.writes = append(w.writes, string(p))
	if len(w.writes) >= w.n {
		return 0, errors.New("log closed")
	}
	return len(p), nil
}

func TestWriteErrors(t *testing.T) {
	if err := Annotate(&failWriter{n: 1}, "error", "", "m", "", 0); err == nil || err.Error() != "log closed" {
		t.Errorf("Annotate error = %v, want log closed", err)
	}
	resume, err := StopCommands(&failWriter{n: 1})
	if err == nil || resume != nil {
		t.Errorf("StopCommands resume nil: %t, error %v; want no resume and an error: the text must not be printed", resume == nil, err)
	}
	// The text fails to write; commands are resumed all the same.
	w := &failWriter{n: 2}
	if err := WriteUntrusted(w, "text"); err == nil || err.Error() != "log closed" {
		t.Errorf("WriteUntrusted error = %v, want log closed", err)
	}
	if len(w.writes) != 3 || !strings.HasPrefix(w.writes[2], "::benchgate-") {
		t.Errorf("writes %q, want stop, text and resume", w.writes)
	}
}
