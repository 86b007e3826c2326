// Package harness drives a chart server over HTTP for benchmarks: it starts
// `chartctl serve` (or targets a running server), uploads a corpus, puts
// bounded load on the read paths, and renders the results as Markdown. It
// only ever talks to loopback addresses.
package harness

import (
	"fmt"
	"net/netip"
	"net/url"
	"strings"
)

// CheckLoopback parses raw as an http or https URL and refuses any whose
// host is not a loopback address (127.0.0.0/8, ::1, or the name localhost):
// load generation must never leave the machine. Host names other than
// localhost are refused without resolving them.
func CheckLoopback(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("url %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q: scheme must be http or https", raw)
	}
	if u.User != nil {
		return nil, fmt.Errorf("url %q: credentials do not belong in the URL", raw)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("url %q: no host", raw)
	}
	if !IsLoopbackHost(host) {
		return nil, fmt.Errorf("url %q: host %q is not a loopback address (127.0.0.0/8, ::1, localhost); the benchmark only targets this machine", raw, host)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// IsLoopbackHost reports whether host (without port or brackets) is a
// loopback IP address or "localhost".
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return false
	}
	return a.Unmap().IsLoopback()
}
