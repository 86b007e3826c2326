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
