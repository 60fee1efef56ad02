package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/scenario"
)

const measureGoBench = `version: 1
name: sum
kind: gobench
targets:
  baseline: {dir: v1}
  candidate: {dir: v2}
`

// TestMeasureRefusals: what Measure refuses before anything runs is a
// *UsageError with the message the CLI prints, and nothing is measured;
// DryRun refuses the same with the same.
func TestMeasureRefusals(t *testing.T) {
	t.Parallel()
	errOverride := errors.New("no such image")
	for _, tc := range []struct {
		name     string
		yml      string
		shard    Shard
		override func(*scenario.Scenario) error
		want     string // the message, or its start when it ends in "\n"
	}{
		{"invalid", "version: 1\nname: x\nkind: nosuch\n", Shard{}, nil, "invalid scenario:\n"},
		{"gobench shard", measureGoBench, Shard{Index: 1, Count: 2}, nil, "-shard: a gobench scenario runs whole: its cells are found as it runs"},
		{"override", measureGoBench, Shard{}, func(*scenario.Scenario) error { return errOverride }, "no such image"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, d := range []string{"v1", "v2"} {
				if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			file := filepath.Join(dir, "benchgate.yml")
			if err := os.WriteFile(file, []byte(tc.yml), 0o644); err != nil {
				t.Fatal(err)
			}
			req := Request{Scenario: file, Override: tc.override, Getenv: func(string) string { return "" }}
			res, err := Measure(t.Context(), req, Options{OutDir: t.TempDir(), Shard: tc.shard})
			var ue *UsageError
			if !errors.As(err, &ue) || res != nil {
				t.Fatalf("error %v, results %v; want a *UsageError", err, res)
			}
			if got := err.Error(); strings.HasSuffix(tc.want, "\n") && !strings.HasPrefix(got, tc.want) ||
				!strings.HasSuffix(tc.want, "\n") && got != tc.want {
				t.Errorf("message %q, want %q", got, tc.want)
			}
			if tc.override != nil && !errors.Is(err, errOverride) {
				t.Errorf("%v does not wrap the override's error", err)
			}
			var plan strings.Builder
			dryErr := DryRun(t.Context(), req, Options{OutDir: t.TempDir(), Shard: tc.shard}, &plan)
			if !errors.As(dryErr, &ue) || dryErr.Error() != err.Error() {
				t.Errorf("DryRun: %v, want Measure's %v", dryErr, err)
			}
		})
	}
}

// TestShardFlag: -shard takes i/n with 1 <= i <= n and prints it back.
func TestShardFlag(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want Shard
		err  bool
	}{
		{"2/3", Shard{Index: 2, Count: 3}, false},
		{"1/1", Shard{Index: 1, Count: 1}, false},
		{"3/3", Shard{Index: 3, Count: 3}, false},
		{"0/3", Shard{}, true},
		{"4/3", Shard{}, true},
		{"1/0", Shard{}, true},
		{"2", Shard{}, true},
		{"a/b", Shard{}, true},
		{"", Shard{}, true},
	} {
		var s Shard
		err := s.Set(tc.in)
		if tc.err {
			if want := `-shard "` + tc.in + `": want i/n with 1 <= i <= n, e.g. 2/3`; err == nil || err.Error() != want {
				t.Errorf("Set(%q): error %v, want %q", tc.in, err, want)
			}
			continue
		}
		if err != nil || s != tc.want {
			t.Errorf("Set(%q) = %+v, %v; want %+v", tc.in, s, err, tc.want)
		}
		if got := s.String(); got != tc.in {
			t.Errorf("String of %+v = %q, want %q", s, got, tc.in)
		}
	}
	if got := (&Shard{}).String(); got != "" {
		t.Errorf("the whole grid prints %q, want nothing", got)
	}
}
