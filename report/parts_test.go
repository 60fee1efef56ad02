package report

import (
	"bytes"
	"github.com/benchgate/benchgate/benchdata"
	"regexp"
	"strings"
	"testing"
)

// TestResourcesByService: a stack's services get a row each per cell,
// both sides, as means over the decided rounds' rungs: cores from the
// rung's measured time, CPU per request from its answers, memory in one
// unit for the table; a side whose part was not measured reads "—". A
// results file with no parts has no such table.
func TestResourcesByService(t *testing.T) {
	t.Parallel()
	in := fullInput()
	cell := in.Results.Plan.Cells[0]
	for i := range in.Results.Rungs {
		g := &in.Results.Rungs[i]
		if g.Cell != cell {
			continue
		}
		// 1 s rungs; CPU per request from each rung's own answers.
		n := float64(g.Answered())
		g.Parts = []benchdata.PartResources{
			{Name: "api", Source: "cgroup", CPUSeconds: 0.002 * n, MemMean: 64 << 20, MemPeak: 80 << 20},
			{Name: "db", Source: "cgroup", CPUSeconds: 0.0005 * n, MemMean: 512 << 20, MemPeak: 520 << 20},
		}
		if g.Target == "candidate" {
			g.Parts[1].Source = "" // not measured: left out
		}
		g.Duration = n * 0.004 // so that api's cores are 0.5
	}
	var term, mdOut bytes.Buffer
	if err := Terminal(&term, in, TerminalOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := Markdown(&mdOut, in); err != nil {
		t.Fatal(err)
	}
	// Columns are aligned by a tabwriter; what they hold is checked.
	want := []string{
		`cell\s+service\s+baseline cores\s+baseline CPU ms/req\s+baseline mem mean MiB\s+baseline mem peak MiB\s+candidate cores\s+candidate CPU ms/req\s+candidate mem mean MiB\s+candidate mem peak MiB`,
		`csv/Q01 c=1\s+api\s+0\.50\s+2\.000\s+64\.0\s+80\.0\s+0\.50\s+2\.000\s+64\.0\s+80\.0\n`,
		`csv/Q01 c=1\s+db\s+0\.12\s+0\.500\s+512\.0\s+520\.0\s+—\s+—\s+—\s+—\n`,
	}
	for _, w := range want {
		if !regexp.MustCompile(w).MatchString(term.String()) {
			t.Errorf("terminal lacks %s:\n%s", w, term.String())
		}
	}
	if !strings.Contains(mdOut.String(), "### Resources by service") ||
		!strings.Contains(mdOut.String(), "| csv/Q01 c=1 | db | 0.12 | 0.500 | 512.0 | 520.0 | — | — | — | — |") {
		t.Errorf("markdown:\n%s", mdOut.String())
	}
	var plain bytes.Buffer
	if err := Terminal(&plain, fullInput(), TerminalOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "resources by service") {
		t.Error("a table of services for results without parts")
	}
}
