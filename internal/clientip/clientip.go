// Package clientip decides which address a request comes from: the
// connection's peer, unless that peer is a trusted proxy, in which case the
// rightmost untrusted address of X-Forwarded-For (CONTRACT §7). Anything a
// client can write is believed only as far as trusted proxies vouch for it.
package clientip

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Resolver finds the client address of a request. The zero Resolver trusts no
// proxy and always answers the connection's peer address.
type Resolver struct {
	// Trusted lists the proxies whose X-Forwarded-For is believed.
	Trusted []netip.Prefix
}

// ParseTrusted parses a comma- or space-separated list of CIDR prefixes and
// bare addresses ("10.0.0.0/8,127.0.0.1,::1"); a bare address is a /32 or
// /128. Prefixes are masked to their network ("10.1.2.3/8" is 10.0.0.0/8),
// IPv4-mapped IPv6 forms are unmapped, and an empty string yields nil.
func ParseTrusted(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		var p netip.Prefix
		if strings.Contains(f, "/") {
			pp, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("trusted proxy %q: not an IP address or CIDR prefix", f)
			}
			if a := pp.Addr(); a.Is4In6() && pp.Bits() >= 96 {
				pp = netip.PrefixFrom(a.Unmap(), pp.Bits()-96)
			}
			p = pp.Masked()
		} else {
			a, err := netip.ParseAddr(f)
			if err != nil || a.Zone() != "" {
				return nil, fmt.Errorf("trusted proxy %q: not an IP address or CIDR prefix", f)
			}
			a = a.Unmap()
			p = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, p)
	}
	return out, nil
}

// IsTrusted reports whether a is inside one of the trusted prefixes.
func (r Resolver) IsTrusted(a netip.Addr) bool {
	a = normalize(a)
	if !a.IsValid() {
		return false
	}
	for _, p := range r.Trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ClientIP returns the address the request comes from. It is the peer of
// the connection (r.RemoteAddr) unless that peer is trusted; then the
// X-Forwarded-For header lines (all of them, in order, each a comma list) are
// walked from the right, past trusted addresses, and the first untrusted
// address is the client. When every listed address is trusted the leftmost
// is the client. An entry that is not an address ends the walk: nothing to
// its left was vouched for by a trusted hop, so the last address before it
// (or the peer) is the answer. Addresses come back unmapped (IPv4-mapped IPv6
// as IPv4) and without zone. If RemoteAddr cannot be parsed the result is
// the invalid Addr.
func (r Resolver) ClientIP(req *http.Request) netip.Addr {
	peer := parseHostPort(req.RemoteAddr)
	if !peer.IsValid() || len(r.Trusted) == 0 || !r.IsTrusted(peer) {
		return peer
	}
	client := peer
	values := req.Header.Values("X-Forwarded-For")
	for i := len(values) - 1; i >= 0; i-- {
		list := values[i]
		for list != "" {
			var item string
			if j := strings.LastIndexByte(list, ','); j >= 0 {
				item, list = list[j+1:], list[:j]
			} else {
				item, list = list, ""
			}
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			a := parseForwarded(item)
			if !a.IsValid() {
				return client
			}
			client = a
			if !r.IsTrusted(a) {
				return client
			}
		}
	}
	return client
}

// BucketKey is the rate-limit key of a client address: an IPv4 address as
// is ("203.0.113.7"), an IPv6 address masked to its /64
// ("2001:db8:1:2::/64"), since one subscriber usually holds a whole /64.
// IPv4-mapped IPv6 addresses count as IPv4. The invalid Addr yields "".
func BucketKey(a netip.Addr) string {
	a = normalize(a)
	switch {
	case !a.IsValid():
		return ""
	case a.Is4():
		return a.String()
	default:
		p, _ := a.Prefix(64)
		return p.String()
	}
}

// normalize unmaps IPv4-mapped IPv6 and drops any zone so prefix checks and
// keys do not depend on how the address was written.
func normalize(a netip.Addr) netip.Addr {
	return a.Unmap().WithZone("")
}

// parseHostPort parses a RemoteAddr ("1.2.3.4:5678", "[::1]:80"), tolerating
// a bare address.
func parseHostPort(s string) netip.Addr {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return normalize(ap.Addr())
	}
	host := s
	if h, _, err := net.SplitHostPort(s); err == nil {
		host = h
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return normalize(a)
	}
	return netip.Addr{}
}

// parseForwarded parses one X-Forwarded-For entry: an address, possibly
// bracketed or with a port as some proxies write it.
func parseForwarded(s string) netip.Addr {
	if len(s) > 64 { // longer than any address with port: not one
		return netip.Addr{}
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return normalize(a)
	}
	return parseHostPort(s)
}
