package scenario

import "fmt"

// HasProfile reports whether the scenario file loads with the profile,
// its ${VAR} expanded by getenv. A file that does not load at all says
// true, so that the run which loads it again reports its errors.
func HasProfile(file, profile string, getenv func(string) string) bool {
	if _, err := Load(file, profile, getenv); err == nil {
		return true
	}
	_, err := Load(file, "", getenv)
	return err != nil
}

// SetImages replaces the images of the scenario's image targets with
// baseline's and candidate's (empty: keep the scenario's), as what results
// and reports show too. A target that is not an image cannot take one:
// that is an error, not a silent mix of what the scenario and the caller
// meant.
func (s *Scenario) SetImages(baseline, candidate string) error {
	for _, o := range []struct {
		ref string
		t   *Target
	}{{baseline, &s.Baseline}, {candidate, &s.Candidate}} {
		if o.ref == "" {
			continue
		}
		if o.t.Image == "" {
			return fmt.Errorf("input %s: the scenario's %s is not an image target, so an image cannot replace it", o.t.Name, o.t.Name)
		}
		o.t.Image, o.t.Shown = o.ref, o.ref
	}
	return nil
}

// AgainstItself makes the candidate a second instance of the baseline:
// the same command, image, URL or Go module version, built once (by the
// baseline), for an A/A run. The design is fixed: an A/A run measures the
// noise of the configured rounds, it does not adapt them.
func (s *Scenario) AgainstItself() {
	cand := s.Baseline
	cand.Name = s.Candidate.Name
	cand.Build = nil
	s.Candidate = cand
	s.Load.MaxRepetitions = s.Load.Repetitions
}
