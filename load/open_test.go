package load

import (
	"testing"
	"time"
)

func TestScheduleWithin(t *testing.T) {
	t.Parallel()
	origin := time.Unix(1000, 0)
	s := newSchedule(origin, origin, 1000)
	for _, c := range []struct {
		from, end time.Duration
		want      int64
	}{
		{0, time.Second, 1000},
		{500 * time.Millisecond, time.Second, 500},
		{-time.Second, time.Second, 2000},       // the warmup's too
		{time.Millisecond, time.Millisecond, 0}, // an empty window
		{time.Millisecond, 2 * time.Millisecond, 1},
		{time.Millisecond + 1, 2*time.Millisecond + 1, 1},
		{2 * time.Second, time.Second, 0}, // ends before it starts
	} {
		if got := s.within(origin.Add(c.from), origin.Add(c.end)); got != c.want {
			t.Errorf("within(%v, %v) = %d, want %d", c.from, c.end, got, c.want)
		}
	}
	// A rate that does not divide a second: 3 a second is every 333.3 ms.
	s = newSchedule(origin, origin, 3)
	if got := s.within(origin, origin.Add(10*time.Second)); got != 30 {
		t.Errorf("3/s over 10s: %d calls, want 30", got)
	}
	if got, want := s.at(3), origin.Add(time.Second); got.Sub(want).Abs() > time.Microsecond {
		t.Errorf("call 3 at %v, want %v", got.Sub(origin), want.Sub(origin))
	}
	// take hands the times out in order, each once, from the start on:
	// a warmup of a second at 10 a second is 10 calls before the origin.
	s = newSchedule(origin, origin.Add(-time.Second), 10)
	for k := range 15 {
		if got := s.take(); !got.Equal(s.at(int64(k - 10))) {
			t.Fatalf("take %d: %v", k, got.Sub(origin))
		}
	}
}
