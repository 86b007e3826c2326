package clientip

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestParseTrusted(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "", want: nil},
		{in: "10.0.0.0/8,127.0.0.1", want: []string{"10.0.0.0/8", "127.0.0.1/32"}},
		{in: " 10.1.2.3/8 , ::1 ", want: []string{"10.0.0.0/8", "::1/128"}},
		{in: "2001:db8::/32 192.168.0.0/16", want: []string{"2001:db8::/32", "192.168.0.0/16"}},
		{in: "::ffff:10.0.0.1", want: []string{"10.0.0.1/32"}},
		{in: "::ffff:10.0.0.0/104", want: []string{"10.0.0.0/8"}},
		{in: "10.0.0.0/33", wantErr: true},
		{in: "proxy.local", wantErr: true},
		{in: "10.0.0.1,nope", wantErr: true},
		{in: "fe80::1%eth0", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseTrusted(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("ParseTrusted(%q) = %v, want an error", tt.in, got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var gs []string
			for _, p := range got {
				gs = append(gs, p.String())
			}
			if !reflect.DeepEqual(gs, tt.want) {
				t.Fatalf("ParseTrusted(%q) = %v, want %v", tt.in, gs, tt.want)
			}
		})
	}
}

func mustResolver(tb testing.TB, trusted string) Resolver {
	tb.Helper()
	p, err := ParseTrusted(trusted)
	if err != nil {
		tb.Fatal(err)
	}
	return Resolver{Trusted: p}
}

func TestClientIP(t *testing.T) {
	tests := []struct {
		name    string
		trusted string
		remote  string
		xff     []string
		want    string
	}{
		{name: "no proxies trusted ignores the header", remote: "203.0.113.7:5000", xff: []string{"1.1.1.1"}, want: "203.0.113.7"},
		{name: "untrusted peer ignores the header", trusted: "10.0.0.0/8", remote: "203.0.113.7:5000", xff: []string{"1.1.1.1"}, want: "203.0.113.7"},
		{name: "trusted peer without header", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", want: "10.0.0.2"},
		{name: "trusted peer, one hop", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", xff: []string{"198.51.100.9"}, want: "198.51.100.9"},
		{name: "spoofed left entries are ignored", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", xff: []string{"1.1.1.1, 198.51.100.9"}, want: "198.51.100.9"},
		{name: "chain of trusted proxies", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", xff: []string{"6.6.6.6, 198.51.100.9, 10.0.0.5,10.0.0.4"}, want: "198.51.100.9"},
		{name: "several header lines", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", xff: []string{"6.6.6.6", "198.51.100.9", "10.0.0.5"}, want: "198.51.100.9"},
		{name: "all trusted gives the leftmost", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", xff: []string{"10.1.1.1, 10.0.0.5"}, want: "10.1.1.1"},
		{name: "garbage ends the walk", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", xff: []string{"6.6.6.6, garbage, 10.0.0.5"}, want: "10.0.0.5"},
		{name: "garbage rightmost keeps the peer", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", xff: []string{"6.6.6.6, unknown"}, want: "10.0.0.2"},
		{name: "empty items skipped", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", xff: []string{",, 198.51.100.9 ,,", ""}, want: "198.51.100.9"},
		{name: "entry with port", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", xff: []string{"198.51.100.9:1234"}, want: "198.51.100.9"},
		{name: "bracketed IPv6 with port", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", xff: []string{"[2001:db8::1]:443"}, want: "2001:db8::1"},
		{name: "IPv6 peer trusted", trusted: "::1", remote: "[::1]:8080", xff: []string{"2001:db8::7"}, want: "2001:db8::7"},
		{name: "mapped peer is unmapped", trusted: "127.0.0.1", remote: "[::ffff:127.0.0.1]:80", xff: []string{"::ffff:198.51.100.9"}, want: "198.51.100.9"},
		{name: "zoned peer", trusted: "fe80::/10", remote: "[fe80::1%eth0]:80", xff: []string{"198.51.100.9"}, want: "198.51.100.9"},
		{name: "huge entry is garbage", trusted: "10.0.0.0/8", remote: "10.0.0.2:5000", xff: []string{strings.Repeat("1", 500)}, want: "10.0.0.2"},
		{name: "unparsable peer", trusted: "10.0.0.0/8", remote: "pipe", xff: []string{"198.51.100.9"}, want: "invalid IP"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustResolver(t, tt.trusted)
			req := httptest.NewRequest(http.MethodGet, "/v1/search?q=x", nil)
			req.RemoteAddr = tt.remote
			for _, v := range tt.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			if got := r.ClientIP(req).String(); got != tt.want {
				t.Fatalf("ClientIP = %s, want %s", got, tt.want)
			}
		})
	}
}

// Over a real connection the peer is 127.0.0.1 and a forged header from an
// untrusted client changes nothing.
func TestClientIPOverHTTP(t *testing.T) {
	var got []string
	for _, trusted := range []string{"", "127.0.0.1"} {
		r := mustResolver(t, trusted)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			_, _ = w.Write([]byte(r.ClientIP(req).String()))
		}))
		req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Forwarded-For", "192.0.2.1")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		srv.Close()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(b))
	}
	if want := []string{"127.0.0.1", "192.0.2.1"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestBucketKey(t *testing.T) {
	tests := []struct{ in, want string }{
		{"203.0.113.7", "203.0.113.7"},
		{"::ffff:203.0.113.7", "203.0.113.7"},
		{"2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"},
		{"fe80::1%eth0", "fe80::/64"},
		{"::1", "::/64"},
	}
	for _, tt := range tests {
		if got := BucketKey(netip.MustParseAddr(tt.in)); got != tt.want {
			t.Errorf("BucketKey(%s) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := BucketKey(netip.Addr{}); got != "" {
		t.Errorf("BucketKey(invalid) = %q", got)
	}
}

func TestIsTrusted(t *testing.T) {
	r := mustResolver(t, "10.0.0.0/8,::1")
	for in, want := range map[string]bool{
		"10.2.3.4": true, "::ffff:10.2.3.4": true, "11.0.0.1": false, "::1": true, "::2": false,
	} {
		if got := r.IsTrusted(netip.MustParseAddr(in)); got != want {
			t.Errorf("IsTrusted(%s) = %v", in, got)
		}
	}
	if r.IsTrusted(netip.Addr{}) {
		t.Error("invalid address trusted")
	}
}

func FuzzClientIP(f *testing.F) {
	f.Add("10.0.0.2:1", "1.1.1.1, 10.0.0.3")
	f.Add("10.0.0.2:1", "[::1]:80,,garbage")
	r := Resolver{Trusted: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	f.Fuzz(func(t *testing.T, remote, xff string) {
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = remote
		req.Header.Set("X-Forwarded-For", xff)
		a := r.ClientIP(req)
		// The header is believed only from a trusted peer.
		if peer := parseHostPort(remote); !r.IsTrusted(peer) && a != peer {
			t.Fatalf("ClientIP = %s from untrusted peer %q", a, remote)
		}
		_ = BucketKey(a)
	})
}
