// Package site builds the history site: a static set of HTML pages over a
// history file, for GitHub Pages, an artifact or a file:// URL. It needs
// no server, loads nothing from the network and runs no script: every
// chart is SVG drawn here, by package charts (the code that draws the
// report's charts), inline in the page, with the numbers it draws in a
// table beside it.
//
// The index lists every cell of every scenario with a sparkline per kept
// metric (those a history record keeps: rps, p50, p95, p99, error_rate,
// cpu_per_req, mem_peak, or a Go benchmark's units) and each metric's
// latest change point, cells whose latest change is for the worse first.
// Each cell has a page of its own (CellPage names it) with the trend of
// every metric, both targets, its change points with their commit ranges
// and the nights the baseline commit changed; records of each machine
// fingerprint and profile form a section of their own, as drift
// detection keeps them apart.
//
// Render is pure: records in, files out. Build writes each file as it
// is rendered into a new directory, and replaces an earlier build with
// it in one rename. A site has at most MaxCells cells. Every text of the
// site that a history file holds (scenario, cell, commits, machine) is
// written by html/template, so it is shown, never run.
package site
