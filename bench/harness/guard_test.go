package harness

import "testing"

func TestCheckLoopback(t *testing.T) {
	tests := []struct {
		url  string
		ok   bool
		path string
	}{
		{"http://127.0.0.1:8080", true, ""},
		{"http://127.0.0.1:8080/", true, ""},
		{"http://127.1.2.3:80/prefix/", true, "/prefix"},
		{"https://localhost:8443", true, ""},
		{"http://LOCALHOST:1", true, ""},
		{"http://[::1]:8080", true, ""},
		{"http://[::ffff:127.0.0.1]:8080", true, ""},
		{"http://10.0.0.1:8080", false, ""},
		{"http://192.168.1.5", false, ""},
		{"http://[2001:db8::1]:80", false, ""},
		{"http://example.com", false, ""},
		{"http://localhost.example.com", false, ""},
		{"http://127.0.0.1.nip.io", false, ""},
		{"http://0.0.0.0:8080", false, ""},
		{"http://[fe80::1%25lo]:80", false, ""},
		{"ftp://127.0.0.1", false, ""},
		{"127.0.0.1:8080", false, ""},
		{"http://user:pw@127.0.0.1", false, ""},
		{"http://", false, ""},
		{"http://%zz", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			u, err := CheckLoopback(tt.url)
			if tt.ok != (err == nil) {
				t.Fatalf("CheckLoopback(%q) error = %v, want ok=%v", tt.url, err, tt.ok)
			}
			if tt.ok && u.Path != tt.path {
				t.Fatalf("path = %q, want %q", u.Path, tt.path)
			}
		})
	}
}
