package scenario

import (
	"bytes"
	"cmp"
	"html"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf16"
	"unicode/utf8"
	"weak"
)

// A value that came from ${VAR} may be a secret: load.defaults.query is
// where the docs put an API key. Load records every value its getenv
// returned of MinSecret bytes or more (a ${VAR:-default}'s default is
// written in the file and is not recorded), and Redact replaces each of
// them with ${NAME} wherever the text holds it in a form a request or an
// answer carries it. The runner applies it wherever a request or a
// target's answer is stored or shown; what is rendered from results.json
// (the report, the comment, the summary, the annotations) inherits it.
//
// A target echoes a value escaped in ways no list of forms keeps up with
// (PHP's JSON writes "/" as "\/", templates write "&#x2F;", a proxy
// percent-encodes in lower case, a log upper-cases), so Redact matches a
// value after decoding rather than listing its encodings: it decodes the
// text into a canonical form, keeping for each decoded byte the span of
// the text it came from, finds the value there and replaces the spans.
// Decoding undoes JSON and Go escapes (\", \\, \/, \n…, \uXXXX with
// surrogate pairs, \xHH, \UXXXXXXXX), HTML character references (named,
// decimal, hex) and percent-escapes in either case, twice over (an escape
// of an escape: %252F, &amp;#47;, \u0026#x2F;), and the canonical form
// folds ASCII case and reads "+" as a space (a query's form). Every
// decoding of the text is searched, the raw text included, so a value
// that itself looks escaped is found as written.
//
// The values live in a table beside the Scenario, keyed by a weak pointer
// to it (the entry goes when its Scenario is collected), so that model.go
// is unchanged. A Scenario made in code has none, and neither has a copy of
// a Scenario value: redact through the pointer Load returned.

// What is never a secret is shown as it is: a value expanded into a
// field that names a git ref, a directory, an image or a compose file
// (shownField) is not recorded, so an error can say `unknown git ref
// "nosuchref"` rather than `unknown git ref "${BASE_SHA}"`, which hid the
// user's own mistake. A variable also expanded anywhere else is recorded
// there and hidden everywhere, and so is every such value of a file that
// uses an alias (its value may be used again where a secret could be).
// docs/security.md states the rule.

// shownField matches the fields whose ${VAR} values are shown: a gobench
// side's package patterns are directories or import paths of the module,
// as its dir is.
var shownField = regexp.MustCompile(`^targets\.(baseline|candidate)\.(ref|dir|image|compose|packages\[[0-9]+\])$|^gobench\.(module|packages\[[0-9]+\])$`)

// MinSecret is the shortest value Redact replaces. A shorter one is no
// secret (it is guessed in fewer than 2^24 tries), and ${VAR} also sets
// knobs (repetitions: ${REPS} with REPS=5, a "/", an "on"): replacing
// every "5" of every request path and answer would make the report
// unreadable. The same rule holds for requests and answers, so a value
// is either hidden everywhere or nowhere.
const MinSecret = 4

// secretSet is the recorded values of one Scenario.
type secretSet struct {
	mu    sync.Mutex
	byVal map[string]string // value → the first variable name that held it
	m     *matcher          // nil until built and after a change
}

var secretTable sync.Map // weak.Pointer[Scenario] → *secretSet

// recordSecrets returns getenv recording, for s, every value of MinSecret
// bytes or more that it returns.
func (s *Scenario) recordSecrets(getenv func(string) string) func(string) string {
	var set *secretSet
	return func(name string) string {
		v := getenv(name)
		if len(v) < MinSecret {
			return v
		}
		if set == nil {
			set = &secretSet{byVal: map[string]string{}}
			k := weak.Make(s)
			secretTable.Store(k, set)
			runtime.AddCleanup(s, func(k weak.Pointer[Scenario]) { secretTable.Delete(k) }, k)
		}
		set.mu.Lock()
		if _, ok := set.byVal[v]; !ok {
			set.byVal[v] = name
			set.m = nil
		}
		set.mu.Unlock()
		return v
	}
}

func (s *Scenario) secrets() *secretSet {
	if s == nil {
		return nil
	}
	set, ok := secretTable.Load(weak.Make(s))
	if !ok {
		return nil
	}
	return set.(*secretSet)
}

// HasSecrets says whether Redact has anything to replace: some ${VAR} of
// the file was expanded from the environment to a value of MinSecret
// bytes or more.
func (s *Scenario) HasSecrets() bool { return s.secrets() != nil }

// Redact replaces every value Load recorded, in any form the package
// comment lists, with ${NAME}: for text made of a request (its target, an
// error quoting its URL) or of a target's answer (a body, a reason, a
// command's output). Text holding no value is returned as is; without
// recorded values Redact does not allocate.
func (s *Scenario) Redact(t string) string {
	set := s.secrets()
	if set == nil || t == "" {
		return t
	}
	return set.matcher().redact(t)
}

// matcher is built once the values are known: Load records them all
// before it returns.
func (set *secretSet) matcher() *matcher {
	set.mu.Lock()
	defer set.mu.Unlock()
	if set.m == nil {
		set.m = newMatcher(set.byVal)
	}
	return set.m
}

// A matcher finds values in text by their canonical form.
type matcher struct {
	pats   []pattern // longest first, so that a value holding another is named for itself
	maxLen int
}

type pattern struct {
	canon []byte // the value folded (see fold)
	name  string
}

// newMatcher makes the matcher of values (value → variable name). Values
// that fold alike are one pattern, named by the first in a fixed order.
func newMatcher(values map[string]string) *matcher {
	m := &matcher{}
	for v, name := range values {
		m.pats = append(m.pats, pattern{fold(nil, []byte(v)), name})
	}
	slices.SortFunc(m.pats, func(a, b pattern) int {
		return cmp.Or(cmp.Compare(len(b.canon), len(a.canon)), bytes.Compare(a.canon, b.canon), strings.Compare(a.name, b.name))
	})
	m.pats = slices.CompactFunc(m.pats, func(a, b pattern) bool { return bytes.Equal(a.canon, b.canon) })
	for _, p := range m.pats {
		m.maxLen = max(m.maxLen, len(p.canon))
	}
	return m
}

const (
	// redactWindow is how much text is decoded at a time: besides its
	// output, a Redact takes some 20 bytes a byte of one window, whatever
	// the text's length (an answer may be 16 MiB).
	redactWindow = 64 << 10
	// maxExpand is the most bytes of text one decoded byte is taken to
	// come from: \u0026#x2F; is 11, &amp;#x2F; 10. A window reads this
	// many bytes a byte of the longest value past its end, so that a value
	// starting in it is found whole.
	maxExpand = 32
	// redactLead is how far before its part a window starts decoding, so
	// that an escape cut by the window's start is decoded as it is in the
	// text.
	redactLead = 64
	// maxDecodes is how many times the text is decoded: an escape of an
	// escape is found, one of an escape of an escape is not.
	maxDecodes = 2
)

// A found is the span of t that decodes to a value, and its variable.
type found struct {
	start, end int
	name       string
}

// redact replaces every span of t that decodes to a value with ${NAME};
// overlapping spans are replaced as one, named for the earliest and
// longest.
func (m *matcher) redact(t string) string {
	var fs []found
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	for cs := 0; cs < len(t); cs += redactWindow {
		ws := max(0, cs-redactLead)
		we := min(len(t), cs+redactWindow+m.maxLen*maxExpand+redactLead)
		ce := cs + redactWindow
		if we == len(t) {
			ce = len(t)
		}
		fs = m.scan(sc, t[ws:we], ws, cs, ce, fs)
		if ce == len(t) {
			break
		}
	}
	if len(fs) == 0 {
		return t
	}
	slices.SortFunc(fs, func(a, b found) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(b.end, a.end))
	})
	var b strings.Builder
	b.Grow(len(t))
	last := 0
	for i := 0; i < len(fs); {
		g := fs[i]
		for i++; i < len(fs) && fs[i].start < g.end; i++ {
			g.end = max(g.end, fs[i].end)
		}
		b.WriteString(t[last:g.start])
		b.WriteString("${" + g.name + "}")
		last = g.end
	}
	b.WriteString(t[last:])
	return b.String()
}

// A span is where in a window's text a decoded byte came from.
type span struct{ start, end int32 }

// scratch is the memory of one window, used again for the next and, through
// scratchPool, by the next Redact: a target's log is redacted line by line.
type scratch struct {
	raw, canon []byte
	dec        [maxDecodes][]byte
	spans      [maxDecodes][]span
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// scan appends to fs the values found in w, a window starting at offset
// off of the text, that start in [cs, ce) of the text: in w as is and in
// each of its decodings.
func (m *matcher) scan(sc *scratch, w string, off, cs, ce int, fs []found) []found {
	sc.raw = append(slices.Grow(sc.raw[:0], len(w)), w...)
	raw := sc.raw
	var spans []span // nil: byte i came from byte i
	for level := 0; ; level++ {
		sc.canon = fold(slices.Grow(sc.canon[:0], len(raw)), raw)
		canon := sc.canon
		for _, p := range m.pats {
			// Every occurrence, overlapping ones too ("abcabca" holds
			// "abca" twice): one that overlaps the last is merged into it,
			// so that a run of them is one found.
			first := len(fs)
			for k := 0; k+len(p.canon) <= len(canon); {
				i := bytes.Index(canon[k:], p.canon)
				if i < 0 {
					break
				}
				i += k
				j := i + len(p.canon)
				s, e := i+off, j+off
				if spans != nil {
					s, e = int(spans[i].start)+off, int(spans[j-1].end)+off
				}
				switch {
				case s < cs || s >= ce:
				case len(fs) > first && s < fs[len(fs)-1].end:
					fs[len(fs)-1].end = max(fs[len(fs)-1].end, e)
				default:
					fs = append(fs, found{s, e, p.name})
				}
				k = i + 1
			}
		}
		if level == maxDecodes || bytes.IndexAny(raw, `\%&`) < 0 {
			return fs
		}
		sc.dec[level], sc.spans[level] = decode(slices.Grow(sc.dec[level][:0], len(raw)), slices.Grow(sc.spans[level][:0], len(raw)), raw, spans)
		raw, spans = sc.dec[level], sc.spans[level]
	}
}

// fold appends to dst the canonical form of b: ASCII letters in lower
// case, "+" as a space.
func fold(dst, b []byte) []byte {
	for _, c := range b {
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == '+':
			c = ' '
		}
		dst = append(dst, c)
	}
	return dst
}

// decode appends to out the bytes of b with one level of escapes undone,
// and to outSpans where each came from; b's bytes came from spans (nil:
// from themselves).
func decode(out []byte, outSpans []span, b []byte, spans []span) ([]byte, []span) {
	at := func(i int) span {
		if spans == nil {
			return span{int32(i), int32(i + 1)}
		}
		return spans[i]
	}
	var buf [16]byte
	for i := 0; i < len(b); {
		if c := b[i]; c == '\\' || c == '%' || c == '&' {
			if d, n := unescape(buf[:0], b[i:]); n > 0 {
				sp := span{at(i).start, at(i + n - 1).end}
				for _, x := range d {
					out = append(out, x)
					outSpans = append(outSpans, sp)
				}
				i += n
				continue
			}
		}
		out = append(out, b[i])
		outSpans = append(outSpans, at(i))
		i++
	}
	return out, outSpans
}

// maxEntity bounds an HTML character reference's name or digits, so that
// decoding stays linear.
const maxEntity = 32

// unescape decodes the escape that b starts with, appending what it stands
// for to dst, and says how many bytes of b it took: 0 when b starts with
// no escape.
func unescape(dst, b []byte) ([]byte, int) {
	if len(b) < 2 {
		return dst, 0
	}
	switch b[0] {
	case '%':
		if r, ok := hexRune(b[1:], 2); ok {
			return append(dst, byte(r)), 3
		}
	case '\\':
		switch c := b[1]; c {
		case '"', '\\', '/', '\'':
			return append(dst, c), 2
		case 'a', 'b', 'f', 'n', 'r', 't', 'v':
			return append(dst, "\a\b\f\n\r\t\v"[strings.IndexByte("abfnrtv", c)]), 2
		case 'x':
			if r, ok := hexRune(b[2:], 2); ok {
				return append(dst, byte(r)), 4
			}
		case 'u':
			r, ok := hexRune(b[2:], 4)
			if !ok {
				return dst, 0
			}
			if !utf16.IsSurrogate(r) {
				return utf8.AppendRune(dst, r), 6
			}
			if len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
				if r2, ok := hexRune(b[8:], 4); ok {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						return utf8.AppendRune(dst, d), 12
					}
				}
			}
			return utf8.AppendRune(dst, utf8.RuneError), 6 // a lone surrogate, as encoding/json reads it
		case 'U':
			if r, ok := hexRune(b[2:], 8); ok && utf8.ValidRune(r) {
				return utf8.AppendRune(dst, r), 10
			}
		}
	case '&':
		return entity(dst, b)
	}
	return dst, 0
}

// entity decodes the HTML character reference b starts with, as a
// browser does (html.UnescapeString): &#47; &#x2F; &#X2f &sol; &AMP;.
// A named one needs its ";".
func entity(dst, b []byte) ([]byte, int) {
	j := 1
	if b[1] == '#' {
		j = 2
		digit := isDigit
		if len(b) > 2 && (b[2] == 'x' || b[2] == 'X') {
			j, digit = 3, isHex
		}
		start := j
		for j < len(b) && j-start < maxEntity && digit(b[j]) {
			j++
		}
		if j == start {
			return dst, 0
		}
		if j < len(b) && b[j] == ';' {
			j++
		}
	} else {
		if !isLetter(b[1]) {
			return dst, 0
		}
		for j < len(b) && j <= maxEntity && (isLetter(b[j]) || isDigit(b[j])) {
			j++
		}
		if j == len(b) || b[j] != ';' {
			return dst, 0
		}
		j++
	}
	tok := string(b[:j])
	r := html.UnescapeString(tok)
	// html decodes the longest entity that starts the name: "&ampx;" is
	// "&x;", which is no reference of its own.
	if r == tok || b[1] != '#' && strings.Contains(r, ";") && tok != "&semi;" {
		return dst, 0
	}
	return append(dst, r...), j
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isHex(c byte) bool    { _, ok := unhex(c); return ok }

// hexRune reads n hex digits at the start of b (unhex is stream.go's).
func hexRune(b []byte, n int) (rune, bool) {
	if len(b) < n {
		return 0, false
	}
	var r rune
	for _, c := range b[:n] {
		d, ok := unhex(c)
		if !ok {
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}
