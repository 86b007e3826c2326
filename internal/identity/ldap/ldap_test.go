package ldap_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/identity"
	"github.com/chartctl/chartctl/internal/identity/ldap"
	"github.com/chartctl/chartctl/internal/testkit/slapdtest"
)

// setupProvider is a provider over s, reached as url (s.URL with StartTLS
// unless insecure, or s.LDAPSURL).
func setupProvider(tb testing.TB, s *slapdtest.Server, url string, insecure bool) *ldap.Provider {
	tb.Helper()
	p, err := ldap.New(ldap.Config{URL: url, Insecure: insecure, BindDN: slapdtest.BindDN, BindPassword: slapdtest.BindPassword,
		UserBase: slapdtest.People, GroupBase: slapdtest.Groups, RootCAs: s.CA.Pool})
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// TestAuthenticateAgainstSlapd: the real directory finds the person by
// login, checks the password with a bind, and lists their groups, over
// StartTLS, ldaps:// and (insecure) plain ldap://; a group change is seen
// at the next sign-in.
func TestAuthenticateAgainstSlapd(t *testing.T) {
	s := slapdtest.Start(t)
	for name, p := range map[string]*ldap.Provider{
		"starttls": setupProvider(t, s, s.URL, false),
		"ldaps":    setupProvider(t, s, s.LDAPSURL, false),
		"insecure": setupProvider(t, s, s.URL, true),
	} {
		t.Run(name, func(t *testing.T) {
			c, err := p.Authenticate(t.Context(), "root", "root-password")
			if err != nil {
				t.Fatal(err)
			}
			if c.Provider != chartctl.ProviderLDAP || c.Email != "root@example.com" || !c.EmailVerified || c.Name != "Root" ||
				len(c.Subject) != 36 || !slices.Equal(sorted(c.Groups), []string{"chartctl-admins", "developers"}) {
				t.Fatalf("claims: %+v", c)
			}
			if _, err := p.Authenticate(t.Context(), "root", "wrong"); !errors.Is(err, identity.ErrWrongPassword) {
				t.Fatalf("wrong password: %v", err)
			}
			if _, err := p.Authenticate(t.Context(), "root", ""); !errors.Is(err, identity.ErrWrongPassword) {
				t.Fatalf("empty password (an unauthenticated bind): %v", err)
			}
			if _, err := p.Authenticate(t.Context(), "nobody", "x"); !errors.Is(err, identity.ErrUnknownUser) {
				t.Fatalf("unknown login: %v", err)
			}
			// The login is escaped into the filter: a wildcard matches
			// nobody.
			if _, err := p.Authenticate(t.Context(), "*", "root-password"); !errors.Is(err, identity.ErrUnknownUser) {
				t.Fatalf("login *: %v", err)
			}
			if _, err := p.Authenticate(t.Context(), "r*)(uid=root", "root-password"); !errors.Is(err, identity.ErrUnknownUser) {
				t.Fatalf("filter injection: %v", err)
			}
		})
	}

	p := setupProvider(t, s, s.URL, false)
	c, err := p.Authenticate(t.Context(), "bob", "bob-password")
	if err != nil || len(c.Groups) != 0 {
		t.Fatalf("bob: %+v, %v", c, err)
	}
	s.AddToGroup("chartctl-admins", "bob")
	if c, err = p.Authenticate(t.Context(), "bob", "bob-password"); err != nil || !slices.Equal(c.Groups, []string{"chartctl-admins"}) {
		t.Fatalf("bob after ldapmodify added him to chartctl-admins: %+v, %v", c, err)
	}
	s.RemoveFromGroup("chartctl-admins", "bob")
	if c, err = p.Authenticate(t.Context(), "bob", "bob-password"); err != nil || len(c.Groups) != 0 {
		t.Fatalf("bob after ldapmodify removed him: %+v, %v", c, err)
	}

	// Exists: the account by its subject, until it is deleted.
	if ok, err := p.Exists(t.Context(), c.Subject); err != nil || !ok {
		t.Fatalf("Exists(bob) = %v, %v", ok, err)
	}
	s.Delete(slapdtest.User{UID: "bob"}.DN())
	if ok, err := p.Exists(t.Context(), c.Subject); err != nil || ok {
		t.Fatalf("Exists(deleted bob) = %v, %v", ok, err)
	}
	if _, err := p.Authenticate(t.Context(), "bob", "bob-password"); !errors.Is(err, identity.ErrUnknownUser) {
		t.Fatalf("deleted bob: %v", err)
	}

	// An outage is ErrUnavailable, never a refusal of the person.
	s.Stop()
	if _, err := p.Authenticate(t.Context(), "ana", "ana-password"); !errors.Is(err, identity.ErrUnavailable) {
		t.Fatalf("slapd stopped: %v", err)
	}
	if _, err := p.Exists(t.Context(), c.Subject); !errors.Is(err, identity.ErrUnavailable) {
		t.Fatalf("Exists with slapd stopped: %v", err)
	}
}

// TestTLSIsChecked: StartTLS and ldaps:// refuse a directory whose
// certificate chartctl does not trust, and a wrong service password is an
// outage for the person signing in (the operator's to fix).
func TestTLSIsChecked(t *testing.T) {
	s := slapdtest.Start(t)
	for _, url := range []string{s.URL, s.LDAPSURL} {
		p, err := ldap.New(ldap.Config{URL: url, BindDN: slapdtest.BindDN, BindPassword: slapdtest.BindPassword, UserBase: slapdtest.People})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Authenticate(t.Context(), "ana", "ana-password"); !errors.Is(err, identity.ErrUnavailable) {
			t.Fatalf("%s with an untrusted certificate: %v", url, err)
		}
	}
	p, err := ldap.New(ldap.Config{URL: s.URL, BindDN: slapdtest.BindDN, BindPassword: "wrong", UserBase: slapdtest.People, RootCAs: s.CA.Pool})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Authenticate(t.Context(), "ana", "ana-password"); !errors.Is(err, identity.ErrUnavailable) {
		t.Fatalf("wrong service password: %v", err)
	}
}

func TestNewRefusesBadSettings(t *testing.T) {
	for _, c := range []ldap.Config{
		{URL: "http://dir", UserBase: "dc=x"},
		{URL: "ldaps://", UserBase: "dc=x"},
		{URL: "ldaps://dir"},
		{URL: "ldaps://dir", UserBase: "dc=x", UserFilter: "(uid=ana)"},
		{URL: "ldaps://dir", UserBase: "dc=x", UserFilter: "(uid=%s"},
		{URL: "ldaps://dir", UserBase: "dc=x", GroupFilter: "member=%s)"},
	} {
		if _, err := ldap.New(c); err == nil {
			t.Errorf("New(%+v) accepted", c)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
