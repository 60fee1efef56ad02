package report

import (
	"strings"
	"testing"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/site"
)

// TestDashboardLinks: with the site's address, the comment and the report
// link it at their head, and each failure of a cell links the page
// `benchgate history site` writes for that cell; the undecided cell and
// the error-rate failure are cells too. Without it nothing changes.
func TestDashboardLinks(t *testing.T) {
	t.Parallel()
	in := fullInput()
	plain := comment(t, in, CommentOptions{Marker: testMarker})
	in.Dashboard = "https://o.github.io/r"
	got := comment(t, in, CommentOptions{Marker: testMarker})
	page := func(c benchdata.Cell) string {
		return "https://o.github.io/r/" + site.CellPage("demo-api", c)
	}
	head := testMarker + "\n" +
		"## benchgate: demo-api — ❌ 1 regression, 1 error-rate failure\n\n" +
		"📈 [History of every cell](<https://o.github.io/r/>): each failing cell links its own page.\n\n" +
		"- ❌ **rps regression** in csv/Q01 c=8 (-17.9%): intervals do not overlap; means 17.9% apart (&gt;= 10%) · [history](<" +
		page(benchdata.Cell{Variant: "csv", Class: "Q01", Concurrency: 8}) + ">)\n" +
		"- ⚠️ **rps undecided** in json/Q01 c=1: need &gt;= 2 repetitions, have 1 · [history](<" +
		page(benchdata.Cell{Variant: "json", Class: "Q01", Concurrency: 1}) + ">)\n" +
		"- ❌ **error rate** in json/Q01 c=8 (12 of 1200 candidate requests failed): candidate error rate 1.00% &gt; 0.10% · [history](<" +
		page(benchdata.Cell{Variant: "json", Class: "Q01", Concurrency: 8}) + ">)\n\n"
	if !strings.HasPrefix(got, head) {
		t.Fatalf("comment head:\n%s\nwant prefix:\n%s", got, head)
	}
	if n := strings.Count(got, "History of every cell"); n != 1 {
		t.Errorf("the site is linked %d times in the comment, want once", n)
	}
	if strings.Contains(plain, "history") {
		t.Errorf("without a dashboard the comment links one:\n%s", plain)
	}
	md := markdown(t, in)
	if !strings.HasPrefix(md, "## benchgate: demo-api — ❌ 1 regression, 1 error-rate failure\n\n📈 [History of every cell](<https://o.github.io/r/>)") {
		t.Errorf("report head:\n%s", md[:min(len(md), 400)])
	}
	if !strings.Contains(md, "· [history](<"+page(benchdata.Cell{Variant: "csv", Class: "Q01", Concurrency: 8})+">)") {
		t.Errorf("the report's failure does not link its cell's page")
	}
	// Nothing failed: the site is linked, with no word of failing cells.
	pass := Input{Results: &benchdata.Results{Scenario: benchdata.ScenarioInfo{Name: "demo-api"}, Status: "complete"}, Dashboard: "https://o.github.io/r/"}
	if got := markdown(t, pass); !strings.Contains(got, "📈 [History of every cell](<https://o.github.io/r/>).\n") {
		t.Errorf("a report without failures:\n%s", got)
	}

	// An address that is not fit for a link links nothing.
	in.Dashboard = "javascript:alert(1)"
	if got := comment(t, in, CommentOptions{}); strings.Contains(got, "javascript") || strings.Contains(got, "[history]") {
		t.Errorf("a javascript: dashboard was linked:\n%s", got)
	}
}

func TestCheckDashboardURL(t *testing.T) {
	t.Parallel()
	for _, ok := range []string{"https://o.github.io/r/", "https://o.github.io/r", "http://127.0.0.1:8000/site/", "https://bench.example.com/"} {
		if err := CheckDashboardURL(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "o.github.io/r", "javascript:alert(1)", "file:///tmp/site", "https://", "https://o.github.io/r/?x=1",
		"https://o.github.io/r/#top", "https://u:p@o.github.io/", "https://o.github.io/a b", "https://o.github.io/<x>", "https://o.github.io/`x`",
		"https://o.github.io/\nx"} {
		if err := CheckDashboardURL(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
