// Package netguard keeps the server's outgoing HTTP requests (webhook
// deliveries, mirror syncs) away from the network it runs in: loopback,
// private, link-local, unspecified and multicast addresses are refused
// when the connection is made, after name resolution, so a name that
// resolves to a public address when a URL is saved and to a private one
// later (DNS rebinding) is still refused. Operators who mean to reach such
// addresses turn the check off with a server flag.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"golang.org/x/net/http/httpproxy"
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
	return ControlAllowing(Allowance{}, flag)
}

// ControlAllowing is Control that lets through the private addresses a
// allows.
func ControlAllowing(a Allowance, flag string) func(network, address string, _ syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrPrivateTarget, address)
		}
		if !a.Permits(ap.Addr()) {
			return fmt.Errorf("%w: %s (start the server with %s to allow it)", ErrPrivateTarget, ap.Addr().Unmap(), flag)
		}
		return nil
	}
}

// Dialer returns a dialer with the connect timeout; unless allowPrivate,
// it refuses private addresses (see Control; flag names the server flag
// that allows them).
func Dialer(timeout time.Duration, allowPrivate bool, flag string) *net.Dialer {
	return DialerAllowing(timeout, Allowance{All: allowPrivate}, flag)
}

// DialerAllowing is Dialer for an Allowance.
func DialerAllowing(timeout time.Duration, a Allowance, flag string) *net.Dialer {
	d := &net.Dialer{Timeout: timeout}
	if !a.All {
		d.Control = ControlAllowing(a, flag)
	}
	return d
}

// Transport returns an HTTP transport whose every connection goes through
// Dialer (the address checked after name resolution, so DNS rebinding
// cannot reach an internal address), with no proxy (a proxy would make
// every target look like the proxy's address) and every phase bounded by
// timeout.
func Transport(timeout time.Duration, allowPrivate bool, flag string) *http.Transport {
	return transport(timeout, Allowance{All: allowPrivate}, flag)
}

// TransportAllowing is Transport for an Allowance: the private addresses
// it allows are reached, others refused.
func TransportAllowing(timeout time.Duration, a Allowance, flag string) *http.Transport {
	return transport(timeout, a, flag)
}

func transport(timeout time.Duration, a Allowance, flag string) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           DialerAllowing(timeout, a, flag).DialContext,
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
	}
}

// Upstream returns Transport's transport for fetches from upstreams
// (trusted publishers' issuers today; CONTRACT §18 decision 5), which also
// honours HTTPS_PROXY, HTTP_PROXY and NO_PROXY: the target itself is
// checked first (its name resolved, and refused when an address is
// private unless allowPrivate), then the request goes through the proxy
// the environment names. The proxy is the operator's own configuration,
// so its address is dialled even when it is private.
func Upstream(timeout time.Duration, allowPrivate bool, flag string) *http.Transport {
	return upstream(timeout, Allowance{All: allowPrivate}, flag, httpproxy.FromEnvironment(), net.DefaultResolver)
}

// UpstreamAllowing is Upstream for an Allowance: the private addresses it
// allows are reached, others refused (the target's resolved addresses
// and every redirect's alike).
func UpstreamAllowing(timeout time.Duration, a Allowance, flag string) *http.Transport {
	return upstream(timeout, a, flag, httpproxy.FromEnvironment(), net.DefaultResolver)
}

func upstream(timeout time.Duration, a Allowance, flag string, env *httpproxy.Config, resolver *net.Resolver) *http.Transport {
	allowPrivate := a.All
	t := transport(timeout, a, flag)
	proxyFor := env.ProxyFunc()
	proxies := map[string]bool{}
	for _, raw := range []string{env.HTTPProxy, env.HTTPSProxy} {
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			proxies[hostPort(u)] = true
		}
	}
	t.Proxy = func(req *http.Request) (*url.URL, error) {
		pu, err := proxyFor(req.URL)
		if err != nil {
			return nil, err
		}
		if pu == nil {
			// Direct: the dialer checks the address it connects to,
			// except the proxy's own, which it dials unchecked; a target
			// naming the proxy's address is checked here instead.
			if !allowPrivate && proxies[hostPort(req.URL)] {
				return nil, checkHost(req.Context(), resolver, a, req.URL.Hostname(), flag)
			}
			return nil, nil
		}
		if !allowPrivate {
			if err := checkHost(req.Context(), resolver, a, req.URL.Hostname(), flag); err != nil {
				return nil, err
			}
		}
		return pu, nil
	}
	guarded := t.DialContext
	open := (&net.Dialer{Timeout: timeout}).DialContext
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if proxies[addr] {
			return open(ctx, network, addr)
		}
		return guarded(ctx, network, addr)
	}
	return t
}

// checkHost refuses host when it is, or resolves to, a private address.
func checkHost(ctx context.Context, resolver *net.Resolver, a Allowance, host, flag string) error {
	if ip, err := netip.ParseAddr(host); err == nil {
		if !a.Permits(ip) {
			return fmt.Errorf("%w: %s (start the server with %s to allow it)", ErrPrivateTarget, ip.Unmap(), flag)
		}
		return nil
	}
	addrs, err := resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return err
	}
	for _, ip := range addrs {
		if !a.Permits(ip) {
			return fmt.Errorf("%w: %s resolves to %s (start the server with %s to allow it)", ErrPrivateTarget, host, ip.Unmap(), flag)
		}
	}
	return nil
}

// hostPort is u's host:port, with the scheme's default port.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	port := "80"
	switch u.Scheme {
	case "https":
		port = "443"
	case "socks5", "socks5h":
		port = "1080"
	}
	return net.JoinHostPort(u.Hostname(), port)
}
