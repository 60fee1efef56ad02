package environ

import (
	"errors"
	"sync"
	"testing"
)

// TestFilter: a secret reads as unset; those the scenario asked for that
// are set are named once each, in the order asked, in the explanation.
func TestFilter(t *testing.T) {
	t.Parallel()
	env := map[string]string{"GITHUB_TOKEN": "ghs_x", "INPUT_SCENARIO": "s.yml", "HOST": "localhost"}
	f := NewFilter(func(k string) string { return env[k] })
	// In this order: Explain names the secrets in the order they were
	// asked for.
	for _, c := range []struct{ name, want string }{
		{"HOST", "localhost"}, {"GITHUB_TOKEN", ""}, {"INPUT_SCENARIO", ""}, {"GH_TOKEN", ""}, {"UNSET", ""},
	} {
		if got := f.Getenv(c.name); got != c.want {
			t.Errorf("Getenv(%s) = %q, want %q", c.name, got, c.want)
		}
	}
	f.Getenv("GITHUB_TOKEN")
	if f.Explain(nil) != nil {
		t.Error("Explain(nil) is not nil")
	}
	load := errors.New("s.yml:3:7: ${GITHUB_TOKEN} is unset")
	err := f.Explain(load)
	want := "s.yml:3:7: ${GITHUB_TOKEN} is unset\nGITHUB_TOKEN, INPUT_SCENARIO: a scenario cannot read the runner's credentials nor the action's inputs, which to it are unset (see docs/action.md)"
	if err == nil || err.Error() != want || !errors.Is(err, load) {
		t.Errorf("Explain = %v\nwant %s", err, want)
	}
	// GH_TOKEN is a credential, but not set: nothing to explain.
	quiet := NewFilter(func(k string) string { return env[k] })
	quiet.Getenv("GH_TOKEN")
	if err := quiet.Explain(load); err != load {
		t.Errorf("nothing hidden: Explain = %v, want the error as is", err)
	}
}

// The runner expands a scenario's ${VAR} from several goroutines: the
// filter notes each secret once (run with -race to check the locking).
func TestFilterConcurrent(t *testing.T) {
	t.Parallel()
	f := NewFilter(func(string) string { return "set" })
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.Getenv("GITHUB_TOKEN")
			f.Getenv("GH_TOKEN")
		}()
	}
	wg.Wait()
	if len(f.hidden) != 2 {
		t.Errorf("hidden %v, want GITHUB_TOKEN and GH_TOKEN once each", f.hidden)
	}
}
