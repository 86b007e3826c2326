package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrPrivateTarget is returned (wrapped) when a webhook URL resolves to a
// loopback, private, link-local or otherwise internal address and private
// targets are not allowed.
var ErrPrivateTarget = errors.New("refused to connect to a private address")

// sharedCGNAT is 100.64.0.0/10, carrier-grade NAT space, which IsPrivate
// does not cover.
var sharedCGNAT = netip.MustParsePrefix("100.64.0.0/10")

// PrivateAddr reports whether ip is an address a webhook must not reach
// without --allow-private-webhooks.
func PrivateAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() || sharedCGNAT.Contains(ip)
}

// NewClient returns the HTTP client deliveries use: the address is checked
// when the connection is made, after name resolution, so a name that
// resolves to a public address when the webhook is saved and to a private
// one later (DNS rebinding) is still refused; redirects are not followed;
// every phase is bounded by timeout.
func NewClient(allowPrivate bool, timeout time.Duration) *http.Client {
	d := &net.Dialer{Timeout: timeout}
	if !allowPrivate {
		d.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("%w: %s", ErrPrivateTarget, address)
			}
			if PrivateAddr(ap.Addr()) {
				return fmt.Errorf("%w: %s (start the server with --allow-private-webhooks to allow it)", ErrPrivateTarget, ap.Addr())
			}
			return nil
		}
	}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		TLSHandshakeTimeout:   timeout,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
	}
	return &http.Client{
		Transport:     tr,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
