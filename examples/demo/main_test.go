package main

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestMain doubles as the demo binary: with DEMO_TEST_ARGS set, the test
// binary runs main with those arguments (separated by newlines), so a test
// can check what the real command does with its flags.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("DEMO_TEST_ARGS"); ok {
		os.Args = append([]string{"demo"}, strings.Split(args, "\n")...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestParseSlow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want map[string]float64
	}{
		{"", map[string]float64{"items": 1, "search": 1, "sleep": 1}},
		{"search=5", map[string]float64{"items": 1, "search": 5, "sleep": 1}},
		{"search=1.2", map[string]float64{"items": 1, "search": 1.2, "sleep": 1}},
		{"search=1", map[string]float64{"items": 1, "search": 1, "sleep": 1}},
		{"items=2.5,sleep=1.25", map[string]float64{"items": 2.5, "search": 1, "sleep": 1.25}},
		{"search=1.0e1", map[string]float64{"items": 1, "search": 10, "sleep": 1}},
	} {
		got, err := parseSlow(c.in)
		if err != nil {
			t.Errorf("parseSlow(%q): %v", c.in, err)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("parseSlow(%q)[%s] = %v, want %v", c.in, k, got[k], v)
			}
		}
		if len(got) != len(c.want) {
			t.Errorf("parseSlow(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParseSlowRefuses(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, part string }{
		{"search=0.99", "search=0.99"},
		{"search=0", "search=0"},
		{"search=-2", "search=-2"},
		{"search=NaN", "search=NaN"},
		{"search=Inf", "search=Inf"},
		{"search=+Inf", "search=+Inf"},
		{"search=fast", "search=fast"},
		{"search=", "search="},
		{"search", "search"},
		{"other=2", "other=2"},
		{"search=2,items=0.5", "items=0.5"},
	} {
		_, err := parseSlow(c.in)
		if err == nil {
			t.Errorf("parseSlow(%q): no error", c.in)
			continue
		}
		want := `-slow "` + c.part + `": want endpoint=factor with endpoint one of items, search, sleep and factor a number >= 1 (e.g. search=1.2)`
		if err.Error() != want {
			t.Errorf("parseSlow(%q):\n got %s\nwant %s", c.in, err, want)
		}
	}
}

func TestExtraRounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rounds int
		factor float64
		want   int
	}{
		{2000, 1, 0},
		{2000, 1.2, 400},
		{2000, 1.15, 300},
		{2000, 5, 8000},
		{400, 1.25, 100},
		{3, 1.5, 2}, // 1.5 rounds: to the nearest, half away from zero
	} {
		if got := extraRounds(c.rounds, c.factor); got != c.want {
			t.Errorf("extraRounds(%d, %v) = %d, want %d", c.rounds, c.factor, got, c.want)
		}
	}
}

func TestItemBuilds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		limit       int
		factor      float64
		whole, part int
	}{
		{10, 1, 1, 0},
		{10, 3, 3, 0},
		{10, 1.5, 1, 5},
		{10, 2.25, 2, 3}, // 2.5 items: rounded up
		{50, 1.2, 1, 10},
		{1, 1.4, 1, 0},
		{1000, 1.999, 1, 999},
	} {
		whole, part := itemBuilds(c.limit, c.factor)
		if whole != c.whole || part != c.part {
			t.Errorf("itemBuilds(%d, %v) = %d, %d; want %d, %d", c.limit, c.factor, whole, part, c.whole, c.part)
		}
	}
}

func TestSleepFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		ms     int
		factor float64
		want   time.Duration
	}{
		{2, 1, 2 * time.Millisecond},
		{3, 5, 15 * time.Millisecond},
		{2, 1.5, 3 * time.Millisecond},
		{3, 1.1, 3300 * time.Microsecond},
		{0, 4, 0},
	} {
		if got := sleepFor(c.ms, c.factor); got != c.want {
			t.Errorf("sleepFor(%d, %v) = %v, want %v", c.ms, c.factor, got, c.want)
		}
	}
}

// Slowed builds answer exactly as the normal one does, whatever the
// factor, fractional or not: the agreement check must let them through.
func TestSlowedAnswersAgree(t *testing.T) {
	t.Parallel()
	serve := func(slow string) *httptest.Server {
		f, err := parseSlow(slow)
		if err != nil {
			t.Fatal(err)
		}
		s := httptest.NewServer(newHandler(options{factor: f}))
		t.Cleanup(s.Close)
		return s
	}
	get := func(s *httptest.Server, path string) string {
		t.Helper()
		resp, err := s.Client().Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: status %d: %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	normal := serve("")
	paths := []string{"/items?limit=1", "/items?limit=7", "/items?limit=40", "/search?q=alpha-17", "/search?q=long-beta-gamma-9", "/sleep?ms=1"}
	for _, slow := range []string{"search=1.2", "search=5", "items=2.5,sleep=1.5", "items=1.01,search=1.01,sleep=2"} {
		s := serve(slow)
		for _, p := range paths {
			if want, got := get(normal, p), get(s, p); got != want {
				t.Errorf("-slow %s: GET %s answers\n%s, the normal build\n%s", slow, p, got, want)
			}
		}
	}
}

// The command refuses a factor below 1 with exit code 2 and says why.
func TestSlowFlagRefused(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "DEMO_TEST_ARGS=-addr\n127.0.0.1:0\n-slow\nsearch=0.8")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("demo -slow search=0.8: %v, want exit code 2; stderr:\n%s", err, stderr.String())
	}
	if want := `demo: -slow "search=0.8": want endpoint=factor`; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr:\n%s\nwant it to contain %s", stderr.String(), want)
	}
}
