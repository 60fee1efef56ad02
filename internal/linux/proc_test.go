package linux

import (
	"reflect"
	"strings"
	"testing"
)

// statLine is a /proc/<pid>/stat line of Linux 6: 52 fields, a command
// name with spaces and parentheses, env_start and env_end at 50 and 51.
const statLine = "4242 (a b) (c)) S 7 4240 4240 0 -1 4194560 100 0 0 0 12 3 40 5 20 0 1 0 99 3133440 407 " +
	"18446744073709551615 93848225759232 93848225779113 140729934733600 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 " +
	"93848225795120 93848225796736 93848808763392 140729934739967 140729934739987 140729934739987 140729934741483 0\n"

func TestParseProcStat(t *testing.T) {
	t.Parallel()
	got, err := ParseProcStat([]byte(statLine))
	if err != nil {
		t.Fatal(err)
	}
	want := ProcStat{Comm: []byte("a b) (c)"), State: 'S', PPID: 7, PGRP: 4240, UTime: 12, STime: 3, CUTime: 40, CSTime: 5,
		StartTime: 99, EnvStart: 140729934739987, EnvEnd: 140729934741483, Fields: 52}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseProcStat =\n%+v\nwant\n%+v", got, want)
	}
	// Before Linux 3.5 the line ends at field 44: no environment bounds.
	end := strings.LastIndexByte(statLine, ')') + 1
	old := statLine[:end] + " " + strings.Join(strings.Fields(statLine[end:])[:44-2], " ") + "\n"
	got, err = ParseProcStat([]byte(old))
	if err != nil || got.Fields != 44 || got.EnvStart != 0 || got.EnvEnd != 0 || got.StartTime != 99 || string(got.Comm) != "a b) (c)" {
		t.Errorf("44 fields: %+v, %v", got, err)
	}
	for _, tc := range []struct{ in, err string }{
		{"", "no command name in parentheses"},
		{"1 x S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", "no command name in parentheses"},
		{"1 ) (x S 1 2", "no command name in parentheses"},
		{"1 (x) S 1 2", "5 fields, not the 22 or more of a Linux kernel"},
		{strings.Replace(statLine, ") S ", ") SS ", 1), `field 3: state "SS" is not one letter`},
		{strings.Replace(statLine, " 4240 4240 ", " x 4240 ", 1), `field 5: strconv.Atoi: parsing "x": invalid syntax`},
		{strings.Replace(statLine, " 12 3 40 5 ", " 12 3 -1 5 ", 1), `field 16: strconv.ParseUint: parsing "-1": invalid syntax`},
	} {
		if st, err := ParseProcStat([]byte(tc.in)); err == nil || err.Error() != tc.err {
			t.Errorf("ParseProcStat(%q) = %+v, %v; want error %s", tc.in, st, err, tc.err)
		}
	}
}

func BenchmarkParseProcStat(b *testing.B) {
	line := []byte(statLine)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseProcStat(line); err != nil {
			b.Fatal(err)
		}
	}
}
