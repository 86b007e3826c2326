package tlsconfig_test

import (
	"encoding/binary"
	"io"
	"net"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// startDNS serves DNS over TCP on loopback for Pebble's validation
// authority: every A query is answered 127.0.0.1, every other query with
// no records. (autocert wants a dotted name, and no dotted name resolves
// to loopback without touching the host's resolver configuration.)
func startDNS(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go serveDNS(c)
		}
	}()
	return ln.Addr().String()
}

func serveDNS(c net.Conn) {
	defer c.Close()
	for {
		var n uint16
		if err := binary.Read(c, binary.BigEndian, &n); err != nil {
			return
		}
		buf := make([]byte, n)
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf)
		if err != nil {
			return
		}
		q, err := p.Question()
		if err != nil {
			return
		}
		b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RecursionAvailable: true})
		b.EnableCompression()
		_ = b.StartQuestions()
		_ = b.Question(q)
		_ = b.StartAnswers()
		if q.Type == dnsmessage.TypeA {
			_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}})
		}
		msg, err := b.Finish()
		if err != nil {
			return
		}
		if err := binary.Write(c, binary.BigEndian, uint16(len(msg))); err != nil {
			return
		}
		if _, err := c.Write(msg); err != nil {
			return
		}
	}
}
