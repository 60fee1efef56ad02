// Package scenario reads a benchgate.yml into a Scenario: the checked
// model the CLI, the runner and doctor read, so that nothing downstream
// validates the file again.
//
// Load turns the text into a tree of nodes that keep their line and
// column, with anchors resolved and ${VAR} expanded, and reads each
// section from it. Every problem becomes an Error naming file, line,
// column and field, gathered into one ErrorList in file order, which the
// CLI prints and exits 2 on. Load looks at the file and the paths it names
// (data files, target directories), never at the machine's CPUs, so that
// whether a file is valid does not depend on where it is read; the one
// check that does, pins naming CPUs the machine lacks, is CheckCPUs, which
// a run calls before it starts anything, with errors of the same form.
//
// Because the file comes from a pull request, everything it may ask for is
// bounded at load, and values from the environment are kept for Redact.
// Request fields are templates, compiled and tried once at load; Stream
// then yields each worker's requests as a pure function of the seed,
// variant, class, concurrency, round and worker, so the baseline and the
// candidate receive the identical sequence.
package scenario
