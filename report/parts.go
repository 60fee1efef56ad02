package report

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/benchgate/benchgate/benchdata"
)

// Resources by part: what each service of a target made of several (a
// compose stack) used in each cell, beside the stack's total in the
// resources table. Means over the decided rounds' rungs that measured
// the part; no interval and no verdict: the gate decides the stack's
// total, and these say where in the stack it went.

// partKey is one part of one side in one cell.
type partKey struct {
	cell   benchdata.Cell
	target string
	part   string
}

// partUsage sums a part's measured rungs, then holds their means.
type partUsage struct {
	rungs            int
	cores, cpuPerReq float64
	cpuRungs         int
	memMean, memPeak float64
}

// partRow is one cell and part of the table, both sides.
type partRow struct {
	cell       benchdata.Cell
	part       string
	base, cand *partUsage
}

// buildParts gathers the parts of every decided rung, in the order the
// cells and parts first appear.
func (m *model) buildParts() {
	usage := map[partKey]*partUsage{}
	seen := map[[2]string]bool{}
	type cellPart struct {
		cell benchdata.Cell
		part string
	}
	var order []cellPart
	for _, g := range m.in.Results.Rungs {
		if !m.decided(g.Cell, g.Round) || g.Duration <= 0 {
			continue
		}
		for _, p := range g.Parts {
			if p.Source == "" {
				continue
			}
			k := partKey{g.Cell, g.Target, p.Name}
			u := usage[k]
			if u == nil {
				u = &partUsage{}
				usage[k] = u
			}
			u.rungs++
			u.cores += p.CPUSeconds / g.Duration
			u.memMean += float64(p.MemMean)
			u.memPeak += float64(p.MemPeak)
			if n := g.Answered(); n > 0 {
				u.cpuRungs++
				u.cpuPerReq += p.CPUSeconds / float64(n)
			}
			if id := [2]string{g.Cell.String(), p.Name}; !seen[id] {
				seen[id] = true
				order = append(order, cellPart{g.Cell, p.Name})
			}
		}
	}
	for _, u := range usage {
		n := float64(u.rungs)
		u.cores, u.memMean, u.memPeak = u.cores/n, u.memMean/n, u.memPeak/n
		if u.cpuRungs > 0 {
			u.cpuPerReq /= float64(u.cpuRungs)
		}
	}
	for _, cp := range order {
		m.parts = append(m.parts, partRow{cell: cp.cell, part: cp.part,
			base: usage[partKey{cp.cell, "baseline", cp.part}], cand: usage[partKey{cp.cell, "candidate", cp.part}]})
	}
}

// partCells are a part row's figures, each side's cores, CPU per request,
// memory mean and peak, in the units given; "—" where a side has none.
func partCells(r partRow, cpu, mem latencyUnit) []string {
	var out []string
	for _, u := range []*partUsage{r.base, r.cand} {
		if u == nil {
			out = append(out, "—", "—", "—", "—")
			continue
		}
		c := "—"
		if u.cpuRungs > 0 {
			c = cpu.plain(u.cpuPerReq)
		}
		out = append(out, cores(u.cores), c, mem.plain(u.memMean), mem.plain(u.memPeak))
	}
	return out
}

// partUnits are the units of the table's CPU per request and memory.
func (m *model) partUnits() (cpu, mem latencyUnit) {
	var cpus, mems []float64
	for _, r := range m.parts {
		for _, u := range []*partUsage{r.base, r.cand} {
			if u != nil {
				cpus = append(cpus, u.cpuPerReq)
				mems = append(mems, u.memMean, u.memPeak)
			}
		}
	}
	return chooseCPUUnit(cpus), chooseMemUnit(mems)
}

// partHead is the table's header, in the units given.
func (m *model) partHead(cpu, mem latencyUnit) []string {
	per := m.noun().abbr
	var head []string
	for _, side := range []string{"baseline", "candidate"} {
		head = append(head, side+" cores", side+" CPU "+cpu.name+"/"+per, side+" mem mean "+mem.name, side+" mem peak "+mem.name)
	}
	return append([]string{"cell", "service"}, head...)
}

// termParts writes the resources by service to the terminal.
func (m *model) termParts(b *strings.Builder) error {
	if len(m.parts) == 0 {
		return nil
	}
	cpu, mem := m.partUnits()
	b.WriteString("\nresources by service (means over the decided rounds; the stack's total is above)\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t\n", strings.Join(m.partHead(cpu, mem), "\t"))
	for _, r := range m.parts {
		cells := append([]string{cleanTerminal(r.cell.String()), cleanTerminal(r.part)}, partCells(r, cpu, mem)...)
		fmt.Fprintf(tw, "%s\t\n", strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// mdParts writes the resources by service as a markdown table.
func (m *model) mdParts(b *strings.Builder) {
	if len(m.parts) == 0 {
		return
	}
	cpu, mem := m.partUnits()
	b.WriteString("### Resources by service\n\nMeans over the decided rounds of what each service of the stack used; the stack's total, which the gate decides, is in the resources table.\n\n")
	head := m.partHead(cpu, mem)
	align := slices.Repeat([]string{"---:"}, len(head))
	align[0], align[1] = "---", "---"
	b.WriteString("| " + strings.Join(head, " | ") + " |\n")
	b.WriteString("| " + strings.Join(align, " | ") + " |\n")
	for _, r := range m.parts {
		cells := append([]string{md(r.cell.String()), md(r.part)}, partCells(r, cpu, mem)...)
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	b.WriteString("\n")
}
