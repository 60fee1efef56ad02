package benchdata

import (
	"errors"
	"fmt"
	"slices"
)

// ShardInfo says which part of the grid a results file holds, when the
// grid was split over several runners (benchgate run -shard i/n).
type ShardInfo struct {
	Index int `json:"index"` // 1-based
	Count int `json:"count"`
	// Grid is the whole grid in schedule order, so shards merge back in
	// the order an unsharded run would have had.
	Grid []Cell `json:"grid"`
}

// ShardOf returns the shard (1-based) of the cell at index i of the grid:
// cells are dealt round-robin, so each shard gets a share of every pin set,
// variant and class, and a cell's baseline and candidate rungs always run
// on the same runner.
func ShardOf(i, count int) int { return i%count + 1 }

// ShardRun is one shard's part of a merged results file: where and how it
// ran, so a report can list the machines and a reader can tell them apart.
type ShardRun struct {
	Index       int         `json:"index"`
	RunID       string      `json:"run_id,omitempty"`
	Status      string      `json:"status"`
	Error       string      `json:"error,omitempty"`
	Cells       int         `json:"cells"`
	Fingerprint string      `json:"fingerprint"`
	Env         Environment `json:"environment"`
}

// Merge combines the results files of the shards of one grid into the
// results an unsharded run would have written: the same plan in the same
// order, every rung, the correctness checks' findings, each shard's
// machine in Shards, the shards' profiles in shard order (the first
// MaxProfiles; their files are the shards' own: MergeFiles names where
// they go).
// The shards must come from one scenario (same hash, profile and seed)
// and the same split, each shard once; a missing shard is an error, since
// its cells would silently be left out.
func Merge(parts []*Results) (*Results, error) {
	if len(parts) == 0 {
		return nil, errors.New("merge: no results")
	}
	first := parts[0]
	if first.Shard == nil {
		return nil, errors.New("merge: results of an unsharded run (run with -shard i/n to split a grid)")
	}
	count := first.Shard.Count
	byIndex := map[int]*Results{}
	for _, p := range parts {
		switch {
		case p.Shard == nil:
			return nil, errors.New("merge: a results file of an unsharded run among the shards")
		case p.Shard.Count != count:
			return nil, fmt.Errorf("merge: shard %d/%d among shards of %d", p.Shard.Index, p.Shard.Count, count)
		case p.Scenario.Hash != first.Scenario.Hash || p.Scenario.Profile != first.Scenario.Profile || p.Scenario.Seed != first.Scenario.Seed:
			return nil, fmt.Errorf("merge: shard %d ran scenario %s (sha256 %.12s, profile %q, seed %d), shard %d %s (sha256 %.12s, profile %q, seed %d)",
				first.Shard.Index, first.Scenario.File, first.Scenario.Hash, first.Scenario.Profile, first.Scenario.Seed,
				p.Shard.Index, p.Scenario.File, p.Scenario.Hash, p.Scenario.Profile, p.Scenario.Seed)
		case !slices.Equal(p.Shard.Grid, first.Shard.Grid):
			return nil, fmt.Errorf("merge: shards %d and %d split different grids", first.Shard.Index, p.Shard.Index)
		case p.Shard.Index < 1 || p.Shard.Index > count:
			return nil, fmt.Errorf("merge: shard %d/%d: no such shard", p.Shard.Index, p.Shard.Count)
		case byIndex[p.Shard.Index] != nil:
			return nil, fmt.Errorf("merge: shard %d/%d given twice", p.Shard.Index, count)
		}
		byIndex[p.Shard.Index] = p
	}
	if count > len(parts) {
		// The count is the file's word: name a few missing shards, not
		// every one of a forged billion.
		var missing []string
		for i := 1; i <= count && len(missing) < 10; i++ {
			if byIndex[i] == nil {
				missing = append(missing, fmt.Sprintf("%d/%d", i, count))
			}
		}
		more := ""
		if n := count - len(parts); n > len(missing) {
			more = fmt.Sprintf(" and %d more", n-len(missing))
		}
		return nil, fmt.Errorf("merge: missing shard(s) %v%s: their cells would be left out", missing, more)
	}

	m := &Results{
		Version:  FormatVersion,
		Tool:     first.Tool,
		Kind:     first.Kind,
		Scenario: first.Scenario,
		Env:      first.Env,
		Plan:     Plan{PinSets: first.Plan.PinSets, Rounds: first.Plan.Rounds},
		Rungs:    []Rung{},
		Status:   "complete",
		GitHub:   first.GitHub,
	}
	m.Env.RunID = ""
	present := map[Cell]bool{}
	var errs []string
	for i := 1; i <= count; i++ {
		p := byIndex[i]
		for _, c := range p.Plan.Cells {
			present[c] = true
		}
		m.Rungs = append(m.Rungs, p.Rungs...)
		m.Plan.Estimate = max(m.Plan.Estimate, p.Plan.Estimate)
		if m.Env.Start.IsZero() || !p.Env.Start.IsZero() && p.Env.Start.Before(m.Env.Start) {
			m.Env.Start = p.Env.Start
		}
		if p.Env.End.After(m.Env.End) {
			m.Env.End = p.Env.End
		}
		m.Shards = append(m.Shards, ShardRun{
			Index: i, RunID: p.Env.RunID, Status: p.Status, Error: p.Error, Cells: len(p.Plan.Cells),
			Fingerprint: p.Env.Fingerprint(), Env: p.Env,
		})
		if rank(p.Status) > rank(m.Status) {
			m.Status = p.Status
		}
		if p.Error != "" {
			errs = append(errs, fmt.Sprintf("shard %d/%d: %s", i, count, p.Error))
		}
		m.Correctness = mergeCorrectness(m.Correctness, p.Correctness)
		m.Profiles = append(m.Profiles, p.Profiles...)
	}
	m.Profiles = m.Profiles[:min(len(m.Profiles), MaxProfiles)]
	if len(errs) > 0 {
		m.Error = fmt.Sprint(errs)
	}
	for _, c := range first.Shard.Grid {
		if present[c] {
			m.Plan.Cells = append(m.Plan.Cells, c)
		}
	}
	// Shards within the limits can add up to a file past them, which no
	// benchgate would then read.
	if err := checkValueLimits(m, "merge", resultsLimits); err != nil {
		return nil, fmt.Errorf("%w: the shards together hold more than one results file can", err)
	}
	return m, nil
}

// rank orders statuses by how little a merged run may claim.
func rank(status string) int {
	switch status {
	case "complete":
		return 0
	case "running":
		return 1
	case "cancelled":
		return 2
	}
	return 3 // failed, or unknown
}

// mergeCorrectness combines two shards' correctness findings: a
// pre-flight command passes only where it passed on every shard; a class
// agrees only where it agreed on every shard (the first disagreement is
// kept); absent classes add up. The lookups go through indexes: shards may hold thousands of
// entries each.
func mergeCorrectness(a, b *Correctness) *Correctness {
	switch {
	case b == nil:
		return a
	case a == nil:
		c := *b
		c.Preflight = slices.Clone(b.Preflight)
		c.Absent = slices.Clone(b.Absent)
		if b.Agreement != nil {
			c.Agreement = &AgreementResult{Classes: slices.Clone(b.Agreement.Classes)}
		}
		return &c
	}
	type nameTarget struct{ name, target string }
	pre := make(map[nameTarget]int, len(a.Preflight))
	for i, q := range a.Preflight {
		if _, ok := pre[nameTarget{q.Name, q.Target}]; !ok {
			pre[nameTarget{q.Name, q.Target}] = i
		}
	}
	for _, p := range b.Preflight {
		i, ok := pre[nameTarget{p.Name, p.Target}]
		switch {
		case !ok:
			pre[nameTarget{p.Name, p.Target}] = len(a.Preflight)
			a.Preflight = append(a.Preflight, p)
		case a.Preflight[i].Pass && !p.Pass:
			a.Preflight[i] = p
		}
	}
	absent := make(map[string]bool, len(a.Absent))
	for _, y := range a.Absent {
		absent[y.Class] = true
	}
	for _, x := range b.Absent {
		if !absent[x.Class] {
			absent[x.Class] = true
			a.Absent = append(a.Absent, x)
		}
	}
	if b.Agreement != nil {
		if a.Agreement == nil {
			a.Agreement = &AgreementResult{}
		}
		type variantClass struct{ variant, class string }
		agr := make(map[variantClass]int, len(a.Agreement.Classes))
		for i, d := range a.Agreement.Classes {
			if _, ok := agr[variantClass{d.Variant, d.Class}]; !ok {
				agr[variantClass{d.Variant, d.Class}] = i
			}
		}
		for _, c := range b.Agreement.Classes {
			i, ok := agr[variantClass{c.Variant, c.Class}]
			switch {
			case !ok:
				agr[variantClass{c.Variant, c.Class}] = len(a.Agreement.Classes)
				a.Agreement.Classes = append(a.Agreement.Classes, c)
			case a.Agreement.Classes[i].Agree && !c.Agree:
				a.Agreement.Classes[i] = c
			}
		}
	}
	return a
}
