package neterr_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/neterr"
	"github.com/chartctl/chartctl/internal/netguard"
)

// get sends GET url through a netguard transport, as webhook deliveries
// and mirror fetches do, and returns its error.
func get(t *testing.T, url string, allowPrivate bool, timeout time.Duration) error {
	t.Helper()
	c := &http.Client{Transport: netguard.Transport(timeout, allowPrivate, "--allow-private-test"), Timeout: timeout}
	resp, err := c.Get(url)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("GET %s succeeded", url)
	}
	return err
}

// TestDescribeRealFailures: errors of real connections are worded
// "could not connect to HOST: REASON", without the addresses, ports or
// error chains of the server's side.
func TestDescribeRealFailures(t *testing.T) {
	// A port nothing listens on any more.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	// A server that accepts and never answers.
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer silent.Close()
	host := strings.TrimPrefix(silent.URL, "http://")

	for _, c := range []struct {
		name, host string
		err        error
		want       string
	}{
		{"refused", closed, get(t, "http://"+closed+"/hook", true, 5*time.Second), "could not connect to " + closed + ": connection refused"},
		{"timeout", host, get(t, silent.URL+"/hook", true, 200*time.Millisecond), "could not connect to " + host + ": timed out"},
		{"private", host, get(t, silent.URL+"/hook", false, 5*time.Second), "could not connect to " + host + ": refused to connect to a private address"},
		{"no such host", "hooks.example.invalid", &net.DNSError{Err: "no such host", Name: "hooks.example.invalid", Server: "127.0.0.53:53", IsNotFound: true},
			"could not connect to hooks.example.invalid: no such host"},
	} {
		got := neterr.Describe(c.host, c.err)
		if got != c.want {
			t.Errorf("%s: %q (from %v), want %q", c.name, got, c.err, c.want)
		}
		if strings.Contains(got, "127.0.0.53") || strings.Contains(got, "dial tcp") || strings.Contains(got, "--allow-private-test") {
			t.Errorf("%s: %q shows the server's side", c.name, got)
		}
	}
}
