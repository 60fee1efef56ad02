package gen

import "testing"

// BenchmarkOtherModule is skipped: a nested module is not this one.
func BenchmarkOtherModule(b *testing.B) {}
