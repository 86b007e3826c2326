// Package keyring stores the command line's credentials, one per server.
//
// They go to the operating system's keyring (macOS Keychain, Windows
// Credential Manager, the Secret Service over D-Bus on Linux) through
// github.com/zalando/go-keyring, each call bounded by a timeout because a
// locked or absent keyring daemon can otherwise hang forever. Where no
// keyring is reachable, as on a headless CI box without D-Bus, credentials
// go to a file readable only by the user (mode 0600) in the config
// directory, and a one-line warning says so.
package keyring

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"sync"
	"time"

	zkeyring "github.com/zalando/go-keyring"

	"github.com/chartctl/chartctl/internal/atomicfile"
)

// Service is the service name of chartctl's keyring entries; the entry's
// user is the server's URL.
const Service = "chartctl"

// FileName is the name of the fallback credentials file.
const FileName = "credentials.json"

// DefaultTimeout bounds each call to the operating system's keyring.
const DefaultTimeout = 3 * time.Second

// ErrNotFound is returned when no credential is stored for a server.
var ErrNotFound = errors.New("no credential stored")

// Credential is what `chartctl login` stores for one server: either an API
// key, or an OAuth token (access token, refresh token and expiry).
type Credential struct {
	// APIKey is set when the user signed in with --with-token.
	APIKey string `json:"api_key,omitempty"`
	// AccessToken, RefreshToken and Expiry are an OAuth token.
	AccessToken  string    `json:"access_token,omitempty"`
	RefreshToken string    `json:"refresh_token,omitempty"`
	Expiry       time.Time `json:"expiry,omitzero"`
	// TokenURL is the token endpoint that refreshes the OAuth token.
	TokenURL string `json:"token_url,omitempty"`
	// User is the email of the account, for `auth status`.
	User string `json:"user,omitempty"`
}

// Backend is a secret store keyed by service and user; ErrNotFound of
// github.com/zalando/go-keyring (or this package's) means no entry.
type Backend interface {
	Get(service, user string) (string, error)
	Set(service, user, secret string) error
	Delete(service, user string) error
}

// OS is the operating system's keyring.
type OS struct{}

// Get implements Backend.
func (OS) Get(service, user string) (string, error) { return zkeyring.Get(service, user) }

// Set implements Backend.
func (OS) Set(service, user, secret string) error { return zkeyring.Set(service, user, secret) }

// Delete implements Backend.
func (OS) Delete(service, user string) error { return zkeyring.Delete(service, user) }

// TimeoutError is returned when the keyring did not answer in time.
type TimeoutError struct{ op string }

// Error says which keyring operation timed out.
func (e *TimeoutError) Error() string {
	return "timed out trying to " + e.op + " the system keyring"
}

// Store reads and writes credentials.
type Store struct {
	backend Backend
	file    string
	warn    io.Writer
	timeout time.Duration

	mu     sync.Mutex
	warned bool
}

// New returns a store over backend (nil: the fallback file only), with the
// fallback file in dir, warnings written to warn.
func New(backend Backend, dir string, warn io.Writer) *Store {
	if warn == nil {
		warn = io.Discard
	}
	return &Store{backend: backend, file: dir + string(os.PathSeparator) + FileName, warn: warn, timeout: DefaultTimeout}
}

// SetTimeout changes how long a keyring call may take.
func (s *Store) SetTimeout(d time.Duration) { s.timeout = d }

// FilePath returns the path of the fallback credentials file.
func (s *Store) FilePath() string { return s.file }

// Get returns the credential stored for server, or ErrNotFound.
func (s *Store) Get(server string) (*Credential, error) {
	c, _, err := s.Lookup(server)
	return c, err
}

// Lookup is Get that also says where the credential was found: "the
// system keyring" or the fallback file's path.
func (s *Store) Lookup(server string) (*Credential, string, error) {
	if s.backend != nil {
		secret, err := s.call("read from", func() (string, error) { return s.backend.Get(Service, server) })
		if err == nil {
			var c Credential
			if err := json.Unmarshal([]byte(secret), &c); err != nil {
				return nil, "", fmt.Errorf("decode the credential for %s from the keyring: %w", server, err)
			}
			return &c, "the system keyring", nil
		}
		// Not found, or no keyring: the credential may be in the file,
		// written while the keyring was out of reach.
	}
	all, err := s.readFile()
	if err != nil {
		return nil, "", err
	}
	c, ok := all[server]
	if !ok {
		return nil, "", ErrNotFound
	}
	return c, s.file, nil
}

// Set stores c for server and returns where it went: "keyring" or the
// fallback file's path.
func (s *Store) Set(server string, c *Credential) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("encode credential: %w", err)
	}
	if s.backend != nil {
		_, err := s.call("write to", func() (string, error) { return "", s.backend.Set(Service, server, string(b)) })
		if err == nil {
			// A copy left in the file from an earlier fallback is stale now.
			if err := s.deleteFromFile(server); err != nil && !errors.Is(err, ErrNotFound) {
				return "", err
			}
			return "keyring", nil
		}
		s.warnOnce(err)
	}
	all, err := s.readFile()
	if err != nil {
		return "", err
	}
	all[server] = c
	if err := s.writeFile(all); err != nil {
		return "", err
	}
	return s.file, nil
}

// Delete forgets the credential of server, from the keyring and the file;
// ErrNotFound when neither had one.
func (s *Store) Delete(server string) error {
	found := false
	if s.backend != nil {
		_, err := s.call("delete from", func() (string, error) { return "", s.backend.Delete(Service, server) })
		if err == nil {
			found = true
		}
	}
	err := s.deleteFromFile(server)
	switch {
	case err == nil:
		found = true
	case !errors.Is(err, ErrNotFound):
		return err
	}
	if !found {
		return ErrNotFound
	}
	return nil
}

// call runs f with the store's timeout. The goroutine of a call that timed
// out is left to finish on its own: keyring libraries offer no way to
// cancel, and the process is short-lived.
func (s *Store) call(op string, f func() (string, error)) (string, error) {
	type result struct {
		v   string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		if errors.Is(r.err, zkeyring.ErrNotFound) {
			return "", ErrNotFound
		}
		return r.v, r.err
	case <-time.After(s.timeout):
		return "", &TimeoutError{op: op}
	}
}

func (s *Store) warnOnce(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.warned {
		return
	}
	s.warned = true
	fmt.Fprintf(s.warn, "warning: no system keyring available (%s); credentials stored in %s\n", oneLine(err), s.file)
}

func oneLine(err error) string {
	msg := err.Error()
	for i, r := range msg {
		if r == '\n' {
			return msg[:i]
		}
	}
	return msg
}

func (s *Store) readFile() (map[string]*Credential, error) {
	all := map[string]*Credential{}
	b, err := os.ReadFile(s.file)
	if errors.Is(err, fs.ErrNotExist) {
		return all, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read credentials: %w", err)
	}
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, fmt.Errorf("read credentials %s: %w", s.file, err)
	}
	return all, nil
}

func (s *Store) writeFile(all map[string]*Credential) error {
	b, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return fmt.Errorf("encode credentials: %w", err)
	}
	return atomicfile.Write(s.file, append(b, '\n'), 0o600)
}

func (s *Store) deleteFromFile(server string) error {
	all, err := s.readFile()
	if err != nil {
		return err
	}
	if _, ok := all[server]; !ok {
		return ErrNotFound
	}
	delete(all, server)
	if len(all) == 0 {
		if err := os.Remove(s.file); err != nil {
			return fmt.Errorf("remove credentials: %w", err)
		}
		return nil
	}
	return s.writeFile(all)
}
