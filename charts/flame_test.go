package charts

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
)

// flameXML parses an SVG and returns its rects' fills and its titles.
func flameXML(t *testing.T, svg []byte) (fills, titles []string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	inTitle := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			switch e.Name.Local {
			case "rect":
				for _, a := range e.Attr {
					if a.Name.Local == "fill" {
						fills = append(fills, a.Value)
					}
				}
			case "title":
				inTitle = true
			}
		case xml.CharData:
			if inTitle {
				titles = append(titles, string(e))
			}
		case xml.EndElement:
			inTitle = false
		}
	}
}

func TestFlame(t *testing.T) {
	hostile := `<script>alert("x")</script> & co`
	root := &FlameNode{Name: "all", Base: 4e6, Cand: 11.5e6, Children: []*FlameNode{
		{Name: "main", Base: 4e6, Cand: 11.5e6, Children: []*FlameNode{
			{Name: "search", Base: 2e6, Cand: 10e6},
			{Name: hostile, Base: 2e6, Cand: 1.5e6},
		}},
	}}
	var buf bytes.Buffer
	if err := (Flame{Title: "search c=1: " + hostile, Unit: "ns", Root: root, Floor: 1e5}).SVG(&buf); err != nil {
		t.Fatal(err)
	}
	svg := buf.Bytes()
	if bytes.Contains(svg, []byte("<script")) {
		t.Fatalf("a name reached the SVG unescaped:\n%s", svg)
	}
	fills, titles := flameXML(t, svg)
	// background, then all, main, search, hostile.
	if len(fills) != 5 {
		t.Fatalf("fills %q", fills)
	}
	// all and main did no work of their own: grey; search's own grew by
	// 8 ms, the most: the strongest red; the hostile one fell by 0.5 ms.
	if fills[1] != "#d9d9d9" || fills[2] != "#d9d9d9" || fills[3] != "#e61e1e" || !strings.HasSuffix(fills[4], "e6") {
		t.Errorf("fills %q", fills)
	}
	var tip string
	for _, s := range titles {
		if strings.HasPrefix(s, "search —") {
			tip = s
		}
	}
	if want := "search — total: baseline 2.000 ms, candidate 10.00 ms (+400.0%); own: baseline 2.000 ms, candidate 10.00 ms (+400.0%)"; tip != want {
		t.Errorf("search's tooltip %q, want %q", tip, want)
	}
	if !strings.Contains(string(svg), "&lt;script&gt;") {
		t.Errorf("the hostile name is not shown escaped")
	}
}

// A change within the floor is grey; a tree too wide for the graph is cut
// at FlameMaxFrames; nothing to draw is an error.
func TestFlameBounds(t *testing.T) {
	root := &FlameNode{Name: "all", Base: 1, Cand: 1.05}
	var buf bytes.Buffer
	if err := (Flame{Unit: "ns", Root: root, Floor: 0.1}).SVG(&buf); err != nil {
		t.Fatal(err)
	}
	if fills, _ := flameXML(t, buf.Bytes()); len(fills) != 2 || fills[1] != "#d9d9d9" {
		t.Errorf("within the floor: fills %q", fills)
	}

	wide := &FlameNode{Name: "all"}
	for range 3 * FlameMaxFrames {
		c := &FlameNode{Name: "f", Base: 1, Cand: 1}
		wide.Children = append(wide.Children, c)
		wide.Base++
		wide.Cand++
	}
	buf.Reset()
	if err := (Flame{Unit: "ns", Root: wide, Width: 1 << 20}).SVG(&buf); err != nil {
		t.Fatal(err)
	}
	if fills, _ := flameXML(t, buf.Bytes()); len(fills) != FlameMaxFrames+1 {
		t.Errorf("%d rects, want %d frames and the background", len(fills), FlameMaxFrames+1)
	}

	if err := (Flame{Title: "x", Unit: "ns", Root: &FlameNode{Name: "all"}}).SVG(&buf); err == nil || !strings.Contains(err.Error(), "holds no CPU") {
		t.Errorf("empty: %v", err)
	}
}
