// Package loadtest has request sources for tests of the load generators:
// fixed sequences in place of a scenario's seeded streams, so that every
// count a test checks is known in advance.
package loadtest

import (
	"github.com/benchgate/benchgate/load"
)

// Seq yields Reqs in turn, then nil; with Loop it starts over.
type Seq struct {
	Reqs []load.Request
	Loop bool
	i    int
}

func (s *Seq) Next() *load.Request {
	if s.i == len(s.Reqs) {
		if !s.Loop || len(s.Reqs) == 0 {
			return nil
		}
		s.i = 0
	}
	s.i++
	return &s.Reqs[s.i-1]
}

// Finite gives every worker n requests: reqs over and over, cut at n.
func Finite(n int, reqs ...load.Request) func(worker int) load.Source {
	return func(int) load.Source {
		var all []load.Request
		for len(all) < n {
			all = append(all, reqs...)
		}
		return &Seq{Reqs: all[:n]}
	}
}

// Get is a GET of target in class.
func Get(class, target string) load.Request {
	return load.Request{Class: class, Method: "GET", Target: target}
}
