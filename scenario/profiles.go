package scenario

import (
	"fmt"
	"slices"
	"strings"
)

type profileSrc struct {
	load     LoadSettings
	classes  []string
	variants []string
	pins     []string
}

func (l *loader) profilesSection(n *node) {
	l.profiles = map[string]*profileSrc{}
	if n == nil || !l.mapping(n, "profiles", "profiles by name") {
		return
	}
	for i, k := range n.keys {
		f := join("profiles", k.text)
		m, ok := l.fields(n.vals[i], f, "concurrency", "rate", "repetitions", "duration", "warmup", "timeout", "classes", "variants", "pins",
			"interleave", "slice", "settle", "max_repetitions")
		if !ok {
			continue
		}
		p := &profileSrc{load: l.s.Load}
		l.loadCommon(m, f, &p.load)
		if v := m["classes"]; v != nil {
			p.classes = l.names(v, f+".classes", "class", func(s string) bool { return l.s.AllClasses[s] != nil }, slices.Sorted(mapKeys(l.s.AllClasses)))
		}
		if v := m["variants"]; v != nil {
			var vnames []string
			for _, vr := range l.s.Variants {
				vnames = append(vnames, vr.Name)
			}
			p.variants = l.names(v, f+".variants", "variant", func(s string) bool { return slices.Contains(vnames, s) }, vnames)
		}
		if v := m["pins"]; v != nil {
			if !l.hasPins {
				l.errAt(v.keyLine, v.keyCol, f+".pins", "the file has no pins to choose from")
			} else {
				var pnames []string
				for _, ps := range l.s.PinSets {
					pnames = append(pnames, ps.Name)
				}
				// With a broken pin set, a name may be missing for that
				// reason alone: the error about the set says enough.
				exists := func(s string) bool { return l.pinsFailed || slices.Contains(pnames, s) }
				p.pins = l.names(v, f+".pins", "pin set", exists, pnames)
			}
		}
		l.profiles[k.text] = p
	}
}

func (l *loader) names(n *node, f, what string, exists func(string) bool, all []string) []string {
	items, ok := l.strList(n, f)
	if !ok {
		return nil
	}
	if len(items) == 0 {
		l.errNode(n, f, "must not be empty (leave the field out to keep every %s)", what)
		return nil
	}
	for i, s := range items {
		if !exists(s) {
			msg := fmt.Sprintf("no %s named %q", what, n.items[i].errText())
			if d := DidYouMean(s, all); d != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", d)
			}
			l.errNode(n.items[i], index(f, i), "%s", msg)
		}
	}
	return items
}

func (l *loader) applyProfile(n *node, name string) {
	if name == "" {
		return
	}
	p := l.profiles[name]
	if p == nil {
		l.noProfile(n, name, slices.Collect(mapKeys(l.profiles)))
		return
	}
	l.s.Load = p.load
	if p.classes != nil {
		l.s.Classes = selected(l.s.Classes, p.classes, func(c *Class) string { return c.Name })
	}
	if p.variants != nil {
		l.s.Variants = selected(l.s.Variants, p.variants, func(v Variant) string { return v.Name })
	}
	if p.pins != nil {
		l.s.PinSets = selected(l.s.PinSets, p.pins, func(p Pins) string { return p.Name })
	}
}

// noProfile reports a -profile name the file does not define; have are
// the names it does.
func (l *loader) noProfile(n *node, name string, have []string) {
	slices.Sort(have)
	line, col := 1, 1
	if n != nil {
		line, col = n.reportPos()
	}
	if len(have) == 0 {
		l.errAt(line, col, "profiles", "no profile %q: the file defines no profiles", name)
	} else {
		l.errAt(line, col, "profiles", "no profile %q (have %s)", name, strings.Join(have, ", "))
	}
}

// selected keeps the items a profile names, in the file's order.
func selected[T any](items []T, names []string, name func(T) string) []T {
	var kept []T
	for _, it := range items {
		if slices.Contains(names, name(it)) {
			kept = append(kept, it)
		}
	}
	return kept
}
