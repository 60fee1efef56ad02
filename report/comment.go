package report

import (
	"cmp"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultCommentRunes is CommentOptions.MaxRunes when it is 0: GitHub's
// 65,536-character limit on a comment's body, less room for the marker the
// poster prepends.
const DefaultCommentRunes = 65536 - 512

// DefaultSummaryBytes is SummaryOptions.MaxBytes when it is 0: GitHub's
// 1 MiB limit on a step's job summary, less room for what else the step
// writes there.
const DefaultSummaryBytes = 1<<20 - 4<<10

// commentNameLimit caps the scenario and profile names in a comment's head,
// so that no name can push the outcome out of the comment.
const commentNameLimit = 100

// CommentOptions shape the sticky pull-request comment.
type CommentOptions struct {
	// Header names the gate in the comment's title, e.g. "benchgate" or
	// "benchgate: api": several gates on one pull request keep their own
	// comment. "" means "benchgate".
	Header string
	// MaxRunes caps the body in runes (GitHub counts characters), the
	// Marker included; 0 means DefaultCommentRunes.
	MaxRunes int
	// SummaryURL links the job summary or the run in the note that says
	// the report was too long; "" or anything but an http(s) URL leaves the
	// link out.
	SummaryURL string
	// Marker is written first, verbatim and intact whatever the budget:
	// the hidden marker by which the poster finds its comment again, such
	// as "<!-- benchgate: api -->". "" writes none.
	Marker string
	// Note is a warning shown right under the title, e.g. that the results
	// came from a fork's workflow run and are unverified; "" for none.
	Note string
}

// Comment writes the body of the sticky pull-request comment: the outcome,
// the gated ties that could not resolve their band with what to do about
// them (under gate.unresolved warn and fail; under pass they follow the
// counts), the failures, what the correctness checks found (failed
// pre-flight commands, the agreement check with each disagreement, absent
// classes), one line of counts and the run's identity, then the rest of
// the markdown report folded in a <details> element. The body stays within
// opt.MaxRunes: when the whole does not fit, the latency distributions
// and the throughput charts leave the fold first, then the folded report
// gives way to a note pointing to the job summary and report.md; then the
// correctness checks' details go (the failures still name each of their
// failures); when even the failures do not fit, their list is cut at a
// line with "… and N more", and after it the list of unresolved ties,
// which keeps what they mean and what to do. It fails only when the budget cannot hold the
// marker, the title, that note and those words.
func Comment(w io.Writer, in Input, opt CommentOptions) error {
	m := newModel(in)
	limit := cmp.Or(opt.MaxRunes, DefaultCommentRunes)
	header := cmp.Or(opt.Header, "benchgate")
	marker := opt.Marker
	if marker != "" && !strings.HasSuffix(marker, "\n") {
		marker += "\n"
	}
	secs := map[sectionID]string{}
	for _, s := range m.sections() {
		secs[s.id] = s.text
	}

	// The head: what a reviewer must see without a click.
	title := m.titleLine(header, commentNameLimit) + m.dashboardLine() + secs[secStatus]
	if opt.Note != "" {
		title += "> ⚠️ " + EscapeMarkdown(opt.Note) + "\n\n"
	}
	var failures []string
	for _, it := range m.listedFailures() {
		failures = append(failures, "- "+failureText(it, true)+"\n")
	}
	counts := m.countsLine() + "\n\n"
	// The correctness checks fail the gate whatever the cells say: what
	// they found is shown above the fold, but for the pre-flight table.
	checks := m.commentCorrectness()
	var preflight strings.Builder
	m.mdPreflight(&preflight)
	if preflight.Len() > 0 {
		secs[secCorrectness] = "### Correctness\n\n" + preflight.String()
	} else {
		delete(secs, secCorrectness)
	}

	// The fold: the rest of the report, the failures and status excepted as
	// the head shows them just above. GitHub renders markdown inside
	// <details> only when blank lines set it apart from the tags.
	fold := func(latency bool) string {
		var b strings.Builder
		b.WriteString("<details><summary>" + m.foldSummary(latency) + "</summary>\n\n")
		for _, id := range []sectionID{secIdentity, secError, secCorrectness, secTables, secCharts, secResources, secPerCore,
			secLatency, secErrors, secClaims, secThreats, secReproduce, secEnvironment} {
			if (id != secLatency && id != secCharts) || latency {
				b.WriteString(secs[id])
			}
		}
		b.WriteString("\n</details>\n")
		return b.String()
	}

	// The unresolved ties lead under gate.unresolved warn and fail, right
	// after the outcome; under pass they follow the counts.
	block := m.unresolvedMarkdown(-1)
	lead := m.unresolvedLeads()
	assemble := func(block, list, checks, tail string) string {
		if lead {
			return marker + title + block + list + checks + counts + tail
		}
		return marker + title + list + checks + counts + block + tail
	}
	list := strings.Join(failures, "")
	if list != "" {
		list += "\n"
	}
	// Where the failing cells got slower, collapsed, under the failures;
	// it goes with the fold when the comment is too long (report.md
	// keeps it).
	where := m.commentWhere()
	out := assemble(block, list+where, checks, fold(true))
	if secs[secLatency]+secs[secCharts] != "" && runes(out) > limit {
		out = assemble(block, list+where, checks, fold(false))
	}
	if runes(out) > limit {
		pointer := pointerLine(opt.SummaryURL)
		out = assemble(block, list, checks, pointer)
		if runes(out) > limit {
			out = assemble(block, list, "", pointer)
		}
		if runes(out) > limit {
			// The failures give way first, then the list of unresolved
			// ties; each keeps a line saying how many it left out, and the
			// ties keep what they mean and what to do.
			cut, err := cutFailures(failures, limit-runes(assemble(block, "", "", pointer)))
			if err == nil {
				out = assemble(block, cut, "", pointer)
			} else if block != "" {
				least := ""
				if len(failures) > 0 {
					least = moreLine(len(failures)) + "\n"
				}
				var cutBlock string
				if cutBlock, err = m.cutUnresolved(limit - runes(assemble("", least, "", pointer))); err == nil {
					out = assemble(cutBlock, least, "", pointer)
				}
			}
			if err != nil {
				return fmt.Errorf("report: a comment of %d runes cannot hold the marker, title and note: %w", limit, err)
			}
		}
	}
	_, err := io.WriteString(w, out)
	return err
}

// cutFailures keeps as many failure lines as fit in budget runes with a
// last line "… and N more" for the rest, and the blank line after the
// list.
func cutFailures(lines []string, budget int) (string, error) {
	used := 0
	kept := -1
	for k := 0; k < len(lines); k++ {
		if used+runes(moreLine(len(lines)-k))+1 <= budget {
			kept = k
		}
		used += runes(lines[k])
		if used > budget {
			break
		}
	}
	if kept < 0 {
		return "", fmt.Errorf("%d runes short", runes(moreLine(len(lines)))+1-budget)
	}
	return strings.Join(lines[:kept], "") + moreLine(len(lines)-kept) + "\n", nil
}

func moreLine(n int) string {
	return fmt.Sprintf("- … and %d more\n", n)
}

// pointerLine says where the full report is when the comment cannot hold
// it.
func pointerLine(summaryURL string) string {
	where := "the job summary"
	if u := linkTarget(summaryURL); u != "" {
		where = "the [job summary](<" + u + ">)"
	}
	return "The full report is too long for a comment: see " + where + " and report.md in the results.\n"
}

// linkTarget returns s fit to be a link's destination in angle brackets,
// or "" when s is not an absolute http(s) URL: a link is only ever where
// the caller meant it to go.
func linkTarget(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	var b strings.Builder
	for _, r := range u.String() {
		switch {
		case unicode.IsControl(r) || unicode.IsSpace(r) || isBidiControl(r):
			return ""
		case strings.ContainsRune("<>\\`", r):
			fmt.Fprintf(&b, "%%%02X", r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// countsLine is the comment's one line of counts and the run's identity.
func (m *model) countsLine() string {
	c := m.in.Comparison.Counts
	r := m.in.Results
	parts := []string{
		plural(c.Regressions, "regression", "regressions"),
		plural(c.Improvements, "improvement", "improvements"),
		plural(c.Ties, "tie", "ties"),
		fmt.Sprintf("%d inconclusive", c.Inconclusive),
	}
	if n := m.unresolvedCells(); n > 0 {
		parts = append(parts, plural(n, "cell", "cells")+" with unresolved ties")
	}
	counts := strings.Join(parts, " · ")
	name := r.Scenario.Name
	if name == "" {
		name = "(unnamed scenario)"
	}
	id := "baseline" + commitSuffix(r.Env.Baseline) + " vs candidate" + commitSuffix(r.Env.Candidate) +
		", scenario " + md(truncate(name, commentNameLimit))
	if p := r.Scenario.Profile; p != "" {
		id += ", profile " + md(truncate(p, commentNameLimit))
	}
	// Counts are of cells, the title's of failures: one cell may fail on
	// two metrics.
	return plural(len(m.in.Comparison.Cells), "cell", "cells") + ": " + counts + " — " + id
}

// foldSummary is the text of the <summary> element: numbers and fixed
// words only, since GitHub does not render markdown there. latency says
// whether the fold holds the latency distributions.
func (m *model) foldSummary(latency bool) string {
	parts := []string{plural(len(m.in.Comparison.Cells), "cell", "cells")}
	if g := m.correctness(); g != nil && len(g.Preflight) > 0 {
		parts = append(parts, "pre-flight")
	}
	parts = append(parts, "tables")
	for _, t := range m.tables {
		if t.res != nil {
			parts = append(parts, "resources")
			break
		}
	}
	if latency && m.anyLatency() {
		parts = append(parts, "latency")
	}
	if len(m.errors) > 0 {
		parts = append(parts, "errors")
	}
	parts = append(parts, "environment")
	return "Full report: " + strings.Join(parts, ", ")
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// SummaryOptions shape the job summary.
type SummaryOptions struct {
	// MaxBytes caps the summary in bytes (GitHub counts bytes there); 0
	// means DefaultSummaryBytes.
	MaxBytes int
}

// sectionNames name the parts of the report in the note on what a job
// summary leaves out.
var sectionNames = map[sectionID]string{
	secTitle:       "the title",
	secIdentity:    "the run's identity",
	secStatus:      "the run's status",
	secError:       "the run's error output",
	secFailures:    "the failures",
	secCorrectness: "the correctness checks",
	secTables:      "the verdict tables",
	secCharts:      "the throughput charts",
	secResources:   "the resources tables",
	secPerCore:     "the throughput per core",
	secLatency:     "the latency distributions",
	secErrors:      "the error distribution",
	secClaims:      "the claims",
	secThreats:     "the threats to validity",
	secReproduce:   "how to reproduce",
	secEnvironment: "the environment",
	secUnresolved:  "the unresolved ties",
	secWhere:       "where the profiled cells got slower",
}

// cutLine marks where a job summary cut a part of the report short.
const cutLine = "… the rest is left out here: report.md in the results has it all.\n\n"

// Summary writes the markdown report for a job summary, byte for byte the
// one Markdown writes when it fits in opt.MaxBytes. When it does not, whole
// parts give way: the latency distributions first, then the largest
// tables: the resources, the throughput per core and the error distribution
// (largest first), then the threats to validity and the environment, then
// the throughput charts (small, and a glance at the tables); the
// title, failures, correctness checks, verdict tables, claims and how to
// reproduce stay. Should those still not fit, the report is cut
// at a line. A note after the failures says what was left out and that
// report.md in the results has it all. It fails only when the budget cannot
// hold that note.
func Summary(w io.Writer, in Input, opt SummaryOptions) error {
	limit := cmp.Or(opt.MaxBytes, DefaultSummaryBytes)
	secs := newModel(in).sections()
	size := func(ss []section) int {
		n := 0
		for _, s := range ss {
			n += len(s.text)
		}
		return n
	}
	if size(secs) <= limit {
		return write(w, secs, "")
	}

	present := map[sectionID]int{}
	for _, s := range secs {
		present[s.id] = len(s.text)
	}
	tables := []sectionID{secResources, secPerCore, secErrors}
	slices.SortStableFunc(tables, func(a, b sectionID) int { return cmp.Compare(present[b], present[a]) })
	left := map[sectionID]bool{}
	kept := secs
	for _, id := range append(append([]sectionID{secLatency}, tables...), secThreats, secEnvironment, secCharts) {
		if _, ok := present[id]; !ok {
			continue
		}
		left[id] = true
		kept = without(secs, left)
		note := summaryNote(secs, left, -1)
		if size(kept)+len(note) <= limit {
			return write(w, kept, note)
		}
	}

	// What stays does not fit either: keep whole parts while they fit and
	// cut the first that does not at a line. The note is reserved at its
	// longest: every part named, whichever is cut short.
	all := map[sectionID]bool{}
	longest := 0
	for _, s := range secs {
		all[s.id] = true
	}
	for _, s := range secs {
		longest = max(longest, len(summaryNote(secs, all, s.id)))
	}
	budget := limit - longest - len("\n"+cutLine)
	if budget < 0 {
		return fmt.Errorf("report: a job summary of %d bytes cannot hold the note on what it leaves out", limit)
	}
	var out []section
	partial := sectionID(-1)
	used := 0
	for i, s := range kept {
		if used+len(s.text) <= budget {
			out = append(out, s)
			used += len(s.text)
			continue
		}
		if cut := cutLines(s.text, budget-used); cut != "" {
			out = append(out, section{s.id, cut + "\n" + cutLine})
			partial = s.id
		}
		for _, rest := range kept[i:] {
			if rest.id != partial {
				left[rest.id] = true
			}
		}
		break
	}
	return write(w, out, summaryNote(secs, left, partial))
}

// without is secs less the parts in left.
func without(secs []section, left map[sectionID]bool) []section {
	var out []section
	for _, s := range secs {
		if !left[s.id] {
			out = append(out, s)
		}
	}
	return out
}

// write writes the parts with the note after the failures, or after what
// there is when the report was cut before them.
func write(w io.Writer, secs []section, note string) error {
	var b strings.Builder
	placed := note == ""
	for _, s := range secs {
		// The note follows the head: the title, identity, status, error,
		// failures, and the unresolved ties when they lead.
		if !placed && s.id > secFailures && s.id != secUnresolved {
			b.WriteString(note)
			placed = true
		}
		b.WriteString(s.text)
	}
	if !placed {
		if !strings.HasSuffix(b.String(), "\n\n") {
			b.WriteString("\n")
		}
		b.WriteString(note)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// summaryNote says what a job summary leaves out, in report order; partial
// is the part it cut short, -1 for none.
func summaryNote(secs []section, left map[sectionID]bool, partial sectionID) string {
	var names []string
	for _, s := range secs {
		switch {
		case s.id == partial:
			names = append(names, "the rest of "+sectionNames[s.id])
		case left[s.id]:
			names = append(names, sectionNames[s.id])
		}
	}
	list := names[len(names)-1]
	if len(names) > 1 {
		list = strings.Join(names[:len(names)-1], ", ") + " and " + list
	}
	return "> ✂️ **Shortened** to fit the size limit of a job summary: this leaves out " + list +
		". report.md in the results has the full report.\n\n"
}

// cutLines returns the longest run of whole lines from the start of text
// that fits in budget bytes as valid markdown: a code block left open is
// closed (its closing fence counted), and a table heading, a table's header
// without rows or a trailing blank line is dropped. "" when nothing fits.
func cutLines(text string, budget int) string {
	lines := strings.SplitAfter(text, "\n")
	var kept []string
	fences := []string{""} // fences[i]: the open fence after kept[:i]
	used := 0
	for _, l := range lines {
		f := nextFence(fences[len(fences)-1], l)
		closing := 0
		if f != "" {
			closing = len(f) + 1
		}
		if used+len(l)+closing > budget {
			break
		}
		kept = append(kept, l)
		fences = append(fences, f)
		used += len(l)
	}
	for len(kept) > 0 {
		n := len(kept)
		last := strings.TrimSpace(kept[n-1])
		inFence := fences[n] != ""
		switch {
		case inFence && fences[n-1] == "":
			// A fence that opens on the last line shows nothing.
		case inFence:
			return strings.Join(kept, "") + fences[n] + "\n"
		case last == "" || strings.HasPrefix(last, "#"):
		case isAlignRow(last):
			// A table's header and alignment with no row under them.
			n--
		case n < len(lines) && strings.HasPrefix(last, "|") && isAlignRow(strings.TrimSpace(lines[n])):
			// A table's header whose alignment row did not fit.
		default:
			return strings.Join(kept, "")
		}
		kept, fences = kept[:n-1], fences[:n]
	}
	return ""
}

// nextFence is the code fence open after line, given the one open before
// it ("" for none). A fence closes on a line of at least as many backticks
// and nothing else.
func nextFence(open, line string) string {
	l := strings.TrimSpace(line)
	run := len(l) - len(strings.TrimLeft(l, "`"))
	switch {
	case open == "" && run >= 3:
		return l[:run]
	case open != "" && run >= len(open) && run == len(l):
		return ""
	}
	return open
}

// isAlignRow reports a table's alignment row, such as "| --- | ---: |".
func isAlignRow(l string) bool {
	return strings.HasPrefix(l, "|") && strings.Contains(l, "-") && strings.Trim(l, "|-: ") == ""
}
