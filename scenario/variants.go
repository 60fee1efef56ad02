package scenario

import (
	"sort"
)

func (l *loader) variants(n *node) {
	if n == nil || !l.mapping(n, "variants", "variables by variant name") || len(n.keys) == 0 {
		l.s.Variants = []Variant{{Name: "", Vars: map[string]string{}}}
		l.allVariants = l.s.Variants
		return
	}
	if len(n.keys) > MaxVariants {
		l.errNode(n, "variants", "%d variants; at most %d (scenario.MaxVariants)", len(n.keys), MaxVariants)
		l.s.Variants = []Variant{{Name: "", Vars: map[string]string{}}}
		l.allVariants = l.s.Variants
		return
	}
	all := map[string]string{} // variable -> the first variant defining it
	var vs []Variant
	for i, k := range n.keys {
		f := join("variants", k.text)
		if !nameRE.MatchString(k.text) {
			l.errAt(k.line, k.col, f, "%q is not a valid variant name (want letters, digits, _ . -)", k.text)
		}
		_, vars, _, ok := l.strMap(n.vals[i], f)
		if vars == nil {
			vars = map[string]string{}
		}
		_ = ok
		for name := range vars {
			if _, seen := all[name]; !seen {
				all[name] = k.text
			}
		}
		vs = append(vs, Variant{Name: k.text, Vars: vars})
	}
	names := make([]string, 0, len(all))
	for name := range all {
		names = append(names, name)
	}
	sort.Strings(names)
	for i, v := range vs {
		for _, name := range names {
			if _, ok := v.Vars[name]; !ok {
				k := n.keys[i]
				l.errAt(k.line, k.col, join("variants", v.Name), "missing variable %q (variant %s defines it; every variant must define the same variables)", name, all[name])
			}
		}
	}
	l.varNames = names
	l.s.Variants = vs
	l.allVariants = vs
}
