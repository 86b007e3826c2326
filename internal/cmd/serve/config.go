package serve

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/clientip"
	"github.com/chartctl/chartctl/internal/httpx"
	"github.com/chartctl/chartctl/internal/identity/ldap"
	"github.com/chartctl/chartctl/internal/importer"
	"github.com/chartctl/chartctl/internal/netguard"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/text"
	"github.com/chartctl/chartctl/internal/tlsconfig"
	"github.com/chartctl/chartctl/server"
)

// Config is the server's configuration (CONTRACT §9): one struct with
// defaults, bound to flags and to CHARTCTL_* environment variables, checked
// by Validate.
type Config struct {
	Addr           string
	Data           string
	BaseURL        string
	AuthURL        string
	MaxChartSize   ByteSize
	AllowOverwrite bool
	// RepoNameGrace is how long a deleted repository's name stays reserved
	// for its owner (0 turns the reservation off).
	RepoNameGrace   time.Duration
	RateLimitGlobal ratelimit.Limit
	RateLimitUpload ratelimit.Limit
	RateLimitSearch ratelimit.Limit
	RateLimitKeys   ratelimit.Limit
	MaxAPIKeys      int
	MaxConnsPerIP   int
	// UploadMinRate is the rate upload bodies must keep (zero: off).
	UploadMinRate httpx.MinRate
	// MaxConcurrentUploads caps the uploads one credential runs at once
	// (0: no cap).
	MaxConcurrentUploads int
	MaxBlobSize          ByteSize
	IdleTimeout          time.Duration
	GCGrace              time.Duration
	TrustedProxies       string
	CORSOrigins          []string
	AdminEmail           string
	// AdminPasswordFile, if set, holds the first admin's password.
	AdminPasswordFile string
	LogFormat         string
	LogLevel          string
	DebugAddr         string
	TLSCert           string
	TLSKey            string
	ACMEDomains       []string
	ACMEEmail         string
	ACMEDirectory     string
	ACMEHTTPAddr      string
	// Events, webhooks and audit (CONTRACT §15).
	SecretsKeyFile       string
	AllowPrivateWebhooks bool
	WebhookRetryBase     time.Duration
	WebhookTimeout       time.Duration
	AuditRetention       Days
	// DefaultRepoQuota is the max_bytes quota of new repositories (0:
	// unlimited).
	DefaultRepoQuota ByteSizeOrZero
	// IndexFormat is the index format of new repositories that do not
	// choose one: json or yaml.
	IndexFormat string
	// BlobCacheSize is the memory kept for small blobs served to
	// downloads (0: none).
	BlobCacheSize ByteSizeOrZero
	// AllowPrivateUpstreams lets mirror and proxy repositories follow
	// upstreams on loopback, private and link-local addresses (CONTRACT
	// §14): all of them (true), or, for proxies, those of a CIDR list
	// (CONTRACT §18).
	AllowPrivateUpstreams PrivateAllowance
	// PlainHTTPUpstreams are the HOST:PORTs proxy repositories and
	// replication targets may be reached at over plain http.
	PlainHTTPUpstreams []string
	// UpstreamTimeout bounds each request of a proxy repository to its
	// upstream (CONTRACT §18 decision 16); past it the cache serves what
	// it has, stale.
	UpstreamTimeout time.Duration
	// UpstreamIndexMaxSize is the largest upstream index.yaml a mirror
	// sync reads (CONTRACT §18 decision 15).
	UpstreamIndexMaxSize ByteSize
	// OIDCTrustInsecureIssuers are OIDC issuers of trusted publishers the
	// operator vouches for: they may be plain http and on private
	// addresses (CONTRACT §18 decision 5).
	OIDCTrustInsecureIssuers []string
	// RateLimitOIDCToken bounds token exchanges per client address.
	RateLimitOIDCToken ratelimit.Limit
	// Sign-in through an OpenID Connect provider (CONTRACT §18
	// "Sign-in"): off unless OIDCIssuer is set.
	OIDCIssuer               string
	OIDCClientID             string
	OIDCClientSecretFile     string
	OIDCName                 string
	OIDCScopes               []string
	OIDCGroupsClaim          string
	OIDCAdminGroup           string
	OIDCAllowUnverifiedEmail bool
	// LocalSignIn keeps the password form on the sign-in page; false
	// leaves it at /signin/local, for local admins only.
	LocalSignIn bool
	// Sign-in with a directory login (CONTRACT §18 "Sign-in"): off
	// unless LDAPURL is set.
	LDAPURL              string
	LDAPBindDN           string
	LDAPBindPasswordFile string
	LDAPUserBase         string
	LDAPUserFilter       string
	LDAPEmailAttr        string
	LDAPGroupBase        string
	LDAPGroupFilter      string
	LDAPGroupNameAttr    string
	LDAPAdminGroup       string
	LDAPInsecure         bool
	// SigstoreTrustedRoot is the file of the Sigstore trusted root
	// (trusted_root.json: Fulcio CAs, Rekor and CT log keys, timestamp
	// authorities) that cosign keyless signatures are verified against;
	// empty: keyless trust entries verify nothing, saying why.
	SigstoreTrustedRoot string
}

// DefaultConfig returns the documented defaults.
func DefaultConfig() Config {
	return Config{
		Addr:                 "127.0.0.1:8080",
		Data:                 "./chartctl-data",
		MaxChartSize:         10 << 20,
		RepoNameGrace:        24 * time.Hour,
		RateLimitGlobal:      ratelimit.Limit{N: 1000, Window: 3600e9},
		RateLimitUpload:      ratelimit.Limit{N: 100, Window: 3600e9},
		RateLimitSearch:      ratelimit.Limit{N: 300, Window: 3600e9},
		RateLimitKeys:        ratelimit.Limit{N: 50, Window: 3600e9},
		RateLimitOIDCToken:   ratelimit.Limit{N: 300, Window: 3600e9},
		MaxAPIKeys:           100,
		MaxBlobSize:          10 << 30,
		IdleTimeout:          60 * time.Second,
		UploadMinRate:        httpx.DefaultUploadMinRate,
		MaxConcurrentUploads: 8,
		GCGrace:              time.Hour,
		AdminEmail:           "admin@localhost",
		LogFormat:            "text",
		IndexFormat:          "json",
		LogLevel:             "info",
		WebhookRetryBase:     5 * time.Second,
		WebhookTimeout:       10 * time.Second,
		AuditRetention:       365,
		BlobCacheSize:        server.DefaultBlobCacheSize,

		UpstreamIndexMaxSize: importer.DefaultMaxIndexSize,
		UpstreamTimeout:      10 * time.Second,

		OIDCName:        "SSO",
		OIDCGroupsClaim: "groups",
		LocalSignIn:     true,

		LDAPUserFilter:    ldap.DefaultUserFilter,
		LDAPEmailAttr:     ldap.DefaultEmailAttr,
		LDAPGroupFilter:   ldap.DefaultGroupFilter,
		LDAPGroupNameAttr: ldap.DefaultGroupNameAttr,
	}
}

// AddFlags binds the configuration to flags.
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "address to listen on (host:port)")
	fs.StringVar(&c.Data, "data", c.Data, "data directory: the metadata database and chart blobs")
	fs.StringVar(&c.BaseURL, "base-url", c.BaseURL, "external URL of the server, e.g. https://charts.example.com (default: derived from each request)")
	fs.StringVar(&c.AuthURL, "auth-url", c.AuthURL, "external URL of the OAuth authorization server (default: the base URL)")
	fs.Var(&c.MaxChartSize, "max-chart-size", "largest chart archive accepted (e.g. 10MiB)")
	fs.BoolVar(&c.AllowOverwrite, "allow-overwrite", c.AllowOverwrite, "let uploads with ?force=true replace a stored chart version")
	fs.Var((*Duration)(&c.RepoNameGrace), "repo-name-grace", "how long a deleted repository's name stays reserved for its owner, e.g. 24h (0 disables)")
	fs.Var(&c.RateLimitGlobal, "rate-limit-global", "requests per credential per window, e.g. 1000/1h (0 disables)")
	fs.Var(&c.RateLimitUpload, "rate-limit-upload", "chart uploads per repository per window, e.g. 100/1h (0 disables)")
	fs.Var(&c.RateLimitSearch, "rate-limit-search", "searches per client IP per window, e.g. 300/1h (0 disables)")
	fs.Var(&c.RateLimitKeys, "rate-limit-keys", "API keys a user may create per window, e.g. 50/1h (0 disables)")
	fs.Var(&c.RateLimitOIDCToken, "rate-limit-oidc-token", "trusted-publishing token exchanges (POST /v1/oidc/token) per client IP per window, e.g. 300/1h (0 disables)")
	fs.IntVar(&c.MaxAPIKeys, "max-api-keys", c.MaxAPIKeys, "most API keys one user may hold (0: no cap)")
	fs.IntVar(&c.MaxConnsPerIP, "max-conns-per-ip", c.MaxConnsPerIP, "most concurrent connections from one client address (0: no cap; leave off behind a load balancer)")
	fs.Var(&c.UploadMinRate, "upload-min-rate", "slowest an upload body (a chart, an OCI blob or manifest) may arrive, as SIZE/DURATION; slower ones are cut with 408 (0 disables)")
	fs.IntVar(&c.MaxConcurrentUploads, "max-concurrent-uploads", c.MaxConcurrentUploads, "most uploads one credential may run at once; the next is refused with 429 (0: no cap)")
	fs.Var(&c.MaxBlobSize, "max-blob-size", "largest blob the OCI registry accepts (e.g. 10GiB)")
	fs.Var((*Duration)(&c.IdleTimeout), "idle-timeout", "cut a registry blob transfer after this long without a byte")
	fs.Var((*Duration)(&c.GCGrace), "gc-grace", "unreferenced blobs younger than this are never collected")
	fs.StringVar(&c.TrustedProxies, "trusted-proxies", c.TrustedProxies, "comma-separated proxy addresses or CIDRs whose X-Forwarded-For is believed")
	fs.StringSliceVar(&c.CORSOrigins, "cors-origins", c.CORSOrigins, "comma-separated browser origins allowed to call /v1, e.g. https://editor.swagger.io (default none)")
	fs.StringVar(&c.AdminEmail, "admin-email", c.AdminEmail, "email of the admin user created on first start")
	fs.StringVar(&c.AdminPasswordFile, "admin-password-file", c.AdminPasswordFile, "file holding the first admin's password (or set CHARTCTL_ADMIN_PASSWORD); then no API key and no initial-admin.json are made")
	fs.StringVar(&c.LogFormat, "log-format", c.LogFormat, "log format: text or json")
	fs.StringVar(&c.LogLevel, "log-level", c.LogLevel, "log level: debug, info, warn or error")
	fs.StringVar(&c.DebugAddr, "debug-addr", c.DebugAddr, "loopback address for pprof (off when empty), e.g. 127.0.0.1:6060")
	fs.StringVar(&c.SecretsKeyFile, "secrets-key-file", c.SecretsKeyFile, "file of at least 32 bytes keying the encryption of stored secrets such as webhook secrets (default: DATA/secrets.key, generated on first start)")
	fs.BoolVar(&c.AllowPrivateWebhooks, "allow-private-webhooks", c.AllowPrivateWebhooks, "let webhooks reach loopback, private and link-local addresses")
	fs.Var(&c.AllowPrivateUpstreams, "allow-private-upstreams", "let mirror and proxy repositories reach upstreams, and replications their targets, on loopback, private and link-local addresses: true, or only those in a comma-separated CIDR list, --allow-private-upstreams=10.0.0.0/8,fd00::/8")
	fs.Lookup("allow-private-upstreams").NoOptDefVal = "true"
	fs.StringSliceVar(&c.PlainHTTPUpstreams, "plain-http-upstreams", c.PlainHTTPUpstreams, "comma-separated HOST:PORTs of proxy upstreams and replication targets reached over plain http (every other one is https)")
	fs.Var((*Duration)(&c.UpstreamTimeout), "upstream-timeout", "time limit of one request of a proxy repository to its upstream; past it what is cached is served, marked stale")
	fs.StringSliceVar(&c.OIDCTrustInsecureIssuers, "oidc-trust-insecure-issuers", c.OIDCTrustInsecureIssuers, "comma-separated OIDC issuer URLs that trusted publishers may name although they are plain http or on private addresses (tests, an in-cluster issuer)")
	fs.StringVar(&c.OIDCIssuer, "oidc-issuer", c.OIDCIssuer, "sign people in through this OpenID Connect provider (https issuer URL; needs --base-url, --oidc-client-id and --oidc-client-secret-file)")
	fs.StringVar(&c.OIDCClientID, "oidc-client-id", c.OIDCClientID, "chartctl's client ID at the OpenID Connect provider")
	fs.StringVar(&c.OIDCClientSecretFile, "oidc-client-secret-file", c.OIDCClientSecretFile, "file holding chartctl's client secret at the OpenID Connect provider")
	fs.StringVar(&c.OIDCName, "oidc-name", c.OIDCName, "the provider's name on the sign-in button: \"Sign in with NAME\"")
	fs.StringSliceVar(&c.OIDCScopes, "oidc-scopes", c.OIDCScopes, "comma-separated scopes to ask for besides openid, email and profile, e.g. groups")
	fs.StringVar(&c.OIDCGroupsClaim, "oidc-groups-claim", c.OIDCGroupsClaim, "the ID token claim that lists the person's groups")
	fs.StringVar(&c.OIDCAdminGroup, "oidc-admin-group", c.OIDCAdminGroup, "members of this provider group are server admins (checked at every sign-in)")
	fs.BoolVar(&c.OIDCAllowUnverifiedEmail, "oidc-allow-unverified-email", c.OIDCAllowUnverifiedEmail, "accept ID tokens whose email_verified is false")
	fs.BoolVar(&c.LocalSignIn, "local-signin", c.LocalSignIn, "show the password form on the sign-in page; false keeps it at /signin/local for local admins only")
	fs.StringVar(&c.LDAPURL, "ldap-url", c.LDAPURL, "sign people in with their directory login through this LDAP server: ldaps://HOST[:PORT], or ldap://HOST[:PORT] upgraded with StartTLS (needs --ldap-user-base)")
	fs.StringVar(&c.LDAPBindDN, "ldap-bind-dn", c.LDAPBindDN, "DN of the service account that searches the directory (empty: anonymous searches)")
	fs.StringVar(&c.LDAPBindPasswordFile, "ldap-bind-password-file", c.LDAPBindPasswordFile, "file holding the password of --ldap-bind-dn")
	fs.StringVar(&c.LDAPUserBase, "ldap-user-base", c.LDAPUserBase, "DN people are searched under, e.g. ou=people,dc=example,dc=com")
	fs.StringVar(&c.LDAPUserFilter, "ldap-user-filter", c.LDAPUserFilter, "filter that finds a person by login, %s standing for the escaped login, e.g. (sAMAccountName=%s) for Active Directory")
	fs.StringVar(&c.LDAPEmailAttr, "ldap-email-attr", c.LDAPEmailAttr, "attribute holding a person's email")
	fs.StringVar(&c.LDAPGroupBase, "ldap-group-base", c.LDAPGroupBase, "DN groups are searched under (empty: groups are not read)")
	fs.StringVar(&c.LDAPGroupFilter, "ldap-group-filter", c.LDAPGroupFilter, "filter that finds a person's groups, %s standing for the person's escaped DN; nested Active Directory groups: (member:1.2.840.113556.1.4.1941:=%s)")
	fs.StringVar(&c.LDAPGroupNameAttr, "ldap-group-name-attr", c.LDAPGroupNameAttr, "attribute holding a group's name")
	fs.StringVar(&c.LDAPAdminGroup, "ldap-admin-group", c.LDAPAdminGroup, "members of this directory group (by name) are server admins (checked at every sign-in)")
	fs.StringVar(&c.SigstoreTrustedRoot, "sigstore-trusted-root", c.SigstoreTrustedRoot, "Sigstore trusted root (trusted_root.json, e.g. from `cosign trusted-root create` or the TUF repository of your Sigstore) that cosign keyless signatures are verified against; without it keyless trust entries verify nothing")
	fs.BoolVar(&c.LDAPInsecure, "ldap-insecure", c.LDAPInsecure, "let an ldap:// URL run without StartTLS: passwords cross the network in clear text")
	fs.Var(&c.UpstreamIndexMaxSize, "upstream-index-max-size", "largest upstream index.yaml a mirror sync reads, e.g. 128MiB (a larger one fails the sync, saying so)")
	fs.Var((*Duration)(&c.WebhookRetryBase), "webhook-retry-base", "first retry ceiling of a failed webhook delivery; it doubles per failure, with full jitter, for up to 24h")
	fs.Var((*Duration)(&c.WebhookTimeout), "webhook-timeout", "time limit of one webhook delivery attempt")
	fs.Var(&c.AuditRetention, "audit-retention", "how long audit entries are kept, e.g. 365d or 8760h")
	fs.Var(&c.BlobCacheSize, "blob-cache-size", "memory kept for the small chart archives, provenance files and OCI blobs (up to 256KiB each) downloads are served from, e.g. 64MiB (0 disables)")
	fs.StringVar(&c.IndexFormat, "index-format", c.IndexFormat, "index.yaml format of new repositories that do not choose one: json (Helm 3.13+ loads it several times faster; every Helm reads it) or yaml")
	fs.Var(&c.DefaultRepoQuota, "default-repository-quota", "max_bytes quota of new repositories, e.g. 1GiB (0: unlimited, the default)")

	fs.StringVar(&c.TLSCert, "tls-cert", c.TLSCert, "PEM certificate (and chain) to serve HTTPS on --addr; re-read when it changes")
	fs.StringVar(&c.TLSKey, "tls-key", c.TLSKey, "PEM private key of --tls-cert; re-read when it changes")
	fs.StringSliceVar(&c.ACMEDomains, "acme-domain", c.ACMEDomains, "obtain certificates for these names over ACME and serve HTTPS on --addr (TLS-ALPN-01)")
	fs.StringVar(&c.ACMEEmail, "acme-email", c.ACMEEmail, "contact email of the ACME account")
	fs.StringVar(&c.ACMEDirectory, "acme-directory", c.ACMEDirectory, "ACME directory URL (default: Let's Encrypt)")
	fs.StringVar(&c.ACMEHTTPAddr, "acme-http-addr", c.ACMEHTTPAddr, "also answer ACME HTTP-01 challenges on this plain-HTTP address, e.g. 0.0.0.0:80")
}

// Validate checks the configuration and returns the first problem, said
// so that the operator knows what to change.
func (c *Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return fmt.Errorf("invalid --addr %q: use host:port, e.g. 127.0.0.1:8080", c.Addr)
	}
	for _, h := range c.PlainHTTPUpstreams {
		if host, port, err := net.SplitHostPort(h); err != nil || host == "" || port == "" {
			return fmt.Errorf("invalid --plain-http-upstreams entry %q: use HOST:PORT, e.g. charts.internal:8080", h)
		}
	}
	if c.UpstreamTimeout <= 0 {
		return fmt.Errorf("--upstream-timeout must be positive, e.g. 10s")
	}
	if c.Data == "" {
		return fmt.Errorf("--data must name a directory")
	}
	for flag, v := range map[string]string{"--base-url": c.BaseURL, "--auth-url": c.AuthURL} {
		if v == "" {
			continue
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("invalid %s %q: use an absolute http(s) URL", flag, v)
		}
	}
	if c.MaxChartSize < 1024 {
		return fmt.Errorf("--max-chart-size must be at least 1KiB")
	}
	if c.MaxConcurrentUploads < 0 {
		return fmt.Errorf("invalid --max-concurrent-uploads %d: use 0 (no cap) or more", c.MaxConcurrentUploads)
	}
	if c.RepoNameGrace < 0 {
		return fmt.Errorf("invalid --repo-name-grace %s: use a duration of 0 or more, e.g. 24h", c.RepoNameGrace)
	}
	if _, err := clientip.ParseTrusted(c.TrustedProxies); err != nil {
		return fmt.Errorf("invalid --trusted-proxies: %w", err)
	}
	for _, o := range c.CORSOrigins {
		if o == "*" {
			continue
		}
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return fmt.Errorf("invalid --cors-origins entry %q: use an origin such as https://editor.example.com (scheme and host, no path), or *", o)
		}
	}
	for _, iss := range c.OIDCTrustInsecureIssuers {
		u, err := url.Parse(iss)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return fmt.Errorf("invalid --oidc-trust-insecure-issuers entry %q: use an issuer URL such as http://issuer.internal:8080", iss)
		}
	}
	if err := c.validateOIDC(); err != nil {
		return err
	}
	if err := c.validateLDAP(); err != nil {
		return err
	}
	if !chartctl.IndexFormat(c.IndexFormat).Valid() {
		return fmt.Errorf("invalid --index-format %q: use json or yaml", c.IndexFormat)
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("invalid --log-format %q: use text or json", c.LogFormat)
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("invalid --log-level %q: use debug, info, warn or error", c.LogLevel)
	}
	if c.WebhookRetryBase < 10*time.Millisecond {
		return fmt.Errorf("--webhook-retry-base must be at least 10ms")
	}
	if c.WebhookTimeout < 100*time.Millisecond || c.WebhookTimeout > 5*time.Minute {
		return fmt.Errorf("--webhook-timeout must be between 100ms and 5m")
	}
	if err := c.TLS(nil).Validate(); err != nil {
		return err
	}
	if c.DebugAddr != "" {
		host, _, err := net.SplitHostPort(c.DebugAddr)
		ip := net.ParseIP(host)
		if err != nil || !(host == "localhost" || ip != nil && ip.IsLoopback()) {
			return fmt.Errorf("invalid --debug-addr %q: it must be a loopback address such as 127.0.0.1:6060", c.DebugAddr)
		}
	}
	return nil
}

// validateOIDC checks the sign-in settings: all or nothing, an https
// issuer, and a base URL to build the redirect URI from.
func (c *Config) validateOIDC() error {
	if c.OIDCIssuer == "" {
		if c.OIDCClientID != "" || c.OIDCClientSecretFile != "" || c.OIDCAdminGroup != "" {
			return fmt.Errorf("--oidc-client-id, --oidc-client-secret-file and --oidc-admin-group need --oidc-issuer")
		}
		if !c.LocalSignIn && c.LDAPURL == "" {
			return fmt.Errorf("--local-signin=false needs another way to sign in: set --oidc-issuer or --ldap-url")
		}
		return nil
	}
	u, err := url.Parse(c.OIDCIssuer)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("invalid --oidc-issuer %q: use the provider's https issuer URL, e.g. https://login.example.com/realms/acme", c.OIDCIssuer)
	}
	if c.OIDCClientID == "" || c.OIDCClientSecretFile == "" {
		return fmt.Errorf("--oidc-issuer needs --oidc-client-id and --oidc-client-secret-file (the client registered at the provider)")
	}
	if c.BaseURL == "" {
		return fmt.Errorf("--oidc-issuer needs --base-url: the redirect URI registered at the provider is {base-url}/signin/oidc/callback")
	}
	if strings.TrimSpace(c.OIDCName) == "" {
		return fmt.Errorf("--oidc-name must not be empty: it labels the sign-in button")
	}
	if strings.TrimSpace(c.OIDCGroupsClaim) == "" {
		return fmt.Errorf("--oidc-groups-claim must name a claim, e.g. groups")
	}
	return nil
}

// validateLDAP checks the directory settings: all or nothing, a URL and
// filters go-ldap accepts, and the service account's password file with
// its DN.
func (c *Config) validateLDAP() error {
	if c.LDAPURL == "" {
		if c.LDAPBindDN != "" || c.LDAPBindPasswordFile != "" || c.LDAPUserBase != "" || c.LDAPGroupBase != "" || c.LDAPAdminGroup != "" || c.LDAPInsecure {
			return fmt.Errorf("--ldap-bind-dn, --ldap-bind-password-file, --ldap-user-base, --ldap-group-base, --ldap-admin-group and --ldap-insecure need --ldap-url")
		}
		return nil
	}
	if (c.LDAPBindDN == "") != (c.LDAPBindPasswordFile == "") {
		return fmt.Errorf("--ldap-bind-dn and --ldap-bind-password-file go together: the service account that searches the directory and its password")
	}
	if c.LDAPAdminGroup != "" && c.LDAPGroupBase == "" {
		return fmt.Errorf("--ldap-admin-group needs --ldap-group-base, where groups are searched")
	}
	_, err := ldap.New(c.ldapConfig(""))
	return err
}

// ldapConfig is the directory's configuration with the service account's
// password.
func (c *Config) ldapConfig(bindPassword string) ldap.Config {
	return ldap.Config{URL: c.LDAPURL, Insecure: c.LDAPInsecure, BindDN: c.LDAPBindDN, BindPassword: bindPassword,
		UserBase: c.LDAPUserBase, UserFilter: c.LDAPUserFilter, EmailAttr: c.LDAPEmailAttr,
		GroupBase: c.LDAPGroupBase, GroupFilter: c.LDAPGroupFilter, GroupNameAttr: c.LDAPGroupNameAttr}
}

// ByteSize is a size in bytes that parses "10MiB", "512KiB", "10M", "1048576".
type ByteSize int64

// String formats the size with a binary unit when exact.
func (b *ByteSize) String() string { return text.ExactBytes(int64(*b)) }

// Set parses a size.
func (b *ByteSize) Set(s string) error {
	n, err := parseSize(s, false)
	if err != nil {
		return err
	}
	*b = ByteSize(n)
	return nil
}

// parseSize parses a size as people write it (text.ParseBytes, as the
// CLI's quota flags do) of at most 1 TiB, positive unless zero is allowed.
func parseSize(s string, zero bool) (int64, error) {
	n, err := text.ParseBytes(s)
	if err != nil {
		return 0, err
	}
	if (n == 0 && !zero) || n > 1<<40 {
		return 0, fmt.Errorf("invalid size %q: use a size from 1 byte to 1TiB, such as 10MiB", s)
	}
	return n, nil
}

// Type names the flag's value type in help.
func (b *ByteSize) Type() string { return "size" }

// ByteSizeOrZero is a ByteSize that may also be 0 ("0", "0B", "0MiB"): for
// the flags where 0 turns something off (--blob-cache-size).
type ByteSizeOrZero ByteSize

// String formats the size as ByteSize does.
func (b *ByteSizeOrZero) String() string { return (*ByteSize)(b).String() }

// Set parses a size or zero.
func (b *ByteSizeOrZero) Set(s string) error {
	n, err := parseSize(s, true)
	if err != nil {
		return err
	}
	*b = ByteSizeOrZero(n)
	return nil
}

// Type names the flag's value type in help.
func (b *ByteSizeOrZero) Type() string { return "size" }

// Days is a retention period in whole days that parses "365d", "365" or a
// Go duration of whole days ("8760h").
type Days int

// String formats the period as "<n>d".
func (d *Days) String() string { return strconv.Itoa(int(*d)) + "d" }

// Set parses a period.
func (d *Days) Set(s string) error {
	t := strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(t, "d"); ok {
		t = n
	} else if dur, err := time.ParseDuration(t); err == nil {
		if dur <= 0 || dur%(24*time.Hour) != 0 {
			return fmt.Errorf("invalid period %q: use whole days, e.g. 365d", s)
		}
		*d = Days(dur / (24 * time.Hour))
		return nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 1 || n > 36500 {
		return fmt.Errorf("invalid period %q: use whole days, e.g. 365d", s)
	}
	*d = Days(n)
	return nil
}

// Type names the flag's value type in help.
func (d *Days) Type() string { return "days" }

// Duration is the period as a time.Duration.
func (d Days) Duration() time.Duration { return time.Duration(d) * 24 * time.Hour }

// Duration is a time.Duration flag value that also takes whole days
// ("30d"), as every duration does (CONTRACT §14): the duration flags bind
// their time.Duration fields through it, (*Duration)(&c.GCGrace).
type Duration time.Duration

// String formats the duration as time.Duration does ("1h0m0s").
func (d *Duration) String() string { return time.Duration(*d).String() }

// Set parses a Go duration ("90s", "12h") or a whole number of days ("7d")
// (text.ParseDuration).
func (d *Duration) Set(s string) error {
	v, err := text.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// Type names the flag's value type in help.
func (d *Duration) Type() string { return "duration" }

// TLS returns the TLS options of the configuration; ACME state is cached
// under DATA/acme.
func (c *Config) TLS(logger *slog.Logger) *tlsconfig.Options {
	return &tlsconfig.Options{
		CertFile:      c.TLSCert,
		KeyFile:       c.TLSKey,
		ACMEDomains:   c.ACMEDomains,
		ACMEEmail:     c.ACMEEmail,
		ACMEDirectory: c.ACMEDirectory,
		ACMEHTTPAddr:  c.ACMEHTTPAddr,
		CacheDir:      filepath.Join(c.Data, "acme"),
		Logger:        logger,
	}
}

// PrivateAllowance is --allow-private-upstreams: true/false, or a
// comma-separated CIDR list (netguard.ParseAllowance).
type PrivateAllowance netguard.Allowance

// String writes the value as Set reads it.
func (a *PrivateAllowance) String() string { return netguard.Allowance(*a).String() }

// Set reads true, false or a CIDR list.
func (a *PrivateAllowance) Set(s string) error {
	v, err := netguard.ParseAllowance(s)
	if err != nil {
		return err
	}
	*a = PrivateAllowance(v)
	return nil
}

// Type names the value in --help.
func (a *PrivateAllowance) Type() string { return "true|CIDRs" }
