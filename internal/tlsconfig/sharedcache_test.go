package tlsconfig_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/acme/autocert"

	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/tlsconfig"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// otherName is a second name both replicas serve, ordered while both ask
// for it at once.
const otherName = "mirror.chartctl.test"

// replica is one server's TLS side: its listener and, maybe, its HTTP-01
// challenge listener.
type replica struct {
	addr string
}

func startReplica(t *testing.T, p *testkit.Pebble, db *postgres.DB, box *secrets.Box, holder, httpAddr string, serveChallenges bool) replica {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tc, err := tlsconfig.New(tlsconfig.Options{
		ACMEDomains: []string{acmeName, otherName}, ACMEDirectory: p.Directory,
		ACMEHTTPAddr: httpAddr, HTTPClient: p.Client,
		Cache: &tlsconfig.SharedCache{Store: db, Box: box, Holder: holder, Poll: 50 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	if serveChallenges {
		stop, err := tc.ServeChallenges()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	hs := &http.Server{Handler: http.NotFoundHandler()}
	go func() { _ = hs.Serve(tc.Listener(ln)) }()
	t.Cleanup(func() { _ = hs.Close() })
	return replica{addr: ln.Addr().String()}
}

func leafFor(t *testing.T, addr, name string, roots *x509.CertPool) (*x509.Certificate, error) {
	conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Minute}, "tcp", addr, &tls.Config{RootCAs: roots, ServerName: name})
	if err != nil {
		return nil, fmt.Errorf("handshake with %s for %s: %w", addr, name, err)
	}
	defer conn.Close()
	return conn.ConnectionState().PeerCertificates[0], nil
}

// openShared opens a fresh PostgreSQL database and a secrets box, what
// replicas share.
func openShared(t *testing.T) (*postgres.DB, *secrets.Box) {
	t.Helper()
	db, err := postgres.Open(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	box, err := secrets.New(bytes.Repeat([]byte("k"), 32))
	if err != nil {
		t.Fatal(err)
	}
	return db, box
}

// TestACMESharedByReplicas runs two replicas on one PostgreSQL database:
// an HTTP-01 challenge of an order one replica placed is answered by the
// other, both serve the one certificate, a certificate both need at once is
// ordered once, and the cache holds no private key in the clear.
func TestACMESharedByReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Pebble and PostgreSQL")
	}
	ctx := context.Background()
	db, box := openShared(t)
	httpPort := testkit.FreePort(t)
	httpAddr := fmt.Sprintf("127.0.0.1:%d", httpPort)
	// Pebble's TLS-ALPN-01 attempts go to a closed port: only HTTP-01 can
	// pass, and only replica b listens for it.
	p := testkit.StartPebble(t, testkit.FreePort(t), httpPort)
	roots := p.Roots(t)
	a := startReplica(t, p, db, box, "replica-a", httpAddr, false)
	b := startReplica(t, p, db, box, "replica-b", httpAddr, true)

	// a orders; Pebble asks b's challenge listener, which finds a's token
	// in the shared cache.
	fromA, err := leafFor(t, a.addr, acmeName, roots)
	if err != nil {
		t.Fatal(err)
	}
	fromB, err := leafFor(t, b.addr, acmeName, roots)
	if err != nil {
		t.Fatal(err)
	}
	if fromA.SerialNumber.Cmp(fromB.SerialNumber) != 0 {
		t.Errorf("replicas serve different certificates (serials %s and %s), want the one a ordered", fromA.SerialNumber, fromB.SerialNumber)
	}

	// Both need a certificate at once: one orders, the other waits for it.
	var wg sync.WaitGroup
	leaves := make([]*x509.Certificate, 2)
	for i, r := range []replica{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			leaf, err := leafFor(t, r.addr, otherName, roots)
			if err != nil {
				t.Error(err)
				return
			}
			leaves[i] = leaf
		}()
	}
	wg.Wait()
	if leaves[0] != nil && leaves[1] != nil && leaves[0].SerialNumber.Cmp(leaves[1].SerialNumber) != 0 {
		t.Errorf("two replicas asking at once ordered two certificates (serials %s and %s), want one", leaves[0].SerialNumber, leaves[1].SerialNumber)
	}

	// Entries are sealed: the certificate's private key is not in the
	// database in the clear.
	for _, key := range []string{acmeName, otherName, "acme_account+key"} {
		sealed, err := db.ACMECacheGet(ctx, key)
		if err != nil || sealed == nil {
			t.Fatalf("ACME cache entry %q: %v, %d bytes", key, err, len(sealed))
		}
		if bytes.Contains(sealed, []byte("PRIVATE KEY")) {
			t.Errorf("ACME cache entry %q holds a private key in the clear", key)
		}
	}
}

// TestSharedCacheLeasesOnlyCertificates: the account key (under both names
// autocert looks for) and HTTP-01 tokens are plain misses, never an order
// to wait for; a missing certificate takes the order's lease.
func TestSharedCacheLeasesOnlyCertificates(t *testing.T) {
	ctx := context.Background()
	db, box := openShared(t)
	a := &tlsconfig.SharedCache{Store: db, Box: box, Holder: "a", Wait: time.Hour}
	b := &tlsconfig.SharedCache{Store: db, Box: box, Holder: "b", Wait: time.Hour}
	for _, key := range []string{"acme_account+key", "acme_account.key", "tok3n+http-01", acmeName + "+token"} {
		for _, c := range []*tlsconfig.SharedCache{a, b} {
			// A wrongly leased key would have b wait for an order that
			// never comes: the deadline turns that hang into a failure.
			waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
			_, err := c.Get(waitCtx, key)
			cancel()
			if !errors.Is(err, autocert.ErrCacheMiss) {
				t.Errorf("Get(%q) by %s = %v, want a plain cache miss", key, c.Holder, err)
			}
		}
	}
	if _, err := a.Get(ctx, acmeName); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatalf("first Get of a certificate = %v, want a miss (a orders)", err)
	}
	if ok, _ := db.AcquireLease(ctx, "acme-order:"+acmeName, "b", time.Hour); ok {
		t.Fatal("a's order holds no lease")
	}
	// b waits for a's certificate and gets it once a stores it.
	got := make(chan []byte, 1)
	go func() {
		data, err := b.Get(ctx, acmeName)
		if err != nil {
			t.Error(err)
		}
		got <- data
	}()
	if err := a.Put(ctx, acmeName, []byte("certificate and key")); err != nil {
		t.Fatal(err)
	}
	if data := <-got; string(data) != "certificate and key" {
		t.Errorf("b got %q", data)
	}
}

// raceStore runs before once, right before the next AcquireLease.
type raceStore struct {
	tlsconfig.CacheStore
	before func()
}

func (s *raceStore) AcquireLease(ctx context.Context, name, holder string, ttl time.Duration) (bool, error) {
	if f := s.before; f != nil {
		s.before = nil
		f()
	}
	return s.CacheStore.AcquireLease(ctx, name, holder, ttl)
}

// TestSharedCacheOrderFinishedMeanwhile: a replica that misses a
// certificate while another orders it, and takes the lease only after the
// other stored the certificate and released the lease, serves the stored
// certificate instead of ordering a second one (the race
// TestACMESharedByReplicas met now and then).
func TestSharedCacheOrderFinishedMeanwhile(t *testing.T) {
	ctx := context.Background()
	db, box := openShared(t)
	a := &tlsconfig.SharedCache{Store: db, Box: box, Holder: "a", Wait: time.Hour}
	if _, err := a.Get(ctx, acmeName); !errors.Is(err, autocert.ErrCacheMiss) {
		t.Fatalf("first Get = %v, want a miss (a orders)", err)
	}
	for _, poll := range []bool{false, true} {
		name := acmeName
		if poll {
			// b first finds a's lease and waits; a finishes between one
			// of b's reads and its next try of the lease.
			name = otherName
			if _, err := a.Get(ctx, name); !errors.Is(err, autocert.ErrCacheMiss) {
				t.Fatalf("first Get of %s = %v, want a miss (a orders)", name, err)
			}
		}
		store := &raceStore{CacheStore: db}
		b := &tlsconfig.SharedCache{Store: store, Box: box, Holder: "b", Wait: time.Hour, Poll: 10 * time.Millisecond}
		finish := func() {
			if err := a.Put(ctx, name, []byte("the certificate of "+name)); err != nil {
				t.Error(err)
			}
		}
		if poll {
			// The first AcquireLease is refused (a holds it); a finishes
			// right before the second.
			store.before = func() { store.before = finish }
		} else {
			store.before = finish
		}
		data, err := b.Get(ctx, name)
		if err != nil || string(data) != "the certificate of "+name {
			t.Fatalf("b.Get(%s) (while polling: %v) = %q, %v; want a's certificate, not a second order", name, poll, data, err)
		}
		if ok, err := db.AcquireLease(ctx, "acme-order:"+name, "c", time.Hour); err != nil || !ok {
			t.Fatalf("b kept the order's lease of %s: %v %v", name, ok, err)
		}
	}
}
