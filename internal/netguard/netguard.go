// Package netguard keeps the server's outgoing HTTP requests (webhook
// deliveries, mirror syncs) away from the network it runs in: loopback,
// private, link-local, unspecified and multicast addresses are refused
// when the connection is made, after name resolution, so a name that
// resolves to a public address when a URL is saved and to a private one
// later (DNS rebinding) is still refused. Operators who mean to reach such
// addresses turn the check off with a server flag.
package netguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrPrivateTarget is returned (wrapped) when a connection would reach a
// loopback, private, link-local or otherwise internal address and such
// targets are not allowed.
var ErrPrivateTarget = errors.New("refused to connect to a private address")

// sharedCGNAT is 100.64.0.0/10, carrier-grade NAT space, which IsPrivate
// does not cover.
var sharedCGNAT = netip.MustParsePrefix("100.64.0.0/10")

// PrivateAddr reports whether ip is an address outgoing requests must not
// reach unless an operator allows it: loopback, private (RFC 1918, RFC
// 4193), carrier-grade NAT, link-local, unspecified, multicast, or not a
// valid address at all. IPv4-mapped IPv6 addresses are judged as IPv4.
func PrivateAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || sharedCGNAT.Contains(ip)
}

// Control returns a net.Dialer Control function that refuses connections
// to a PrivateAddr. flag names the server flag that allows them, for the
// message ("--allow-private-webhooks").
func Control(flag string) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrPrivateTarget, address)
		}
		if PrivateAddr(ap.Addr()) {
			return fmt.Errorf("%w: %s (start the server with %s to allow it)", ErrPrivateTarget, ap.Addr().Unmap(), flag)
		}
		return nil
	}
}

// Dialer returns a dialer with the connect timeout; unless allowPrivate,
// it refuses private addresses (see Control; flag names the server flag
// that allows them).
func Dialer(timeout time.Duration, allowPrivate bool, flag string) *net.Dialer {
	d := &net.Dialer{Timeout: timeout}
	if !allowPrivate {
		d.Control = Control(flag)
	}
	return d
}

// Transport returns an HTTP transport whose every connection goes through
// Dialer (the address checked after name resolution, so DNS rebinding
// cannot reach an internal address), with no proxy (a proxy would make
// every target look like the proxy's address) and every phase bounded by
// timeout.
func Transport(timeout time.Duration, allowPrivate bool, flag string) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           Dialer(timeout, allowPrivate, flag).DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
	}
}
