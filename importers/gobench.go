package importers

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/gobench"
	"github.com/benchgate/benchgate/internal/fsx"
	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/benchgate/benchgate/scenario"
)

// Scenario is a scenario file given to decide reports that were not made
// by a run of it: its gate section decides them and its names name their
// cells.
type Scenario struct {
	*scenario.Scenario
	// Info is the scenario as a run of it records it
	// (runner.ScenarioInfo), whose gate section the results take.
	Info benchdata.ScenarioInfo
}

// defaultGate is the gate section a scenario gets when it declares none,
// for reports compared without a scenario: the rule is on the workload's
// own metric. Rule and Unresolved are left out, as by a file of version 2,
// which reads as overlap and warn: separate runs' reports are not paired
// observations.
func defaultGate(metric gate.Metric) gate.Section {
	g := gate.DefaultSection
	g.FailOn = []gate.Rule{{Metric: metric}}
	g.Rule, g.Unresolved = "", ""
	return g
}

// GoBench reads two saved go test -bench outputs into results of kind
// gobench, as benchstat reads them: each occurrence of a benchmark in a
// file is one repetition of that side. Cells are named as a gobench
// scenario names them, relative to the packages' common prefix; with one
// package only, by the benchmark's name alone. tool is the results' Tool
// ("benchgate VERSION"). opt.Scenario, when not nil, gives the gate
// section, the module the cells are named relative to and the rename
// rules; opt.Name names the results, else the scenario's name, else
// DefaultGoBenchName. The machine is read from the files' goos:, goarch:
// and cpu: lines and the benchmarks' GOMAXPROCS (machineOf).
func GoBench(oldPath, newPath, tool string, opt Options) (*benchdata.Results, error) {
	sc := opt.Scenario
	var sides [2][]gobench.Result
	for i, p := range []string{oldPath, newPath} {
		f, err := fsx.OpenLimited(p, gobench.MaxOutputBytes)
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
	if sc != nil && sc.GoBench != nil {
		rename = sc.GoBench.Rename
		// Named as a run of the scenario names them, relative to its
		// module, so its class globs mean the same here.
		if mp := modulePath(sc.GoBench.Module); mp != "" {
			module = mp
		}
	}

	res := &benchdata.Results{
		Version: benchdata.FormatVersion, Tool: tool, Kind: "gobench", Status: "complete",
		Scenario: benchdata.ScenarioInfo{Name: DefaultGoBenchName, Gate: defaultGate("sec/op")},
		Env:      machineOf(sides),
		Rungs:    []benchdata.Rung{},
	}
	if sc != nil {
		res.Scenario = sc.Info
	}
	if opt.Name != "" {
		res.Scenario.Name = opt.Name
	}
	res.Env.Baseline = benchdata.TargetInfo{Name: "baseline", Kind: "file", Spec: oldPath}
	res.Env.Candidate = benchdata.TargetInfo{Name: "candidate", Kind: "file", Spec: newPath}
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
				return nil, fmt.Errorf("%s: %s and %s are both named %s (by the rename rules?): their samples would mix", []string{oldPath, newPath}[i],
					textsafe.Clip(prev, textsafe.QuoteRunes), textsafe.Clip(r.Pkg+"."+r.Name, textsafe.QuoteRunes), textsafe.Clip(class, textsafe.QuoteRunes))
			}
			source[class] = r.Pkg + "." + r.Name
			cell := benchdata.Cell{Class: class}
			if !seen[class] {
				seen[class] = true
				res.Plan.Cells = append(res.Plan.Cells, cell)
			}
			res.Rungs = append(res.Rungs, benchdata.Rung{
				Cell: cell, Round: count[class], Target: target, Order: "AB", Position: i, Values: r.Values,
			})
			count[class]++
			rounds = max(rounds, count[class])
		}
	}
	if len(res.Plan.Cells) > benchdata.MaxCells {
		return nil, fmt.Errorf("%s and %s: %d distinct benchmarks, more than a results file can hold (%d)", oldPath, newPath, len(res.Plan.Cells), benchdata.MaxCells)
	}
	// Every repetition is used: a benchmark's count may differ between
	// files, and each side's summary stands on its own samples.
	res.Plan.Rounds, res.RoundsDone = rounds, map[string]int{"": rounds}
	return res, nil
}

// DefaultGoBenchName names the results of two saved go test -bench
// outputs compared without -name or a scenario. It depends on neither the
// files' names (a nightly's carry its date) nor the packages in them (a
// package that gains its first benchmark would change a name made of
// them): a history's series of such results stay one series night after
// night. Give -name to keep two suites apart in one history.
const DefaultGoBenchName = "go test -bench"

// machineOf is the machine two saved outputs ran on, as their header
// lines say: goos:, goarch: and cpu:, and for the CPU count the
// GOMAXPROCS every benchmark ran with (the -N suffix of its name, go
// test's default being the CPUs it may use), when all ran with the same
// one (a -cpu list leaves it unknown, 0). A field the outputs disagree on
// (two machines, or files joined) holds each value, in order, joined
// by " vs " (maxMachines of them, each clipped): such results
// fingerprint as neither machine.
func machineOf(sides [2][]gobench.Result) benchdata.Environment {
	var goos, goarch, cpu []string
	procs := -1
	add := func(list []string, v string) []string {
		v = textsafe.Clip(v, textsafe.QuoteRunes)
		if v == "" || slices.Contains(list, v) || len(list) > maxMachines {
			return list
		}
		if len(list) == maxMachines {
			v = "…"
		}
		return append(list, v)
	}
	for _, rs := range sides {
		for _, r := range rs {
			goos, goarch, cpu = add(goos, r.GOOS), add(goarch, r.GOARCH), add(cpu, r.CPU)
			switch p := gobench.Procs(r.Name); procs {
			case -1:
				procs = p
			case p:
			default:
				procs = 0
			}
		}
	}
	return benchdata.Environment{
		OS: strings.Join(goos, " vs "), Arch: strings.Join(goarch, " vs "), CPUModel: strings.Join(cpu, " vs "),
		CPUs: max(procs, 0),
	}
}

// maxMachines is how many distinct values of a header line machineOf
// keeps; more are "…".
const maxMachines = 3

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

// maxGoModBytes bounds the go.mod modulePath reads: the module line is
// its first, and the largest go.mod files are a few hundred KiB.
const maxGoModBytes = 16 << 20

// modulePath reads the module path from dir/go.mod; "" when it cannot.
func modulePath(dir string) string {
	b, err := fsx.ReadFileLimited(filepath.Join(dir, "go.mod"), maxGoModBytes)
	if err != nil {
		return ""
	}
	return gobench.ModulePath(b)
}
