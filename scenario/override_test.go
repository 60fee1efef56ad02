package scenario

import (
	"errors"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
)

func TestHasProfile(t *testing.T) {
	t.Parallel()
	env := mapEnv(map[string]string{"TAG": "pr-7"})
	for _, c := range []struct {
		file, profile string
		want          bool
	}{
		{"testdata/full.yml", "pr", true},
		{"testdata/full.yml", "nightly", true},
		{"testdata/full.yml", "weekly", false},
		// A file that does not load says true: the run reports why.
		{filepath.Join(t.TempDir(), "missing.yml"), "pr", true},
	} {
		if got := HasProfile(c.file, c.profile, env); got != c.want {
			t.Errorf("HasProfile(%s, %s) = %v, want %v", c.file, c.profile, got, c.want)
		}
	}
}

// TestSetImages: an image target takes the image, shown as given; a
// command target refuses one.
func TestSetImages(t *testing.T) {
	t.Parallel()
	s, err := Load("testdata/full.yml", "", mapEnv(map[string]string{"TAG": "pr-7"}))
	if err != nil {
		t.Fatal(err)
	}
	base := s.Baseline
	if err := s.SetImages("", "demo:pr-8"); err != nil {
		t.Fatal(err)
	}
	if s.Candidate.Image != "demo:pr-8" || s.Candidate.Shown != "demo:pr-8" || !reflect.DeepEqual(s.Baseline, base) {
		t.Errorf("candidate %+v, baseline %+v", s.Candidate, s.Baseline)
	}
	err = s.SetImages("demo:main", "")
	if want := "input baseline: the scenario's baseline is not an image target, so an image cannot replace it"; err == nil || err.Error() != want {
		t.Errorf("command baseline: %v, want %s", err, want)
	}
}

// TestAgainstItself: the candidate runs what the baseline runs, under its
// own name, without building it twice, and the design stays fixed.
func TestAgainstItself(t *testing.T) {
	t.Parallel()
	s := &Scenario{
		Baseline:  Target{Name: "baseline", Command: []string{"./demo"}, Build: []string{"make"}, Shown: "./demo"},
		Candidate: Target{Name: "candidate", Image: "demo:pr", Shown: "demo:pr"},
		Load:      LoadSettings{Repetitions: 3, MaxRepetitions: 9},
	}
	s.AgainstItself()
	want := Target{Name: "candidate", Command: []string{"./demo"}, Shown: "./demo"}
	if !reflect.DeepEqual(s.Candidate, want) || s.Baseline.Build == nil || s.Load.MaxRepetitions != 3 {
		t.Errorf("candidate %+v, baseline build %v, max repetitions %d", s.Candidate, s.Baseline.Build, s.Load.MaxRepetitions)
	}
}

func TestCheckTools(t *testing.T) {
	t.Parallel()
	var asked []string
	look := func(have ...string) func(string) (string, error) {
		asked = nil
		return func(name string) (string, error) {
			asked = append(asked, name)
			if slices.Contains(have, name) {
				return "/usr/bin/" + name, nil
			}
			return "", exec.ErrNotFound
		}
	}
	http := &Scenario{Kind: KindHTTP}
	if err := http.CheckTools(look()); err != nil || len(asked) != 0 {
		t.Errorf("http: %v, asked for %v", err, asked)
	}
	dir := &Scenario{Kind: KindGoBench}
	if err := dir.CheckTools(look("go")); err != nil || !slices.Equal(asked, []string{"go"}) {
		t.Errorf("gobench of directories: %v, asked for %v", err, asked)
	}
	ref := &Scenario{Kind: KindGoBench, Candidate: Target{Ref: "HEAD"}}
	err := ref.CheckTools(look("go"))
	want := "a gobench scenario needs the git command on PATH (the action's container image has none: run it with the benchgate CLI): " + exec.ErrNotFound.Error()
	if err == nil || err.Error() != want || !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("gobench of a ref without git: %v\nwant %s", err, want)
	}
}
