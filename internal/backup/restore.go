package backup

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// OAuthClientCreator stores OAuth clients (the OAuth part of a store).
type OAuthClientCreator interface {
	CreateOAuthClient(ctx context.Context, c *chartctl.OAuthClient) error
}

// Target is an empty store to restore into.
type Target struct {
	Store chartctl.Store
	OAuth OAuthClientCreator
	Blobs chartctl.BlobStore
}

// Restore reads the backup from r into t, checking everything Read checks
// before a single record is written: blobs are stored as they stream by,
// records only once the whole archive has proved whole. On error the
// target holds blobs (and maybe records); the caller removes the target
// (the CLI restores into a new, empty directory and deletes it).
func Restore(ctx context.Context, r io.Reader, t Target) (*Result, error) {
	if n, err := t.Store.UserCount(ctx); err != nil {
		return nil, err
	} else if n > 0 {
		return nil, fmt.Errorf("the target store is not empty (%d users): restore only into an empty store", n)
	}
	sink := func(digest string, r io.Reader) error {
		w, err := t.Blobs.Create(ctx)
		if err != nil {
			return err
		}
		defer w.Abort()
		if _, err := io.Copy(w, r); err != nil {
			return err
		}
		if w.Digest() != digest {
			// Read reports it as a blob_digest problem; do not store it.
			return nil
		}
		_, err = w.Commit()
		return err
	}
	arch, res := Read(ctx, r, sink)
	if !res.OK {
		return res, fmt.Errorf("the backup is damaged; nothing was restored: %s", describe(res))
	}
	for _, rec := range arch.Records {
		if err := apply(ctx, t, rec); err != nil {
			return res, err
		}
	}
	return res, nil
}

func describe(res *Result) string {
	var parts []string
	for i, p := range res.Problems {
		if i == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(res.Problems)-5))
			break
		}
		s := p.Kind
		if p.Target != "" {
			s += " " + p.Target
		}
		parts = append(parts, s+": "+p.Detail)
	}
	return strings.Join(parts, "; ")
}

func apply(ctx context.Context, t Target, r chartctl.DumpRecord) error {
	var err error
	var what string
	switch {
	case r.User != nil:
		what, err = "user "+r.User.Email, t.Store.CreateUser(ctx, r.User)
	case r.APIKey != nil:
		what, err = "API key "+r.APIKey.ID, t.Store.CreateAPIKey(ctx, r.APIKey)
	case r.OAuthClient != nil:
		what = "OAuth client " + r.OAuthClient.ID
		if t.OAuth == nil {
			return fmt.Errorf("restore %s: the target store keeps no OAuth clients", what)
		}
		err = t.OAuth.CreateOAuthClient(ctx, r.OAuthClient)
	case r.Organization != nil:
		what, err = "organization "+r.Organization.Name, t.Store.CreateOrganization(ctx, r.Organization)
	case r.Repository != nil:
		what, err = "repository "+r.Repository.Name, t.Store.CreateRepository(ctx, r.Repository)
	case r.Team != nil:
		what, err = "team "+r.Team.Name, t.Store.CreateTeam(ctx, r.Team)
	case r.Member != nil:
		what, err = "member "+r.Member.Email+" of "+r.Member.Team, t.Store.AddMember(ctx, r.Member)
	case r.ChartVersion != nil:
		cv := r.ChartVersion
		what = fmt.Sprintf("chart %s %s in %s", cv.Name, cv.Version, cv.Repository)
		_, _, _, err = t.Store.PutChartVersion(ctx, cv, false)
	}
	if err != nil {
		return fmt.Errorf("restore %s: %w", what, err)
	}
	return nil
}

// VerifyStore checks a live store and its blobs: every chart version's
// blobs exist with the right digest and size, every Helm index entry
// matches a version and every version has one, and no blob is an orphan
// (those are listed with their sizes). An unreferenced blob committed at
// or after pending is not reported: it awaits collection after the grace
// period (a chart deleted in the last hour), or a record a writer is about
// to commit.
func VerifyStore(ctx context.Context, store chartctl.Store, blobs chartctl.BlobStore, pending time.Time) (*Result, error) {
	res := &Result{Problems: []Problem{}}
	repos, err := store.Repositories(ctx)
	if err != nil {
		return nil, err
	}
	referenced := map[string]bool{}
	for _, repo := range repos {
		res.Checked.Repositories++
		cvs, err := store.ChartVersions(ctx, repo.Name, chartctl.ChartFilter{})
		if err != nil {
			return nil, err
		}
		entries, err := store.IndexEntries(ctx, repo.Name)
		if err != nil {
			return nil, err
		}
		versions := map[string]bool{}
		for _, cv := range cvs {
			res.Checked.ChartVersions++
			target := fmt.Sprintf("%s/%s@%s", repo.Name, cv.Name, cv.Version)
			versions[cv.Name+"@"+cv.Version] = true
			for _, d := range []string{cv.Digest, cv.ProvDigest} {
				if d == "" {
					continue
				}
				if referenced[d] {
					continue
				}
				referenced[d] = true
				size, ok, err := hashBlob(ctx, blobs, d)
				if err != nil {
					return nil, err
				}
				if !ok {
					if size < 0 {
						res.add("blob_missing", d, "Chart %s refers to this blob, which the blob store lacks.", target)
					} else {
						res.add("blob_digest", d, "The stored blob's content no longer has this digest (chart %s).", target)
					}
					continue
				}
				res.Checked.Blobs++
				res.Checked.Bytes += size
				if d == cv.Digest && size != cv.Size {
					res.add("blob_size", d, "Chart %s says %d bytes; the blob has %d.", target, cv.Size, size)
				}
			}
		}
		indexed := map[string]bool{}
		for _, e := range entries {
			k := e.Name + "@" + e.Version
			indexed[k] = true
			if !versions[k] {
				res.add("index_entry", repo.Name+"/"+k, "The Helm index has an entry for a version the repository does not hold.")
			} else if len(e.IndexEntry) == 0 {
				res.add("index_entry", repo.Name+"/"+k, "The version has no rendered Helm index entry.")
			}
		}
		for k := range versions {
			if !indexed[k] {
				res.add("index_entry", repo.Name+"/"+k, "The version is missing from the Helm index.")
			}
		}
	}
	err = blobs.Walk(ctx, func(d string) error {
		if referenced[d] {
			return nil
		}
		if ref, err := store.BlobReferenced(ctx, d); err != nil || ref {
			return err // referenced by a record written since the listing
		}
		if mod, err := blobs.ModTime(ctx, d); err == nil && !mod.Before(pending) {
			return nil
		}
		b, err := blobs.Open(ctx, d)
		size := int64(-1)
		if err == nil {
			size = b.Size()
			b.Close()
		}
		res.add("orphan_blob", d, "%d bytes that no record refers to.", size)
		return nil
	})
	if err != nil {
		return nil, err
	}
	res.OK = len(res.Problems) == 0
	return res, nil
}

// hashBlob reads blob d; size is -1 when it is missing, ok reports that
// its content has digest d.
func hashBlob(ctx context.Context, blobs chartctl.BlobStore, d string) (size int64, ok bool, err error) {
	b, err := blobs.Open(ctx, d)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return -1, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer b.Close()
	h := sha256.New()
	n, err := io.Copy(h, b)
	if err != nil {
		return n, false, err
	}
	return n, "sha256:"+hex.EncodeToString(h.Sum(nil)) == d, nil
}
