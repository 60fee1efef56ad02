package hidden

import "testing"

// BenchmarkHidden is skipped: hidden directories are not looked at.
func BenchmarkHidden(b *testing.B) {}
