package netguard

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Allowance says which private addresses (PrivateAddr) outgoing requests
// may reach anyway: all of them, none (the zero Allowance), or those in
// Ranges. It is the value of --allow-private-upstreams, which takes
// true/false or a comma-separated CIDR list (CONTRACT §18).
type Allowance struct {
	// All allows every private address.
	All bool
	// Ranges allows the private addresses they contain.
	Ranges []netip.Prefix
}

// ParseAllowance reads "true", "false", "" (false) or a comma-separated
// list of CIDR prefixes ("10.0.0.0/8,fd00::/8"; a bare address is its
// own /32 or /128).
func ParseAllowance(s string) (Allowance, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Allowance{}, nil
	}
	if b, err := strconv.ParseBool(s); err == nil {
		return Allowance{All: b}, nil
	}
	var a Allowance
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		p, err := netip.ParsePrefix(part)
		if err != nil {
			ip, aerr := netip.ParseAddr(part)
			if aerr != nil {
				return Allowance{}, fmt.Errorf("%q is neither true, false nor a CIDR range such as 10.0.0.0/8", part)
			}
			p = netip.PrefixFrom(ip, ip.BitLen())
		}
		if p.Addr().Is4In6() {
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		a.Ranges = append(a.Ranges, p.Masked())
	}
	return a, nil
}

// String writes a as ParseAllowance reads it.
func (a Allowance) String() string {
	if a.All {
		return "true"
	}
	if len(a.Ranges) == 0 {
		return "false"
	}
	parts := make([]string, len(a.Ranges))
	for i, p := range a.Ranges {
		parts[i] = p.String()
	}
	return strings.Join(parts, ",")
}

// Any reports whether a allows some private address.
func (a Allowance) Any() bool { return a.All || len(a.Ranges) > 0 }

// Permits reports whether ip may be reached: it is not private, or a
// allows it.
func (a Allowance) Permits(ip netip.Addr) bool {
	if !PrivateAddr(ip) || a.All {
		return true
	}
	ip = ip.Unmap()
	for _, p := range a.Ranges {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
