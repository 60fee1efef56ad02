// Package ghaction is benchgate's side of a GitHub Actions step: what the
// runner tells the step (inputs, repository, the event that triggered the
// workflow, the token) and what the step tells the runner (outputs, the job
// summary, annotations and other workflow commands).
//
// The environment is injected: Load takes a getenv function, and every writer
// is a parameter, so tests run without a runner. Reading goes through
// go-githubactions, but writing does not copy its fixed heredoc delimiter or
// its unchecked summary size: a pull request controls much of what benchgate
// writes (class names, target logs, error texts), so every output uses a
// random delimiter checked against the value, every workflow command is
// escaped, PR-controlled text is printed with commands stopped around it
// (WriteUntrusted), and the summary is cut to the runner's limit instead
// of being dropped by it.
package ghaction
