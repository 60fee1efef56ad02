package target

import "testing"

func TestStatField(t *testing.T) {
	t.Parallel()
	b := []byte("anon 10\nfile 20\ninactive_file 7\nactive_file 13\n")
	if n, ok := statField(b, "inactive_file"); !ok || n != 7 {
		t.Errorf("inactive_file = %d %v", n, ok)
	}
	if n, ok := statField(b, "file"); !ok || n != 20 {
		t.Errorf("file = %d %v", n, ok)
	}
	if _, ok := statField(b, "missing"); ok {
		t.Error("missing key found")
	}
}
