package importers

import (
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benchgate/benchgate/decide"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/gobench"
)

// benchstatRow is one benchmark and unit of benchstat's CSV output.
type benchstatRow struct {
	oldCenter, newCenter float64 // medians
	delta                string  // "+968.37%", "~" (not significant) or "?"
	p                    float64
}

// runBenchstat runs benchstat, built from the Go module proxy through the
// module's tool directive, on two files, and reads its CSV output by
// package, benchmark name (without "Benchmark") and unit.
func runBenchstat(t *testing.T, old, new string) map[[3]string]benchstatRow {
	t.Helper()
	cmd := exec.Command("go", "tool", "benchstat", "-format", "csv", old, new)
	cmd.Stderr = nil
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go tool benchstat: %v", err)
	}
	rows := map[[3]string]benchstatRow{}
	var pkg, unit string
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = rest
			continue
		}
		rec, err := csv.NewReader(strings.NewReader(line)).Read()
		if err != nil || len(rec) < 7 {
			continue
		}
		if rec[0] == "" {
			if rec[2] == "CI" {
				unit = rec[1]
			}
			continue
		}
		if rec[0] == "geomean" {
			continue
		}
		oc, err1 := strconv.ParseFloat(rec[1], 64)
		nc, err2 := strconv.ParseFloat(rec[3], 64)
		if err1 != nil || err2 != nil {
			continue
		}
		p := math.NaN()
		if f := strings.Fields(rec[6]); len(f) > 0 {
			p, _ = strconv.ParseFloat(strings.TrimPrefix(f[0], "p="), 64)
		}
		rows[[3]string{pkg, rec[0], unit}] = benchstatRow{oc, nc, rec[5], p}
	}
	if len(rows) == 0 {
		t.Fatalf("no rows in benchstat's output:\n%s", out)
	}
	return rows
}

// TestBenchstatAgreement: on saved go test -bench outputs, benchgate's
// per-benchmark medians are benchstat's, and every cell benchgate calls a
// regression benchstat calls significantly worse. The table it logs shows
// benchgate's mean beside both medians (go test -v).
func TestBenchstatAgreement(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build benchstat with")
	}
	dir := "testdata/benchstat"
	old, new := filepath.Join(dir, "old.txt"), filepath.Join(dir, "new.txt")
	res, err := GoBench(old, new, "benchgate test", Options{})
	if err != nil {
		t.Fatal(err)
	}
	comparison, err := decide.Results(res)
	if err != nil {
		t.Fatal(err)
	}
	// The class of each benchmark, as benchstat names it.
	f, _ := os.Open(old)
	parsed, err := gobench.ParseFile(f, old, nil)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	var pkgs []string
	for _, r := range parsed {
		pkgs = append(pkgs, r.Pkg)
	}
	classOf := map[[2]string]string{}
	for _, r := range parsed {
		classOf[[2]string{r.Pkg, strings.TrimPrefix(r.Name, "Benchmark")}] = gobench.Cell(r.Pkg, commonPackage(pkgs), r.Name, nil)
	}

	stat := runBenchstat(t, old, new)
	cells := map[string]gate.CellResult{}
	for _, c := range comparison.Cells {
		cells[c.Key.Class] = c
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%-36s %-9s %12s %12s %12s | %12s %12s %12s | %-9s %-12s\n",
		"benchmark", "unit", "bg mean", "bg median", "bs median", "bg mean", "bg median", "bs median", "bs Δ", "bg verdict")
	keys := slices.SortedFunc(maps.Keys(stat), func(a, b [3]string) int {
		return strings.Compare(strings.Join(a[:], " "), strings.Join(b[:], " "))
	})
	compared, regressions := 0, 0
	for _, key := range keys {
		row := stat[key]
		class, ok := classOf[[2]string{key[0], key[1]}]
		if !ok {
			t.Errorf("benchstat row %v names no benchmark of the files", key)
			continue
		}
		d, ok := cells[class].Decision(gate.Metric(key[2]))
		if !ok {
			t.Errorf("%s %s: benchstat has it, benchgate decided no such unit", class, key[2])
			continue
		}
		fmt.Fprintf(&table, "%-36s %-9s %12.4g %12.4g %12.4g | %12.4g %12.4g %12.4g | %-9s %-12s\n", class, key[2],
			d.Baseline.Mean, d.Baseline.Median, row.oldCenter, d.Candidate.Mean, d.Candidate.Median, row.newCenter, row.delta, d.Verdict)
		compared++
		if !near(d.Baseline.Median, row.oldCenter) || !near(d.Candidate.Median, row.newCenter) {
			t.Errorf("%s %s: medians %g → %g, benchstat's %g → %g", class, key[2], d.Baseline.Median, d.Candidate.Median, row.oldCenter, row.newCenter)
		}
		if d.Verdict != gate.Regression {
			continue
		}
		regressions++
		worse := row.newCenter > row.oldCenter
		if gate.Metric(key[2]).HigherIsBetter() {
			worse = row.newCenter < row.oldCenter
		}
		if row.delta == "~" || !(row.p < 0.05) || !worse {
			t.Errorf("%s %s: benchgate says regression, benchstat says %s (p=%v, %g → %g)", class, key[2], row.delta, row.p, row.oldCenter, row.newCenter)
		}
	}
	t.Logf("benchgate (bg) against benchstat (bs) on %s and %s:\n%s", old, new, table.String())
	if compared < 8 || regressions == 0 {
		t.Errorf("compared %d units with %d regressions: the data no longer exercises the claim", compared, regressions)
	}
}

// near says whether a and b are equal up to float formatting in
// benchstat's CSV.
func near(a, b float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}

// TestBenchstatFewRuns: the agreement above is of those files, not a rule.
// With 3 runs a side a Mann-Whitney U test cannot reach p < 0.05 (its
// smallest p is 0.1), so benchstat says ~ however far apart the runs are,
// while benchgate's intervals of the means (t with 2 degrees of freedom)
// can be apart: a 20% slower candidate is a regression to benchgate and
// not significant to benchstat.
func TestBenchstatFewRuns(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build benchstat with")
	}
	old, new := filepath.Join("testdata", "benchstat", "few_old.txt"), filepath.Join("testdata", "benchstat", "few_new.txt")
	res, err := GoBench(old, new, "benchgate test", Options{})
	if err != nil {
		t.Fatal(err)
	}
	comparison, err := decide.Results(res)
	if err != nil {
		t.Fatal(err)
	}
	d, ok := comparison.Cells[0].Decision("sec/op")
	if !ok || d.Verdict != gate.Regression || d.Rule != gate.RuleOverlap {
		t.Errorf("benchgate: %+v, want a regression by the overlap rule", d)
	}
	row, ok := runBenchstat(t, old, new)[[3]string{"example.com/few", "X-2", "sec/op"}]
	if !ok || row.delta != "~" || row.p != 0.1 {
		t.Errorf("benchstat: %+v, want ~ at p=0.1", row)
	}
}
