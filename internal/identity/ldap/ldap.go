// Package ldap signs people in against an LDAP directory (OpenLDAP,
// Active Directory, 389 DS) with go-ldap: a service bind finds the
// person's entry by their login, a bind as that entry checks the
// password, and a group search lists their groups. It also answers
// whether an account still exists, for the periodic check of users with
// API keys.
//
// The directory is the operator's setting, reached without the
// private-address guard (CONTRACT §18 decision 5).
package ldap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	goldap "github.com/go-ldap/ldap/v3"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/identity"
)

// Config is the directory and how to read people and groups from it
// (the --ldap-* serve flags).
type Config struct {
	// URL is ldaps://HOST[:PORT] or ldap://HOST[:PORT]; ldap:// is
	// upgraded with StartTLS unless Insecure.
	URL string
	// Insecure allows ldap:// without StartTLS (tests, a directory on
	// the same host).
	Insecure bool
	// BindDN and BindPassword are the service account that searches; an
	// empty BindDN searches anonymously.
	BindDN       string
	BindPassword string
	// UserBase is where people are searched (subtree); UserFilter finds
	// one by login, "%s" standing for the escaped login, e.g. (uid=%s).
	UserBase   string
	UserFilter string
	// EmailAttr holds the person's email (mail).
	EmailAttr string
	// GroupBase is where groups are searched (subtree; "" lists no
	// groups); GroupFilter finds a person's groups, "%s" standing for the
	// escaped DN of the person, e.g. (member=%s) or, for nested Active
	// Directory groups, (member:1.2.840.113556.1.4.1941:=%s).
	GroupBase   string
	GroupFilter string
	// GroupNameAttr names a group (cn).
	GroupNameAttr string
	// RootCAs verifies the directory's certificate (nil: the system's
	// roots, which honour SSL_CERT_FILE).
	RootCAs *x509.CertPool
	// Timeout bounds connecting and each operation (10s if zero).
	Timeout time.Duration
}

// ErrAmbiguous refuses a login the user filter finds more than one entry
// for: which one's password to check is not chartctl's guess to make.
var ErrAmbiguous = errors.New("--ldap-user-filter matches more than one directory entry for this login: make it match one")

// Defaults of the settings the contract gives defaults to.
const (
	DefaultUserFilter    = "(uid=%s)"
	DefaultEmailAttr     = "mail"
	DefaultGroupFilter   = "(member=%s)"
	DefaultGroupNameAttr = "cn"
)

// Provider is a configured directory. It keeps no connection: each
// sign-in dials its own, so an outage ends with the sign-in that met it.
type Provider struct {
	cfg  Config
	host string
}

// New checks cfg and returns its provider; it does not dial.
func New(cfg Config) (*Provider, error) {
	u, err := url.Parse(cfg.URL)
	if err != nil || (u.Scheme != "ldap" && u.Scheme != "ldaps") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return nil, fmt.Errorf("invalid --ldap-url %q: use ldaps://HOST[:PORT] or ldap://HOST[:PORT]", cfg.URL)
	}
	if cfg.UserBase == "" {
		return nil, fmt.Errorf("--ldap-url needs --ldap-user-base, the DN people are searched under (e.g. ou=people,dc=example,dc=com)")
	}
	if cfg.UserFilter == "" {
		cfg.UserFilter = DefaultUserFilter
	}
	if cfg.EmailAttr == "" {
		cfg.EmailAttr = DefaultEmailAttr
	}
	if cfg.GroupFilter == "" {
		cfg.GroupFilter = DefaultGroupFilter
	}
	if cfg.GroupNameAttr == "" {
		cfg.GroupNameAttr = DefaultGroupNameAttr
	}
	for flag, f := range map[string]string{"--ldap-user-filter": cfg.UserFilter, "--ldap-group-filter": cfg.GroupFilter} {
		// The filters are compiled once here with a sample value, so a
		// typo stops the start instead of every sign-in.
		if !strings.Contains(f, "%s") {
			return nil, fmt.Errorf("invalid %s %q: it must contain %%s where the value goes, e.g. (uid=%%s)", flag, f)
		}
		if _, err := goldap.CompileFilter(strings.ReplaceAll(f, "%s", "x")); err != nil {
			return nil, fmt.Errorf("invalid %s %q: %v", flag, f, err)
		}
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	return &Provider{cfg: cfg, host: u.Hostname()}, nil
}

// Authenticate checks login and password against the directory and
// returns the person, with their groups. It returns
// identity.ErrUnknownUser when no entry matches the login,
// identity.ErrWrongPassword when the bind as that entry fails, and an
// error wrapping identity.ErrUnavailable when the directory cannot be
// asked.
func (p *Provider) Authenticate(ctx context.Context, login, password string) (*identity.Claims, error) {
	if login == "" {
		return nil, identity.ErrUnknownUser
	}
	if password == "" {
		// An empty password is an unauthenticated bind, which most
		// directories accept for any DN (RFC 4513 §5.1.2).
		return nil, identity.ErrWrongPassword
	}
	conn, done, err := p.dial(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	entry, err := p.findUser(conn, goldap.EscapeFilter(login))
	if err != nil {
		return nil, err
	}
	if err := conn.Bind(entry.DN, password); err != nil {
		if goldap.IsErrorWithCode(err, goldap.LDAPResultInvalidCredentials) {
			return nil, identity.ErrWrongPassword
		}
		return nil, p.unavailable("bind as the user", err)
	}
	// Groups are read as the service account again: people often may
	// not read group entries.
	if err := p.serviceBind(conn); err != nil {
		return nil, err
	}
	groups, err := p.groups(conn, entry.DN)
	if err != nil {
		return nil, err
	}
	email := entry.GetAttributeValue(p.cfg.EmailAttr)
	name := entry.GetAttributeValue("displayName")
	if name == "" {
		name = entry.GetAttributeValue("cn")
	}
	return &identity.Claims{
		Provider: chartctl.ProviderLDAP, Subject: Subject(entry),
		// The directory is the operator's own: its email is as
		// trustworthy as the rest of the entry.
		Email: email, EmailVerified: true, Name: name, Groups: groups,
	}, nil
}

// Exists reports whether the directory still has the account subject
// (as Authenticate returned it) and the user filter still matches it (a
// login of "*": an Active Directory filter that leaves out disabled
// accounts leaves them out here too). Errors wrap
// identity.ErrUnavailable.
func (p *Provider) Exists(ctx context.Context, subject string) (bool, error) {
	conn, done, err := p.dial(ctx)
	if err != nil {
		return false, err
	}
	defer done()
	anyLogin := strings.ReplaceAll(p.cfg.UserFilter, "%s", "*")
	base, scope, filter := p.cfg.UserBase, goldap.ScopeWholeSubtree, "(&(entryUUID="+goldap.EscapeFilter(subject)+")"+anyLogin+")"
	if strings.Contains(subject, "=") {
		// A DN (directories without entryUUID): read that entry.
		base, scope, filter = subject, goldap.ScopeBaseObject, anyLogin
	}
	res, err := conn.Search(goldap.NewSearchRequest(base, scope, goldap.NeverDerefAliases, 1, int(p.cfg.Timeout.Seconds()), false, filter, []string{"1.1"}, nil))
	switch {
	case goldap.IsErrorWithCode(err, goldap.LDAPResultNoSuchObject):
		return false, nil
	case err != nil:
		return false, p.unavailable("search the user", err)
	}
	return len(res.Entries) > 0, nil
}

// Subject is the account's stable key: its entryUUID (RFC 4530: it
// survives renames and moves), or its DN when the directory keeps no
// entryUUID.
func Subject(e *goldap.Entry) string {
	if id := e.GetAttributeValue("entryUUID"); id != "" {
		return strings.ToLower(id)
	}
	return e.DN
}

// dial connects, upgrades ldap:// with StartTLS (unless Insecure) and
// binds as the service account; done closes the connection.
func (p *Provider) dial(ctx context.Context) (conn *goldap.Conn, done func(), err error) {
	tc := &tls.Config{ServerName: p.host, RootCAs: p.cfg.RootCAs, MinVersion: tls.VersionTLS12}
	conn, err = goldap.DialURL(p.cfg.URL, goldap.DialWithDialer(&net.Dialer{Timeout: p.cfg.Timeout}), goldap.DialWithTLSConfig(tc))
	if err != nil {
		return nil, nil, p.unavailable("connect", err)
	}
	conn.SetTimeout(p.cfg.Timeout)
	// go-ldap takes no context: closing the connection ends whatever
	// waits on it when the request is cancelled. done unregisters that,
	// so a long-lived context (the periodic check's) keeps nothing.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	done = func() {
		stop()
		conn.Close()
	}
	if strings.HasPrefix(p.cfg.URL, "ldap://") && !p.cfg.Insecure {
		if err := conn.StartTLS(tc); err != nil {
			done()
			return nil, nil, p.unavailable("StartTLS", err)
		}
	}
	if err := p.serviceBind(conn); err != nil {
		done()
		return nil, nil, err
	}
	return conn, done, nil
}

func (p *Provider) serviceBind(conn *goldap.Conn) error {
	if p.cfg.BindDN == "" {
		return nil
	}
	if err := conn.Bind(p.cfg.BindDN, p.cfg.BindPassword); err != nil {
		// Wrong service credentials are the operator's to fix; to the
		// person signing in the directory is as good as down.
		return p.unavailable("bind as --ldap-bind-dn", err)
	}
	return nil
}

// findUser returns the one entry the user filter finds for the escaped
// login.
func (p *Provider) findUser(conn *goldap.Conn, login string) (*goldap.Entry, error) {
	attrs := []string{"entryUUID", p.cfg.EmailAttr, "displayName", "cn"}
	req := goldap.NewSearchRequest(p.cfg.UserBase, goldap.ScopeWholeSubtree, goldap.NeverDerefAliases, 2, int(p.cfg.Timeout.Seconds()), false,
		strings.ReplaceAll(p.cfg.UserFilter, "%s", login), attrs, nil)
	res, err := conn.Search(req)
	switch {
	case goldap.IsErrorWithCode(err, goldap.LDAPResultSizeLimitExceeded) || errors.Is(err, goldap.ErrSizeLimitExceeded):
		return nil, ErrAmbiguous
	case goldap.IsErrorWithCode(err, goldap.LDAPResultNoSuchObject):
		return nil, p.unavailable("search users", fmt.Errorf("--ldap-user-base %q does not exist", p.cfg.UserBase))
	case err != nil:
		return nil, p.unavailable("search users", err)
	}
	switch len(res.Entries) {
	case 0:
		return nil, identity.ErrUnknownUser
	case 1:
		return res.Entries[0], nil
	}
	return nil, ErrAmbiguous
}

// groups returns the names of the groups the group filter finds for dn.
func (p *Provider) groups(conn *goldap.Conn, dn string) ([]string, error) {
	if p.cfg.GroupBase == "" {
		return nil, nil
	}
	req := goldap.NewSearchRequest(p.cfg.GroupBase, goldap.ScopeWholeSubtree, goldap.NeverDerefAliases, 0, int(p.cfg.Timeout.Seconds()), false,
		strings.ReplaceAll(p.cfg.GroupFilter, "%s", goldap.EscapeFilter(dn)), []string{p.cfg.GroupNameAttr}, nil)
	res, err := conn.Search(req)
	if err != nil {
		return nil, p.unavailable("search groups", err)
	}
	groups := []string{}
	for _, e := range res.Entries {
		if n := e.GetAttributeValue(p.cfg.GroupNameAttr); n != "" {
			groups = append(groups, n)
		}
	}
	return groups, nil
}

func (p *Provider) unavailable(step string, err error) error {
	return fmt.Errorf("%w: LDAP %s at %s: %v", identity.ErrUnavailable, step, p.host, err)
}
