// Package migrate copies a single-node chartctl (bbolt metadata and blob
// files) to the scale-out engines (PostgreSQL and an S3-compatible store):
// `chartctl admin migrate`. See docs/scale-out.md for the runbook.
//
// The copy is resumable: blobs are copied first (so no record ever refers
// to a blob the target lacks), then records in dependency order, each
// created with its original ID and times; whatever the target already
// holds from an interrupted run is recognised and skipped. It then
// verifies that the target holds at least every record of the source and
// that every blob reads back with its digest.
//
// Copied: users (with password hashes, admin and disabled flags), API
// keys, OAuth clients, organizations, teams and members, repositories,
// chart versions (with provenance and index entries), and the OCI
// registry's tagged manifests with what they refer to (referrers, index
// children, blob links, chart manifests), quotas, retention policies,
// webhooks (their secrets stay sealed: the replicas need the single node's
// secrets key file), download counters and the audit log. Not copied:
// dashboard sessions, OAuth codes and tokens (users sign in again; CLIs
// log in again), OCI upload sessions in progress, untagged manifests
// nothing refers to (garbage), and webhook deliveries (their history, and
// events not yet delivered).
package migrate

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Source is the single-node store being copied (internal/bolt).
type Source interface {
	chartctl.Store
	chartctl.OCIStore
	// OAuthClients lists the registered OAuth clients.
	OAuthClients(ctx context.Context) ([]*chartctl.OAuthClient, error)
}

// Target is the store copied to (internal/postgres).
type Target interface {
	chartctl.Store
	chartctl.OAuthStore
	chartctl.OCIStore
}

// Summary counts what the source holds and what was copied in this run
// (the rest was already in the target from an earlier run).
type Summary struct {
	Blobs, BlobsCopied         int
	BlobBytes                  int64
	Users, APIKeys, Clients    int
	Orgs, Teams, Members       int
	Repos, Charts, ChartsAdded int
	Manifests, Tags            int
	// Quotas and Policies count the quotas and retention policies set;
	// Webhooks the webhooks; Audit the audit entries copied now.
	Quotas, Policies, Webhooks int
	Audit                      int
}

// String renders the summary for a person.
func (s *Summary) String() string {
	return fmt.Sprintf(`blobs:          %d (%d copied now, %s)
users:          %d
api keys:       %d
oauth clients:  %d
organizations:  %d
teams:          %d (%d members)
repositories:   %d
chart versions: %d (%d copied now)
oci manifests:  %d (%d tags)
quotas:         %d
retention:      %d policies
webhooks:       %d
audit entries:  %d copied now`,
		s.Blobs, s.BlobsCopied, humanBytes(s.BlobBytes), s.Users, s.APIKeys, s.Clients, s.Orgs,
		s.Teams, s.Members, s.Repos, s.Charts, s.ChartsAdded, s.Manifests, s.Tags,
		s.Quotas, s.Policies, s.Webhooks, s.Audit)
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// Migration is one copy from a source to a target.
type Migration struct {
	Src      Source
	SrcBlobs chartctl.BlobStore
	Dst      Target
	DstBlobs chartctl.AlgorithmBlobStore
	// Progress receives a progress bar (carriage returns, one line per
	// phase); nil discards it.
	Progress io.Writer

	sum Summary
}

// Run copies everything, then verifies the target.
func (m *Migration) Run(ctx context.Context) (*Summary, error) {
	if m.Progress == nil {
		m.Progress = io.Discard
	}
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{"blobs", m.copyBlobs},
		{"users and keys", m.copyUsers},
		{"organizations and teams", m.copyOrgs},
		{"repositories and charts", m.copyRepos},
		{"oci manifests", m.copyOCI},
		{"quotas, retention, webhooks, downloads and audit", m.copyEvents},
		{"verify", m.verify},
	}
	for _, s := range steps {
		if err := s.fn(ctx); err != nil {
			fmt.Fprintln(m.Progress)
			return &m.sum, fmt.Errorf("%s: %w", s.name, err)
		}
	}
	return &m.sum, nil
}

// bar draws a progress bar for phase at done of total.
func (m *Migration) bar(phase string, done, total int) {
	const width = 30
	filled := width
	pct := 100
	if total > 0 {
		filled, pct = width*done/total, 100*done/total
	}
	fmt.Fprintf(m.Progress, "\r%-24s [%s%s] %3d%% %d/%d", phase, strings.Repeat("#", filled), strings.Repeat(".", width-filled), pct, done, total)
	if done == total {
		fmt.Fprintln(m.Progress)
	}
}

// exists reports whether err says the record is already there.
func exists(err error) bool { return chartctl.ErrorCode(err) == chartctl.ECONFLICT }

func (m *Migration) copyBlobs(ctx context.Context) error {
	var digests []string
	if err := m.SrcBlobs.Walk(ctx, func(d string) error {
		digests = append(digests, d)
		return nil
	}); err != nil {
		return err
	}
	m.sum.Blobs = len(digests)
	for i, d := range digests {
		m.bar("blobs", i, len(digests))
		if _, err := m.DstBlobs.ModTime(ctx, d); err == nil {
			continue // copied by an earlier run (commits are atomic)
		} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return err
		}
		n, err := m.copyBlob(ctx, d)
		if err != nil {
			return fmt.Errorf("blob %s: %w", d, err)
		}
		m.sum.BlobsCopied++
		m.sum.BlobBytes += n
	}
	m.bar("blobs", len(digests), len(digests))
	return nil
}

func (m *Migration) copyBlob(ctx context.Context, d string) (int64, error) {
	alg, _, _ := strings.Cut(d, ":")
	src, err := m.SrcBlobs.Open(ctx, d)
	if err != nil {
		return 0, err
	}
	defer src.Close()
	w, err := m.DstBlobs.CreateAlgorithm(ctx, alg)
	if err != nil {
		return 0, err
	}
	defer func() { _ = w.Abort() }()
	n, err := io.Copy(w, src)
	if err != nil {
		return 0, err
	}
	got, err := w.Commit()
	if err != nil {
		return 0, err
	}
	if got != d {
		return 0, fmt.Errorf("the source blob's bytes hash to %s", got)
	}
	return n, nil
}

func (m *Migration) copyUsers(ctx context.Context) error {
	users, err := m.Src.Users(ctx)
	if err != nil {
		return err
	}
	m.sum.Users = len(users)
	for i, u := range users {
		m.bar("users", i, len(users))
		cp := *u
		if err := m.Dst.CreateUser(ctx, &cp); err != nil && !exists(err) {
			return fmt.Errorf("user %s: %w", u.Email, err)
		}
		keys, err := m.Src.APIKeys(ctx, u.ID)
		if err != nil {
			return err
		}
		for _, k := range keys {
			m.sum.APIKeys++
			cp := *k
			if err := m.Dst.CreateAPIKey(ctx, &cp); err != nil && !exists(err) {
				return fmt.Errorf("api key %s of %s: %w", k.Name, u.Email, err)
			}
		}
	}
	m.bar("users", len(users), len(users))
	clients, err := m.Src.OAuthClients(ctx)
	if err != nil {
		return err
	}
	m.sum.Clients = len(clients)
	for _, c := range clients {
		cp := *c
		if err := m.Dst.CreateOAuthClient(ctx, &cp); err != nil && !exists(err) {
			return fmt.Errorf("oauth client %s: %w", c.ID, err)
		}
	}
	return nil
}

func (m *Migration) copyOrgs(ctx context.Context) error {
	orgs, err := m.Src.Organizations(ctx)
	if err != nil {
		return err
	}
	m.sum.Orgs = len(orgs)
	for _, o := range orgs {
		cp := *o
		if err := m.Dst.CreateOrganization(ctx, &cp); err != nil && !exists(err) {
			return fmt.Errorf("organization %s: %w", o.Name, err)
		}
	}
	teams, err := m.Src.Teams(ctx, "")
	if err != nil {
		return err
	}
	m.sum.Teams = len(teams)
	for i, t := range teams {
		m.bar("teams", i, len(teams))
		cp := *t
		if err := m.Dst.CreateTeam(ctx, &cp); err != nil && !exists(err) {
			return fmt.Errorf("team %s: %w", t.Name, err)
		}
		members, err := m.Src.Members(ctx, t.Name)
		if err != nil {
			return err
		}
		for _, mb := range members {
			m.sum.Members++
			cp := *mb
			if err := m.Dst.AddMember(ctx, &cp); err != nil && !exists(err) {
				return fmt.Errorf("member %s of team %s: %w", mb.Email, t.Name, err)
			}
		}
	}
	m.bar("teams", len(teams), len(teams))
	return nil
}

func (m *Migration) copyRepos(ctx context.Context) error {
	repos, err := m.Src.Repositories(ctx)
	if err != nil {
		return err
	}
	m.sum.Repos = len(repos)
	for i, r := range repos {
		m.bar("repositories", i, len(repos))
		cp := *r
		if err := m.Dst.CreateRepository(ctx, &cp); err != nil && !exists(err) {
			return fmt.Errorf("repository %s: %w", r.Name, err)
		}
		cvs, err := m.Src.ChartVersions(ctx, r.Name, chartctl.ChartFilter{})
		if err != nil {
			return err
		}
		for _, cv := range cvs {
			m.sum.Charts++
			entry, err := m.Src.IndexEntry(ctx, r.Name, cv.Name, cv.Version)
			if err != nil {
				return err
			}
			cp := *cv
			cp.IndexEntry = entry.IndexEntry
			_, created, _, err := m.Dst.PutChartVersion(ctx, &cp, false)
			if err != nil {
				return fmt.Errorf("chart %s %s of %s: %w", cv.Name, cv.Version, r.Name, err)
			}
			if created {
				m.sum.ChartsAdded++
			}
		}
	}
	m.bar("repositories", len(repos), len(repos))
	return nil
}

func (m *Migration) copyOCI(ctx context.Context) error {
	names, err := m.Src.Names(ctx)
	if err != nil {
		return err
	}
	for i, name := range names {
		m.bar("oci names", i, len(names))
		tags, _, err := m.Src.Tags(ctx, name, "", -1)
		if err != nil {
			return err
		}
		done := map[string]bool{}
		for _, tag := range tags {
			d, err := m.Src.Tag(ctx, name, tag)
			if err != nil {
				return err
			}
			if err := m.copyManifest(ctx, name, d, done); err != nil {
				return err
			}
			mf, err := m.Dst.Manifest(ctx, name, d)
			if err != nil {
				return err
			}
			if err := m.Dst.PutManifest(ctx, mf, tag); err != nil {
				return fmt.Errorf("tag %s:%s: %w", name, tag, err)
			}
			m.sum.Tags++
		}
	}
	m.bar("oci names", len(names), len(names))
	return nil
}

// copyManifest copies the manifest digest of name with what it needs
// first (its blob links, an index's manifests) and its referrers after.
func (m *Migration) copyManifest(ctx context.Context, name, digest string, done map[string]bool) error {
	if done[digest] {
		return nil
	}
	done[digest] = true
	mf, err := m.Src.Manifest(ctx, name, digest)
	if err != nil {
		return fmt.Errorf("manifest %s@%s: %w", name, digest, err)
	}
	for _, d := range mf.Blobs {
		l, err := m.Src.BlobLink(ctx, name, d)
		if err != nil {
			return fmt.Errorf("blob %s of %s@%s: %w", d, name, digest, err)
		}
		if err := m.Dst.LinkBlob(ctx, name, d, l.Size); err != nil {
			return err
		}
	}
	for _, child := range mf.Manifests {
		if err := m.copyManifest(ctx, name, child, done); err != nil {
			return err
		}
	}
	if err := m.Dst.PutManifest(ctx, mf, ""); err != nil {
		return fmt.Errorf("manifest %s@%s: %w", name, digest, err)
	}
	m.sum.Manifests++
	refs, err := m.Src.Referrers(ctx, name, digest)
	if err != nil {
		return err
	}
	for _, r := range refs {
		if err := m.copyManifest(ctx, name, r.Digest, done); err != nil {
			return err
		}
	}
	return nil
}

// verify checks that the target holds every record of the source and
// that every blob reads back with its digest.
func (m *Migration) verify(ctx context.Context) error {
	users, err := m.Dst.Users(ctx)
	if err != nil {
		return err
	}
	if len(users) < m.sum.Users {
		return fmt.Errorf("the target has %d users, the source %d", len(users), m.sum.Users)
	}
	repos, err := m.Src.Repositories(ctx)
	if err != nil {
		return err
	}
	for _, r := range repos {
		want, err := m.Src.ChartVersions(ctx, r.Name, chartctl.ChartFilter{})
		if err != nil {
			return err
		}
		got, err := m.Dst.ChartVersions(ctx, r.Name, chartctl.ChartFilter{})
		if err != nil {
			return fmt.Errorf("repository %s: %w", r.Name, err)
		}
		have := map[string]string{}
		for _, cv := range got {
			have[cv.Name+"\x00"+cv.Version] = cv.Digest
		}
		for _, cv := range want {
			if d := have[cv.Name+"\x00"+cv.Version]; d != cv.Digest {
				return fmt.Errorf("chart %s %s of %s: the target has digest %q, the source %s", cv.Name, cv.Version, r.Name, d, cv.Digest)
			}
		}
	}
	teams, err := m.Dst.Teams(ctx, "")
	if err != nil {
		return err
	}
	if len(teams) < m.sum.Teams {
		return fmt.Errorf("the target has %d teams, the source %d", len(teams), m.sum.Teams)
	}
	var digests []string
	if err := m.SrcBlobs.Walk(ctx, func(d string) error {
		digests = append(digests, d)
		return nil
	}); err != nil {
		return err
	}
	for i, d := range digests {
		m.bar("verify blobs", i, len(digests))
		if err := verifyBlob(ctx, m.DstBlobs, d); err != nil {
			return err
		}
	}
	m.bar("verify blobs", len(digests), len(digests))
	return nil
}

// verifyBlob reads the blob d from s and checks its digest.
func verifyBlob(ctx context.Context, s chartctl.BlobStore, d string) error {
	alg, want, _ := strings.Cut(d, ":")
	var h hash.Hash
	switch alg {
	case "sha512":
		h = sha512.New()
	default:
		h = sha256.New()
	}
	b, err := s.Open(ctx, d)
	if err != nil {
		return fmt.Errorf("blob %s in the target: %w", d, err)
	}
	defer b.Close()
	if _, err := io.Copy(h, b); err != nil {
		return fmt.Errorf("read blob %s in the target: %w", d, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("blob %s in the target reads back as %s:%s", d, alg, got)
	}
	return nil
}
