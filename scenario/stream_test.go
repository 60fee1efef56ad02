package scenario

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func loadFull(t testing.TB) *Scenario {
	t.Helper()
	s, err := Load("testdata/full.yml", "", mapEnv(map[string]string{"TAG": "t"}))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// take copies n requests out of a stream, since Next reuses its Request.
func take(st *Stream, n int) []string {
	out := make([]string, n)
	for i := range out {
		r := st.Next()
		var h []string
		for k, v := range r.Header {
			h = append(h, k+"="+strings.Join(v, ","))
		}
		slices.Sort(h)
		out[i] = fmt.Sprintf("%s %s %s %q %q", r.Class, r.Method, r.Target, h, r.Body)
	}
	return out
}

func same(a, b []string) bool {
	return strings.Join(a, "\n") == strings.Join(b, "\n")
}

func TestStreamDeterministic(t *testing.T) {
	t.Parallel()
	s := loadFull(t)
	for _, class := range []string{"Q02", "Q03", "mix"} {
		a := take(s.Stream("csv", class, 4, 1, 2), 1000)
		// A second load: nothing may depend on state left behind by the first.
		b := take(loadFull(t).Stream("csv", class, 4, 1, 2), 1000)
		if !same(a, b) {
			t.Errorf("%s: two streams with the same arguments differ", class)
		}
		other := map[string]*Stream{
			"worker":      s.Stream("csv", class, 4, 1, 3),
			"round":       s.Stream("csv", class, 4, 2, 2),
			"concurrency": s.Stream("csv", class, 8, 1, 2),
			"variant":     s.Stream("votable", class, 4, 1, 2),
		}
		s2 := *s
		s2.Seed++
		other["seed"] = s2.Stream("csv", class, 4, 1, 2)
		for what, st := range other {
			if same(a, take(st, 1000)) {
				t.Errorf("%s: another %s gives the same stream", class, what)
			}
		}
	}
	// Q02 and the mix draw from the same RNG construction: the class name
	// must still separate them.
	q2 := take(s.Stream("csv", "Q02", 1, 0, 0), 50)
	q3 := take(s.Stream("csv", "Q03", 1, 0, 0), 50)
	if same(q2, q3) {
		t.Error("different classes give the same stream")
	}
}

// Workers build and run their streams at the same time; run with -race.
func TestStreamConcurrent(t *testing.T) {
	t.Parallel()
	s := loadFull(t)
	want := take(s.Stream("csv", "Q05", 2, 0, 1), 100)
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			got := take(s.Stream("csv", "Q05", 2, 0, w%2), 100)
			if w%2 == 1 && !same(got, want) {
				t.Errorf("worker %d: stream differs when run concurrently", w)
			}
		})
	}
	wg.Wait()
}

func TestStreamMix(t *testing.T) {
	t.Parallel()
	s := loadFull(t)
	st := s.Stream("csv", "mix", 8, 0, 0)
	counts := map[string]int{}
	const n = 10000
	for range n {
		counts[st.Next().Class]++
	}
	// Weights 3:1; the exact counts are those of this seed, pinned so that a
	// change in how streams draw shows up here.
	if counts["Q01"]+counts["Q02"] != n || counts["Q01"] < 7300 || counts["Q01"] > 7700 {
		t.Errorf("counts = %v, want about 7500 Q01 and 2500 Q02", counts)
	}
	if counts["Q01"] != 7489 {
		t.Errorf("Q01 drawn %d times, want 7489 (the pinned count for this seed)", counts["Q01"])
	}
}

func TestStreamDefaults(t *testing.T) {
	t.Parallel()
	s := loadFull(t)
	for _, class := range []string{"Q01", "Q02", "Q03", "Q04", "mix"} {
		st := s.Stream("votable", class, 1, 0, 0)
		for range 200 {
			r := st.Next()
			u, err := url.ParseRequestURI(r.Target)
			if err != nil {
				t.Fatalf("%s: %v", r.Target, err)
			}
			q := u.Query()
			wantMax, wantAccept := "10000", "application/json"
			if r.Class == "Q03" {
				// Q03 overrides both the default query and the default header.
				wantMax, wantAccept = "5", "text/csv"
				if q.Get("format") != "votable" || !strings.HasPrefix(u.Path, "/items/") {
					t.Errorf("Q03 target %s", r.Target)
				}
				if string(r.Body) == "" || !strings.Contains(string(r.Body), `"f": "votable"`) {
					t.Errorf("Q03 body %q", r.Body)
				}
			}
			if len(q["MAXREC"]) != 1 || q.Get("MAXREC") != wantMax {
				t.Errorf("%s: MAXREC %v, want %s", r.Target, q["MAXREC"], wantMax)
			}
			if got := r.Header.Values("Accept"); len(got) != 1 || got[0] != wantAccept {
				t.Errorf("%s: Accept %v, want %s", r.Class, got, wantAccept)
			}
			// Keys come out sorted, so the target is canonical.
			if u.RawQuery != q.Encode() {
				t.Errorf("query %q is not in canonical order (%q)", u.RawQuery, q.Encode())
			}
		}
	}
}

func TestStreamQueryMerge(t *testing.T) {
	t.Parallel()
	src := `version: 1
name: q
targets:
  baseline: {url: "http://127.0.0.1:1"}
  candidate: {url: "http://127.0.0.1:2"}
load:
  defaults:
    query: {a: "0", z: "0"}
data:
  t: ["x y", "a&b", "100%"]
classes:
  - name: P
    request:
      path: '/p?b=1&a=1&b=2&c={{pick "t"}}'
      query: {b: "3", d: '{{pick "t"}}'}
  - name: Const
    request: GET /c?x=%20&a=1
`
	path := filepath.Join(t.TempDir(), "s.yml")
	os.WriteFile(path, []byte(src), 0o644)
	s, err := Load(path, "", mapEnv(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Stream("", "Const", 1, 0, 0).Next().Target; got != "/c?a=1&x=+&z=0" {
		t.Errorf("Const target %q", got)
	}
	st := s.Stream("", "P", 1, 0, 0)
	seen := map[string]bool{}
	for range 100 {
		r := st.Next()
		u, err := url.ParseRequestURI(r.Target)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		// The path beats the defaults (a), the class beats the path (b),
		// values picked into the path are URL text, values of query: are raw.
		if q.Get("a") != "1" || strings.Join(q["b"], ",") != "3" || q.Get("z") != "0" {
			t.Errorf("merged query %q", r.Target)
		}
		seen[q.Get("d")] = true
	}
	if !seen["x y"] || !seen["a&b"] || !seen["100%"] {
		t.Errorf("raw query values did not survive: %v", seen)
	}
}

func TestExpandEnv(t *testing.T) {
	t.Parallel()
	env := mapEnv(map[string]string{"A": "1", "B_2": "two"})
	for in, want := range map[string]string{
		"${A}-${B_2}":       "1-two",
		"${C:-dflt}":        "dflt",
		"${A:-dflt}":        "1",
		"$$A costs $$5":     "$A costs $5",
		"$.generated_at $x": "$.generated_at $x",
		"trailing $":        "trailing $",
	} {
		got, _, err := expandEnv(in, env)
		if err != nil || got != want {
			t.Errorf("expandEnv(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"${C}", "${A", "${1A}"} {
		if _, _, err := expandEnv(in, env); err == nil {
			t.Errorf("expandEnv(%q) succeeded", in)
		}
	}
}

func TestErrorCap(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(minimal + "load:\n  concurrency: [")
	for i := range 30 {
		fmt.Fprintf(&b, "x%d, ", i)
	}
	b.WriteString("1]\n")
	path := filepath.Join(t.TempDir(), "s.yml")
	os.WriteFile(path, []byte(b.String()), 0o644)
	_, err := Load(path, "", mapEnv(nil))
	el, ok := err.(*ErrorList)
	if !ok || len(el.Errors) != maxErrors || el.Dropped != 10 || !strings.HasSuffix(err.Error(), "\n(and 10 more errors)") {
		t.Errorf("err = %v", err)
	}
}

func BenchmarkStreamNext(b *testing.B) {
	s := loadFull(b)
	for _, class := range []string{"Q01", "Q02", "Q03", "Q04", "Q05"} {
		name := map[string]string{
			"Q01": "constant",
			"Q02": "pick-in-path",
			"Q03": "templated-query-header-body",
			"Q04": "text-template-variant-only",
			"Q05": "text-template",
		}[class]
		b.Run(name, func(b *testing.B) {
			st := s.Stream("csv", class, 1, 0, 0)
			b.ReportAllocs()
			for b.Loop() {
				st.Next()
			}
		})
	}
}

// TestStreamConstant: a request marked Constant is the same request every
// time its class comes up, so that a client may render it once.
func TestStreamConstant(t *testing.T) {
	t.Parallel()
	s := loadFull(t)
	constant := map[string]bool{}
	for _, class := range []string{"Q01", "Q02", "Q03", "Q04", "Q05", "mix"} {
		st := s.Stream("csv", class, 4, 1, 2)
		first := map[string]string{}
		for range 300 {
			r := st.Next()
			text := fmt.Sprintf("%s %s %v %q", r.Method, r.Target, r.Header, r.Body)
			if prev, seen := first[r.Class]; !seen {
				first[r.Class] = text
				constant[r.Class] = r.Constant
			} else if r.Constant != constant[r.Class] {
				t.Fatalf("%s: Constant changes from request to request", r.Class)
			} else if r.Constant && text != prev {
				t.Fatalf("%s: marked Constant, but %q follows %q", r.Class, text, prev)
			}
		}
	}
	if !constant["Q01"] || constant["Q02"] || constant["Q03"] {
		t.Errorf("constant classes %v: want Q01 and neither Q02 nor Q03", constant)
	}
}
