package ghaction

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/benchgate/benchgate/internal/textsafe"
)

// command is a workflow command as the runner sees it.
type command struct {
	Name  string
	Props map[string]string
	Data  string
}

// Unescaping as the runner does it (ActionCommand.cs): each sequence in turn,
// %25 last; the v1 form has its own.
var (
	unescapeData     = []string{"%0D", "\r", "%0A", "\n", "%25", "%"}
	unescapeProperty = []string{"%0D", "\r", "%0A", "\n", "%3A", ":", "%2C", ",", "%25", "%"}
	unescapeV1       = []string{"%3B", ";", "%0D", "\r", "%0A", "\n", "%5D", "]", "%25", "%"}
)

func unescape(s string, pairs []string) string {
	for i := 0; i < len(pairs); i += 2 {
		s = strings.ReplaceAll(s, pairs[i], pairs[i+1])
	}
	return s
}

// parseCommand is the runner's ActionCommandManager.TryProcessCommand
// parse: ActionCommand.TryParseV2, and when that fails ActionCommand.TryParse,
// the v1 form. Command names are registered ignoring case.
func parseCommand(line string, registered map[string]bool) (command, bool) {
	if c, ok := parseV2(line, registered); ok {
		return c, true
	}
	return parseV1(line, registered)
}

// parseV2 is TryParseV2: after leading white space (.NET's TrimStart, all
// of Unicode's), "::", the command info up to the next "::", its name up to
// a space and properties split at ',' then at the first '=', and the data
// after.
func parseV2(line string, registered map[string]bool) (command, bool) {
	line = strings.TrimLeftFunc(line, unicode.IsSpace)
	if !strings.HasPrefix(line, "::") {
		return command{}, false
	}
	end := strings.Index(line[2:], "::")
	if end < 0 {
		return command{}, false
	}
	info := line[2 : 2+end]
	name, props, _ := strings.Cut(info, " ")
	if !registered[strings.ToLower(name)] {
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

// parseV1 is TryParse, the older form, found anywhere in a line:
// "##[name k=v;k=v]data".
func parseV1(line string, registered map[string]bool) (command, bool) {
	start := strings.Index(line, "##[")
	if start < 0 {
		return command{}, false
	}
	end := strings.IndexByte(line[start:], ']')
	if end < 0 {
		return command{}, false
	}
	info := line[start+3 : start+end]
	name, props, _ := strings.Cut(info, " ")
	if !registered[strings.ToLower(name)] {
		return command{}, false
	}
	c := command{Name: name, Props: map[string]string{}, Data: unescape(line[start+end+1:], unescapeV1)}
	for _, p := range strings.Split(props, ";") {
		if k, v, ok := strings.Cut(p, "="); ok && k != "" && v != "" {
			c.Props[k] = unescape(v, unescapeV1)
		}
	}
	return c, true
}

var runnerCommands = map[string]bool{
	"error": true, "warning": true, "notice": true, "debug": true, "add-mask": true,
	"stop-commands": true, "group": true, "endgroup": true, "echo": true,
	"save-state": true, "set-output": true, "add-matcher": true, "remove-matcher": true,
	"set-env": true, "add-path": true,
}

// runnerLog returns the commands the runner acts on in a step's log,
// following stop-commands: while stopped, only the token, in any case, is
// acted on, and it resumes.
func runnerLog(log string) []command {
	var cmds []command
	stop := ""
	for _, line := range strings.Split(log, "\n") {
		registered := runnerCommands
		if stop != "" {
			registered = maps.Clone(runnerCommands)
			registered[strings.ToLower(stop)] = true
		}
		c, ok := parseCommand(line, registered)
		switch {
		case !ok:
		case stop != "":
			if strings.EqualFold(c.Name, stop) {
				stop = ""
			}
		case strings.EqualFold(c.Name, "stop-commands"):
			stop = c.Data
		default:
			cmds = append(cmds, c)
		}
	}
	return cmds
}

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, data, property string }{
		{"plain text", "plain text", "plain text"},
		{"100%", "100%25", "100%25"},
		{"%0A", "%250A", "%250A"},
		{"%25", "%2525", "%2525"},
		// A message keeps its lines and tabs; a carriage return, which
		// would overwrite the line, is shown.
		{"a\r\nb\tc", `a\r%0Ab` + "\tc", `a\r\nb\tc`},
		{"Q01::error::pwned", "Q01::error::pwned", "Q01%3A%3Aerror%3A%3Apwned"},
		{"a,b=c", "a,b=c", "a%2Cb=c"},
		{"%3A%2C:,", "%253A%252C:,", "%253A%252C%3A%2C"},
		{"é ±", "é ±", "é ±"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`, `\x1b[31mred\x1b[0m`},
		{"abc\u202edcba \u2066x\u2069", `abc\u202edcba \u2066x\u2069`, `abc\u202edcba \u2066x\u2069`},
		{"bad \xff \u009b", `bad \xff \u009b`, `bad \xff \u009b`},
	}
	for _, tt := range tests {
		if got := EscapeData(tt.in); got != tt.data {
			t.Errorf("EscapeData(%q) = %q, want %q", tt.in, got, tt.data)
		}
		if got := EscapeProperty(tt.in); got != tt.property {
			t.Errorf("EscapeProperty(%q) = %q, want %q", tt.in, got, tt.property)
		}
		if got, want := unescape(tt.data, unescapeData), textsafe.Text(tt.in); got != want {
			t.Errorf("runner reads EscapeData(%q) back as %q, want %q", tt.in, got, want)
		}
		if got, want := unescape(tt.property, unescapeProperty), textsafe.Line(tt.in); got != want {
			t.Errorf("runner reads EscapeProperty(%q) back as %q, want %q", tt.in, got, want)
		}
	}
}

func TestAnnotate(t *testing.T) {
	t.Parallel()
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
			"::notice title=a\\r\\nline=1::m\n", map[string]string{"title": `a\r\nline=1`}},
		{"spaces around the title", "notice", "  t  ", "m", " f ", 0,
			"::notice title=t,file=f::m\n", map[string]string{"title": "t", "file": "f"}},
		{"a title of spaces is left out", "notice", "   ", "m", "", 0,
			"::notice::m\n", map[string]string{}},
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
			want := []command{{Name: tt.level, Props: tt.wantProps, Data: textsafe.Text(tt.msg)}}
			if got := runnerLog(b.String()); !reflect.DeepEqual(got, want) {
				t.Errorf("runner reads:\n got %q\nwant %q", got, want)
			}
		})
	}
}

func TestAnnotateLevel(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
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

func TestWriteUntrusted(t *testing.T) {
	t.Parallel()
	// The first token is in the text, as if guessed: the second is used.
	var b strings.Builder
	if err := writeUntrusted(&b, targetLog, fill(0x00, 0x5a)); err != nil {
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

func TestPrintErrorWarning(t *testing.T) {
	t.Parallel()
	const msg = "benchgate: run failed: target said \x1b[2J\u202e::error::pwned"
	var term strings.Builder
	PrintError(&term, false, msg)
	PrintWarning(&term, false, "pins\x1b]0;x\x07 overlap")
	want := textsafe.Text(msg) + "\nbenchgate: warning: " + textsafe.Text("pins\x1b]0;x\x07 overlap") + "\n"
	if term.String() != want {
		t.Errorf("terminal:\n got %q\nwant %q", term.String(), want)
	}
	if strings.ContainsAny(term.String(), "\x1b\x07\u202e") {
		t.Errorf("terminal output keeps a control: %q", term.String())
	}

	var log strings.Builder
	PrintError(&log, true, msg+"\n"+targetLog)
	PrintWarning(&log, true, "pins overlap")
	got := runnerLog(log.String())
	if len(got) != 1 || got[0].Name != "warning" || got[0].Data != "benchgate: pins overlap" {
		t.Errorf("runner acts on %+v, want only benchgate's warning", got)
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
	t.Parallel()
	if err := Annotate(&failWriter{n: 1}, "error", "", "m", "", 0); err == nil || err.Error() != "log closed" {
		t.Errorf("Annotate error = %v, want log closed", err)
	}
	// The pause fails to start: the text must not be printed.
	w := &failWriter{n: 1}
	if err := WriteUntrusted(w, "text"); err == nil || len(w.writes) != 1 {
		t.Errorf("WriteUntrusted error = %v after writes %q, want an error and no more writes", err, w.writes)
	}
	// The text fails to write; commands are resumed all the same.
	w = &failWriter{n: 2}
	if err := WriteUntrusted(w, "text"); err == nil || err.Error() != "log closed" {
		t.Errorf("WriteUntrusted error = %v, want log closed", err)
	}
	if len(w.writes) != 3 || !strings.HasPrefix(w.writes[2], "::benchgate-") {
		t.Errorf("writes %q, want stop, text and resume", w.writes)
	}
}

// hostileKey is a JSON key a target can put in its answer, which reaches
// an agreement failure's reason and so the ::error annotation: colour, a
// new line starting commands of both forms, a carriage return, a bidi
// override.
const hostileKey = "\x1b[31mred\x1b[0m\n::set-output name=verdict::pass\r\n  ::add-mask::x ##[set-output name=verdict;]pass \u202eevil \x9b2J"

func TestAnnotateTargetControlled(t *testing.T) {
	t.Parallel()
	msg := "class search answers differently: body." + hostileKey + ": 1 vs 2"
	var b strings.Builder
	if err := Annotate(&b, "error", "benchgate: agreement "+hostileKey, msg, "bench/"+hostileKey+".yml", 3); err != nil {
		t.Fatal(err)
	}
	if err := Warning(&b, hostileKey); err != nil {
		t.Fatal(err)
	}
	if err := Notice(&b, hostileKey); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if n := strings.Count(out, "\n"); n != 3 {
		t.Errorf("%d lines, want 3:\n%s", n, out)
	}
	if strings.ContainsAny(out, "\x1b\r\u202e\u009b") || !strings.Contains(out, `\x1b[31mred\x1b[0m%0A::set-output`) || !strings.Contains(out, `\u202eevil \x9b2J`) {
		t.Errorf("annotations hold raw controls or lost the escapes:\n%q", out)
	}
	want := []command{
		{Name: "error", Data: textsafe.Text(msg), Props: map[string]string{
			"title": "benchgate: agreement " + textsafe.Line(hostileKey), "file": "bench/" + textsafe.Line(hostileKey) + ".yml", "line": "3"}},
		{Name: "warning", Props: map[string]string{}, Data: textsafe.Text(hostileKey)},
		{Name: "notice", Props: map[string]string{}, Data: textsafe.Text(hostileKey)},
	}
	if got := runnerLog(out); !reflect.DeepEqual(got, want) {
		t.Errorf("runner acts on\n%q\nwant\n%q", got, want)
	}
}

func TestWriteUntrustedTargetControlled(t *testing.T) {
	t.Parallel()
	// The first token is in the text in capitals, as if guessed: the
	// runner would resume on it, so the second is used.
	text := hostileKey + "\n##[stop-commands]mine\n::BENCHGATE-ABABABABABABABABABABABABABABABAB::\n::error::pwned\n"
	var b strings.Builder
	if err := writeUntrusted(&b, text, fill(0xab, 0x5a)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "::stop-commands::benchgate-5a5a") {
		t.Errorf("token guessed in capitals was used:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\r\u202e\u009b") || !strings.Contains(out, `\x1b[31mred\x1b[0m`+"\n::set-output") {
		t.Errorf("log holds raw controls or lost the text:\n%q", out)
	}
	if got := runnerLog(out + "::notice::after\n"); len(got) != 1 || got[0].Data != "after" {
		t.Errorf("runner acts on %q, want only the notice after the text", got)
	}
}

// The emulated runner reads the v1 form anywhere in a line, and takes
// command names and the resume token in any case: what it finds here is
// what the runner would act on in a log printed without stop-commands.
func TestRunnerLogForms(t *testing.T) {
	t.Parallel()
	log := "| ##[set-output name=verdict;]pass\n  ::ERROR::x\n::stop-commands::tok\n::error::hidden\n##[TOK]\n::notice::after"
	want := []command{
		{Name: "set-output", Props: map[string]string{"name": "verdict"}, Data: "pass"},
		{Name: "ERROR", Props: map[string]string{}, Data: "x"},
		{Name: "notice", Props: map[string]string{}, Data: "after"},
	}
	if got := runnerLog(log); !reflect.DeepEqual(got, want) {
		t.Errorf("runnerLog =\n%q\nwant\n%q", got, want)
	}
}

// anyCommand reports whether the runner would take line for a workflow
// command of some name, registered or not (a stop token is any name).
func anyCommand(line string) bool {
	t := strings.TrimLeftFunc(line, unicode.IsSpace)
	if strings.HasPrefix(t, "::") && strings.Contains(t[2:], "::") {
		return true
	}
	i := strings.Index(line, "##[")
	return i >= 0 && strings.Contains(line[i:], "]")
}

// runnerLines splits a log as the runner reads it: at "\r\n", '\r' or '\n'.
func runnerLines(log string) []string {
	return strings.FieldsFunc(log, func(r rune) bool { return r == '\r' || r == '\n' })
}

func TestLogWriter(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	w := NewLogWriter(&b)
	for _, p := range []string{
		"agreement search: DISAGREE at request 1, GET /: body.", "##[set-output name=verdict;]pass",
		" (status)\n", "  ::error::", "pwned\n\u00a0::add-mask::x\r::stop-commands::t\nQ01 a::b ##[x\n", "ok ##",
		"[stop-commands]t",
	} {
		if _, err := io.WriteString(w, p); err != nil {
			t.Fatal(err)
		}
	}
	if b.String() != "agreement search: DISAGREE at request 1, GET /: body.##\\u005bset-output name=verdict;]pass (status)\n"+
		"  \\u003a:error::pwned\n\u00a0\\u003a:add-mask::x\r\\u003a:stop-commands::t\nQ01 a::b ##\\u005bx\n" {
		t.Errorf("log before Flush:\n%q", b.String())
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := Annotate(&b, "error", "", "after", "", 0); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(b.String(), "ok ##\\u005bstop-commands]t\n::error::after\n") {
		t.Errorf("log after Flush:\n%q", b.String())
	}
	if got := runnerLog(b.String()); len(got) != 1 || got[0].Data != "after" {
		t.Errorf("runner acts on %q, want only the annotation after the log", got)
	}
	if err := w.Flush(); err != nil || strings.Count(b.String(), "after") != 1 {
		t.Errorf("a second Flush wrote: %v\n%q", err, b.String())
	}
}

// benchgate's own commands written to a LogWriter reach the runner, after
// the log's unfinished line, while the log around them stays neutralised:
// a command can share the writer that carries text a target controls.
func TestLogWriterPassesOwnCommands(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	w := NewLogWriter(&b)
	io.WriteString(w, "progress ::error::forged\nhalf a line")
	if err := Annotate(w, "error", "rps", "regressed", "s.yml", 3); err != nil {
		t.Fatal(err)
	}
	if err := Notice(w, "note"); err != nil {
		t.Fatal(err)
	}
	if err := WriteUntrusted(w, "::warning::from a target\n"); err != nil {
		t.Fatal(err)
	}
	io.WriteString(w, "::error::forged again\n")
	got := runnerLog(b.String())
	if len(got) != 2 || got[0].Name != "error" || got[0].Data != "regressed" || got[1].Name != "notice" {
		t.Errorf("runner acts on %+v, want the error and the notice only\n%q", got, b.String())
	}
	if !strings.HasPrefix(b.String(), "progress ::error::forged\nhalf a line\n::error ") {
		t.Errorf("the command did not follow the log's unfinished line:\n%q", b.String())
	}
}

// JSON written through a LogWriter (`benchgate compare -format json | jq`
// in a step) decodes to the same value: the escapes are JSON's own.
func TestLogWriterKeepsJSON(t *testing.T) {
	t.Parallel()
	want := map[string]string{"reason": "##[set-output name=verdict;]pass", "key": "::error::x"}
	var b strings.Builder
	w := NewLogWriter(&b)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(want); err != nil {
		t.Fatal(err)
	}
	w.Flush()
	if strings.Contains(b.String(), "##[") {
		t.Errorf("a command form passed:\n%s", b.String())
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(b.String()), &got); err != nil || !maps.Equal(got, want) {
		t.Errorf("decoded %v (%v), want %v\n%s", got, err, want, b.String())
	}
}

// StepLog keeps a regular file's bytes as written and makes anything else
// a LogWriter.
func TestStepLog(t *testing.T) {
	t.Parallel()
	// StepLogs is StepLog of both: a line a command left unfinished on
	// either reaches its writer at the one flush, ended.
	var o, e bytes.Buffer
	ol, el, flushBoth := StepLogs(&o, &e)
	io.WriteString(ol, "out, no newline")
	io.WriteString(el, "err, no newline")
	if o.Len()+e.Len() != 0 {
		t.Errorf("before the flush: %q, %q", o.String(), e.String())
	}
	flushBoth()
	if o.String() != "out, no newline\n" || e.String() != "err, no newline\n" {
		t.Errorf("after the flush: %q, %q", o.String(), e.String())
	}
	f, err := os.Create(filepath.Join(t.TempDir(), "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if w, flush := StepLog(f); w != io.Writer(f) || flush() != nil {
		t.Errorf("StepLog of a regular file = %T", w)
	}
	var b strings.Builder
	w, flush := StepLog(&b)
	if _, ok := w.(*LogWriter); !ok {
		t.Fatalf("StepLog of a builder = %T, want a LogWriter", w)
	}
	io.WriteString(w, "::error::x")
	if err := flush(); err != nil || b.String() != "\\u003a:error::x\n" {
		t.Errorf("log %q, %v", b.String(), err)
	}
}
