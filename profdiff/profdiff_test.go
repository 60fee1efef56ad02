package profdiff

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

const tick = 10_000_000 // a 100 Hz profile's sample, ns

// prof builds a CPU profile as Go's profiler writes one: "samples count"
// and "cpu nanoseconds", a sample a stack ("main;handle;search", root
// first) with its count of ticks.
func prof(t testing.TB, stacks map[string]int) *profile.Profile {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     tick,
	}
	b := &builder{p: p, funcs: map[string]*profile.Function{}, maps: map[string]*profile.Mapping{}, locs: map[string]*profile.Location{}}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range stacks {
			if !yield(k) {
				return
			}
		}
	}) {
		n := stacks[k]
		if n == 0 {
			continue
		}
		frames := strings.Split(k, ";")
		s := &profile.Sample{Value: []int64{int64(n), int64(n) * tick}}
		for i := len(frames) - 1; i >= 0; i-- {
			s.Location = append(s.Location, b.location(uint64(i+1), frames[i], "app"))
		}
		p.Sample = append(p.Sample, s)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestComputeNamesWhatGrew(t *testing.T) {
	// The baseline served 1000 requests on 400 ticks: half in search,
	// a quarter in encode, a quarter in the handler itself. The candidate
	// served 500 requests, its search five times the work a request.
	base := prof(t, map[string]int{"main;handle;search": 200, "main;handle;encode": 100, "main;handle": 100})
	cand := prof(t, map[string]int{"main;handle;search": 500, "main;handle;encode": 50, "main;handle": 50})
	d, err := Compute(Side{base, 1000}, Side{cand, 500}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Per request: baseline 4 ms (2 search), candidate 12 ms (10 search).
	check := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	check("total baseline ns/req", d.Total.Base, 4e6)
	check("total candidate ns/req", d.Total.Cand, 12e6)
	grew := d.Grew(5)
	if len(grew) != 1 || grew[0].Name != "search" {
		t.Fatalf("grew %+v, want search alone", grew)
	}
	s := grew[0]
	check("search flat baseline", s.Flat.Base, 2e6)
	check("search flat candidate", s.Flat.Cand, 10e6)
	check("search relative growth", s.Flat.Rel(), 4)
	check("search share of the change", d.Share(s), 1)
	// encode and handle's own work did not change per request; handle's
	// and main's cumulative grew with search.
	for _, f := range d.Funcs {
		switch f.Name {
		case "encode":
			if f.Above || f.Flat.Delta() != 0 {
				t.Errorf("encode: %+v, want no change", f)
			}
		case "handle":
			check("handle cum delta", f.Cum.Delta(), 8e6)
			if f.Above {
				t.Errorf("handle's own work did not change: %+v", f)
			}
		}
	}
	if d.Tested != 3 || d.Unit != "request" {
		t.Errorf("tested %d unit %q", d.Tested, d.Unit)
	}
	// The tree: all → main → handle → {encode, search}, cumulative.
	if d.Root.Name != "all" || len(d.Root.Children) != 1 {
		t.Fatalf("root %+v", d.Root)
	}
	h := d.Root.Children[0].Children[0]
	if h.Name != "handle" || len(h.Children) != 2 || h.Children[1].Name != "search" {
		t.Fatalf("handle %+v", h)
	}
	check("tree search baseline", h.Children[1].Base, 2e6)
	check("tree search candidate", h.Children[1].Cand, 10e6)
	check("tree root candidate", d.Root.Cand, 12e6)
}

// TestComputeShrank: what fell is named apart, least first from the end.
func TestComputeShrank(t *testing.T) {
	base := prof(t, map[string]int{"main;a": 400, "main;b": 400})
	cand := prof(t, map[string]int{"main;a": 400, "main;b": 100})
	d, err := Compute(Side{base, 100}, Side{cand, 100}, Options{Unit: "op"})
	if err != nil {
		t.Fatal(err)
	}
	if s := d.Shrank(3); len(s) != 1 || s[0].Name != "b" || d.Share(s[0]) != 1 {
		t.Errorf("shrank %+v", s)
	}
	if g := d.Grew(3); len(g) != 0 {
		t.Errorf("grew %+v", g)
	}
}

// TestComputeAAFloor draws A/A pairs of profiles by seeded simulation
// (60 functions with a spread of shares, 3000 samples a side, each side
// a multinomial draw of the same CPU per request) and counts the diffs
// that put any function above the floor: the floor's level is 1% over
// the whole diff, so of 400 diffs about 4 may, by chance; none without
// MinShare's part is the Bonferroni's guarantee alone, tested here with
// MinShare 0.
func TestComputeAAFloor(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 30))
	shares := make([]float64, 60)
	sum := 0.0
	for i := range shares {
		shares[i] = 1 / float64(i+1) // Zipf-like: a few hot functions, a long tail
		sum += shares[i]
	}
	draw := func(n int) map[string]int {
		m := map[string]int{}
		for range n {
			u, acc := rng.Float64()*sum, 0.0
			for i, s := range shares {
				acc += s
				if u < acc || i == len(shares)-1 {
					m["main;f"+string(rune('A'+i%26))+string(rune('a'+i/26))]++
					break
				}
			}
		}
		return m
	}
	const diffs = 400
	above := 0
	for range diffs {
		d, err := Compute(Side{prof(t, draw(3000)), 1000}, Side{prof(t, draw(3000)), 1000}, Options{MinShare: -1, Alpha: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		if d.MinShare != 0 {
			t.Fatalf("MinShare %v, want none", d.MinShare)
		}
		for _, f := range d.Funcs {
			if f.Above {
				above++
				break
			}
		}
	}
	// The level is 1%: 4 expected at most; more than 12 of 400 would be
	// a floor three times too low.
	if above > 12 {
		t.Errorf("%d of %d A/A diffs put a function above the floor, want about 1%% at most", above, diffs)
	}
	t.Logf("%d of %d A/A diffs above the floor", above, diffs)
}

// TestComputeDetects: the same simulation with one function of a tenth of
// the CPU doing twice the work is found in every diff.
func TestComputeDetects(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 7))
	draw := func(n int, hot float64) map[string]int {
		m := map[string]int{}
		for range n {
			switch u := rng.Float64() * (1 + hot); {
			case u < hot:
				m["main;hot"]++
			case u < hot+0.5:
				m["main;a"]++
			default:
				m["main;b"]++
			}
		}
		return m
	}
	for i := range 50 {
		// 3000 samples over 1000 requests; the candidate's hot function
		// does 0.2 of the work a request where the baseline's did 0.1.
		d, err := Compute(Side{prof(t, draw(3000, 0.1)), 1000}, Side{prof(t, draw(3300, 0.2)), 1000}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if g := d.Grew(1); len(g) != 1 || g[0].Name != "hot" {
			t.Errorf("diff %d: grew %+v, want hot", i, g)
		}
	}
}

func TestComputeErrors(t *testing.T) {
	p := prof(t, map[string]int{"main": 10})
	heap := &profile.Profile{SampleType: []*profile.ValueType{{Type: "alloc_space", Unit: "bytes"}}}
	empty := prof(t, map[string]int{})
	for _, c := range []struct {
		base, cand Side
		want       string
	}{
		{Side{nil, 1}, Side{p, 1}, "baseline: no profile"},
		{Side{p, 0}, Side{p, 1}, "baseline: 0 units of work"},
		{Side{p, 1}, Side{p, math.NaN()}, "candidate: NaN units"},
		{Side{p, 1}, Side{heap, 1}, "candidate: not a CPU profile: its sample types are alloc_space/bytes"},
		{Side{empty, 1}, Side{p, 1}, "baseline: the profile holds no CPU samples"},
	} {
		_, err := Compute(c.base, c.cand, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func TestParsePerf(t *testing.T) {
	text := "  4242 10000000\n" +
		"\t  4a1f00 main.search (/srv/api)\n" +
		"\t  4a2000 main.handle (/srv/api)\n" +
		"\t  7f0001 [unknown] (/usr/lib/x86_64-linux-gnu/libc.so.6)\n" +
		"\n" +
		"4242 10000000 cpu-clock:\n" +
		"\t  4a1f10 main.search (/srv/api)\n" +
		"\t  4a2000 main.handle (/srv/api)\n" +
		"\n" +
		"4243 10000000\n" +
		"\t  5000 operator new(unsigned long) (/usr/lib/libstdc++.so.6)\n" +
		"\t  4a2000 main.handle (/srv/api)\n"
	p, err := ParsePerf(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckValid(); err != nil {
		t.Fatal(err)
	}
	if len(p.Sample) != 3 || p.Period != 1e7 {
		t.Fatalf("%d samples, period %d", len(p.Sample), p.Period)
	}
	var got []string
	for _, s := range p.Sample {
		got = append(got, strings.Join(names(s), "<"))
	}
	want := []string{"main.search<main.handle<libc.so.6+0x7f0001", "main.search<main.handle", "operator new(unsigned long)<main.handle"}
	if !slices.Equal(got, want) {
		t.Errorf("stacks %q, want %q", got, want)
	}
	// It round-trips through pprof's own encoding.
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	if q, err := profile.Parse(&buf); err != nil || len(q.Sample) != 3 {
		t.Fatalf("parse what was written: %v", err)
	}
	// A real perf script of a Go program (a CPU-bound main.work).
	f, err := os.Open("testdata/spin.perf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	real, err := ParsePerf(f)
	if err != nil {
		t.Fatal(err)
	}
	d, err := Compute(Side{real, 1}, Side{real, 1}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Funcs[0].Flat.BaseSamples == 0 || len(d.Grew(5)) != 0 {
		t.Errorf("the same profile twice: %+v", d.Funcs)
	}
	hot := slices.MaxFunc(d.Funcs, func(a, b Func) int { return int(a.Flat.BaseSamples - b.Flat.BaseSamples) })
	if hot.Name != "main.work" {
		t.Errorf("hottest %q, want main.work", hot.Name)
	}
}

func TestParsePerfErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"", "no samples"},
		{"\t 4a1f00 main.x (/a)\n", "line 1: a frame before any sample's header line"},
		{"1 100\n  4a1f00 main.x (/a)\n", `line 2: a sample's header "  4a1f00 main.x (/a)": thread id "4a1f00" is not a number`},
		{"4242\n", `line 1: a sample's header "4242": want the thread id and the period`},
		{"x 100\n", `line 1: a sample's header "x 100": thread id "x" is not a number`},
		{"1 -5\n", `period "-5" is not a positive number`},
		{"1 100\n\tzz main.x (/a)\n", `line 2: a frame "zz main.x (/a)": address "zz" is not hexadecimal`},
		{"1 100\n\n", "no samples"},
		{"1 100\n\t" + strings.Repeat("a", MaxPerfLine) + "\n", "line 2: longer than"},
	} {
		_, err := ParsePerf(strings.NewReader(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.40q: got %v, want %q", c.text, err, c.want)
		}
	}
}

// A stack deeper than MaxPerfFrames keeps its leaf side and says it was
// cut.
func TestParsePerfDeepStack(t *testing.T) {
	var b strings.Builder
	b.WriteString("1 100\n")
	for i := range MaxPerfFrames + 10 {
		b.WriteString("\t 1000 f" + string(rune('a'+i%26)) + " (/a)\n")
	}
	p, err := ParsePerf(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	n := names(p.Sample[0])
	if len(n) != MaxPerfFrames || n[0] != "fa" || n[len(n)-1] != "(truncated)" {
		t.Errorf("%d frames, leaf %q, root %q", len(n), n[0], n[len(n)-1])
	}
}

func FuzzParsePerf(f *testing.F) {
	f.Add([]byte("4242 10000000\n\t  4a1f00 main.search (/srv/api)\n\t  4a2000 main.handle (/srv/api)\n\n"))
	f.Add([]byte("1 100 cpu-clock:\n\t 0 [unknown] ([unknown])\n\t 5 (x)\n"))
	if b, err := os.ReadFile("testdata/spin.perf"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePerf(bytes.NewReader(data))
		if err != nil {
			if p != nil {
				t.Fatal("a profile with an error")
			}
			return
		}
		if err := p.CheckValid(); err != nil {
			t.Fatalf("an invalid profile: %v", err)
		}
		if _, err := Compute(Side{p, 1}, Side{p, 2}, Options{}); err != nil {
			t.Fatalf("diff of a parsed profile: %v", err)
		}
	})
}

func TestVia(t *testing.T) {
	base := prof(t, map[string]int{"runtime.goexit;net/http.(*conn).serve;main.handle;main.searchRounds;crypto/sha256.Sum256;crypto/internal/fips140/sha256.block": 100, "runtime.goexit;net/http.(*conn).serve;main.handle;main.encode": 100})
	cand := prof(t, map[string]int{"runtime.goexit;net/http.(*conn).serve;main.handle;main.searchRounds;crypto/sha256.Sum256;crypto/internal/fips140/sha256.block": 500, "runtime.goexit;net/http.(*conn).serve;main.handle;main.encode": 100})
	d, err := Compute(Side{base, 100}, Side{cand, 100}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	top := d.Grew(1)
	if len(top) != 1 || top[0].Name != "crypto/internal/fips140/sha256.block" {
		t.Fatalf("top %+v", top)
	}
	if got := d.Via(top[0].Name); got != "main.searchRounds" {
		t.Errorf("via %q, want main.searchRounds", got)
	}
	// The program's own function is where the work is asked for: no
	// caller outside its package and the standard library.
	if got := d.Via("main.searchRounds"); got != "" {
		t.Errorf("via of main.searchRounds %q, want none", got)
	}
	for _, c := range []struct{ name, pkg string }{
		{"crypto/sha256.(*digest).Write", "crypto/sha256"}, {"main.main", "main"},
		{"github.com/a/b.F", "github.com/a/b"}, {"operator new(unsigned long)", "operator new(unsigned long)"},
	} {
		if got := packageOf(c.name); got != c.pkg {
			t.Errorf("packageOf(%q) = %q, want %q", c.name, got, c.pkg)
		}
	}
}
