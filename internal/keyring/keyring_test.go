package keyring

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	zkeyring "github.com/zalando/go-keyring"
)

// memBackend is an in-memory keyring; down makes every call fail as a
// keyring without a D-Bus does; block makes calls hang.
type memBackend struct {
	mu    sync.Mutex
	m     map[string]string
	down  bool
	block chan struct{}
}

func (b *memBackend) wait() error {
	if b.block != nil {
		<-b.block
	}
	if b.down {
		return errors.New("dbus: connection refused\nsecond line")
	}
	return nil
}

func (b *memBackend) Get(service, user string) (string, error) {
	if err := b.wait(); err != nil {
		return "", err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok := b.m[service+"/"+user]
	if !ok {
		return "", zkeyring.ErrNotFound
	}
	return v, nil
}

func (b *memBackend) Set(service, user, secret string) error {
	if err := b.wait(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m == nil {
		b.m = map[string]string{}
	}
	b.m[service+"/"+user] = secret
	return nil
}

func (b *memBackend) Delete(service, user string) error {
	if err := b.wait(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.m[service+"/"+user]; !ok {
		return zkeyring.ErrNotFound
	}
	delete(b.m, service+"/"+user)
	return nil
}

const srv = "https://charts.example.com"

func TestKeyring(t *testing.T) {
	dir := t.TempDir()
	var warn bytes.Buffer
	b := &memBackend{}
	s := New(b, dir, &warn)
	if _, err := s.Get(srv); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get on empty = %v, want ErrNotFound", err)
	}
	where, err := s.Set(srv, &Credential{AccessToken: "at", RefreshToken: "rt", Expiry: time.Unix(1800000000, 0).UTC()})
	if err != nil || where != "keyring" {
		t.Fatalf("Set = %q, %v", where, err)
	}
	c, err := s.Get(srv)
	if err != nil || c.AccessToken != "at" || c.RefreshToken != "rt" || !c.Expiry.Equal(time.Unix(1800000000, 0)) {
		t.Fatalf("Get = %+v, %v", c, err)
	}
	if _, err := os.Stat(s.FilePath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("fallback file written although the keyring works: %v", err)
	}
	if warn.Len() != 0 {
		t.Errorf("warned: %q", warn.String())
	}
	if err := s.Delete(srv); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(srv); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete = %v, want ErrNotFound", err)
	}
}

func TestFallbackFile(t *testing.T) {
	dir := t.TempDir()
	var warn bytes.Buffer
	s := New(&memBackend{down: true}, dir, &warn)
	where, err := s.Set(srv, &Credential{APIKey: "chartctl_secret"})
	if err != nil {
		t.Fatal(err)
	}
	if where != s.FilePath() {
		t.Errorf("stored in %q, want the file", where)
	}
	if _, err := s.Set("http://other", &Credential{APIKey: "k2"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(warn.String()), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "no system keyring") || !strings.Contains(lines[0], s.FilePath()) {
		t.Errorf("warning = %q, want one line naming the file", warn.String())
	}
	fi, err := os.Stat(s.FilePath())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials file mode %v, want 0600", fi.Mode().Perm())
	}
	c, err := s.Get(srv)
	if err != nil || c.APIKey != "chartctl_secret" {
		t.Fatalf("Get = %+v, %v", c, err)
	}
	if err := s.Delete(srv); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(srv); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete = %v", err)
	}
	if c, err := s.Get("http://other"); err != nil || c.APIKey != "k2" {
		t.Errorf("other server's credential lost: %+v, %v", c, err)
	}
}

func TestFileMovesToKeyringWhenItReturns(t *testing.T) {
	dir := t.TempDir()
	b := &memBackend{down: true}
	s := New(b, dir, nil)
	if _, err := s.Set(srv, &Credential{APIKey: "old"}); err != nil {
		t.Fatal(err)
	}
	b.down = false
	if _, err := s.Set(srv, &Credential{APIKey: "new"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.FilePath()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale file copy kept: %v", err)
	}
	if c, err := s.Get(srv); err != nil || c.APIKey != "new" {
		t.Errorf("Get = %+v, %v", c, err)
	}
}

func TestTimeout(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	var warn bytes.Buffer
	s := New(&memBackend{block: block}, t.TempDir(), &warn)
	s.SetTimeout(10 * time.Millisecond)
	where, err := s.Set(srv, &Credential{APIKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	if where != s.FilePath() || !strings.Contains(warn.String(), "timed out") {
		t.Errorf("hung keyring: stored in %q, warning %q", where, warn.String())
	}
	if c, err := s.Get(srv); err != nil || c.APIKey != "k" {
		t.Errorf("Get = %+v, %v", c, err)
	}
}

func TestFileOnly(t *testing.T) {
	var warn bytes.Buffer
	s := New(nil, t.TempDir(), &warn)
	if _, err := s.Set(srv, &Credential{APIKey: "k"}); err != nil {
		t.Fatal(err)
	}
	if warn.Len() != 0 {
		t.Errorf("file-only store warned: %q", warn.String())
	}
}
