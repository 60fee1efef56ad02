package codec

import "testing"

func BenchmarkEncode(b *testing.B) {
	p := make([]byte, 1024)
	for b.Loop() {
		Encode(p)
	}
}

func BenchmarkEncodeSmall(b *testing.B) {
	p := make([]byte, 16)
	for b.Loop() {
		Encode(p)
	}
}

// Benchmarkhelper is no benchmark: go test wants an upper-case letter
// after Benchmark.
func Benchmarkhelper(b *testing.B) {}

func TestEncode(t *testing.T) {
	if got := string(Encode([]byte("ab"))); got != "aabb" {
		t.Fatalf("Encode(ab) = %q", got)
	}
}
