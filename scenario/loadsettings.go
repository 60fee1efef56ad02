package scenario

import (
	"fmt"
	"strconv"
	"time"
)

func (l *loader) load(n *node) {
	ls := &l.s.Load
	*ls = LoadSettings{
		Concurrency: []int{1}, Duration: DefaultDuration, Warmup: DefaultWarmup,
		Repetitions: DefaultRepetitions, Timeout: DefaultTimeout,
		Defaults:   Defaults{Headers: map[string]string{}, Query: map[string]string{}},
		Interleave: DefaultInterleave, Slice: DefaultSlice, Settle: DefaultSettle,
		HTTPClient: HTTPClientFast,
	}
	if n == nil {
		return
	}
	m, ok := l.fields(n, "load", "concurrency", "rate", "duration", "warmup", "repetitions", "timeout", "defaults",
		"interleave", "slice", "settle", "max_repetitions", "http_client", "restart")
	if !ok {
		return
	}
	l.loadCommon(m, "load", ls)
	if v := m["restart"]; v != nil {
		l.restart(v)
	}
	if v := m["http_client"]; v != nil {
		if s, ok := l.str(v, "load.http_client"); ok {
			switch s {
			case HTTPClientFast, HTTPClientNetHTTP, HTTPClientHTTP2:
				ls.HTTPClient = s
			default:
				l.errNode(v, "load.http_client", "%q: want fast, net/http or http2", v.errText())
			}
		}
	}
	if v := m["defaults"]; v != nil {
		dm, ok := l.fields(v, "load.defaults", "headers", "query")
		if ok {
			if h := dm["headers"]; h != nil {
				l.defaults.header = l.kvTemplates(h, "load.defaults.headers", true)
			}
			if q := dm["query"]; q != nil {
				l.defaults.query = l.kvTemplates(q, "load.defaults.query", false)
			}
		}
	}
	for _, kv := range l.defaults.header {
		ls.Defaults.Headers[kv.key] = kv.t.src
	}
	for _, kv := range l.defaults.query {
		ls.Defaults.Query[kv.key] = kv.t.src
	}
}

// restart reads load.restart: never (the default), round, or {every: N}
// rounds. benchgate can restart only what it starts: a url target is
// refused.
func (l *loader) restart(v *node) {
	const f = "load.restart"
	every := 0
	switch v.kind {
	case kindMap:
		m, ok := l.fields(v, f, "every")
		if !ok {
			return
		}
		n := m["every"]
		if n == nil {
			l.errNode(v, f, "want every: N (rounds an instance serves before it is restarted)")
			return
		}
		r, ok := l.intRange(n, f+".every", 1, MaxRounds)
		if !ok {
			return
		}
		every = r
	default:
		s, ok := l.str(v, f)
		if !ok {
			return
		}
		switch s {
		case "never":
		case "round":
			every = 1
		default:
			l.errNode(v, f, "%q: want never, round or {every: N}", v.errText())
			return
		}
	}
	if every == 0 {
		return
	}
	for _, t := range []Target{l.s.Baseline, l.s.Candidate} {
		if t.URL != "" {
			l.errNode(v, f, "the %s is a url target, which benchgate does not start and so cannot restart (use never, or a command or image target)", t.Name)
			return
		}
	}
	l.s.Load.RestartEvery = every
}

// loadCommon reads the fields a profile may override too.
func (l *loader) loadCommon(m map[string]*node, f string, ls *LoadSettings) {
	for _, k := range []string{"interleave", "slice"} {
		if m[k] != nil {
			if l.chosen == nil {
				l.chosen = map[string]bool{}
			}
			l.chosen[f+"."+k] = true
		}
	}
	if v := m["concurrency"]; v != nil {
		if c, ok := l.levels(v, f+".concurrency", MaxConcurrency); ok {
			ls.Concurrency = c
		}
	}
	if v := m["rate"]; v != nil {
		if r, ok := l.levels(v, f+".rate", MaxRate); ok {
			ls.Rate = r
		}
	}
	positive := func(key string, dst *time.Duration, allowZero bool) {
		v := m[key]
		if v == nil {
			return
		}
		d, ok := l.duration(v, join(f, key))
		switch {
		case !ok:
		case d < 0 || d == 0 && !allowZero:
			if allowZero {
				l.errNode(v, join(f, key), "must not be negative")
			} else {
				l.errNode(v, join(f, key), "must be positive")
			}
		default:
			*dst = d
		}
	}
	positive("duration", &ls.Duration, false)
	positive("warmup", &ls.Warmup, true)
	positive("timeout", &ls.Timeout, false)
	positive("slice", &ls.Slice, false)
	positive("settle", &ls.Settle, true)
	if v := m["repetitions"]; v != nil {
		if r, ok := l.intRange(v, join(f, "repetitions"), 1, MaxRounds); ok {
			ls.Repetitions = r
			if l.repsPos == nil {
				l.repsPos = map[string]*node{}
			}
			l.repsPos[f+".repetitions"] = v
		}
	}
	for _, k := range []string{"slice", "settle"} {
		if v := m[k]; v != nil {
			if l.slicePos == nil {
				l.slicePos = map[string]*node{}
			}
			l.slicePos[f+"."+k] = v
		}
	}
	if v := m["max_repetitions"]; v != nil {
		if r, ok := l.intRange(v, join(f, "max_repetitions"), 1, MaxRounds); ok {
			ls.MaxRepetitions = r
			if l.maxReps == nil {
				l.maxReps = map[string]*node{}
			}
			l.maxReps[f] = v
		}
	}
	if v := m["interleave"]; v != nil {
		if s, ok := l.str(v, join(f, "interleave")); ok {
			switch s {
			case InterleaveRound, InterleaveSlice:
				ls.Interleave = s
			default:
				l.errNode(v, join(f, "interleave"), "%q: want round or slice", v.errText())
			}
		}
	}
}

// checkLoad checks what only the settings in force can say, once the
// profile is applied: a maximum of rounds below the minimum, slices that
// do not fit the measured time, slices of a kind of load that has none.
func (l *loader) checkLoad(n *node, profile string) {
	ls := &l.s.Load
	if ls.MaxRepetitions == 0 {
		ls.MaxRepetitions = ls.Repetitions
	} else if ls.MaxRepetitions < ls.Repetitions {
		f := join("profiles", profile)
		v := l.maxReps[f]
		if profile == "" || v == nil {
			f, v = "load", l.maxReps["load"]
		}
		l.errNode(v, f+".max_repetitions", "%s is below repetitions (%d): the most rounds a cell may take cannot be fewer than every cell takes",
			v.errNum(v.text), ls.Repetitions)
	}
	if ls.Interleave != InterleaveSlice {
		return
	}
	chose := func(k string) bool {
		return l.chosen["load."+k] || (profile != "" && l.chosen[join("profiles", profile)+"."+k])
	}
	// The defaults give way where they cannot apply.
	if ls.Slice > ls.Duration && !chose("slice") {
		ls.Slice = ls.Duration
	}
	line, col := 1, 1
	if n != nil {
		line, col = n.reportPos()
	}
	switch {
	case ls.Slice > ls.Duration:
		l.errAt(line, col, "load.slice", "%v is longer than duration %v: a round needs at least one slice of each target", ls.Slice, ls.Duration)
	case ls.SlicePairs() > MaxSlicePairs && !chose("slice"):
		// The default gives way here too: slices just long enough.
		ls.Slice = (ls.Duration + MaxSlicePairs - 1) / MaxSlicePairs
	case ls.SlicePairs() > MaxSlicePairs:
		f, v := l.setIn(l.slicePos, profile, "slice")
		l.errAt(v.line, v.col, f, "duration %v / slice %v is %d slice pairs a round; at most %d (scenario.MaxSlicePairs): lengthen the slice",
			ls.Duration, ls.Slice, ls.SlicePairs(), MaxSlicePairs)
	}
	if settling := satMul(int64(ls.Settle), int64(ls.SlicePairs())); ls.Settle > 0 && settling > int64(MaxDuration) {
		f, v := l.setIn(l.slicePos, profile, "settle")
		if v == nil {
			v = &node{line: line, col: col}
		}
		l.errAt(v.line, v.col, f, "settle %v × %d slice pairs settles a round for more than %s (scenario.MaxDuration)",
			ls.Settle, ls.SlicePairs(), durText(MaxDuration))
	}
}

// setIn is where the settings in force took key from: the profile's
// section, else the load section; its node is nil when neither set it.
func (l *loader) setIn(pos map[string]*node, profile, key string) (string, *node) {
	if profile != "" {
		if f := join("profiles", profile) + "." + key; pos[f] != nil {
			return f, pos[f]
		}
	}
	return "load." + key, pos["load."+key]
}

// checkGrid bounds the grid the settings in force make, and what running
// it records: cells, rungs, slices (limits.go). It reports at the field
// that makes the grid grow: the classes, or the repetitions.
func (l *loader) checkGrid(m map[string]*node, profile string) {
	ls := &l.s.Load
	pins := max(1, int64(len(l.s.PinSets)))
	rates := int64(len(ls.Rates()))
	cells := satMul(satMul(satMul(satMul(pins, int64(len(l.s.Variants))), int64(len(l.s.Classes))), int64(len(ls.Concurrency))), rates)
	at := func(n *node) (int, int) {
		if n == nil {
			return 1, 1
		}
		return n.reportPos()
	}
	if cells > MaxCells {
		line, col := at(m["classes"])
		levels := fmt.Sprintf("%d concurrency levels", len(ls.Concurrency))
		if rates > 1 {
			levels += fmt.Sprintf(" × %d rates", rates)
		}
		l.errAt(line, col, "classes", "the grid has %d cells (%d pin sets × %d variants × %d classes × %s); at most %d (scenario.MaxCells)",
			cells, pins, len(l.s.Variants), len(l.s.Classes), levels, MaxCells)
		return
	}
	rounds := int64(max(ls.Repetitions, ls.MaxRepetitions))
	f, v := "load.repetitions", (*node)(nil)
	if ls.MaxRepetitions > ls.Repetitions {
		f, v = "load.max_repetitions", l.maxReps["load"]
		if pv := l.maxReps[join("profiles", profile)]; profile != "" && pv != nil {
			f, v = join("profiles", profile)+".max_repetitions", pv
		}
	} else if pf, pv := l.setIn(l.repsPos, profile, "repetitions"); pv != nil {
		f, v = pf, pv
	}
	line, col := at(m["load"])
	if v != nil {
		line, col = v.line, v.col
	}
	rungs := satMul(satMul(cells, rounds), 2)
	if rungs > MaxRungs {
		l.errAt(line, col, f, "%d cells × %d rounds × 2 targets is %d rungs; at most %d (scenario.MaxRungs)", cells, rounds, rungs, MaxRungs)
		return
	}
	if ls.Interleave == InterleaveSlice && ls.SlicePairs() <= MaxSlicePairs {
		if slices := satMul(rungs, int64(ls.SlicePairs())); slices > MaxSlices {
			l.errAt(line, col, f, "%d rungs × %d slice pairs is %d slices to record; at most %d (scenario.MaxSlices): fewer rungs or longer slices",
				rungs, ls.SlicePairs(), slices, MaxSlices)
		}
	}
}

// levels reads a grid dimension of integers from 1 to most: a list, each
// level once.
func (l *loader) levels(n *node, field string, most int64) ([]int, bool) {
	if !l.list(n, field, "positive integers") {
		return nil, false
	}
	if len(n.items) == 0 {
		l.errNode(n, field, "must not be empty")
		return nil, false
	}
	var out []int
	ok := true
	if len(n.items) > MaxCells {
		l.errNode(n, field, "%d levels: the grid may have at most %d cells (scenario.MaxCells)", len(n.items), MaxCells)
		return nil, false
	}
	seen := map[int]bool{}
	for i, it := range n.items {
		c, good := l.intRange(it, index(field, i), 1, most)
		if !good {
			ok = false
			continue
		}
		if seen[c] {
			l.errNode(it, index(field, i), "%s is listed twice", it.errNum(strconv.Itoa(c)))
			ok = false
			continue
		}
		seen[c] = true
		out = append(out, c)
	}
	return out, ok
}
