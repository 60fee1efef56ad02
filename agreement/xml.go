package agreement

import (
	"bytes"
	"encoding/xml"
	"io"
	"slices"
	"strconv"
	"strings"
)

// xtok is one significant token of a normalised XML document.
type xtok struct {
	text string // canonical rendering, compared for equality
	path string // element path, e.g. /feed[1]/entry[2]
	off  int
}

type xframe struct {
	path   string
	counts map[string]int
}

// parseXML returns the significant tokens: elements with attributes sorted
// and namespace declarations dropped (names carry namespace URLs), non-blank
// character data (adjacent pieces merged), and directives. Comments,
// processing instructions and whitespace-only character data are skipped.
func parseXML(body []byte) ([]xtok, error) {
	dec := xml.NewDecoder(bytes.NewReader(body))
	stack := []xframe{{counts: map[string]int{}}}
	var out []xtok
	var text strings.Builder
	textOff := -1
	flush := func() {
		if textOff >= 0 && strings.TrimSpace(text.String()) != "" {
			top := stack[len(stack)-1]
			out = append(out, xtok{text: "text " + strconv.Quote(text.String()), path: top.path + "/text()", off: textOff})
		}
		text.Reset()
		textOff = -1
	}
	for {
		off := int(dec.InputOffset())
		tok, err := dec.Token()
		if err == io.EOF {
			flush()
			if len(out) == 0 {
				return nil, io.ErrUnexpectedEOF
			}
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			if textOff < 0 {
				textOff = off
			}
			text.Write(t)
		case xml.StartElement:
			flush()
			top := &stack[len(stack)-1]
			name := xname(t.Name)
			top.counts[name]++
			path := top.path + "/" + t.Name.Local + "[" + strconv.Itoa(top.counts[name]) + "]"
			stack = append(stack, xframe{path: path, counts: map[string]int{}})
			out = append(out, xtok{text: renderStart(t), path: path, off: off})
		case xml.EndElement:
			flush()
			path := stack[len(stack)-1].path
			stack = stack[:len(stack)-1]
			out = append(out, xtok{text: "</" + xname(t.Name) + ">", path: path, off: off})
		case xml.Directive:
			flush()
			out = append(out, xtok{text: "<!" + strings.Join(strings.Fields(string(t)), " ") + ">", path: stack[len(stack)-1].path, off: off})
		case xml.Comment, xml.ProcInst:
			// insignificant; adjacent character data keeps merging
		}
	}
}

func xname(n xml.Name) string {
	if n.Space == "" {
		return n.Local
	}
	return "{" + n.Space + "}" + n.Local
}

func renderStart(t xml.StartElement) string {
	var attrs []string
	for _, a := range t.Attr {
		if a.Name.Space == "xmlns" || (a.Name.Space == "" && a.Name.Local == "xmlns") {
			continue // namespace declaration: names already carry the URL
		}
		attrs = append(attrs, xname(a.Name)+"="+strconv.Quote(a.Value))
	}
	slices.Sort(attrs)
	var b strings.Builder
	b.WriteString("<" + xname(t.Name))
	for _, a := range attrs {
		b.WriteString(" " + a)
	}
	b.WriteString(">")
	return b.String()
}

func compareXML(ra, rb []byte) *diff {
	a, errA := parseXML(ra)
	b, errB := parseXML(rb)
	switch {
	case errA != nil && errB != nil:
		return &diff{reason: "neither response is valid XML"}
	case errA != nil:
		return &diff{reason: "response A is not valid XML: " + errA.Error()}
	case errB != nil:
		return &diff{reason: "response B is not valid XML: " + errB.Error()}
	}
	for i := 0; i < len(a) || i < len(b); i++ {
		switch {
		case i >= len(a):
			return &diff{path: b[i].path, reason: b[i].path + ": end of document vs " + short(b[i].text, 80), offA: len(ra), offB: b[i].off}
		case i >= len(b):
			return &diff{path: a[i].path, reason: a[i].path + ": " + short(a[i].text, 80) + " vs end of document", offA: a[i].off, offB: len(rb)}
		case a[i].text != b[i].text:
			p := a[i].path
			return &diff{path: p, reason: p + ": " + short(a[i].text, 80) + " vs " + short(b[i].text, 80), offA: a[i].off, offB: b[i].off}
		}
	}
	return nil
}
