package main

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/decide"
)

// TestMergeDecidesAsUnsharded: a recorded grid (the demo, 8 cells × 3
// rounds, a slowed search) split as three shards would have run it, then
// merged, decides every cell exactly as the unsharded results do.
func TestMergeDecidesAsUnsharded(t *testing.T) {
	t.Parallel()
	whole, err := benchdata.Read("testdata/recorded/results.json")
	if err != nil {
		t.Fatal(err)
	}
	const n = 3
	shardOf := map[benchdata.Cell]int{}
	for i, c := range whole.Plan.Cells {
		shardOf[c] = benchdata.ShardOf(i, n)
	}
	dir := t.TempDir()
	var files []string
	for idx := n; idx >= 1; idx-- { // any order
		part := *whole
		part.Shard = &benchdata.ShardInfo{Index: idx, Count: n, Grid: whole.Plan.Cells}
		part.Plan.Cells, part.Rungs = nil, nil
		for _, c := range whole.Plan.Cells {
			if shardOf[c] == idx {
				part.Plan.Cells = append(part.Plan.Cells, c)
			}
		}
		for _, r := range whole.Rungs {
			if shardOf[r.Cell] == idx {
				part.Rungs = append(part.Rungs, r)
			}
		}
		part.Env.RunID = "shard-" + string(rune('0'+idx))
		part.Env.Host = "runner-" + string(rune('0'+idx))
		d := filepath.Join(dir, part.Env.RunID)
		if err := benchdata.Write(d, &part); err != nil {
			t.Fatal(err)
		}
		files = append(files, filepath.Join(d, "results.json"))
	}
	if len(files) != n {
		t.Fatal("no shards")
	}
	var parts []*benchdata.Results
	for _, f := range files {
		r, err := benchdata.Read(f)
		if err != nil {
			t.Fatal(err)
		}
		parts = append(parts, r)
	}
	merged, err := benchdata.Merge(parts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(merged.Plan.Cells, whole.Plan.Cells) || merged.Status != "complete" || len(merged.Shards) != n ||
		merged.CompleteRounds() != whole.CompleteRounds() {
		t.Fatalf("merged plan %v status %s, %d shards, %d rounds", merged.Plan.Cells, merged.Status, len(merged.Shards), merged.CompleteRounds())
	}
	a, err := decide.Results(whole)
	if err != nil {
		t.Fatal(err)
	}
	b, err := decide.Results(merged)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("merged decisions differ from the unsharded ones:\n%+v\n%+v", a, b)
	}
	if a.Counts.Regressions == 0 || len(a.Cells) != 8 {
		t.Errorf("the recorded grid no longer exercises the claim: %+v", a.Counts)
	}

	// A missing shard, a shard twice and a shard of another scenario are
	// refused: their cells would be left out or counted twice.
	for name, ps := range map[string][]*benchdata.Results{
		"missing": parts[:2],
		"twice":   {parts[0], parts[0], parts[1], parts[2]},
	} {
		if _, err := benchdata.Merge(ps); err == nil {
			t.Errorf("%s: merged", name)
		}
	}
	other := *parts[1]
	other.Scenario.Hash = "0000"
	if _, err := benchdata.Merge([]*benchdata.Results{parts[0], &other, parts[2]}); err == nil {
		t.Error("a shard of another scenario merged")
	}
}
