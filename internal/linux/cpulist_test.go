package linux

import (
	"slices"
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []int
		text string // FormatCPUList of the result
	}{
		{"", nil, ""},
		{"0", []int{0}, "0"},
		{"3", []int{3}, "3"},
		{"0-3,5", []int{0, 1, 2, 3, 5}, "0-3,5"},
		{"0,1,2,5-7", []int{0, 1, 2, 5, 6, 7}, "0-2,5-7"},
		{"0-1,2-3", []int{0, 1, 2, 3}, "0-3"},
		{"2-2,4", []int{2, 4}, "2,4"},
		{"007", []int{7}, "7"},
		{"65535", []int{65535}, "65535"},
		{"65534-65535", []int{65534, 65535}, "65534-65535"},
	} {
		got, err := ParseCPUList(tc.in)
		if err != nil {
			t.Errorf("ParseCPUList(%q): %v", tc.in, err)
			continue
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ParseCPUList(%q) = %v, want %v", tc.in, got, tc.want)
		}
		if s := FormatCPUList(got); s != tc.text {
			t.Errorf("FormatCPUList(ParseCPUList(%q)) = %q, want %q", tc.in, s, tc.text)
		}
	}
	const syntax = ` is not a cpuset (want e.g. "0-3,5")`
	for _, tc := range []struct{ in, want string }{
		{"x", `"x"` + syntax},
		{" 0", `" 0"` + syntax},
		{"0-3\n", `"0-3\n"` + syntax}, // a file's newline is the reader's to trim
		{"0, 1", `"0, 1"` + syntax},
		{"-1", `"-1"` + syntax},
		{"1-", `"1-"` + syntax},
		{"-", `"-"` + syntax},
		{",", `","` + syntax},
		{"0,,1", `"0,,1"` + syntax},
		{"0,", `"0,"` + syntax},
		{"+1", `"+1"` + syntax},
		{"1.5", `"1.5"` + syntax},
		{"0-1-2", `"0-1-2"` + syntax},
		{"0x1", `"0x1"` + syntax},
		{"3-1", `"3-1": range 3-1 runs backwards`},
		{"0,0", `"0,0": 0 is not after the previous CPUs (want ascending, e.g. "0-3,5")`},
		{"5,0-3", `"5,0-3": 0-3 is not after the previous CPUs (want ascending, e.g. "0-3,5")`},
		{"0-5,4-7", `"0-5,4-7": 4-7 is not after the previous CPUs (want ascending, e.g. "0-3,5")`},
		{"65536", `"65536": CPU 65536 is beyond 65535, the most a cpuset may name`},
		{"0-1000000000", `"0-1000000000": CPU 1000000000 is beyond 65535, the most a cpuset may name`},
		{"99999999999999999999999", `"99999999999999999999999": CPU 99999999999999999999999 is beyond 65535, the most a cpuset may name`},
	} {
		got, err := ParseCPUList(tc.in)
		if err == nil {
			t.Errorf("ParseCPUList(%q) = %v, want an error", tc.in, got)
		} else if err.Error() != tc.want {
			t.Errorf("ParseCPUList(%q): %v\nwant %s", tc.in, err, tc.want)
		}
	}
}

func TestParseCPUListAll(t *testing.T) {
	t.Parallel()
	got, err := ParseCPUList("0-65535")
	if err != nil || len(got) != MaxCPU || got[MaxCPU-1] != MaxCPU-1 {
		t.Fatalf("ParseCPUList(0-65535) = %d CPUs, %v", len(got), err)
	}
	if s := FormatCPUList(got); s != "0-65535" {
		t.Errorf("FormatCPUList = %q", s)
	}
}

func TestFormatCPUList(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{4}, "4"},
		{[]int{0, 1}, "0-1"},
		{[]int{0, 2, 3, 4, 7, 9, 10}, "0,2-4,7,9-10"},
		{[]int{1, 1, 2, 2, 5, 5}, "1-2,5"},
	} {
		if got := FormatCPUList(tc.in); got != tc.want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"", "0", "0-3,5", "0-1,2-3", "007", "3-1", "0,0", "65535", "65536", "0-65535", " 1", "1,", "+1", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil {
			if cpus != nil {
				t.Fatalf("ParseCPUList(%q) = %v with error %v", s, cpus, err)
			}
			if !strings.Contains(err.Error(), "cpuset") && !strings.Contains(err.Error(), "CPU") && !strings.Contains(err.Error(), "backwards") {
				t.Fatalf("ParseCPUList(%q): unexplained error %v", s, err)
			}
			return
		}
		if len(cpus) > MaxCPU {
			t.Fatalf("ParseCPUList(%q) = %d CPUs, more than %d", s, len(cpus), MaxCPU)
		}
		for i, c := range cpus {
			if c < 0 || c >= MaxCPU || i > 0 && c <= cpus[i-1] {
				t.Fatalf("ParseCPUList(%q) = %v: not ascending CPUs below %d", s, cpus, MaxCPU)
			}
		}
		text := FormatCPUList(cpus)
		again, err := ParseCPUList(text)
		if err != nil || !slices.Equal(again, cpus) {
			t.Fatalf("ParseCPUList(%q) = %v, formats as %q, which parses as %v, %v", s, cpus, text, again, err)
		}
		if len(text) > len(s) {
			t.Fatalf("FormatCPUList(ParseCPUList(%q)) = %q, longer than the input", s, text)
		}
	})
}
