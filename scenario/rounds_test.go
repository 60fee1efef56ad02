package scenario

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestPairedRounds: the paired rule refuses a single round, in the load
// section or a profile, at the field that set it, and warns at two;
// the overlap rule takes any number.
func TestPairedRounds(t *testing.T) {
	t.Parallel()
	one := "s.yml:9:21: load.repetitions: 1 round is too few under the paired rule (gate.rule's default): one round's batches alone would decide"
	for _, c := range []struct {
		name, src, profile, want string
	}{
		{"load", minimal + "load: {repetitions: 1}\n", "", one},
		{"declared rule", minimal + "load: {repetitions: 1}\ngate: {rule: paired}\n", "",
			"s.yml:9:21: load.repetitions: 1 round is too few under gate.rule paired:"},
		{"profile", minimal + "profiles:\n  pr: {repetitions: 1}\n", "pr",
			"s.yml:10:21: profiles.pr.repetitions: 1 round is too few under the paired rule"},
		{"gobench", "version: 1\nname: g\nkind: gobench\ntargets: {baseline: {ref: a}, candidate: {ref: b}}\nload: {repetitions: 1}\ngate: {rule: paired}\n", "",
			"s.yml:5:21: load.repetitions: 1 round is too few under gate.rule paired"},
		{"gobench's default", "version: 1\nname: g\nkind: gobench\ntargets: {baseline: {ref: a}, candidate: {ref: b}}\nload: {repetitions: 1}\n", "",
			"s.yml:5:21: load.repetitions: 1 round is too few under the paired rule (gate.rule's default)"},
	} {
		got := loadErr(t, c.src, c.profile, nil)
		if !strings.HasPrefix(got, c.want) || !strings.Contains(got, "want at least 2, 3 or more to resolve a change") {
			t.Errorf("%s: got\n%s\nwant it to begin\n%s", c.name, got, c.want)
		}
	}
	// The profile's rounds are those in force: a file of 1 round whose
	// profile runs 3 is fine with that profile.
	if s := loadSrc(t, minimal+"load: {repetitions: 3}\nprofiles:\n  pr: {repetitions: 1}\n", "", nil); len(s.Warnings) != 0 {
		t.Errorf("3 rounds: warnings %v", s.Warnings)
	}
	for _, src := range []string{
		minimal + "load: {repetitions: 1}\ngate: {rule: overlap}\n",
		"version: 1\nname: g\nkind: gobench\ntargets: {baseline: {ref: a}, candidate: {ref: b}}\nload: {repetitions: 1}\ngate: {rule: overlap}\n",
		minimal + "load: {repetitions: 3}\n",
		minimal,
	} {
		if s := loadSrc(t, src, "", nil); len(s.Warnings) != 0 {
			t.Errorf("%q: warnings %v", src, s.Warnings)
		}
	}
	s := loadSrc(t, minimal+"profiles:\n  pr: {repetitions: 2}\n", "pr", nil)
	if len(s.Warnings) != 1 {
		t.Fatalf("2 rounds: warnings %v, want one", s.Warnings)
	}
	got := strings.ReplaceAll(s.Warnings[0].Error(), filepath.Dir(s.File)+string(filepath.Separator), "")
	if want := "s.yml:10:21: profiles.pr.repetitions: 2 rounds under the paired rule (gate.rule's default) hold the confidence but resolve little"; !strings.HasPrefix(got, want) {
		t.Errorf("2 rounds: got\n%s\nwant it to begin\n%s", got, want)
	}
}
