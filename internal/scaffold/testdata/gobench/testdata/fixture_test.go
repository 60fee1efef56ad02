package testdata

import "testing"

// BenchmarkFixture is skipped: testdata/ is not a package.
func BenchmarkFixture(b *testing.B) {}
