package scenario

import (
	"strings"
	"testing"
	"time"
)

func TestProfiling(t *testing.T) {
	t.Parallel()
	s := loadSrc(t, minimal, "", nil)
	if s.Profiling != DefaultProfiling || s.Baseline.Profile != nil {
		t.Errorf("defaults: %+v, target %+v", s.Profiling, s.Baseline.Profile)
	}
	src := strings.Replace(minimal, `baseline: {url: "http://127.0.0.1:1"}`,
		`baseline: {url: "http://127.0.0.1:1", profile: {pprof: /debug/pprof/profile}}`, 1)
	src = strings.Replace(src, `candidate: {url: "http://127.0.0.1:2"}`,
		`candidate: {command: ["./srv", "{port}"], profile: {perf: false}}`, 1)
	s = loadSrc(t, src+"profiling: {when: always, duration: 4s, cells: 12}\n", "", nil)
	if want := (Profiling{When: ProfileAlways, Duration: 4 * time.Second, Cells: 12}); s.Profiling != want {
		t.Errorf("profiling %+v, want %+v", s.Profiling, want)
	}
	if p := s.Baseline.Profile; p == nil || p.PProf != "/debug/pprof/profile" || p.NoPerf {
		t.Errorf("baseline profile %+v", p)
	}
	if p := s.Candidate.Profile; p == nil || p.PProf != "" || !p.NoPerf {
		t.Errorf("candidate profile %+v", p)
	}
}

func TestProfilingErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ add, want string }{
		{"profiling: {when: sometimes}\n",
			`s.yml:9:19: profiling.when: "sometimes": want regressed (the default: gated cells that regressed), always (every gated cell) or never`},
		{"profiling: {duration: 500ms}\n",
			`s.yml:9:23: profiling.duration: 500ms: want from 1s to 10m`},
		{"profiling: {cells: 0}\n",
			`s.yml:9:20: profiling.cells: 0: want from 1 to 100`},
		{"profiling: {every: 1}\n",
			`s.yml:9:13: profiling.every: unknown field "every" (want one of when, duration, cells)`},
	} {
		if got := loadErr(t, minimal+c.add, "", nil); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s: got\n%s\nwant prefix\n%s", strings.TrimSpace(c.add), got, c.want)
		}
	}
	src := strings.Replace(minimal, `baseline: {url: "http://127.0.0.1:1"}`,
		`baseline: {url: "http://127.0.0.1:1", profile: {pprof: debug}}`, 1)
	if got, want := loadErr(t, src, "", nil), `s.yml:4:58: targets.baseline.profile.pprof: "debug" must be the path of the target's net/http/pprof CPU profile, e.g. /debug/pprof/profile`; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
