package main

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/benchgate/benchgate/baselines"
	"github.com/benchgate/benchgate/gobench"
	"github.com/benchgate/benchgate/importers"
	"github.com/benchgate/benchgate/runner"
	"github.com/benchgate/benchgate/scenario"
)

// defaultGate is the gate section of DESIGN.md, for files compared
// without a scenario: the metric is the workload's own.
func defaultGate(metric string) baselines.GateConfig {
	return baselines.GateConfig{
		Confidence: scenario.DefaultConfidence, TieWithin: scenario.DefaultTieWithin,
		MaxErrorRate: scenario.DefaultMaxErrorRate, FailOn: []baselines.RuleInfo{{Metric: metric}},
	}
}

// goBenchFiles reads two saved go test -bench outputs into results of
// kind gobench, as benchstat reads them: each occurrence of a benchmark
// in a file is one repetition of that side. Cells are named as a gobench
// scenario names them, relative to the packages' common prefix; with one
// package only, by the benchmark's name alone. sc, when not nil, gives the
// gate section and the rename rules.
func goBenchFiles(oldPath, newPath string, sc *scenario.Scenario) (*baselines.Results, error) {
	var sides [2][]gobench.Result
	for i, p := range []string{oldPath, newPath} {
		f, err := baselines.OpenLimited(p, gobench.MaxOutputBytes)
		if err != nil {
			return nil, err
		}
		sides[i], err = gobench.ParseFile(f, p, nil)
		f.Close()
		if err != nil {
			return nil, err
		}
		if len(sides[i]) == 0 {
			return nil, fmt.Errorf("%s: no benchmark results (want the output of go test -bench)", p)
		}
	}
	var pkgs []string
	for _, rs := range sides {
		for _, r := range rs {
			pkgs = append(pkgs, r.Pkg)
		}
	}
	module := commonPackage(pkgs)
	var rename []scenario.Rename
	if sc != nil {
		rename = sc.GoBench.Rename
		// Named as a run of the scenario names them, relative to its
		// module, so its class globs mean the same here.
		if mp := modulePath(sc.GoBench.Module); mp != "" {
			module = mp
		}
	}

	res := &baselines.Results{
		Version: baselines.FormatVersion, Tool: "benchgate " + toolVersion(), Kind: "gobench", Status: "complete",
		Scenario: baselines.ScenarioInfo{Name: "go test -bench: " + oldPath + " vs " + newPath, Gate: defaultGate("sec/op")},
		Rungs:    []baselines.Rung{},
	}
	if sc != nil {
		res.Scenario = runner.ScenarioInfo(sc)
	}
	res.Env.Baseline = baselines.TargetInfo{Name: "baseline", Kind: "file", Spec: oldPath}
	res.Env.Candidate = baselines.TargetInfo{Name: "candidate", Kind: "file", Spec: newPath}
	seen := map[string]bool{}
	rounds := 0
	for i, rs := range sides {
		target := []string{"baseline", "candidate"}[i]
		count := map[string]int{}
		source := map[string]string{}
		for _, r := range rs {
			class := r.Name
			if module != "\x00" {
				class = gobench.Cell(r.Pkg, module, r.Name, nil)
			}
			class = scenario.ApplyRename(rename, class)
			if prev, ok := source[class]; ok && prev != r.Pkg+"."+r.Name {
				return nil, fmt.Errorf("%s: %s and %s are both named %s (by the rename rules?): their samples would mix", []string{oldPath, newPath}[i], prev, r.Pkg+"."+r.Name, class)
			}
			source[class] = r.Pkg + "." + r.Name
			cell := baselines.Cell{Class: class}
			if !seen[class] {
				seen[class] = true
				res.Plan.Cells = append(res.Plan.Cells, cell)
			}
			res.Rungs = append(res.Rungs, baselines.Rung{
				Cell: cell, Round: count[class], Target: target, Order: "AB", Position: i, Values: r.Values,
			})
			count[class]++
			rounds = max(rounds, count[class])
		}
	}
	if len(res.Plan.Cells) > baselines.MaxCells {
		return nil, fmt.Errorf("%s and %s: %d distinct benchmarks, more than a results file can hold (%d)", oldPath, newPath, len(res.Plan.Cells), baselines.MaxCells)
	}
	// Every repetition is used: a benchmark's count may differ between
	// files, and each side's summary stands on its own samples.
	res.Plan.Rounds, res.RoundsDone = rounds, map[string]int{"": rounds}
	return res, nil
}

// commonPackage is the module-like prefix the cells are named relative
// to: the longest common path prefix of the packages, its parent when it
// is itself one of them (so the root package keeps its last element), and
// "\x00" when there is one package only (or none): names alone then.
func commonPackage(pkgs []string) string {
	distinct := map[string]bool{}
	for _, p := range pkgs {
		distinct[p] = true
	}
	if len(distinct) <= 1 {
		return "\x00"
	}
	var prefix []string
	first := true
	for p := range distinct {
		parts := strings.Split(p, "/")
		if first {
			prefix, first = parts, false
			continue
		}
		n := 0
		for n < len(prefix) && n < len(parts) && prefix[n] == parts[n] {
			n++
		}
		prefix = prefix[:n]
	}
	common := strings.Join(prefix, "/")
	if distinct[common] {
		common = path.Dir(common)
		if common == "." {
			common = ""
		}
	}
	return common
}

// importResults reads another load tool's reports: comma-separated file
// lists, one file per repetition of each side.
func importResults(tool, baseList, candList, class string, sc *scenario.Scenario) (*baselines.Results, error) {
	split := func(s string) []string {
		var out []string
		for _, f := range strings.Split(s, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
		return out
	}
	base, cand := split(baseList), split(candList)
	if len(base) == 0 || len(cand) == 0 {
		return nil, errors.New("-import needs -baseline and -candidate, each a comma-separated list of report files")
	}
	opt := importers.Options{Class: class}
	if sc != nil {
		opt.Name = sc.Name
		// One report per repetition is one cell: the scenario's class,
		// when it has one, so its fail_on globs match.
		if class == "" && len(sc.Classes) == 1 {
			opt.Class = sc.Classes[0].Name
		}
	}
	res, err := importers.Read(tool, base, cand, opt)
	if err != nil {
		return nil, err
	}
	if sc != nil {
		info := runner.ScenarioInfo(sc)
		res.Scenario.Gate = info.Gate
		res.Scenario.File, res.Scenario.Hash, res.Scenario.Source = info.File, info.Hash, info.Source
	}
	return res, nil
}

// maxGoModBytes bounds the go.mod modulePath reads: the module line is
// its first, and the largest go.mod files are a few hundred KiB.
const maxGoModBytes = 16 << 20

// modulePath reads the module path from dir/go.mod; "" when it cannot.
func modulePath(dir string) string {
	b, err := baselines.ReadFileLimited(filepath.Join(dir, "go.mod"), maxGoModBytes)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module"); ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			rest, _, _ = strings.Cut(rest, "//")
			return strings.Trim(strings.TrimSpace(rest), `"`+"`")
		}
	}
	return ""
}
