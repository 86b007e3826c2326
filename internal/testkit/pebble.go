package testkit

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// FreePort returns a loopback port nothing listens on right now.
func FreePort(tb testing.TB) int {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Pebble is a running Pebble ACME test server on loopback.
type Pebble struct {
	// Directory is the ACME directory URL.
	Directory string
	// Client trusts Pebble's own HTTPS listener.
	Client *http.Client
	// ListenerCA is the PEM file of the CA of Pebble's listener (for
	// SSL_CERT_FILE in a child process).
	ListenerCA string

	mgmt string
}

// StartPebble runs the real Pebble (CHARTCTL_PEBBLE, else pebble on PATH;
// skipping or failing as Tool does) validating challenges on tlsPort
// (TLS-ALPN-01) and httpPort (HTTP-01) of 127.0.0.1: its DNS resolver is a
// loopback responder that answers every name with 127.0.0.1.
func StartPebble(t testing.TB, tlsPort, httpPort int) *Pebble {
	t.Helper()
	bin := Tool(t, "CHARTCTL_PEBBLE", "pebble")
	ca := NewCA(t)
	dir := t.TempDir()
	cert, key, _ := ca.Issue(t, "localhost", "127.0.0.1")
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	WriteFileAtomic(t, certFile, cert)
	WriteFileAtomic(t, keyFile, key)
	listen, mgmt := FreePort(t), FreePort(t)
	conf := map[string]any{"pebble": map[string]any{
		"listenAddress":           fmt.Sprintf("127.0.0.1:%d", listen),
		"managementListenAddress": fmt.Sprintf("127.0.0.1:%d", mgmt),
		"certificate":             certFile,
		"privateKey":              keyFile,
		"httpPort":                httpPort,
		"tlsPort":                 tlsPort,
		"ocspResponderURL":        "",
		"retryAfter":              map[string]int{"authz": 1, "order": 1},
	}}
	b, _ := json.Marshal(conf)
	confFile := filepath.Join(dir, "pebble.json")
	if err := os.WriteFile(confFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-config", confFile, "-dnsserver", startDNS(t))
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("pebble output:\n%s", logs.String())
		}
	})
	p := &Pebble{
		Directory:  fmt.Sprintf("https://127.0.0.1:%d/dir", listen),
		mgmt:       fmt.Sprintf("https://127.0.0.1:%d", mgmt),
		Client:     &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool}}},
		ListenerCA: ca.CertFile,
	}
	// Wait until Pebble answers (it starts in well under a second).
	for i := 0; ; i++ {
		resp, err := p.Client.Get(p.Directory)
		if err == nil {
			resp.Body.Close()
			break
		}
		if i == 200 {
			t.Fatalf("pebble did not start: %v\n%s", err, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return p
}

// Roots returns a pool with the root that Pebble issues under.
func (p *Pebble) Roots(t testing.TB) *x509.CertPool {
	t.Helper()
	resp, err := p.Client.Get(p.mgmt + "/roots/0")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		t.Fatalf("pebble root: %s", b)
	}
	return pool
}

// startDNS serves DNS over TCP on loopback for Pebble's validation
// authority: every A query is answered 127.0.0.1, every other query with
// no records. (autocert wants a dotted name, and no dotted name resolves
// to loopback without touching the host's resolver configuration.)
func startDNS(t testing.TB) string {
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
