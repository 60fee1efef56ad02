package scenario

import "fmt"

// CheckTools checks that the commands a run of a gobench scenario needs
// are on PATH, as lookPath (exec.LookPath) finds them: go, and git when a
// target is a Ref. A scenario of another kind needs none.
func (s *Scenario) CheckTools(lookPath func(string) (string, error)) error {
	if s.Kind != KindGoBench {
		return nil
	}
	tools := []string{"go"}
	if s.Baseline.Ref != "" || s.Candidate.Ref != "" {
		tools = append(tools, "git")
	}
	for _, tool := range tools {
		if _, err := lookPath(tool); err != nil {
			return fmt.Errorf("a gobench scenario needs the %s command on PATH (the action's container image has none: run it with the benchgate CLI): %w", tool, err)
		}
	}
	return nil
}
