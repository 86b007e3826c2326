package chartctl

import (
	"path"
	"strings"
	"time"
)

// DefaultProxyTTL is how long a proxy repository trusts what it fetched
// from its upstream (the index, an OCI tag) before it asks again, when
// the repository sets no ttl.
const DefaultProxyTTL = 10 * time.Minute

// MinProxyTTL is the shortest ttl a proxy repository may set.
const MinProxyTTL = time.Second

// DefaultProxyRetention is how long a proxy repository keeps a cached
// version nobody pulls, when the repository sets no retention (CONTRACT
// §18 decision 16).
const DefaultProxyRetention = 30 * 24 * time.Hour

// Proxy makes a repository a read-only pull-through cache of an upstream
// Helm repository or OCI registry path (CONTRACT §18 "Federation"): a
// chart version is fetched from the upstream the first time someone asks
// for it, stored like any other version and served from here after.
type Proxy struct {
	// URL is the upstream: an http(s) Helm repository (its index.yaml is
	// below it) or oci://HOST/PATH.
	URL string
	// Username and Password are the upstream's credential, both empty for
	// none. Password is sealed with the server's secrets key, as a
	// mirror's is: stores keep it as opaque bytes and no API shows it.
	Username string
	Password []byte
	// TTL is how long a fetched index or tag is served before it is
	// revalidated with the upstream; at least MinProxyTTL.
	TTL time.Duration
	// Retention is how long a cached version is kept after its last
	// use (its fill or its last pull by any protocol); past it the
	// version is evicted and fetched again on demand. Zero (records
	// written before it existed) means DefaultProxyRetention.
	Retention time.Duration
	// Include and Exclude are path.Match globs on chart names: a chart is
	// proxied when it matches an Include pattern (or Include is empty)
	// and no Exclude pattern.
	Include []string
	Exclude []string
}

// EffectiveRetention is p's Retention, DefaultProxyRetention when unset.
func (p *Proxy) EffectiveRetention() time.Duration {
	if p.Retention <= 0 {
		return DefaultProxyRetention
	}
	return p.Retention
}

// OCI reports whether the upstream is an OCI registry (oci://).
func (p *Proxy) OCI() bool { return strings.HasPrefix(p.URL, "oci://") }

// Allows reports whether the chart name passes the Include and Exclude
// filters.
func (p *Proxy) Allows(name string) bool {
	for _, g := range p.Exclude {
		if ok, _ := path.Match(g, name); ok {
			return false
		}
	}
	if len(p.Include) == 0 {
		return true
	}
	for _, g := range p.Include {
		if ok, _ := path.Match(g, name); ok {
			return true
		}
	}
	return false
}

// Clone returns a copy of p that shares no slices with it.
func (p *Proxy) Clone() *Proxy {
	if p == nil {
		return nil
	}
	out := *p
	out.Password = append([]byte(nil), p.Password...)
	if len(p.Password) == 0 {
		out.Password = nil
	}
	out.Include = append([]string(nil), p.Include...)
	out.Exclude = append([]string(nil), p.Exclude...)
	return &out
}

// EUPSTREAM: a proxy repository's upstream failed and nothing is cached
// (CONTRACT §18, 502 upstream_unavailable); the message names the
// upstream's host.
const EUPSTREAM = "upstream_unavailable"

// CredentialProxy is the server itself filling a proxy repository from
// its upstream (an Actor's CredentialKind).
const CredentialProxy = "proxy"
