// Package dump copies a store's logical dump (chartctl.DumpRecord, as a
// chartctl.Exporter sends it) into another store, of the same engine or
// not: the one record-copying path of `chartctl admin restore` (through
// internal/backup) and `chartctl admin migrate`. A new kind of stored data
// is added to chartctl.DumpRecord, to each engine's Export and to Load
// here, and both commands carry it.
package dump

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Target is a store a dump is loaded into, and read back from: every
// engine is one.
type Target interface {
	chartctl.Store
	chartctl.OAuthStore
	chartctl.OCIStore
	chartctl.Exporter
}

// Counts is how many records of each kind (chartctl.DumpKinds) were
// loaded.
type Counts map[string]int

var errNotEmpty = errors.New("not empty")

// Empty reports whether e holds no record, and if it does, the kind of
// the first one found.
func Empty(ctx context.Context, e chartctl.Exporter) (empty bool, kind string, err error) {
	err = e.Export(ctx, nil, func(r chartctl.DumpRecord) error {
		kind = r.Kind()
		return errNotEmpty
	})
	if errors.Is(err, errNotEmpty) {
		return false, kind, nil
	}
	return err == nil, "", err
}

// Read collects e's whole dump, from one snapshot.
func Read(ctx context.Context, e chartctl.Exporter) ([]chartctl.DumpRecord, error) {
	var out []chartctl.DumpRecord
	err := e.Export(ctx, nil, func(r chartctl.DumpRecord) error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// Load writes records into t, which should be empty, keeping every ID,
// time, hash and sealed secret. Records may come in any order: they are
// written kind by kind in chartctl.DumpKinds order (so each comes after
// what it refers to, and quotas after the chart versions they limit),
// OCI manifests after the manifests they list, tags after their
// manifests, download counters after their chart versions, and the audit
// log last, in the dump's order, in one call. Audit entries get new IDs
// (in the same order); blob links are dated now.
//
// Load stops at the first error, leaving what it wrote: run it inside a
// transaction of t (postgres.DB.Import) or on a store that is thrown away
// on failure.
func Load(ctx context.Context, t Target, records []chartctl.DumpRecord) (Counts, error) {
	byKind := map[string][]chartctl.DumpRecord{}
	for _, r := range records {
		k := r.Kind()
		if k == "" {
			return nil, fmt.Errorf("an empty dump record")
		}
		byKind[k] = append(byKind[k], r)
	}
	counts := Counts{}
	for _, kind := range chartctl.DumpKinds {
		rs := byKind[kind]
		if len(rs) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return counts, err
		}
		var err error
		switch kind {
		case chartctl.DumpOCIManifest:
			err = loadManifests(ctx, t, rs)
		case chartctl.DumpOCITag:
			err = loadTags(ctx, t, rs, byKind[chartctl.DumpOCIManifest])
		case chartctl.DumpAuditEntry:
			err = loadAudit(ctx, t, rs)
		default:
			for _, r := range rs {
				if err = loadOne(ctx, t, r); err != nil {
					break
				}
			}
			if err == nil && kind == chartctl.DumpChartVersion {
				err = loadDownloads(ctx, t, rs)
			}
		}
		if err != nil {
			return counts, err
		}
		counts[kind] = len(rs)
	}
	return counts, nil
}

// loadOne writes one record of a kind without ordering rules of its own.
func loadOne(ctx context.Context, t Target, r chartctl.DumpRecord) error {
	var (
		err  error
		what string
	)
	switch {
	case r.User != nil:
		u := *r.User
		what, err = "user "+u.Email, t.CreateUser(ctx, &u)
	case r.APIKey != nil:
		k := *r.APIKey
		what, err = "API key "+k.ID, t.CreateAPIKey(ctx, &k)
	case r.OAuthClient != nil:
		c := *r.OAuthClient
		what, err = "OAuth client "+c.ID, t.CreateOAuthClient(ctx, &c)
	case r.Organization != nil:
		o := *r.Organization
		what, err = "organization "+o.Name, t.CreateOrganization(ctx, &o)
	case r.Repository != nil:
		p := *r.Repository
		what, err = "repository "+p.Name, t.CreateRepository(ctx, &p)
	case r.Team != nil:
		tm := *r.Team
		what, err = "team "+tm.Name, t.CreateTeam(ctx, &tm)
	case r.Member != nil:
		m := *r.Member
		what, err = "member "+m.Email+" of team "+m.Team, t.AddMember(ctx, &m)
	case r.ChartVersion != nil:
		cv := *r.ChartVersion
		what = fmt.Sprintf("chart %s %s in %s", cv.Name, cv.Version, cv.Repository)
		_, _, _, err = t.PutChartVersion(ctx, &cv, chartctl.PutVersionOptions{})
	case r.Quota != nil:
		q := r.Quota
		what, err = "quota of "+q.Scope+" "+q.Name, t.SetQuota(ctx, q.Scope, q.Name, q.Quota)
	case r.Retention != nil:
		p := r.Retention.Policy
		what, err = "retention policy of "+r.Retention.Repository, t.SetRetentionPolicy(ctx, r.Retention.Repository, &p)
	case r.Policy != nil:
		p := r.Policy.Policy
		what, err = r.Policy.Scope+" policy of "+r.Policy.ID, t.SetPolicy(ctx, r.Policy.Scope, r.Policy.ID, &p)
	case r.Webhook != nil:
		w := *r.Webhook
		what, err = "webhook "+w.ID, t.CreateWebhook(ctx, &w)
	case r.Replication != nil:
		rep := *r.Replication
		what, err = "replication "+rep.Name, t.CreateReplication(ctx, &rep)
	case r.Grant != nil:
		g := *r.Grant
		what = fmt.Sprintf("grant of %s to %s %s", g.Repository, g.Kind, g.Subject)
		_, err = t.PutGrant(ctx, &g)
	case r.Robot != nil:
		b := *r.Robot
		what, err = "robot "+b.FullName(), t.CreateRobot(ctx, &b)
	case r.Publisher != nil:
		p := *r.Publisher
		what, err = "trusted publisher "+p.ID, t.AddPublisher(ctx, &p)
	case r.SCIMToken != nil:
		k := *r.SCIMToken
		what, err = "SCIM token "+k.ID, t.CreateSCIMToken(ctx, &k)
	case r.SCIMGroup != nil:
		g := *r.SCIMGroup
		what, err = "SCIM group "+g.DisplayName, t.PutSCIMGroup(ctx, &g)
	case r.TrustEntry != nil:
		e := *r.TrustEntry
		what, err = "trust entry "+e.Name, t.AddTrustEntry(ctx, &e)
	case r.OCIBlobLink != nil:
		l := r.OCIBlobLink
		what, err = "OCI blob "+l.Digest+" of "+l.Name, t.LinkBlob(ctx, l.Name, l.Digest, l.Size)
	default:
		return fmt.Errorf("dump record of kind %q cannot be loaded here", r.Kind())
	}
	if err != nil {
		return fmt.Errorf("load %s: %w", what, err)
	}
	return nil
}

// loadDownloads sets the download counters of the chart versions rs, in
// one write.
func loadDownloads(ctx context.Context, t Target, rs []chartctl.DumpRecord) error {
	var counts []chartctl.DownloadCount
	for _, r := range rs {
		cv := r.ChartVersion
		if cv.Downloads <= 0 {
			continue
		}
		last := cv.CreatedAt
		if cv.LastDownloadedAt != nil {
			last = *cv.LastDownloadedAt
		}
		counts = append(counts, chartctl.DownloadCount{Repository: cv.Repository, Name: cv.Name, Version: cv.Version,
			Count: cv.Downloads, Last: last})
	}
	if len(counts) == 0 {
		return nil
	}
	if err := t.AddDownloads(ctx, counts); err != nil {
		return fmt.Errorf("load download counters: %w", err)
	}
	return nil
}

// loadManifests stores the manifests of each name, every one after the
// manifests it lists (an index after its children).
func loadManifests(ctx context.Context, t Target, rs []chartctl.DumpRecord) error {
	type key struct{ name, digest string }
	all := map[key]*chartctl.OCIManifest{}
	var order []key
	for _, r := range rs {
		k := key{r.OCIManifest.Name, r.OCIManifest.Digest}
		if _, dup := all[k]; !dup {
			order = append(order, k)
		}
		all[k] = r.OCIManifest
	}
	done := map[key]bool{}
	onPath := map[key]bool{}
	var put func(k key) error
	put = func(k key) error {
		if done[k] {
			return nil
		}
		m, ok := all[k]
		if !ok {
			return fmt.Errorf("load OCI manifest: %s lists manifest %s, which the dump lacks", k.name, k.digest)
		}
		if onPath[k] {
			return fmt.Errorf("load OCI manifest %s@%s: it lists itself (through other manifests)", k.name, k.digest)
		}
		onPath[k] = true
		for _, child := range m.Manifests {
			if err := put(key{k.name, child}); err != nil {
				return err
			}
		}
		cp := *m
		if err := t.PutManifest(ctx, &cp, ""); err != nil {
			return fmt.Errorf("load OCI manifest %s@%s: %w", k.name, k.digest, err)
		}
		done[k] = true
		return nil
	}
	for _, k := range order {
		if err := put(k); err != nil {
			return err
		}
	}
	return nil
}

// loadTags points each tag at its manifest, which manifests holds.
func loadTags(ctx context.Context, t Target, rs, manifests []chartctl.DumpRecord) error {
	byKey := map[[2]string]*chartctl.OCIManifest{}
	for _, r := range manifests {
		byKey[[2]string{r.OCIManifest.Name, r.OCIManifest.Digest}] = r.OCIManifest
	}
	for _, r := range rs {
		tag := r.OCITag
		m, ok := byKey[[2]string{tag.Name, tag.Digest}]
		if !ok {
			return fmt.Errorf("load OCI tag %s:%s: it points at manifest %s, which the dump lacks", tag.Name, tag.Tag, tag.Digest)
		}
		cp := *m
		if err := t.PutManifest(ctx, &cp, tag.Tag); err != nil {
			return fmt.Errorf("load OCI tag %s:%s: %w", tag.Name, tag.Tag, err)
		}
	}
	return nil
}

// loadAudit appends the audit log in one call, in the dump's order (the
// order the source appended it, oldest first).
func loadAudit(ctx context.Context, t Target, rs []chartctl.DumpRecord) error {
	entries := make([]*chartctl.AuditEntry, len(rs))
	for i, r := range rs {
		e := *r.AuditEntry
		e.ID = ""
		entries[i] = &e
	}
	if err := t.AppendAudit(ctx, entries...); err != nil {
		return fmt.Errorf("load the audit log: %w", err)
	}
	return nil
}

// Blob is a blob a dump refers to.
type Blob struct {
	Digest string
	// Size is the size the records give, -1 when none does (the
	// provenance file of a version stored before its size was recorded).
	Size int64
}

// BlobsOf returns the blobs one record refers to: a chart version's
// archive and provenance file, an OCI blob link's blob.
func BlobsOf(r chartctl.DumpRecord) []Blob {
	switch {
	case r.ChartVersion != nil:
		cv := r.ChartVersion
		out := []Blob{{Digest: cv.Digest, Size: cv.Size}}
		if cv.ProvDigest != "" {
			size := cv.ProvSize
			if size <= 0 {
				size = -1
			}
			out = append(out, Blob{Digest: cv.ProvDigest, Size: size})
		}
		return out
	case r.OCIBlobLink != nil:
		return []Blob{{Digest: r.OCIBlobLink.Digest, Size: r.OCIBlobLink.Size}}
	}
	return nil
}

// Blobs returns the blobs records refer to (BlobsOf each), each once,
// sorted by digest.
func Blobs(records []chartctl.DumpRecord) []Blob {
	sizes := map[string]int64{}
	for _, r := range records {
		for _, b := range BlobsOf(r) {
			if old, ok := sizes[b.Digest]; b.Digest != "" && (!ok || old < 0) {
				sizes[b.Digest] = b.Size
			}
		}
	}
	out := make([]Blob, 0, len(sizes))
	for d, s := range sizes {
		out = append(out, Blob{Digest: d, Size: s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Digest < out[j].Digest })
	return out
}

// Singular names one record of kind for a person: "chart version",
// "API key".
func Singular(kind string) string {
	switch kind {
	case chartctl.DumpAPIKey:
		return "API key"
	case chartctl.DumpOAuthClient:
		return "OAuth client"
	case chartctl.DumpOCIBlobLink:
		return "OCI blob link"
	case chartctl.DumpOCIManifest:
		return "OCI manifest"
	case chartctl.DumpOCITag:
		return "OCI tag"
	case chartctl.DumpGrant:
		return "repository grant"
	case chartctl.DumpPolicy:
		return "admission policy"
	case chartctl.DumpRobot:
		return "robot account"
	case chartctl.DumpSCIMToken:
		return "SCIM token"
	case chartctl.DumpSCIMGroup:
		return "SCIM group"
	}
	return strings.ReplaceAll(kind, "_", " ")
}

// Plural names many records of kind for a person: "chart versions",
// "retention policies".
func Plural(kind string) string {
	s := Singular(kind)
	switch {
	// "policy" → "policies", but "key" → "keys": only a consonant before
	// the y turns it into "ies".
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return strings.TrimSuffix(s, "y") + "ies"
	case strings.HasSuffix(s, "s"):
		return s + "es"
	}
	return s + "s"
}

// Count writes n records of kind: "1 webhook", "3 audit entries".
func Count(n int, kind string) string {
	if n == 1 {
		return "1 " + Singular(kind)
	}
	return fmt.Sprintf("%d %s", n, Plural(kind))
}
