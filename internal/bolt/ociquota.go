package bolt

import (
	"fmt"
	"strings"

	bbolt "go.etcd.io/bbolt"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// OCI artifacts count against quotas (CONTRACT §18 decision 12): the
// bytes of every manifest stored under a repository's OCI names that is
// not a chart version, and of every blob such a manifest refers to, once
// per name that holds it (so a blob shared by two repositories counts in
// both). Chart versions count as their archive and provenance, whichever
// protocol brought them, so a chart's own manifest and blobs are not
// counted again. Blobs no manifest refers to yet are garbage-collected
// and not counted; a blob upload is checked against the quota on its own
// (app.CheckBlobQuota).
//
// The OCI part is counted from the records when a quota asks for it
// rather than kept as a counter: nothing stored changes, so data written
// by an older release is counted right at once, with no recount, and a
// repository found over its quota keeps what it has and takes no more.

// ociBytes returns the OCI bytes of repository repo.
func ociBytes(tx *bbolt.Tx, repo string) (int64, error) {
	var (
		total int64
		held  = map[string]bool{} // name sep blob digest
	)
	manifests := bucket(tx, ociManifestsBucket)
	content := bucket(tx, ociManifestContentBucket)
	// The artifact index names the manifests that are not chart
	// versions: a repository of 100,000 chart versions pushed over OCI
	// costs what one without them does.
	visit := func(k, _ []byte) error {
		v := manifests.Get(k)
		if v == nil {
			return nil
		}
		r, err := decode[ociManifestRecord](v)
		if err != nil {
			return err
		}
		total += int64(len(content.Get(k)))
		for _, d := range r.Blobs {
			held[string(key(r.Name, d))] = true
		}
		return nil
	}
	// The repository's names are repo itself and repo/…; keys are name
	// sep digest.
	artifacts := bucket(tx, ociArtifactsBucket)
	if err := scanPrefix(artifacts, prefix(repo), visit); err != nil {
		return 0, err
	}
	if err := scanPrefix(artifacts, []byte(repo+"/"), visit); err != nil {
		return 0, err
	}
	links := bucket(tx, ociBlobLinksBucket)
	for k := range held {
		v := links.Get([]byte(k))
		if v == nil {
			continue
		}
		l, err := decode[ociBlobLinkRecord](v)
		if err != nil {
			return 0, err
		}
		total += l.Size
	}
	return total, nil
}

// scopeOCIBytes returns the OCI bytes of a repository or of every
// repository of an organization.
func scopeOCIBytes(tx *bbolt.Tx, scope, name string) (int64, error) {
	if scope == chartctl.QuotaRepository {
		return ociBytes(tx, name)
	}
	var total int64
	err := bucket(tx, reposBucket).ForEach(func(_, v []byte) error {
		r, err := decode[repoRecord](v)
		if err != nil || r.Organization != name {
			return err
		}
		n, err := ociBytes(tx, r.Name)
		total += n
		return err
	})
	return total, err
}

// repoScopes returns the quota scopes of repository repo: itself and its
// organization.
func repoScopes(repo *repoRecord) [][2]string {
	scopes := [][2]string{{chartctl.QuotaRepository, repo.Name}}
	if repo.Organization != "" {
		scopes = append(scopes, [2]string{chartctl.QuotaOrganization, repo.Organization})
	}
	return scopes
}

// withOCIQuota runs write, which stores OCI content under name, and
// refuses it with EQUOTA (the transaction then rolls back) when it made
// the repository of name or its organization grow past a max_bytes
// quota. Scopes without one are not counted.
func withOCIQuota(tx *bbolt.Tx, name string, write func() error) error {
	repoName, _, _ := strings.Cut(name, "/")
	repo, err := getRepo(tx, repoName)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		// Names outside any repository are refused by the registry
		// before they reach the store.
		return write()
	} else if err != nil {
		return err
	}
	type limited struct {
		scope, name string
		max, before int64
	}
	var ls []limited
	for _, sc := range repoScopes(repo) {
		q, err := getQuota(tx, sc[0], sc[1])
		if err != nil {
			return err
		}
		if q.MaxBytes == nil {
			continue
		}
		n, err := scopeOCIBytes(tx, sc[0], sc[1])
		if err != nil {
			return err
		}
		ls = append(ls, limited{sc[0], sc[1], *q.MaxBytes, n})
	}
	if err := write(); err != nil {
		return err
	}
	for _, l := range ls {
		after, err := scopeOCIBytes(tx, l.scope, l.name)
		if err != nil {
			return err
		}
		if after <= l.before {
			continue
		}
		u, err := usage(tx, l.scope, l.name)
		if err != nil {
			return err
		}
		if u.Bytes+after > l.max {
			return quotaError(l.scope, l.name, "max_bytes", fmt.Sprintf("%d bytes", l.max),
				fmt.Sprintf("%d bytes used; this upload needs %d more", u.Bytes+l.before, after-l.before))
		}
	}
	return nil
}
