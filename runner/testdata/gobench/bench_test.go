package benchmod

import (
	"testing"

	"example.com/benchmod/internal/inject"
)

var (
	input = make([]int, 1024)
	sink  int
)

// BenchmarkSum is affected by the version of Sum.
func BenchmarkSum(b *testing.B) {
	inject.Maybe(b)
	b.SetBytes(int64(8 * len(input)))
	for range b.N {
		sink += Sum(input)
	}
	b.ReportMetric(float64(len(input)), "items/op")
}

// BenchmarkConst is not.
func BenchmarkConst(b *testing.B) {
	inject.Maybe(b)
	for i := range b.N {
		sink += i & 7
	}
}
