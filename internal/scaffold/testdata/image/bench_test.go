package main

import "testing"

// BenchmarkIgnored does not make this a gobench project: its Dockerfile
// wins.
func BenchmarkIgnored(b *testing.B) {
	for b.Loop() {
	}
}
