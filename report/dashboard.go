package report

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/benchgate/benchgate/benchdata"
	"github.com/benchgate/benchgate/gate"
	"github.com/benchgate/benchgate/site"
)

// CheckDashboardURL checks s as Input.Dashboard: the absolute http(s) URL
// where `benchgate history site` is published (a GitHub Pages site, say
// https://OWNER.github.io/REPO/), without a query, a fragment or a
// password, and nothing a link must escape. It is refused rather than
// dropped, so a mistyped input is seen at once.
func CheckDashboardURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("dashboard URL %q: %v", s, err)
	case u.Scheme != "https" && u.Scheme != "http", u.Host == "":
		return fmt.Errorf("dashboard URL %q: want an absolute https:// URL such as https://OWNER.github.io/REPO/", s)
	case u.User != nil, u.RawQuery != "", u.Fragment != "", strings.ContainsAny(s, "?#"):
		return fmt.Errorf("dashboard URL %q: want the site's address alone, without a user, query or fragment", s)
	case linkTarget(s) != s:
		return fmt.Errorf("dashboard URL %q: has characters a link cannot hold as they are (spaces, quotes, <, >, \\, `)", s)
	}
	return nil
}

// dashboardBase is the site's address ending in '/', "" when there is none
// or it is not fit for a link.
func (m *model) dashboardBase() string {
	d := m.in.Dashboard
	if d == "" || CheckDashboardURL(d) != nil {
		return ""
	}
	if !strings.HasSuffix(d, "/") {
		d += "/"
	}
	return d
}

// cellPageURL is the site's page of the cell a failure names, "" when
// there is no site or the failure names no cell (a correctness check's, or
// the comparison's own).
func (m *model) cellPageURL(f gate.Failure) string {
	base := m.dashboardBase()
	if base == "" || correctnessFailure(f.Kind) || f.Key == (gate.CellKey{}) {
		return ""
	}
	return base + site.CellPage(m.in.Results.Scenario.Name, benchdata.Cell(f.Key))
}

// dashboardLine is the report's and the comment's link to the site, with a
// blank line after it; "" without one.
func (m *model) dashboardLine() string {
	base := m.dashboardBase()
	if base == "" {
		return ""
	}
	line := "📈 [History of every cell](<" + base + ">)"
	for _, it := range m.failures {
		if it.page != "" {
			return line + ": each failing cell links its own page.\n\n"
		}
	}
	return line + ".\n\n"
}
