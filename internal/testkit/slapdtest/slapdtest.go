// Package slapdtest runs a real OpenLDAP server (Debian's slapd) for a
// test: a generated slapd.conf with an mdb database in a temp dir,
// listening on 127.0.0.1 with ldap:// (StartTLS offered) and ldaps://
// under a test CA, loaded with people and groups through ldapadd. The
// tools come from CHARTCTL_SLAPD (slapd) and CHARTCTL_LDAP_UTILS (the
// directory holding ldapadd, ldapmodify, ldapdelete), else from PATH and
// /usr/sbin; without them a test skips, or fails under
// CHARTCTL_REQUIRE_E2E=1.
package slapdtest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/proc"
)

// Suffix is the directory's naming context; people live under People,
// groups under Groups.
const (
	Suffix = "dc=example,dc=com"
	People = "ou=people," + Suffix
	Groups = "ou=groups," + Suffix
	// BindDN and BindPassword are the service account chartctl searches
	// with (not the root DN: it reads like any other client).
	BindDN       = "cn=chartctl," + Suffix
	BindPassword = "service-secret"
)

// User is a person in the directory (inetOrgPerson under People).
type User struct {
	UID, Password, Email, Name string
	// Groups are the names (cn) of the groupOfNames they are members of.
	Groups []string
}

// DN is the user's entry.
func (u User) DN() string { return "uid=" + u.UID + "," + People }

// DefaultUsers: ana (developers), root (developers, chartctl-admins),
// bob (no group).
var DefaultUsers = []User{
	{UID: "ana", Password: "ana-password", Email: "ana@example.com", Name: "Ana Silva", Groups: []string{"developers"}},
	{UID: "root", Password: "root-password", Email: "root@example.com", Name: "Root", Groups: []string{"developers", "chartctl-admins"}},
	{UID: "bob", Password: "bob-password", Email: "bob@example.com", Name: "Bob"},
}

// Server is a running slapd.
type Server struct {
	// URL is ldap://127.0.0.1:PORT (StartTLS offered); LDAPSURL is
	// ldaps://127.0.0.1:PORT.
	URL, LDAPSURL string
	// CA signed the server's certificate (for 127.0.0.1 and localhost).
	CA *testkit.CA

	tb      testing.TB
	bin     string
	utils   string
	dir     string
	args    []string
	rootDN  string
	rootPW  string
	logPath string
	proc    proc.Process
}

// Start starts slapd with users (DefaultUsers if none) and their groups;
// tb's cleanup stops it.
func Start(tb testing.TB, users ...User) *Server {
	tb.Helper()
	bin := testkit.Tool(tb, "CHARTCTL_SLAPD", "slapd")
	if bin == "" {
		return nil
	}
	utils := os.Getenv("CHARTCTL_LDAP_UTILS")
	if utils == "" {
		p, err := exec.LookPath("ldapadd")
		if err != nil {
			if testkit.RequireE2E() {
				tb.Fatal("ldapadd is not installed (ldap-utils; set CHARTCTL_LDAP_UTILS); CHARTCTL_REQUIRE_E2E=1 requires it")
			}
			tb.Skip("ldapadd is not installed (ldap-utils; set CHARTCTL_LDAP_UTILS)")
		}
		utils = filepath.Dir(p)
	}
	if len(users) == 0 {
		users = DefaultUsers
	}
	dir := tb.TempDir()
	s := &Server{tb: tb, bin: bin, utils: utils, dir: dir, CA: testkit.NewCA(tb), rootDN: "cn=admin," + Suffix, rootPW: "root-secret"}
	certPEM, keyPEM, _ := s.CA.Issue(tb, "127.0.0.1", "localhost")
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	for p, b := range map[string][]byte{certFile: certPEM, keyFile: keyPEM} {
		if err := os.WriteFile(p, b, 0o600); err != nil {
			tb.Fatal(err)
		}
	}
	dbDir := filepath.Join(dir, "db")
	if err := os.Mkdir(dbDir, 0o700); err != nil {
		tb.Fatal(err)
	}
	schema := schemaDir()
	conf := fmt.Sprintf(`include %[1]s/core.schema
include %[1]s/cosine.schema
include %[1]s/inetorgperson.schema
include %[1]s/nis.schema
modulepath %[2]s
moduleload back_mdb
pidfile %[3]s/slapd.pid
TLSCACertificateFile %[4]s
TLSCertificateFile %[5]s
TLSCertificateKeyFile %[6]s
access to attrs=userPassword by self write by anonymous auth by * none
access to * by * read
database mdb
maxsize 67108864
suffix "%[7]s"
rootdn "%[8]s"
rootpw %[9]s
directory %[10]s
index objectClass,entryUUID eq
index uid,mail,member eq
`, schema, moduleDir(), dir, s.CA.CertFile, certFile, keyFile, Suffix, s.rootDN, s.rootPW, dbDir)
	confPath := filepath.Join(dir, "slapd.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		tb.Fatal(err)
	}
	s.URL = "ldap://127.0.0.1:" + strconv.Itoa(freePort(tb))
	s.LDAPSURL = "ldaps://127.0.0.1:" + strconv.Itoa(freePort(tb))
	// -d 0 keeps slapd in the foreground (supervised) and quiet.
	s.args = []string{"-f", confPath, "-h", s.URL + "/ " + s.LDAPSURL + "/", "-d", "0"}
	s.logPath = filepath.Join(dir, "slapd.log")
	tb.Cleanup(func() {
		s.proc.Stop(syscall.SIGTERM, 10*time.Second)
		if tb.Failed() {
			if b, err := os.ReadFile(s.logPath); err == nil && len(b) > 0 {
				tb.Logf("slapd log:\n%s", b)
			}
		}
	})
	s.Restart()

	var b strings.Builder
	fmt.Fprintf(&b, "dn: %s\nobjectClass: dcObject\nobjectClass: organization\ndc: example\no: Example\n\n", Suffix)
	fmt.Fprintf(&b, "dn: %s\nobjectClass: organizationalUnit\nou: people\n\n", People)
	fmt.Fprintf(&b, "dn: %s\nobjectClass: organizationalUnit\nou: groups\n\n", Groups)
	fmt.Fprintf(&b, "dn: %s\nobjectClass: person\nobjectClass: simpleSecurityObject\ncn: chartctl\nsn: chartctl\nuserPassword: %s\n\n", BindDN, BindPassword)
	members := map[string][]string{}
	var order []string
	for _, u := range users {
		b.WriteString(userLDIF(u))
		for _, g := range u.Groups {
			if _, ok := members[g]; !ok {
				order = append(order, g)
			}
			members[g] = append(members[g], u.DN())
		}
	}
	for _, g := range order {
		fmt.Fprintf(&b, "dn: cn=%s,%s\nobjectClass: groupOfNames\ncn: %s\n", g, Groups, g)
		for _, m := range members[g] {
			fmt.Fprintf(&b, "member: %s\n", m)
		}
		b.WriteString("\n")
	}
	s.Add(b.String())
	return s
}

func userLDIF(u User) string {
	name := u.Name
	if name == "" {
		name = u.UID
	}
	return fmt.Sprintf("dn: %s\nobjectClass: inetOrgPerson\nuid: %s\ncn: %s\nsn: %s\nmail: %s\nuserPassword: %s\n\n", u.DN(), u.UID, name, name, u.Email, u.Password)
}

// AddUser adds u (its groups must exist: use AddToGroup for them).
func (s *Server) AddUser(u User) { s.Add(userLDIF(u)) }

// Add loads LDIF with ldapadd as the root DN.
func (s *Server) Add(ldif string) { s.tool("ldapadd", ldif) }

// Modify applies LDIF changes with ldapmodify as the root DN.
func (s *Server) Modify(ldif string) { s.tool("ldapmodify", ldif) }

// Delete deletes the entry dn with ldapdelete.
func (s *Server) Delete(dn string) { s.tool("ldapdelete", "", dn) }

// AddToGroup makes the user uid a member of the existing group.
func (s *Server) AddToGroup(group, uid string) {
	s.Modify(fmt.Sprintf("dn: cn=%s,%s\nchangetype: modify\nadd: member\nmember: %s\n", group, Groups, User{UID: uid}.DN()))
}

// RemoveFromGroup ends the user uid's membership of group.
func (s *Server) RemoveFromGroup(group, uid string) {
	s.Modify(fmt.Sprintf("dn: cn=%s,%s\nchangetype: modify\ndelete: member\nmember: %s\n", group, Groups, User{UID: uid}.DN()))
}

func (s *Server) tool(name, stdin string, args ...string) {
	s.tb.Helper()
	cmd := exec.Command(filepath.Join(s.utils, name), append([]string{"-x", "-H", s.URL, "-D", s.rootDN, "-w", s.rootPW}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		s.tb.Fatalf("%s: %v\n%s\ninput:\n%s", name, err, out, stdin)
	}
}

// Stop stops slapd (an outage); Restart starts it again on the same
// ports with the same data.
func (s *Server) Stop() { s.proc.Stop(syscall.SIGTERM, 10*time.Second) }

// Restart starts slapd again after Stop.
func (s *Server) Restart() {
	s.tb.Helper()
	ready := func() error {
		for _, u := range []string{s.URL, s.LDAPSURL} {
			c, err := net.DialTimeout("tcp", strings.TrimPrefix(strings.TrimPrefix(u, "ldap://"), "ldaps://"), time.Second)
			if err != nil {
				return err
			}
			c.Close()
		}
		return nil
	}
	// A bound on start-up so a broken slapd fails the test instead of
	// hanging it; not a timing assertion.
	if err := s.proc.Start(exec.Command(s.bin, s.args...), s.logPath, time.Minute, ready, syscall.SIGTERM); err != nil {
		s.tb.Fatalf("start slapd: %v", err)
	}
}

// schemaDir is where the distribution keeps OpenLDAP's schema files.
func schemaDir() string {
	for _, d := range []string{"/etc/ldap/schema", "/etc/openldap/schema", "/usr/local/etc/openldap/schema"} {
		if _, err := os.Stat(filepath.Join(d, "core.schema")); err == nil {
			return d
		}
	}
	return "/etc/ldap/schema"
}

// moduleDir is where the distribution keeps slapd's modules (back_mdb).
func moduleDir() string {
	for _, d := range []string{"/usr/lib/ldap", "/usr/lib64/openldap", "/usr/lib/openldap", "/usr/libexec/openldap"} {
		if _, err := os.Stat(d); err == nil {
			return d
		}
	}
	return "/usr/lib/ldap"
}

// freePort returns a TCP port free on 127.0.0.1 now; slapd binds it.
func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
