package profdiff

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/benchgate/benchgate/internal/textsafe"
	"github.com/google/pprof/profile"
)

// PerfFields are the fields ParsePerf reads: run `perf script -F` with
// them. A sample is a line "TID PERIOD" and its stack, one frame a line,
// indented by a tab, leaf first: "ADDR SYMBOL (DSO)", then an empty line.
const PerfFields = "tid,period,ip,sym,dso"

// Bounds on what ParsePerf reads, whatever perf wrote.
const (
	// MaxPerfLine is the longest line (a C++ symbol can be long).
	MaxPerfLine = 64 << 10
	// MaxPerfSamples is the most samples: an hour of 4 threads at 999 Hz.
	MaxPerfSamples = 16 << 20
	// MaxPerfFrames is the deepest stack kept; deeper frames (the
	// outermost) are cut and counted as "(truncated)".
	MaxPerfFrames = 512
)

// ParsePerf reads `perf script -F tid,period,ip,sym,dso` text of a
// software clock event (cpu-clock or task-clock, whose period is in
// nanoseconds) into a CPU profile: sample types "samples count" and "cpu
// nanoseconds", one function per symbol, an unknown symbol named by its
// object and address. Errors name the line.
func ParsePerf(r io.Reader) (*profile.Profile, error) {
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
	}
	b := &builder{p: p, funcs: map[string]*profile.Function{}, maps: map[string]*profile.Mapping{}, locs: map[string]*profile.Location{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxPerfLine)
	var cur *profile.Sample
	line := 0
	end := func() {
		if cur != nil && len(cur.Location) > 0 {
			p.Sample = append(p.Sample, cur)
		}
		cur = nil
	}
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.TrimSpace(text) == "" {
			end()
			continue
		}
		// perf indents a frame with a tab, and right-aligns a header's
		// thread id with spaces.
		if text[0] != '\t' {
			end()
			period, err := perfHeader(text)
			if err != nil {
				return nil, fmt.Errorf("perf script line %d: %w", line, err)
			}
			if len(p.Sample) >= MaxPerfSamples {
				return nil, fmt.Errorf("perf script line %d: more than %d samples", line, MaxPerfSamples)
			}
			if p.Period == 0 {
				p.Period = period
			}
			cur = &profile.Sample{Value: []int64{1, period}}
			continue
		}
		if cur == nil {
			return nil, fmt.Errorf("perf script line %d: a frame before any sample's header line (want `perf script -F %s`)", line, PerfFields)
		}
		if len(cur.Location) == MaxPerfFrames {
			cur.Location[MaxPerfFrames-1] = b.location(0, "(truncated)", "")
			continue
		}
		addr, sym, dso, err := perfFrame(text)
		if err != nil {
			return nil, fmt.Errorf("perf script line %d: %w", line, err)
		}
		cur.Location = append(cur.Location, b.location(addr, sym, dso))
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return nil, fmt.Errorf("perf script line %d: longer than %d bytes", line+1, MaxPerfLine)
		}
		return nil, fmt.Errorf("perf script line %d: %w", line+1, err)
	}
	end()
	if len(p.Sample) == 0 {
		return nil, fmt.Errorf("perf script: %w (was the process on a CPU while perf recorded, and did perf record with -g?)", ErrEmpty)
	}
	return p, nil
}

// perfHeader reads a sample's header line, "TID PERIOD" (perf may add
// the event name after it: "TID PERIOD cpu-clock:"), into its period.
func perfHeader(text string) (int64, error) {
	f := strings.Fields(text)
	if len(f) < 2 {
		return 0, fmt.Errorf("a sample's header %s: want the thread id and the period (`perf script -F %s`)", q(text), PerfFields)
	}
	if _, err := strconv.ParseUint(f[0], 10, 32); err != nil {
		return 0, fmt.Errorf("a sample's header %s: thread id %s is not a number", q(text), q(f[0]))
	}
	period, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || period <= 0 {
		return 0, fmt.Errorf("a sample's header %s: period %s is not a positive number of nanoseconds", q(text), q(f[1]))
	}
	return period, nil
}

// perfFrame reads a frame line, "ADDR SYMBOL (DSO)"; the symbol may hold
// spaces, "[unknown]" when perf could not name it.
func perfFrame(text string) (uint64, string, string, error) {
	t := strings.TrimSpace(text)
	hex, rest, _ := strings.Cut(t, " ")
	addr, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		return 0, "", "", fmt.Errorf("a frame %s: address %s is not hexadecimal", q(t), q(hex))
	}
	rest = strings.TrimSpace(rest)
	sym, dso := rest, ""
	if strings.HasSuffix(rest, ")") {
		if i := strings.LastIndex(rest, " ("); i >= 0 {
			sym, dso = strings.TrimSpace(rest[:i]), rest[i+2:len(rest)-1]
		} else if strings.HasPrefix(rest, "(") {
			sym, dso = "", rest[1:len(rest)-1]
		}
	}
	if sym == "[unknown]" {
		sym = ""
	}
	return addr, sym, dso, nil
}

// builder makes each function, object and location of a profile once.
type builder struct {
	p     *profile.Profile
	funcs map[string]*profile.Function
	maps  map[string]*profile.Mapping
	locs  map[string]*profile.Location
}

// location is the profile's location of a frame.
func (b *builder) location(addr uint64, sym, dso string) *profile.Location {
	key := strconv.FormatUint(addr, 16) + " " + dso + " " + sym
	if l, ok := b.locs[key]; ok {
		return l
	}
	l := &profile.Location{ID: uint64(len(b.p.Location) + 1), Address: addr}
	if dso != "" {
		m, ok := b.maps[dso]
		if !ok {
			m = &profile.Mapping{ID: uint64(len(b.p.Mapping) + 1), File: dso, Limit: ^uint64(0)}
			b.maps[dso] = m
			b.p.Mapping = append(b.p.Mapping, m)
		}
		l.Mapping = m
	}
	if sym != "" {
		f, ok := b.funcs[sym]
		if !ok {
			f = &profile.Function{ID: uint64(len(b.p.Function) + 1), Name: sym, SystemName: sym}
			b.funcs[sym] = f
			b.p.Function = append(b.p.Function, f)
		}
		l.Line = []profile.Line{{Function: f}}
	}
	b.locs[key] = l
	b.p.Location = append(b.p.Location, l)
	return l
}

// q quotes text read from perf's output for an error.
func q(s string) string { return textsafe.Quote(s, textsafe.QuoteRunes) }
