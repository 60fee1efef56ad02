package store

import (
	"testing"

	"example.com/benchmod/internal/inject"
)

var sink int

// BenchmarkConst has the name of a benchmark of the root package.
func BenchmarkConst(b *testing.B) {
	inject.Maybe(b)
	for i := range b.N {
		sink += Key(i)
	}
}
