package serve

import (
	"strings"
	"testing"
)

// TestLDAPConfig: the directory settings come from flags, CHARTCTL_* and
// the config file alike, with the contract's defaults.
func TestLDAPConfig(t *testing.T) {
	c, err := parse(t, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.LDAPURL != "" || c.LDAPUserFilter != "(uid=%s)" || c.LDAPEmailAttr != "mail" || c.LDAPGroupFilter != "(member=%s)" || c.LDAPGroupNameAttr != "cn" || c.LDAPInsecure {
		t.Fatalf("defaults: %+v", c)
	}
	c, err = parse(t, []string{"--ldap-url", "ldaps://ad.example.com", "--ldap-user-filter", "(sAMAccountName=%s)", "--local-signin=false"}, map[string]string{
		"CHARTCTL_LDAP_BIND_DN":            "cn=svc,dc=example,dc=com",
		"CHARTCTL_LDAP_BIND_PASSWORD_FILE": "/run/secrets/ldap",
		"CHARTCTL_LDAP_USER_BASE":          "ou=people,dc=example,dc=com",
		"CHARTCTL_LDAP_GROUP_BASE":         "ou=groups,dc=example,dc=com",
		"CHARTCTL_LDAP_GROUP_FILTER":       "(member:1.2.840.113556.1.4.1941:=%s)",
		"CHARTCTL_LDAP_ADMIN_GROUP":        "chartctl-admins",
		"CHARTCTL_LDAP_EMAIL_ATTR":         "userPrincipalName",
		"CHARTCTL_LDAP_GROUP_NAME_ATTR":    "sAMAccountName",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.LDAPBindDN != "cn=svc,dc=example,dc=com" || c.LDAPBindPasswordFile != "/run/secrets/ldap" || c.LDAPUserBase != "ou=people,dc=example,dc=com" ||
		c.LDAPUserFilter != "(sAMAccountName=%s)" || c.LDAPGroupFilter != "(member:1.2.840.113556.1.4.1941:=%s)" || c.LDAPAdminGroup != "chartctl-admins" ||
		c.LDAPEmailAttr != "userPrincipalName" || c.LDAPGroupNameAttr != "sAMAccountName" || c.LocalSignIn {
		t.Fatalf("config = %+v", c)
	}
	path := writeConfig(t, "ldap-url: ldap://dir.example.com\nldap-user-base: ou=people,dc=example,dc=com\nldap-insecure: true\nlocal-signin: false\n")
	o, _, err := runServeCmd(t, []string{"--config", path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o.Config.LDAPURL != "ldap://dir.example.com" || !o.Config.LDAPInsecure || o.Config.LocalSignIn {
		t.Fatalf("from the config file: %+v", o.Config)
	}
}

func TestLDAPConfigValidate(t *testing.T) {
	base := []string{"--ldap-url", "ldaps://dir", "--ldap-user-base", "dc=x"}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--ldap-url", "https://dir", "--ldap-user-base", "dc=x"}, "invalid --ldap-url"},
		{[]string{"--ldap-url", "ldaps://dir"}, "needs --ldap-user-base"},
		{[]string{"--ldap-user-base", "dc=x"}, "need --ldap-url"},
		{append([]string{"--ldap-bind-dn", "cn=svc"}, base...), "--ldap-bind-dn and --ldap-bind-password-file go together"},
		{append([]string{"--ldap-admin-group", "admins"}, base...), "--ldap-admin-group needs --ldap-group-base"},
		{append([]string{"--ldap-user-filter", "(uid=ana)"}, base...), "--ldap-user-filter"},
		{append([]string{"--ldap-group-filter", "(member=%s"}, base...), "--ldap-group-filter"},
		{[]string{"--local-signin=false"}, "set --oidc-issuer or --ldap-url"},
	} {
		_, err := parse(t, tc.args, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want mention of %q", tc.args, err, tc.want)
		}
	}
	if _, err := parse(t, append([]string{"--local-signin=false"}, base...), nil); err != nil {
		t.Errorf("--local-signin=false with LDAP: %v", err)
	}
}
