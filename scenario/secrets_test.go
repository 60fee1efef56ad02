package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

func loadSecrets(t *testing.T, src string, env map[string]string) *Scenario {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.yml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path, "", mapEnv(env))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSecretRedact: every value Load took from the environment is replaced,
// in each form a request carries it; a default written in the file is not
// a secret, nor a value shorter than MinSecret.
func TestSecretRedact(t *testing.T) {
	t.Parallel()
	const key = "k3y+/x=<&>\"y"
	src := minimal + `load:
  defaults:
    query: {api_key: "${API_KEY}", n: "${N}", mode: "${MODE:-fast}"}
    headers: {X-Token: "${TOKEN:-unused}"}
`
	s := loadSecrets(t, src, map[string]string{"API_KEY": key, "N": "7", "TOKEN": "tok-123456"})
	if !s.HasSecrets() {
		t.Fatal("HasSecrets = false")
	}
	req := s.Stream("", "A", 1, 0, 0).Next()
	for _, tt := range []struct{ in, want string }{
		{req.Target, "/a?api_key=${API_KEY}&mode=fast&n=7"},
		{"raw " + key + ".", "raw ${API_KEY}."},
		{`json "k3y+/x=\u003c\u0026\u003e\"y"`, `json "${API_KEY}"`},
		{`json "k3y+/x=<&>\"y"`, `json "${API_KEY}"`},
		{"path /k3y+%2Fx=%3C&%3E%22y/", "path /${API_KEY}/"},
		{"header tok-123456", "header ${TOKEN}"},
		{"n=7", "n=7"},
		{"mode=fast", "mode=fast"},
	} {
		if got := s.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if strings.Contains(s.Redact(req.Target), "k3y") {
		t.Errorf("the target keeps the key: %s", s.Redact(req.Target))
	}
	// "7" is everywhere and no secret.
	if got, want := s.Redact(`{"id":7,"key":"k3y+/x=<&>\"y"}`), `{"id":7,"key":"${API_KEY}"}`; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

// TestSecretNone: without values from the environment, Redact returns its
// argument (no allocation); a Scenario built in code and nil redact
// nothing.
func TestSecretNone(t *testing.T) {
	s := loadSecrets(t, minimal+"load: {repetitions: \"${REPS}\", defaults: {query: {k: \"${K:-dflt}\"}}}\n", map[string]string{"REPS": "5"})
	if s.HasSecrets() {
		t.Error("HasSecrets with only a default and a short value")
	}
	in := "/a?k=dflt&n=5"
	if n := testing.AllocsPerRun(100, func() { _ = s.Redact(in) }); n != 0 {
		t.Errorf("Redact allocates %v times without secrets", n)
	}
	var nilS *Scenario
	if nilS.Redact(in) != in || (&Scenario{}).Redact(in) != in {
		t.Error("a Scenario without Load redacts")
	}
}

// TestSecretLongestFirst: a secret holding another is replaced whole.
func TestSecretLongestFirst(t *testing.T) {
	t.Parallel()
	s := loadSecrets(t, minimal+"load: {defaults: {query: {a: \"${A}\", b: \"${B}\"}}}\n",
		map[string]string{"A": "abcd", "B": "abcdefgh"})
	if got := s.Redact("x abcdefgh abcd"); got != "x ${B} ${A}" {
		t.Errorf("got %q", got)
	}
}

// TestSecretTableFreed: the table does not keep a Scenario's secrets after
// it is gone, so fuzzing Load does not grow it.
func TestSecretTableFreed(t *testing.T) {
	count := func() (n int) {
		secretTable.Range(func(any, any) bool { n++; return true })
		return n
	}
	before := count()
	for range 50 {
		loadSecrets(t, minimal+"load: {defaults: {query: {a: \"${A}\"}}}\n", map[string]string{"A": "abcd"})
	}
	for deadline := time.Now().Add(5 * time.Second); count() > before && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if n := count(); n > before {
		t.Errorf("%d entries left of 50 collected scenarios", n-before)
	}
}

// TestSecretRedactDecoded (issue 27): a value echoed escaped as servers
// escape it is found after decoding, in any case, and only the span that
// decodes to it is replaced.
func TestSecretRedactDecoded(t *testing.T) {
	t.Parallel()
	const key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	s := loadSecrets(t, minimal+"load: {defaults: {query: {key: \"${API_KEY}\"}}}\n", map[string]string{"API_KEY": key})
	for _, in := range []string{
		`wJalrXUtnFEMI\/K7MDENG\/bPxRfiCYEXAMPLEKEY`,                                                                               // PHP json_encode
		`wJalrXUtnFEMI\u002fK7MDENG\u002FbPxRfiCYEXAMPLEKEY`,                                                                       // \u, either case
		`\u0077\u004a\u0061lrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY`,                                                                  // letters as \u
		`wJalrXUtnFEMI&#x2F;K7MDENG&#47;bPxRfiCYEXAMPLEKEY`,                                                                        // HTML hex, decimal
		`wJalrXUtnFEMI&sol;K7MDENG&#X2f;bPxRfiCYEXAMPLEKEY`,                                                                        // named; &#X
		`wJalrXUtnFEMI&#x2FK7MDENG&#0047bPxRfiCYEXAMPLEKEY`,                                                                        // no ";", leading 0
		`wJalrXUtnFEMI%2fK7MDENG%2FbPxRfiCYEXAMPLEKEY`,                                                                             // percent, either case
		`%77%4a%61%6c%72%58%55%74%6e%46%45%4d%49%2f%4b%37%4d%44%45%4e%47%2f%62%50%78%52%66%69%43%59%45%58%41%4d%50%4c%45%4b%45%59`, // every byte
		`WJALRXUTNFEMI/K7MDENG/BPXRFICYEXAMPLEKEY`,                                                                                 // upper-cased
		`wjalrxutnfemi%2Fk7mdeng%2Fbpxrficyexamplekey`,                                                                             // lower-cased, escaped
		`wJalrXUtnFEMI%252FK7MDENG%252FbPxRfiCYEXAMPLEKEY`,                                                                         // percent twice
		`wJalrXUtnFEMI&amp;#x2F;K7MDENG&amp;sol;bPxRfiCYEXAMPLEKEY`,                                                                // entity in an entity
		`wJalrXUtnFEMI\u0026#47;K7MDENG%5C%2fbPxRfiCYEXAMPLEKEY`,                                                                   // entity in JSON; JSON in percent
		`wJalrXUtnFEMI&#x5C;/K7MDENG\/bPxRfiCYEXAMPLEKEY`,                                                                          // JSON in HTML; mixed
		`wJalrXUtnFEMI\x2fK7MDENG\U0000002fbPxRfiCYEXAMPLEKEY`,                                                                     // Go escapes
	} {
		for _, wrap := range []string{"%s", `{"echo": "%s", "n": 7}`, "a&b=%s&c=%%41\\"} {
			text := fmt.Sprintf(wrap, in)
			want := fmt.Sprintf(wrap, "${API_KEY}")
			if got := s.Redact(text); got != want {
				t.Errorf("Redact(%q)\n = %q\nwant %q", text, got, want)
			}
		}
	}
	// A value in a query's form: "+" for a space, and "+" as itself.
	s = loadSecrets(t, minimal+"load: {defaults: {query: {a: \"${A}\", b: \"${B}\"}}}\n", map[string]string{"A": "open sesame", "B": "sk+live/Q7"})
	for in, want := range map[string]string{
		"q=open+sesame&x=1":    "q=${A}&x=1",
		"q=open%20Sesame":      "q=${A}",
		"k=sk%2Blive%2FQ7 end": "k=${B} end",
		"k=SK+LIVE/q7":         "k=${B}",
		"open sesam":           "open sesam",
	} {
		if got := s.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSecretRedactUnchanged: text holding no value is returned as it is,
// escapes, broken escapes and all.
func TestSecretRedactUnchanged(t *testing.T) {
	t.Parallel()
	s := loadSecrets(t, minimal+"load: {defaults: {query: {key: \"${K}\"}}}\n", map[string]string{"K": "s3cr3t/v"})
	for _, in := range []string{
		`s3cr3t/w`, `s3cr3t\/`, `s3cr3t&#47;x`, `%s3cr3t%2`, `\u00`, `\uD83D`, `&#`, `&#x;`, `&ampx;`, `&;`, `%%`, `\`, `&`,
		`s3cr3\\t/v`, `s3cr3t%252` + "\xff\xfe", strings.Repeat(`\u0041`, 100), `&#99999999999999999999999999999999999999;`,
	} {
		if got := s.Redact(in); got != in {
			t.Errorf("Redact(%q) = %q, want it unchanged", in, got)
		}
	}
}

// TestSecretRedactWindows: a long text is decoded a window at a time; a
// value at, across and near every window's edge is replaced, in any form,
// and the rest of the text is kept byte for byte.
func TestSecretRedactWindows(t *testing.T) {
	t.Parallel()
	const key = "Zq9/kk-Secret"
	s := loadSecrets(t, minimal+"load: {defaults: {query: {key: \"${KEY}\"}}}\n", map[string]string{"KEY": key})
	forms := []string{key, `Zq9\/kk-Secret`, `%5a%71%39%2f%6b%6b%2d%53%65%63%72%65%74`, `Zq9&amp;#47;kk-SECRET`}
	filler := strings.Repeat("ab%c\\d&e ", 1000)
	var in, want strings.Builder
	for i := 0; in.Len() < 5*redactWindow; i++ {
		// Walk a form over each window's edge, byte by byte.
		if edge := (in.Len()/redactWindow + 1) * redactWindow; edge-in.Len() < 60 {
			in.WriteString("x")
			want.WriteString("x")
			continue
		} else if pad := edge - in.Len() - 60; pad > 0 {
			in.WriteString(filler[:min(pad, len(filler))])
			want.WriteString(filler[:min(pad, len(filler))])
		}
		f := forms[i%len(forms)]
		in.WriteString(f + " ")
		want.WriteString("${KEY} ")
	}
	if got := s.Redact(in.String()); got != want.String() {
		for i := range min(len(got), want.Len()) {
			if got[i] != want.String()[i] {
				t.Fatalf("at byte %d of %d: got %q, want %q", i, want.Len(), got[max(0, i-40):min(len(got), i+40)], want.String()[max(0, i-40):min(want.Len(), i+40)])
			}
		}
		t.Fatalf("got %d bytes, want %d", len(got), want.Len())
	}
}

// TestSecretRedactLinear: a 16 MiB answer of escapes (the largest a probe
// reads) is redacted in one pass of fixed-size windows: the memory it
// takes is about that of its output, not 20 bytes a byte of input.
func TestSecretRedactLinear(t *testing.T) {
	s := loadSecrets(t, minimal+"load: {defaults: {query: {key: \"${K}\"}}}\n", map[string]string{"K": "abcdefgh"})
	in := strings.Repeat(`%25\u0026amp;`, (16<<20)/13) + "abcdefgh"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got := s.Redact(in)
	runtime.ReadMemStats(&after)
	if !strings.HasSuffix(got, "${K}") || len(got) != len(in)-4 {
		t.Fatalf("got …%q, %d bytes", got[max(0, len(got)-20):], len(got))
	}
	// Allocated in all: the output and one window's scratch, reused.
	if total := after.TotalAlloc - before.TotalAlloc; total > uint64(len(in))+4<<20 {
		t.Errorf("allocated %d bytes for a %d-byte text", total, len(in))
	}
}

// encoders are ways a server writes a value back (issue 27), each
// applied to the value whole.
var encoders = []func(string) string{
	func(v string) string { return v },
	url.QueryEscape,
	url.PathEscape,
	func(v string) string { return eachByte(v, "%%%02X") },
	func(v string) string { return eachByte(v, "%%%02x") },
	func(v string) string { b, _ := json.Marshal(v); return string(b[1 : len(b)-1]) },
	func(v string) string { // PHP's json_encode
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(v)
		j := strings.TrimSuffix(b.String(), "\n")
		return strings.ReplaceAll(j[1:len(j)-1], "/", `\/`)
	},
	func(v string) string { return eachUTF16(v, `\u%04x`) },
	func(v string) string { return eachUTF16(v, `\u%04X`) },
	html.EscapeString,
	func(v string) string { return eachRune(v, "&#%d;") },
	func(v string) string { return eachRune(v, "&#x%x;") },
	func(v string) string { return eachRune(v, "&#X%X;") },
	strings.NewReplacer("/", "&sol;", "&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;", "=", "&equals;", "+", "&plus;", ":", "&colon;").Replace,
	func(v string) string { q := strconv.Quote(v); return q[1 : len(q)-1] },
}

func eachByte(v, format string) string {
	var b strings.Builder
	for i := range len(v) {
		fmt.Fprintf(&b, format, v[i])
	}
	return b.String()
}

// eachRune writes each rune as an HTML reference, but for those HTML
// reads otherwise (NUL, C1 controls: &#128; is "€"), written as they are.
func eachRune(v, format string) string {
	var b strings.Builder
	for _, r := range v {
		if r == 0 || 0x80 <= r && r <= 0x9F {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, format, r)
		}
	}
	return b.String()
}

func eachUTF16(v, format string) string {
	var b strings.Builder
	for _, u := range utf16.Encode([]rune(v)) {
		fmt.Fprintf(&b, format, u)
	}
	return b.String()
}

// cases are the ways a server changes a value's case.
var cases = []func(string) string{
	func(v string) string { return v },
	func(v string) string { return string(fold(nil, []byte(v))) }, // lower, and "+" as a space
	func(v string) string {
		b := []byte(v)
		for i, c := range b {
			if 'a' <= c && c <= 'z' {
				b[i] = c - 'a' + 'A'
			}
		}
		return string(b)
	},
}

// FuzzRedact: a value written back in any of the encodings above, or in
// one of them inside another, in any case, within arbitrary text, is
// replaced, and no form of it is left; the text around it is kept byte for
// byte. Text that cannot hold the value is unchanged, and redacting twice
// changes nothing more.
func FuzzRedact(f *testing.F) {
	f.Add("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", `{"side": "a", "echo": "`, `"}`, uint8(6), uint8(0), uint8(0), `x\/y %2f &amp;`)
	f.Add("sk+live/Q7x9==Zr", "GET /search?api_key=", "&q=1", uint8(1), uint8(9), uint8(2), "q=sk+live")
	f.Add("k3y+/x=<&>\"y", "a", "b", uint8(7), uint8(4), uint8(1), `\u00`)
	f.Add("päss wörd 😀", "", "", uint8(8), uint8(10), uint8(0), "&#x;&#;%%")
	f.Fuzz(func(t *testing.T, secret, prefix, suffix string, e1, e2, c uint8, other string) {
		if len(secret) < MinSecret || len(secret) > 64 || !utf8.ValidString(secret) ||
			strings.ContainsAny(secret, "\x00$") || len(prefix)+len(suffix)+len(other) > 4096 {
			return // an environment variable holds no NUL; "$" could be in "${S}"
		}
		m := newMatcher(map[string]string{secret: "S"})
		canon := fold(nil, []byte(secret))
		// The text around holds no escape, so that none can take in the
		// first byte of the form (a "\" before "\u0041" makes it "\\u0041",
		// which is no "A").
		plain := strings.NewReplacer(`\`, "", "%", "", "&", "")
		prefix, suffix = plain.Replace(prefix), plain.Replace(suffix)
		form := encoders[int(e2)%len(encoders)](encoders[int(e1)%len(encoders)](cases[int(c)%len(cases)](secret)))
		text := prefix + " " + form + " " + suffix
		got := m.redact(text)
		folded := fold(nil, []byte(got))
		for _, cs := range cases {
			for _, a := range encoders {
				for _, b := range encoders {
					if f := b(a(cs(secret))); bytes.Contains(folded, fold(nil, []byte(f))) {
						t.Fatalf("redact(%q) = %q holds the form %q of %q", text, got, f, secret)
					}
				}
			}
		}
		if bytes.Contains(folded, canon) || bytes.Contains(fold(nil, []byte(html.UnescapeString(html.UnescapeString(got)))), canon) {
			t.Fatalf("redact(%q) = %q holds %q", text, got, secret)
		}
		// With no space in the value (a "+" is one), no match reaches past
		// the spaces around the form, so the text around is kept as is.
		if !bytes.Contains(canon, []byte(" ")) &&
			!bytes.Contains(fold(nil, []byte(prefix)), canon) && !bytes.Contains(fold(nil, []byte(suffix)), canon) {
			if want := prefix + " ${S} " + suffix; got != want {
				t.Fatalf("redact(%q) = %q, want %q", text, got, want)
			}
		}
		// Without escapes, the text is changed exactly when it holds the
		// value, in any case.
		other = plain.Replace(other)
		if got, holds := m.redact(other), bytes.Contains(fold(nil, []byte(other)), canon); (got != other) != holds {
			t.Fatalf("redact(%q) = %q, though it holds the value %v", other, got, holds)
		}
		if again := m.redact(got); again != got {
			t.Fatalf("redact(%q) = %q, and again %q", text, got, again)
		}
	})
}

// TestSecretRedactConcurrent: Redact is called at once by every target's
// log writer; each call has buffers of its own (run with -race in CI).
func TestSecretRedactConcurrent(t *testing.T) {
	t.Parallel()
	s := loadSecrets(t, minimal+"load: {defaults: {query: {key: \"${K}\"}}}\n", map[string]string{"K": "abc/def"})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			pad := strings.Repeat("x", g*1000)
			for range 200 {
				if got, want := s.Redact(pad+"k=abc%2Fdef&"+pad), pad+"k=${K}&"+pad; got != want {
					t.Errorf("got %d bytes, want %d", len(got), len(want))
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestSecretRedactOverlapping: occurrences that overlap are all replaced
// (no part of the second is left), and a run of them is one replacement.
func TestSecretRedactOverlapping(t *testing.T) {
	t.Parallel()
	s := loadSecrets(t, minimal+"load: {defaults: {query: {a: \"${A}\", b: \"${B}\"}}}\n", map[string]string{"A": "abca", "B": "zzzz"})
	for in, want := range map[string]string{
		"x abcabca y":                     "x ${A} y",
		"x abc%61bca y":                   "x ${A} y",
		"1 " + strings.Repeat("z", 1<<20): "1 ${B}",
	} {
		if got := s.Redact(in); got != want {
			t.Errorf("Redact(%.40q) = %.40q, want %q", in, got, want)
		}
	}
}

// TestSecretShownFields: a value expanded into a field that names a git
// ref, a directory or an image is no secret and is shown as it is (an
// error can then quote the user's own mistake); the same variable also
// expanded anywhere else is hidden everywhere, and so is every value of a
// file that uses an alias.
func TestSecretShownFields(t *testing.T) {
	t.Parallel()
	const gobench = `version: 1
name: client
kind: gobench
targets:
  baseline: {ref: "${BASE_SHA}"}
  candidate: {dir: "${WORKTREE}"}
`
	tree := t.TempDir()
	env := map[string]string{"BASE_SHA": "nosuchref", "WORKTREE": tree, "API_KEY": "s3cr3t-key"}
	s := loadSecrets(t, gobench, env)
	msg := "unknown git ref nosuchref in " + tree
	if s.HasSecrets() || s.Redact(msg) != msg || s.Baseline.Shown != "ref nosuchref" || s.Candidate.Shown != "dir "+tree {
		t.Errorf("ref and dir hidden: %q; shown %q, %q", s.Redact(msg), s.Baseline.Shown, s.Candidate.Shown)
	}
	// An error about the directory quotes it as it is.
	path := filepath.Join(t.TempDir(), "s.yml")
	os.WriteFile(path, []byte(gobench), 0o644)
	if _, err := Load(path, "", mapEnv(map[string]string{"BASE_SHA": "x1234", "WORKTREE": "/no/such/tree"})); err == nil ||
		!strings.Contains(err.Error(), "targets.candidate.dir: /no/such/tree is not a directory") {
		t.Errorf("error %v", err)
	}
	// A package pattern names a directory: shown, the module's path too
	// (it was masked when a pattern held the same variable).
	os.WriteFile(filepath.Join(tree, "go.mod"), []byte("module example.com/m\n"), 0o644)
	s = loadSecrets(t, gobench+"gobench: {module: \"${WORKTREE}\", packages: [\"${WORKTREE}/...\"]}\n", env)
	if s.HasSecrets() || s.Redact(msg) != msg {
		t.Errorf("module and packages hidden: %q", s.Redact(msg))
	}
	// BASE_SHA also in a gobench field that is not shown: hidden.
	s = loadSecrets(t, gobench+"gobench: {bench: \"${BASE_SHA}\"}\n", env)
	if got := s.Redact("ref nosuchref"); got != "ref ${BASE_SHA}" {
		t.Errorf("also in gobench.bench: %q", got)
	}
	// An alias may carry the value elsewhere: every value hidden.
	aliased := `version: 1
name: client
kind: gobench
targets:
  baseline: {ref: &r "${BASE_SHA}"}
  candidate: {ref: *r}
`
	s = loadSecrets(t, aliased, env)
	if got := s.Redact("ref nosuchref"); got != "ref ${BASE_SHA}" {
		t.Errorf("aliased: %q", got)
	}
	// A service's image is shown; a header's value is not.
	svc := `version: 1
name: svc
targets:
  baseline: {image: "shop:${BASE_TAG}", port: 8080}
  candidate: {url: "http://127.0.0.1:2"}
classes:
  - name: A
    request: {method: GET, path: /a, headers: {X-Key: "${API_KEY}"}}
`
	s = loadSecrets(t, svc, map[string]string{"BASE_TAG": "v1.2.3-rc", "API_KEY": "s3cr3t-key"})
	if got := s.Redact("image shop:v1.2.3-rc key s3cr3t-key"); got != "image shop:v1.2.3-rc key ${API_KEY}" {
		t.Errorf("image and header: %q", got)
	}
}
