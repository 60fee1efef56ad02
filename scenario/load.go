// Package scenario reads and validates benchgate's scenario file (version 1)
// and turns it into the model the runner, the gate and the report read, with
// the seeded request streams. Nothing starts before a whole file is valid:
// every error names the file, line, column and field.
package scenario

// Load reads the scenario file at path, expands ${VAR} with getenv, applies
// the named profile ("" for none) and validates everything. The error, when
// not nil, is an *ErrorList naming file, line, column and field of each
// problem.
func Load(path, profile string, getenv func(string) string) (*Scenario, error) {
	panic("scenario.Load: not implemented yet")
}
