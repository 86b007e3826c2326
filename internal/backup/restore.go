package backup

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/dump"
)

// ErrNotEmpty is returned (wrapped) by Restore when the target store
// holds records.
var ErrNotEmpty = errors.New("the target store is not empty")

// Target is where Restore writes.
type Target struct {
	// Store is the store to restore into; it must hold no record.
	Store dump.Target
	// Blobs receives the blobs. Blobs it holds already are kept (they are
	// content-addressed: nothing is overwritten); those Restore adds are
	// deleted again when it fails.
	Blobs chartctl.AlgorithmBlobStore
	// Transaction, if set, runs fn in one transaction of Store
	// (postgres.DB.Import), so that the records are written all or none.
	// Without it a failed restore may leave records in Store, which the
	// caller throws away (the CLI restores a bbolt store into a new
	// directory and removes it).
	Transaction func(ctx context.Context, fn func(dump.Target) error) error
	// Check, if set, vets the archive's records once it has proved whole
	// and before anything is written (the CLI checks that a secrets key
	// opens the webhook secrets); its error stops the restore.
	Check func(records []chartctl.DumpRecord) error
}

// Restore reads the backup from r into t, checking everything Read checks
// before a single record is written: blobs are stored as they stream by,
// records only once the whole archive has proved whole, all in one
// transaction when t has one. The records are then read back from the
// store and compared with the archive's. On any failure the blobs it
// added are deleted again (see Target for the records).
func Restore(ctx context.Context, r io.Reader, t Target) (*Result, dump.Counts, error) {
	if err := requireEmpty(ctx, t.Store); err != nil {
		return nil, nil, err
	}
	var created []string
	ok := false
	defer func() {
		if !ok {
			// Even when ctx was cancelled (Ctrl-C): leave nothing behind.
			for _, d := range created {
				_ = t.Blobs.Delete(context.WithoutCancel(ctx), d)
			}
		}
	}()
	sink := func(digest string, r io.Reader) error {
		if _, err := t.Blobs.ModTime(ctx, digest); err == nil {
			return nil // already there; Read checks the archive's copy
		} else if chartctl.ErrorCode(err) != chartctl.ENOTFOUND {
			return err
		}
		alg, _, _ := strings.Cut(digest, ":")
		w, err := t.Blobs.CreateAlgorithm(ctx, alg)
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
		if _, err := w.Commit(); err != nil {
			return err
		}
		created = append(created, digest)
		return nil
	}
	arch, res := Read(ctx, r, sink)
	if !res.OK {
		return res, nil, fmt.Errorf("the backup is damaged; nothing was restored: %s", describe(res))
	}
	if t.Check != nil {
		if err := t.Check(arch.Records); err != nil {
			return res, nil, fmt.Errorf("nothing was restored: %w", err)
		}
	}
	run := t.Transaction
	if run == nil {
		run = func(ctx context.Context, fn func(dump.Target) error) error { return fn(t.Store) }
	}
	var counts dump.Counts
	err := run(ctx, func(st dump.Target) error {
		// Again inside the transaction: nothing came in meanwhile.
		if err := requireEmpty(ctx, st); err != nil {
			return err
		}
		var err error
		if counts, err = dump.Load(ctx, st, arch.Records); err != nil {
			return err
		}
		back, err := dump.Read(ctx, st)
		if err != nil {
			return fmt.Errorf("read the restored records back: %w", err)
		}
		if d := dump.Diff(arch.Records, back, 5); d != "" {
			return fmt.Errorf("the restored records differ from the backup's: %s", d)
		}
		return nil
	})
	if err != nil {
		return res, nil, fmt.Errorf("nothing was restored: %w", err)
	}
	ok = true
	return res, counts, nil
}

// requireEmpty refuses a store that holds any record.
func requireEmpty(ctx context.Context, st dump.Target) error {
	empty, kind, err := dump.Empty(ctx, st)
	if err != nil {
		return fmt.Errorf("check that the target is empty: %w", err)
	}
	if !empty {
		return fmt.Errorf("%w: it holds at least one %s; restore only into an empty store", ErrNotEmpty, dump.Singular(kind))
	}
	return nil
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

// VerifyStore checks a live store and its blobs: every chart version's
// blobs exist with the right digest and size, every Helm index entry
// matches a version and every version has one, and no blob is an orphan
// (those are listed with their sizes; see PendingSince). When the store is
// an Exporter it also checks, on one snapshot, that records refer to
// records that exist (as Read does for a backup: quotas and retention
// policies of existing repositories, complete OCI manifests, …) and that
// every blob the OCI registry holds exists with its digest and size.
func VerifyStore(ctx context.Context, store chartctl.Store, blobs chartctl.BlobStore, opts ...VerifyOption) (*Result, error) {
	var o verifyOptions
	for _, opt := range opts {
		opt(&o)
	}
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
	if exp, ok := store.(chartctl.Exporter); ok {
		if err := verifyRecords(ctx, exp, blobs, referenced, res); err != nil {
			return nil, err
		}
	}
	err = blobs.Walk(ctx, func(d string) error {
		if referenced[d] {
			return nil
		}
		if ref, err := store.BlobReferenced(ctx, d); err != nil || ref {
			return err // referenced by a record written since the listing
		}
		if mod, err := blobs.ModTime(ctx, d); err == nil && !o.pending.IsZero() && !mod.Before(o.pending) {
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

// verifyRecords checks the references of one snapshot of the store's
// records (the audit log aside) and the OCI registry's blobs, adding the
// blobs it checked to referenced.
func verifyRecords(ctx context.Context, exp chartctl.Exporter, blobs chartctl.BlobStore, referenced map[string]bool, res *Result) error {
	var records []chartctl.DumpRecord
	if err := exp.Export(ctx, nil, func(r chartctl.DumpRecord) error {
		if r.AuditEntry == nil {
			records = append(records, r)
		}
		return nil
	}); err != nil {
		return err
	}
	checkReferences(records, res)
	for _, r := range records {
		l := r.OCIBlobLink
		if l == nil || referenced[l.Digest] {
			continue
		}
		referenced[l.Digest] = true
		size, ok, err := hashBlob(ctx, blobs, l.Digest)
		if err != nil {
			return err
		}
		switch {
		case !ok && size < 0:
			res.add("blob_missing", l.Digest, "OCI repository %s holds this blob, which the blob store lacks.", l.Name)
		case !ok:
			res.add("blob_digest", l.Digest, "The stored blob's content no longer has this digest (OCI repository %s).", l.Name)
		default:
			res.Checked.Blobs++
			res.Checked.Bytes += size
			if size != l.Size {
				res.add("blob_size", l.Digest, "OCI repository %s says %d bytes; the blob has %d.", l.Name, l.Size, size)
			}
		}
	}
	return nil
}

// VerifyOption adjusts VerifyStore.
type VerifyOption func(*verifyOptions)

type verifyOptions struct {
	pending time.Time
}

// PendingSince keeps VerifyStore from reporting an unreferenced blob
// committed at or after t: it awaits the server's collection after the
// grace period (the blob of a chart deleted in the last hour), or is one a
// writer is about to commit a record for.
func PendingSince(t time.Time) VerifyOption {
	return func(o *verifyOptions) { o.pending = t }
}

// hashBlob reads blob d; size is -1 when it is missing, ok reports that
// its content has digest d.
func hashBlob(ctx context.Context, blobs chartctl.BlobStore, d string) (size int64, ok bool, err error) {
	alg, want, _ := strings.Cut(d, ":")
	h := newHash(alg)
	if h == nil {
		return 0, false, nil
	}
	b, err := blobs.Open(ctx, d)
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return -1, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	defer b.Close()
	n, err := io.Copy(h, b)
	if err != nil {
		return n, false, err
	}
	return n, hex.EncodeToString(h.Sum(nil)) == want, nil
}
