package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/netguard"
)

func TestPrivateAddr(t *testing.T) {
	for addr, private := range map[string]bool{
		"127.0.0.1":        true,
		"::1":              true,
		"10.1.2.3":         true,
		"172.16.0.1":       true,
		"192.168.1.1":      true,
		"100.64.0.1":       true,
		"169.254.169.254":  true, // cloud metadata
		"fe80::1":          true,
		"fd00::1":          true,
		"0.0.0.0":          true,
		"::":               true,
		"224.0.0.1":        true,
		"ff02::1":          true,
		"::ffff:127.0.0.1": true,
		"::ffff:10.0.0.1":  true,
		"8.8.8.8":          false,
		"2001:4860::8888":  false,
		"::ffff:1.1.1.1":   false,
	} {
		if got := netguard.PrivateAddr(netip.MustParseAddr(addr)); got != private {
			t.Errorf("PrivateAddr(%s) = %v, want %v", addr, got, private)
		}
	}
	if !netguard.PrivateAddr(netip.Addr{}) {
		t.Error("the zero address must count as private")
	}
}

// TestDialerRefusesLoopback dials a real listener on 127.0.0.1: refused,
// naming the flag, without the allowance; connected with it.
func TestDialerRefusesLoopback(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ctx := context.Background()
	_, err = netguard.Dialer(5*time.Second, false, "--allow-private-things").DialContext(ctx, "tcp", ln.Addr().String())
	if !errors.Is(err, netguard.ErrPrivateTarget) || !strings.Contains(err.Error(), "--allow-private-things") {
		t.Fatalf("dial loopback without the allowance: %v", err)
	}
	// A name that resolves to loopback is refused as well: the check
	// sees the resolved address.
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	_, err = netguard.Dialer(5*time.Second, false, "--x").DialContext(ctx, "tcp", net.JoinHostPort("localhost", port))
	if !errors.Is(err, netguard.ErrPrivateTarget) {
		t.Fatalf("dial localhost without the allowance: %v", err)
	}
	c, err := netguard.Dialer(5*time.Second, true, "--x").DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial loopback with the allowance: %v", err)
	}
	c.Close()
}

// TestAllowance reads --allow-private-upstreams values and checks that a
// CIDR list opens only its ranges.
func TestAllowance(t *testing.T) {
	for _, in := range []string{"", "false"} {
		a, err := netguard.ParseAllowance(in)
		if err != nil || a.Any() || a.Permits(netip.MustParseAddr("127.0.0.1")) || !a.Permits(netip.MustParseAddr("203.0.113.9")) {
			t.Errorf("netguard.ParseAllowance(%q) = %+v, %v", in, a, err)
		}
	}
	a, err := netguard.ParseAllowance("true")
	if err != nil || !a.All || !a.Permits(netip.MustParseAddr("10.1.2.3")) {
		t.Errorf("true = %+v, %v", a, err)
	}
	a, err = netguard.ParseAllowance("127.0.0.0/8, fd00::/8,192.168.1.7")
	if err != nil || a.String() != "127.0.0.0/8,fd00::/8,192.168.1.7/32" {
		t.Fatalf("list = %v, %v", a, err)
	}
	for ip, want := range map[string]bool{"127.0.0.1": true, "::ffff:127.0.0.2": true, "fd00::1": true, "192.168.1.7": true,
		"192.168.1.8": false, "10.0.0.1": false, "169.254.169.254": false, "203.0.113.9": true} {
		if got := a.Permits(netip.MustParseAddr(ip)); got != want {
			t.Errorf("Permits(%s) = %v, want %v", ip, got, want)
		}
	}
	if _, err := netguard.ParseAllowance("10.0.0.0/8,nonsense"); err == nil || !strings.Contains(err.Error(), "nonsense") {
		t.Errorf("bad list: %v", err)
	}
	// A connection outside the ranges is refused by the dialer.
	ctl := netguard.ControlAllowing(a, "--allow-private-upstreams")
	if err := ctl("tcp4", "127.0.0.1:80", nil); err != nil {
		t.Errorf("allowed range refused: %v", err)
	}
	if err := ctl("tcp4", "10.0.0.1:80", nil); err == nil || !strings.Contains(err.Error(), "--allow-private-upstreams") {
		t.Errorf("outside range: %v", err)
	}
}
