// Package benchdata holds benchgate's data on disk, the results of runs
// and the history of nights, and what is computed from them alone, with no
// machine, clock or network.
//
// A results file (Results, written by Write after every rung and read back
// by Read) is one run: the scenario's plan and gate section, both targets'
// build and pins, what the correctness checks found, and every rung
// measured so far with its histogram, slices and resources; reading is
// bounded because a results file may come from a fork. Merge joins the
// shards of one nightly grid run on several runners into one such file. A
// history file (Record, AppendHistory, ReadHistory) keeps one summary line
// per night, and ChangePoints and AnalyzeDrift find the steps in its
// series, never comparing records of two machine fingerprints.
//
// Deciding a results file is package decide's; drawing it is report's.
package benchdata
