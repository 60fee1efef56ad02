package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
)

const dryRunScenario = `version: 1
name: dry
targets:
  baseline: {url: "http://127.0.0.1:9", health: /ready}
  candidate: {command: [./bin/new, -addr, "127.0.0.1:{port}"], build: [make, new]}
load: {concurrency: [1, 4], duration: 1s, warmup: 100ms, repetitions: 3, max_repetitions: 6, interleave: round}
classes:
  - {name: Q1, request: GET /a}
  - {name: Q2, request: GET /b}
`

// TestDryRun: the plan a run would follow, with Run's own plan line,
// the shard's cut and the budget's refusal; and nothing written.
func TestDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yml")
	if err := os.WriteFile(file, []byte(dryRunScenario), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	req := Request{Scenario: file, Getenv: func(string) string { return "" }}
	open := func(*benchdata.Results) ([]benchdata.Cell, error) { return nil, nil }
	dry := func(opts Options) (string, error) {
		var b strings.Builder
		opts.OutDir = out
		err := DryRun(t.Context(), req, opts, &b)
		return b.String(), err
	}

	got, err := dry(Options{Open: open})
	if err != nil {
		t.Fatal(err)
	}
	want := "scenario " + file + ` (kind http): loaded and checked
baseline:  url http://127.0.0.1:9, health /ready
candidate: command ./bin/new -addr 127.0.0.1:{port}, health /, built first by make new
cells:     4
  Q1 c=1
  Q1 c=4
  Q2 c=1
  Q2 c=4
plan: 4 cells × 3–6 rounds × 2 targets × 1.105s = 26.526s–53.052s
dry run: the scenario is valid here; nothing was built, started or written
`
	if got != want {
		t.Errorf("dry run:\n%s\nwant\n%s", got, want)
	}

	// A fixed design (no Open), one shard of two.
	got, err = dry(Options{Shard: Shard{Index: 2, Count: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "\ncells:     2\n  Q1 c=4\n  Q2 c=4\nshard 2/2: 2 of the grid's 4 cells\nplan: 2 cells × 3 rounds × 2 targets × 1.105s = 13.262s\n") {
		t.Errorf("shard 2/2:\n%s", got)
	}

	// Over the budget: Measure's refusal, and no last line.
	got, err = dry(Options{Budget: 10 * 1e9})
	var ue *UsageError
	var be *BudgetError
	if !errors.As(err, &ue) || !errors.As(err, &be) {
		t.Fatalf("over the budget: %v, want a *UsageError of a *BudgetError", err)
	}
	if strings.Contains(got, "dry run:") || strings.Contains(got, "loaded and checked") {
		t.Errorf("a refused plan said it was valid:\n%s", got)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a dry run made its output directory: %v", err)
	}
}

// TestDryRunEscapes: a scenario's strings reach the terminal with their
// control characters escaped: a command whose argument clears the screen
// is shown, not obeyed.
func TestDryRunEscapes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yml")
	src := strings.Replace(dryRunScenario, `[./bin/new, -addr, "127.0.0.1:{port}"]`, `[./bin/new, "\e[2J\rok", -addr, "127.0.0.1:{port}"]`, 1)
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	req := Request{Scenario: file, Getenv: func(string) string { return "" }}
	if err := DryRun(t.Context(), req, Options{OutDir: filepath.Join(dir, "out")}, &b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	if strings.ContainsAny(got, "\x1b\r") {
		t.Errorf("control characters reached the terminal: %q", got)
	}
	if !strings.Contains(got, `candidate: command ./bin/new '\x1b[2J\rok' -addr`) {
		t.Errorf("the command is not shown escaped:\n%s", got)
	}
}
