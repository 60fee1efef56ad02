// Package profdiff says where a regressed cell got slower: the difference
// of two CPU profiles, one of each side under the cell's identical load,
// normalised per unit of work (a request, a benchmark op), by function,
// flat and cumulative, with a noise floor from the two sides' own sampling
// error so that a build compared with itself shows nothing above it.
//
// Every source gives a github.com/google/pprof/profile Profile: a Go
// service's net/http/pprof endpoint, `go test -cpuprofile`, and `perf
// script` text of any Linux process (ParsePerf). The package is pure: no
// I/O but the reader it is given.
//
// The floor: a CPU profile is a count of samples at a fixed period, so
// with the two sides' CPU per unit equal for a function, its samples split
// between the sides in proportion to the work each side did (their units
// over their periods). Its candidate share is then binomial, and a
// function stands above the floor only if that split is beyond chance at
// the diff's level, Bonferroni over the functions tested (Holm's guarantee
// needs no independence), and its change is at least MinShare of the
// baseline's CPU per unit (a statistically certain 0.1% is not where a
// 10% regression went).
package profdiff

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/benchgate/benchgate/gate"
	"github.com/google/pprof/profile"
)

// Side is one side's profile and the work it covered.
type Side struct {
	Profile *profile.Profile
	// Units is how many units of work (requests, ops) the side completed
	// while it was profiled; the diff is per unit.
	Units float64
}

// Options are the diff's settings; the zero value is DefaultOptions.
type Options struct {
	// Unit names a unit of work: "request" (default) or "op".
	Unit string
	// Alpha is the chance, over all the functions of a diff at once, that
	// one of them stands above the floor when nothing changed (0.01).
	Alpha float64
	// MinShare is the least change of a function's CPU per unit, as a
	// share of the baseline's whole CPU per unit, that can stand above the
	// floor (0.01; negative for none).
	MinShare float64
}

// DefaultOptions are the settings a diff gets when none are given.
var DefaultOptions = Options{Unit: "request", Alpha: 0.01, MinShare: 0.01}

func (o Options) withDefaults() Options {
	if o.Unit == "" {
		o.Unit = DefaultOptions.Unit
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		o.Alpha = DefaultOptions.Alpha
	}
	switch {
	case o.MinShare < 0:
		o.MinShare = 0
	case !(o.MinShare > 0):
		o.MinShare = DefaultOptions.MinShare
	}
	return o
}

// Pair is one figure on both sides: CPU nanoseconds per unit, and the
// samples behind it.
type Pair struct {
	Base, Cand               float64 // ns per unit
	BaseSamples, CandSamples int64
}

// Delta is the candidate's figure less the baseline's, ns per unit.
func (p Pair) Delta() float64 { return p.Cand - p.Base }

// Rel is Delta relative to the baseline's figure; +Inf where the baseline
// had none (a function only the candidate runs).
func (p Pair) Rel() float64 {
	if p.Base == 0 {
		if p.Cand == 0 {
			return 0
		}
		return math.Inf(1)
	}
	return p.Delta() / p.Base
}

// Func is one function's part in the diff.
type Func struct {
	Name string
	// Flat is the CPU spent in the function itself, Cum in it and
	// everything it called.
	Flat, Cum Pair
	// P is the two-sided p-value of the flat samples' split, and Above
	// whether the flat change stands above the diff's floor.
	P     float64
	Above bool
}

// Diff is the difference of two sides' CPU profiles.
type Diff struct {
	Unit string
	// Total is the whole CPU per unit of each side (every sample).
	Total Pair
	// Funcs is every function either side ran, the largest flat growth
	// first.
	Funcs []Func
	// Tested is how many functions the floor's Bonferroni counted; Alpha
	// and MinShare the floor's settings.
	Tested          int
	Alpha, MinShare float64
	// Root is the merged call tree, root first, for a flame graph: each
	// node's figures are its cumulative CPU per unit.
	Root *Node
}

// Node is a call-tree node: a function reached by one call path.
type Node struct {
	Name     string
	Base     float64 // cumulative ns per unit at this path, baseline
	Cand     float64 // candidate
	Children []*Node // by name
}

// Share is f's flat change as a part of the cell's whole change (0 when
// the whole did not change).
func (d *Diff) Share(f Func) float64 {
	if c := d.Total.Delta(); c != 0 {
		return f.Flat.Delta() / c
	}
	return 0
}

// Grew is up to n functions above the floor whose flat CPU per unit grew,
// the most first.
func (d *Diff) Grew(n int) []Func {
	var out []Func
	for _, f := range d.Funcs {
		if len(out) == n {
			break
		}
		if f.Above && f.Flat.Delta() > 0 {
			out = append(out, f)
		}
	}
	return out
}

// Shrank is up to n functions above the floor whose flat CPU per unit
// fell, the most first.
func (d *Diff) Shrank(n int) []Func {
	var out []Func
	for i := len(d.Funcs) - 1; i >= 0 && len(out) < n; i-- {
		if f := d.Funcs[i]; f.Above && f.Flat.Delta() < 0 {
			out = append(out, f)
		}
	}
	return out
}

// Compute diffs cand against base.
func Compute(base, cand Side, opt Options) (*Diff, error) {
	opt = opt.withDefaults()
	b, err := read(base, "baseline")
	if err != nil {
		return nil, err
	}
	c, err := read(cand, "candidate")
	if err != nil {
		return nil, err
	}
	d := &Diff{Unit: opt.Unit, Alpha: opt.Alpha, MinShare: opt.MinShare, Root: &Node{Name: "all"}}
	d.Total = Pair{Base: b.total / base.Units, Cand: c.total / cand.Units, BaseSamples: b.samples, CandSamples: c.samples}
	names := map[string]bool{}
	for n := range b.flat {
		names[n] = true
	}
	for n := range b.cum {
		names[n] = true
	}
	for n := range c.cum {
		names[n] = true
	}
	// Under no change a function's samples split between the sides as the
	// work each side did over its sampling period.
	q := (cand.Units / c.period) / (base.Units/b.period + cand.Units/c.period)
	for n := range names {
		f := Func{Name: n,
			Flat: Pair{Base: b.flat[n].ns / base.Units, Cand: c.flat[n].ns / cand.Units, BaseSamples: b.flat[n].samples, CandSamples: c.flat[n].samples},
			Cum:  Pair{Base: b.cum[n].ns / base.Units, Cand: c.cum[n].ns / cand.Units, BaseSamples: b.cum[n].samples, CandSamples: c.cum[n].samples},
			P:    1,
		}
		if k := f.Flat.BaseSamples + f.Flat.CandSamples; k > 0 {
			d.Tested++
			up := gate.BinomialUpper(int(f.Flat.CandSamples), int(k), q)
			down := 1 - gate.BinomialUpper(int(f.Flat.CandSamples)+1, int(k), q)
			f.P = min(1, 2*min(up, down))
		}
		d.Funcs = append(d.Funcs, f)
	}
	least := opt.MinShare * d.Total.Base
	for i := range d.Funcs {
		f := &d.Funcs[i]
		f.Above = d.Tested > 0 && f.P <= opt.Alpha/float64(d.Tested) && math.Abs(f.Flat.Delta()) >= least && f.Flat.Delta() != 0
	}
	slices.SortFunc(d.Funcs, func(x, y Func) int {
		if c := cmp.Compare(y.Flat.Delta(), x.Flat.Delta()); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	addTree(d.Root, b.stacks, base.Units, false)
	addTree(d.Root, c.stacks, cand.Units, true)
	return d, nil
}

// figure is CPU time and the samples behind it.
type figure struct {
	ns      float64
	samples int64
}

// side is one profile read: by function, flat and cumulative, and its
// stacks root first.
type side struct {
	flat, cum map[string]figure
	stacks    []stack
	total     float64
	samples   int64
	period    float64 // ns a sample stands for
}

type stack struct {
	frames []string // root first
	ns     float64
}

// read sums a side's profile by function.
func read(s Side, what string) (*side, error) {
	p := s.Profile
	if p == nil {
		return nil, fmt.Errorf("%s: no profile", what)
	}
	if !(s.Units > 0) || math.IsInf(s.Units, 0) {
		return nil, fmt.Errorf("%s: %v units of work while profiled; a diff per unit needs some", what, s.Units)
	}
	vi, ci, err := cpuIndex(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	period := float64(p.Period)
	if p.PeriodType == nil || p.PeriodType.Unit != "nanoseconds" || period <= 0 {
		period = 0
	}
	r := &side{flat: map[string]figure{}, cum: map[string]figure{}}
	var ns, counted float64
	for _, smp := range p.Sample {
		if vi >= len(smp.Value) {
			return nil, fmt.Errorf("%s: a sample has %d values, the profile's types %d", what, len(smp.Value), len(p.SampleType))
		}
		v := float64(smp.Value[vi])
		if v <= 0 {
			continue
		}
		var n int64
		switch {
		case ci >= 0 && ci < len(smp.Value):
			n = smp.Value[ci]
		case period > 0:
			n = int64(math.Round(v / period))
		default:
			n = 1
		}
		n = max(n, 1)
		ns += v
		counted += float64(n)
		r.total += v
		r.samples += n
		frames := names(smp)
		if len(frames) == 0 {
			frames = []string{"(unknown)"}
		}
		add := func(m map[string]figure, name string) {
			f := m[name]
			f.ns += v
			f.samples += n
			m[name] = f
		}
		add(r.flat, frames[0])
		seen := map[string]bool{}
		for _, fr := range frames {
			if !seen[fr] {
				seen[fr] = true
				add(r.cum, fr)
			}
		}
		slices.Reverse(frames)
		r.stacks = append(r.stacks, stack{frames: frames, ns: v})
	}
	if r.samples == 0 {
		return nil, fmt.Errorf("%s: the profile holds no CPU samples (was the side busy while it was profiled?)", what)
	}
	r.period = ns / counted
	return r, nil
}

// cpuIndex finds the CPU-time value of a profile's samples (a Go CPU
// profile's "cpu nanoseconds", perf's the same) and its sample count
// ("samples count"), -1 when the profile has none.
func cpuIndex(p *profile.Profile) (value, count int, err error) {
	value, count = -1, -1
	for i, st := range p.SampleType {
		switch {
		case st.Unit == "nanoseconds" && (value < 0 || st.Type == "cpu"):
			value = i
		case st.Unit == "count" && (st.Type == "samples" || st.Type == "sample"):
			count = i
		}
	}
	if value < 0 {
		var types []string
		for _, st := range p.SampleType {
			types = append(types, st.Type+"/"+st.Unit)
		}
		return 0, 0, fmt.Errorf("not a CPU profile: its sample types are %s, none in nanoseconds", strings.Join(types, ", "))
	}
	return value, count, nil
}

// names is a sample's stack by function, leaf first, inlined frames
// expanded (a location's first line is its innermost function).
func names(s *profile.Sample) []string {
	var out []string
	for _, loc := range s.Location {
		if loc == nil {
			continue
		}
		if len(loc.Line) == 0 {
			out = append(out, unsymbolised(loc))
			continue
		}
		for _, ln := range loc.Line {
			if ln.Function != nil && ln.Function.Name != "" {
				out = append(out, ln.Function.Name)
			} else {
				out = append(out, unsymbolised(loc))
			}
		}
	}
	return out
}

func unsymbolised(loc *profile.Location) string {
	if m := loc.Mapping; m != nil && m.File != "" {
		file := m.File
		if i := strings.LastIndexByte(file, '/'); i >= 0 {
			file = file[i+1:]
		}
		return fmt.Sprintf("%s+0x%x", file, loc.Address-m.Start+m.Offset)
	}
	return fmt.Sprintf("0x%x", loc.Address)
}

// addTree adds a side's stacks, per unit, into the merged call tree.
func addTree(root *Node, stacks []stack, units float64, cand bool) {
	for _, s := range stacks {
		v := s.ns / units
		n := root
		bump(n, v, cand)
		for _, fr := range s.frames {
			n = child(n, fr)
			bump(n, v, cand)
		}
	}
}

func bump(n *Node, v float64, cand bool) {
	if cand {
		n.Cand += v
	} else {
		n.Base += v
	}
}

func child(n *Node, name string) *Node {
	i, ok := slices.BinarySearchFunc(n.Children, name, func(c *Node, name string) int { return strings.Compare(c.Name, name) })
	if !ok {
		n.Children = slices.Insert(n.Children, i, &Node{Name: name})
	}
	return n.Children[i]
}

// ErrEmpty is returned by ParsePerf for text with no samples.
var ErrEmpty = errors.New("no samples")

// Via is the caller through which f's own CPU grew most, nearest first
// outside the standard library and f's own package: for a leaf of the
// runtime or crypto, the program's function that asked for the work.
// "" when no such caller is on the path.
func (d *Diff) Via(name string) string {
	var best []*Node
	bestGrowth := math.Inf(-1)
	var walk func(n *Node, path []*Node)
	walk = func(n *Node, path []*Node) {
		path = append(path, n)
		if n.Name == name {
			b, c := n.Base, n.Cand
			for _, ch := range n.Children {
				b -= ch.Base
				c -= ch.Cand
			}
			if c-b > bestGrowth {
				bestGrowth, best = c-b, slices.Clone(path)
			}
		}
		for _, ch := range n.Children {
			walk(ch, path)
		}
	}
	walk(d.Root, nil)
	pkg := packageOf(name)
	for i := len(best) - 2; i > 0; i-- {
		if p := packageOf(best[i].Name); p != pkg && !standard(p) {
			return best[i].Name
		}
	}
	return ""
}

// packageOf is a Go function name's package path ("crypto/sha256" of
// "crypto/sha256.(*digest).Write"); other names are their own.
func packageOf(name string) string {
	slash := strings.LastIndexByte(name, '/')
	if i := strings.IndexByte(name[slash+1:], '.'); i >= 0 {
		return name[:slash+1+i]
	}
	return name
}

// standard says whether a package path is the standard library's (its
// first element has no dot), "main" aside.
func standard(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return pkg != "main" && !strings.Contains(first, ".") && !strings.ContainsAny(pkg, " ()+")
}
