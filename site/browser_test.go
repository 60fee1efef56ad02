package site

import (
	"context"
	"encoding/json"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// chromium finds a Chromium or Chrome binary: $BENCHGATE_CHROMIUM, else
// the usual names on PATH, else Debian's /usr/bin/chromium.
func chromium() string {
	if p := os.Getenv("BENCHGATE_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "/usr/bin/chromium"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser is a headless Chromium tab that records every URL it requests.
type browser struct {
	ctx  context.Context
	mu   sync.Mutex
	urls []string
}

func newBrowser(tb testing.TB) *browser {
	tb.Helper()
	bin := chromium()
	if bin == "" && os.Getenv("CI") != "" {
		tb.Fatal("no chromium binary found: .ci/run installs Debian's chromium")
	}
	if bin == "" {
		tb.Skip("no chromium binary found (install Debian's chromium, or set BENCHGATE_CHROMIUM): the site is not checked in a browser")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1000), chromedp.Flag("allow-file-access-from-files", false))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	b := &browser{}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			b.mu.Lock()
			b.urls = append(b.urls, e.Request.URL)
			b.mu.Unlock()
		}
	}))
	tb.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		tb.Fatalf("starting %s: %v", bin, err)
	}
	b.ctx = ctx
	return b
}

// open loads a file of dir, waits for its body, and returns the
// navigation's timing: from its start to the load event, in milliseconds.
func (b *browser) open(tb testing.TB, path string) float64 {
	tb.Helper()
	u := (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
	ctx, cancel := context.WithTimeout(b.ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(u), chromedp.WaitReady("body")); err != nil {
		tb.Fatalf("loading %s: %v", u, err)
	}
	ms, err := chromedp.Run(ctx, chromedp.Evaluate[float64](`(() => { const n = performance.getEntriesByType("navigation")[0]; return n.loadEventEnd - n.startTime; })()`))
	if err != nil {
		tb.Fatalf("%s: navigation timing: %v", u, err)
	}
	return ms
}

func (b *browser) eval(tb testing.TB, js string) string {
	tb.Helper()
	out, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		tb.Fatalf("%s: %v", js, err)
	}
	return out
}

func (b *browser) screenshot(tb testing.TB, name string) {
	tb.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		tb.Fatalf("screenshot: %v", err)
	}
	dir := screenshotDir(tb)
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		tb.Fatal(err)
	}
	tb.Logf("screenshot %s", filepath.Join(dir, name))
}

// screenshotDir is where screenshots go: the test's artifact directory
// (kept with go test -artifacts -outputdir DIR).
func screenshotDir(tb testing.TB) string {
	if t, ok := tb.(*testing.T); ok {
		return t.ArtifactDir()
	}
	return tb.TempDir()
}

// TestBrowser renders the site of the known history (a 5× step in the
// candidate's p95 of Q01 c=64) in headless Chromium from the file system,
// checks that the DOM holds its points and change points, that no request
// left the site's directory, and saves screenshots.
func TestBrowser(t *testing.T) {
	b := newBrowser(t)
	dir := filepath.Join(t.TempDir(), "site")
	if _, err := Build(dir, stepHistory(), Options{Months: 12, RepoURL: "https://github.com/benchgate/benchgate"}); err != nil {
		t.Fatal(err)
	}

	ms := b.open(t, filepath.Join(dir, "index.html"))
	t.Logf("index.html loaded in %.0f ms", ms)
	check := func(what, js, want string) {
		t.Helper()
		if got := b.eval(t, js); got != want {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	check("rows", `String(document.querySelectorAll("table.grid tbody tr").length)`, "8")
	check("first row", `(() => { const r = document.querySelector("table.grid tbody tr"); return r.dataset.status + " " + r.querySelector("th a").textContent; })()`, "worse Q01 c=64")
	check("its p95", `document.querySelector("table.grid tbody tr").children[3].querySelector(".chg").textContent`, "+400.0% worse")
	check("sparklines", `String(document.querySelectorAll("svg.spark").length)`, "56")
	check("worse count", `document.getElementById("worse-count").textContent`, "1")
	check("no script", `String(document.scripts.length)`, "0")
	check("style sheet applied", `getComputedStyle(document.querySelector("header.top")).backgroundColor`, "rgb(27, 31, 36)")
	b.screenshot(t, "index.png")

	href := b.eval(t, `document.querySelector("table.grid tbody tr th a").href`)
	if want := (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(dir, CellPage("demo-api", synthCell(3))))}).String(); href != want {
		t.Errorf("link to the page of Q01 c=64: %s, want %s", href, want)
	}
	page := filepath.Join(dir, filepath.FromSlash(CellPage("demo-api", synthCell(3))))
	b.open(t, page)
	check("h1", `document.querySelector("h1").textContent`, "demo-api Q01 c=64")
	check("change point", `(() => { const r = document.querySelector("tr.change.worse"); return [r.dataset.metric, r.dataset.target, r.dataset.from, r.dataset.to].join(" "); })()`, "p95 candidate c039 c040")
	check("its mark", `(() => { const g = document.querySelector("#m1-3-p95 svg g.mark.worse"); return g.dataset.from + ".." + g.dataset.to + " " + g.dataset.change; })()`, "c039..c040 +400.0%")
	check("baseline change", `document.querySelectorAll("#m1-3-p95 svg g.mark.neutral").length + " " + document.querySelector("li.baseline-change").dataset.to`, "1 v1.1.0")
	// The table's rows: 60 nights, the step at night 40 (2025-03-13).
	check("p95 rows", `String(document.querySelectorAll('table.runs[data-metric="p95"] tbody tr').length)`, "60")
	check("night 40", `Array.from(document.querySelectorAll('table.runs[data-metric="p95"] tbody tr.mark.worse td')).map(td => td.textContent.trim()).join("|")`,
		"2025-03-13|49.000 s ± 0%|5|9.800 s ± 1%|5|candidate change +400.0% (worse)")
	check("night 39", `Array.from(document.querySelectorAll('table.runs[data-metric="p95"] tbody tr')[39].cells).slice(0, 2).map(td => td.textContent).join("|")`,
		"2025-03-12|10.100 s ± 1%")
	check("chart markers", `String(document.querySelectorAll('#m1-3-p95 svg .point[data-series="candidate"]').length)`, "16")
	check("commit link", `document.querySelector("tr.change.worse a").href`, "https://github.com/benchgate/benchgate/commit/c039")
	check("accessible chart", `document.querySelector("#m1-3-p95 svg").getAttribute("role") + " " + document.querySelector("#m1-3-p95 svg").getAttribute("aria-label")`, "img p95 · Q01 c=64")
	b.screenshot(t, "cell.png")
	b.eval(t, `(() => { document.querySelector("#m1-3-p95 details").open = true; document.getElementById("m1-3-p95").scrollIntoView(); return ""; })()`)
	b.screenshot(t, "cell-table-open.png")

	// A page of two machines, kept apart.
	b.open(t, filepath.Join(dir, filepath.FromSlash(CellPage("demo-api", synthCell(0)))))
	check("sections", `Array.from(document.querySelectorAll("section.machine")).map(s => s.dataset.fingerprint).join(" ")`, "9e8d7c6b5a49 3f2a9c1b7d4e")
	b.screenshot(t, "cell-two-machines.png")

	// Every request was for a file of the site.
	b.mu.Lock()
	defer b.mu.Unlock()
	root := (&url.URL{Scheme: "file", Path: filepath.ToSlash(dir) + "/"}).String()
	if len(b.urls) < 4 {
		t.Errorf("only %d requests seen: %v", len(b.urls), b.urls)
	}
	for _, u := range b.urls {
		if !strings.HasPrefix(u, root) {
			t.Errorf("request for %s, outside %s", u, root)
		}
	}
	j, _ := json.Marshal(b.urls)
	t.Logf("requests: %s", j)
}
