// Package dextest runs Dex, the OpenID Connect provider, for sign-in tests:
// over HTTPS on 127.0.0.1 under a test CA, with static passwords and one
// static client whose redirect URI is a chartctl server's
// {base}/signin/oidc/callback. The binary comes from CHARTCTL_DEX
// (scripts/build-dex.sh builds it into .tools/dex/dex); without it the
// test skips, or fails under CHARTCTL_REQUIRE_E2E=1.
package dextest

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/proc"
)

// User is a static password account of Dex.
type User struct {
	Email    string
	Username string
	Password string
	// ID is the account's stable ID (the ID token's sub is derived from
	// it and the connector).
	ID string
	// Groups are sent in the groups claim when the groups scope is asked.
	Groups []string
}

// Options configure Start.
type Options struct {
	// RedirectURI is the static client's redirect URI (required).
	RedirectURI string
	// Users are the static passwords; none gives DefaultUsers.
	Users []User
	// LDAP, when set, makes Dex sign people in through its LDAP
	// connector instead of static passwords (the only connector, so
	// Dex's login page is the connector's form).
	LDAP *LDAPConnector
}

// LDAPConnector is Dex's LDAP connector (`connectors: - type: ldap`)
// over a directory such as slapdtest's: StartTLS to Host, people found
// by uid under UserBase, groupOfNames groups (member = DN) under
// GroupBase, the ID from entryUUID.
type LDAPConnector struct {
	// Host is HOST:PORT of an ldap:// listener; CAFile verifies it.
	Host, CAFile string
	// BindDN and BindPassword are the service account.
	BindDN, BindPassword string
	UserBase, GroupBase  string
}

// DefaultUsers are the accounts a Dex has when Options.Users is empty.
var DefaultUsers = []User{
	{Email: "ana@example.com", Username: "ana", Password: "ana-password", ID: "0c1b3b1e-0000-4000-8000-00000000a0a0", Groups: []string{"developers"}},
	{Email: "root@example.com", Username: "root", Password: "root-password", ID: "0c1b3b1e-0000-4000-8000-00000000f00f", Groups: []string{"developers", "chartctl-admins"}},
}

// Dex is a running Dex.
type Dex struct {
	// Issuer is the issuer URL (https://127.0.0.1:PORT/dex).
	Issuer string
	// ClientID and ClientSecret are the static client's.
	ClientID, ClientSecret string
	// CA signed Dex's certificate: CA.CertFile for SSL_CERT_FILE of a
	// child process, CA.Pool for a client in the test.
	CA *testkit.CA
	// Users are its static password accounts.
	Users []User

	proc proc.Process
}

// Start starts Dex; tb's cleanup stops it.
func Start(tb testing.TB, opts Options) *Dex {
	tb.Helper()
	bin := testkit.Tool(tb, "CHARTCTL_DEX", "dex")
	if opts.RedirectURI == "" {
		tb.Fatal("dextest: Options.RedirectURI is required")
	}
	users := opts.Users
	if len(users) == 0 {
		users = DefaultUsers
	}
	dir := tb.TempDir()
	d := &Dex{ClientID: "chartctl", ClientSecret: randomHex(16), CA: testkit.NewCA(tb), Users: users}
	certPEM, keyPEM, _ := d.CA.Issue(tb, "127.0.0.1", "localhost")
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for p, b := range map[string][]byte{certFile: certPEM, keyFile: keyPEM} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	port := freePort(tb)
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	d.Issuer = "https://" + addr + "/dex"

	var b strings.Builder
	fmt.Fprintf(&b, "issuer: %s\nstorage:\n  type: memory\nweb:\n  https: %s\n  tlsCert: %s\n  tlsKey: %s\n", d.Issuer, addr, certFile, keyFile)
	fmt.Fprintf(&b, "logger:\n  level: info\noauth2:\n  skipApprovalScreen: true\nenablePasswordDB: %t\n", opts.LDAP == nil)
	if l := opts.LDAP; l != nil {
		fmt.Fprintf(&b, "connectors:\n  - type: ldap\n    id: ldap\n    name: LDAP\n    config:\n      host: %s\n      startTLS: true\n      rootCA: %s\n",
			strconv.Quote(l.Host), strconv.Quote(l.CAFile))
		fmt.Fprintf(&b, "      bindDN: %s\n      bindPW: %s\n      usernamePrompt: User name\n", strconv.Quote(l.BindDN), strconv.Quote(l.BindPassword))
		fmt.Fprintf(&b, "      userSearch:\n        baseDN: %s\n        filter: \"(objectClass=inetOrgPerson)\"\n        username: uid\n        idAttr: entryUUID\n        emailAttr: mail\n        nameAttr: cn\n", strconv.Quote(l.UserBase))
		fmt.Fprintf(&b, "      groupSearch:\n        baseDN: %s\n        filter: \"(objectClass=groupOfNames)\"\n        userMatchers:\n          - userAttr: DN\n            groupAttr: member\n        nameAttr: cn\n", strconv.Quote(l.GroupBase))
	}
	fmt.Fprintf(&b, "staticClients:\n  - id: %s\n    name: chartctl\n    secret: %s\n    redirectURIs:\n      - %s\n", d.ClientID, d.ClientSecret, strconv.Quote(opts.RedirectURI))
	if opts.LDAP != nil {
		users, d.Users = nil, nil
	}
	b.WriteString("staticPasswords:\n")
	for _, u := range users {
		// Dex refuses hashes below its minimum cost (bcrypt's default).
		hash, err := bcrypt.GenerateFromPassword([]byte(u.Password), bcrypt.DefaultCost)
		if err != nil {
			tb.Fatal(err)
		}
		fmt.Fprintf(&b, "  - email: %s\n    username: %s\n    hash: %s\n    userID: %s\n    emailVerified: true\n",
			strconv.Quote(u.Email), strconv.Quote(u.Username), strconv.Quote(string(hash)), strconv.Quote(u.ID))
		if len(u.Groups) > 0 {
			b.WriteString("    groups:\n")
			for _, g := range u.Groups {
				fmt.Fprintf(&b, "      - %s\n", strconv.Quote(g))
			}
		}
	}
	config := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(config, []byte(b.String()), 0o600); err != nil {
		tb.Fatal(err)
	}
	client := d.Client()
	ready := func() error {
		resp, err := client.Get(d.Issuer + "/.well-known/openid-configuration")
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("discovery answered %d", resp.StatusCode)
		}
		return nil
	}
	logPath := filepath.Join(dir, "dex.log")
	// A bound on start-up so a broken Dex fails the test instead of
	// hanging it; not a timing assertion.
	if err := d.proc.Start(exec.Command(bin, "serve", config), logPath, time.Minute, ready, syscall.SIGTERM); err != nil {
		tb.Fatalf("start dex: %v", err)
	}
	tb.Cleanup(func() {
		d.proc.Stop(syscall.SIGTERM, 10*time.Second)
		// Dex answers a failed step with a bare "Login error": its log
		// says what went wrong.
		if tb.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				tb.Logf("dex log:\n%s", b)
			}
		}
	})
	return d
}

// Client returns an HTTP client that trusts Dex's CA.
func (d *Dex) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: d.CA.Pool, MinVersion: tls.VersionTLS12}}}
}

// User returns the static account with username, failing tb if none.
func (d *Dex) User(tb testing.TB, username string) User {
	tb.Helper()
	for _, u := range d.Users {
		if u.Username == username {
			return u
		}
	}
	tb.Fatalf("dextest: no user %q", username)
	return User{}
}

// freePort returns a TCP port free on 127.0.0.1 now. Dex binds it itself,
// so it is asked for by number.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
