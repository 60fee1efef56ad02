// Package gate holds benchgate's statistics and decisions: summaries with
// Student-t intervals, paired ratio intervals, the pre-registered tie rules
// (overlap and paired), per-metric verdicts with the resolution each could
// reach, the fail_on policy, and which cells an adaptive design should
// measure again. Every verdict comes from one decision, DecidePaired, which
// Compare applies to each metric of each cell; a caller that needs a verdict
// calls one of them rather than deciding again, so reports and their tests
// show the decision the product makes. A tie and too few
// repetitions are verdicts with a reason, not errors: an inconclusive gated
// cell is never a pass. The rules are the ones docs/statistics.md
// describes, fixed by the scenario before anything is measured: its gate
// section is a Section, defined here once for the scenario loader, the
// results file and the decision, with its defaults in DefaultSection. The
// package is pure: no I/O, no clock, no imports of the other benchgate
// packages, so every number it produces can be checked by hand or by a
// second tool (its t quantiles are tested against go-moremath's).
package gate
