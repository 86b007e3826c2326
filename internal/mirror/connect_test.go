package mirror

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/netguard"
)

// TestConnectError: a failure to reach an upstream reads "could not
// connect to HOST: REASON", never naming the server's resolver or an
// address the name resolved to; other errors are left as they are.
func TestConnectError(t *testing.T) {
	get := func(t *testing.T, hc *http.Client, u string) error {
		t.Helper()
		resp, err := hc.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Fatalf("GET %s answered %s", u, resp.Status)
		}
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	// A server that accepts and never answers.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { silent.Close() })

	cases := []struct {
		name string
		err  func(t *testing.T) error
		want string
	}{
		{"refused", func(t *testing.T) error {
			return get(t, NewClient(netguard.Allowance{All: true}, 5*time.Second), "http://"+closed+"/index.yaml")
		},
			"could not connect to " + closed + ": connection refused"},
		{"private", func(t *testing.T) error {
			_, port, _ := net.SplitHostPort(closed)
			return get(t, NewClient(netguard.Allowance{}, 5*time.Second), "http://localhost:"+port+"/index.yaml")
		}, "could not connect to localhost:" + strings.Split(closed, ":")[1] + ": it is at a private or loopback address, which this server does not reach (its operator can allow it with --allow-private-upstreams)"},
		{"no answer", func(t *testing.T) error {
			return get(t, NewClient(netguard.Allowance{All: true}, 200*time.Millisecond), "http://"+silent.Addr().String()+"/index.yaml")
		}, "could not connect to " + silent.Addr().String() + ": timed out"},
		{"no such host", func(*testing.T) error {
			// As Go words it on a host using systemd-resolved.
			return &url.Error{Op: "Get", URL: "https://charts.example.com/index.yaml", Err: &net.OpError{Op: "dial", Net: "tcp",
				Err: &net.DNSError{Err: "no such host", Name: "charts.example.com", Server: "127.0.0.53:53", IsNotFound: true}}}
		}, "could not connect to charts.example.com: no such host"},
		{"resolver down", func(*testing.T) error {
			return &url.Error{Op: "Get", URL: "https://charts.example.com:8443/index.yaml", Err: &net.OpError{Op: "dial", Net: "tcp",
				Err: &net.DNSError{Err: "read udp 10.1.2.3:5353->10.0.0.2:53: i/o timeout", Name: "charts.example.com", Server: "10.0.0.2:53", IsTimeout: true}}}
		}, "could not connect to charts.example.com:8443: timed out looking up the host"},
		{"not a connection", func(*testing.T) error { return errors.New("the index lists no URL for a 1.0.0") }, "the index lists no URL for a 1.0.0"},
		{"an answer", func(*testing.T) error {
			return &url.Error{Op: "Get", URL: "https://charts.example.com/index.yaml", Err: errors.New("stopped after 10 redirects")}
		}, `Get "https://charts.example.com/index.yaml": stopped after 10 redirects`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := connectError(tc.err(t)).Error(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}

	// A real lookup of a name that cannot exist: whatever the resolver
	// here answers, the message names the host and not the resolver.
	err = connectError(get(t, NewClient(netguard.Allowance{All: true}, 5*time.Second), "http://chartctl-test.invalid/index.yaml"))
	if msg := err.Error(); !strings.HasPrefix(msg, "could not connect to chartctl-test.invalid: ") || strings.Contains(msg, "lookup") || strings.Contains(msg, ":53") {
		t.Errorf("a name that cannot be found: %q", msg)
	}
}

// --allow-private-upstreams as a CIDR list reaches the private addresses
// it names and no others, for mirrors as for proxies.
func TestClientAllowsListedRanges(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("entries: {}\n")) }))
	t.Cleanup(srv.Close)
	get := func(a netguard.Allowance) error {
		resp, err := NewClient(a, 5*time.Second).Get(srv.URL + "/index.yaml")
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(netguard.Allowance{Ranges: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}); err != nil {
		t.Fatalf("127.0.0.0/8 listed: %v", err)
	}
	if err := get(netguard.Allowance{Ranges: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}); err == nil || !strings.Contains(err.Error(), "--allow-private-upstreams") {
		t.Fatalf("only 10.0.0.0/8 listed: %v, want the private-address refusal", err)
	}
}
