package dep

import "testing"

// BenchmarkVendored is skipped: vendor/ is not the module's own.
func BenchmarkVendored(b *testing.B) {}
