// Package backup writes, reads, verifies and restores chartctl backups
// (CONTRACT §14): one tar archive, media type
// application/vnd.chartctl.backup.v1.tar, holding
//
//	chartctl-backup/format.json          {"format", "version", "created_at"}
//	chartctl-backup/records.jsonl        the logical dump, one record a line
//	chartctl-backup/blobs/<alg>/<hex>    every blob a record refers to
//	                                     (alg sha256, or sha512 for OCI blobs)
//	chartctl-backup/manifest.json        counts, every blob's digest and size,
//	                                     the records' sha256, and the sha256
//	                                     of every archive byte before it
//
// The dump is engine-neutral (internal/chartctl.DumpRecord, written in
// this format's own field names), so a backup of one engine restores into
// another. Every byte of an archive is covered by a digest: blobs by
// their names, records and everything else by the manifest, and the end of
// the archive must be the zero blocks tar writes.
//
// Format versions: 1 held users, API keys, OAuth clients, organizations,
// repositories, teams, members and chart versions. 2 (written now) adds
// the rest of what a store keeps (quotas, retention policies, webhooks,
// download counters, the audit log, the OCI registry's content) and
// fields of the kinds of 1 (disabled users, content digests, provenance
// sizes). 3 adds repository grants, robot accounts and trusted
// publishers, and the repository patterns of restricted API keys: a
// reader of 2 would restore such a key unrestricted, so 3 is a new
// version, refused by older chartctl. 4 adds the identity provider
// account a user is bound to (issue #28): a reader of 3 would restore an
// IdP user as an unbound local account, which the next IdP sign-in then
// refuses as a collision. 5 adds identity provider groups (issue #28):
// the groups a team is bound to and those of a user's last sign-in, SCIM
// tokens (hashed) and SCIM groups; a reader of 4 would restore a bound
// team unbound, which hand edits would then drift from the IdP. 6 adds a
// repository's index format (issue #32); a reader of 5 would restore a
// JSON repository as a YAML one. 7 adds trust entries and verification
// records (issue #30); a reader of 6 would restore a repository without
// the keys its policy trusts. 8 adds admission policies of repositories
// and organizations (issue #30); a reader of 7 would restore a repository
// that refuses nothing. 9 adds the deadline of held chart versions
// (issue #30; a reader of 8 would restore a held version as listed and
// pullable, unsigned), the images each chart version deploys (issue
// #33; a reader of 8 would render every chart again), each version's
// admission verdict (issue #30; a reader of 8 would restore noncompliant
// versions as compliant), repositories' Artifact Hub metadata (issue #33)
// and proxy repositories (issue #31; a reader of 8 would restore a proxy
// as an ordinary, writable repository).
// Replications (issue #31) too: a reader of 8 would restore a site that
// no longer keeps its second site in step. This package reads all nine; a
// chartctl that reads only an older version refuses a newer one by its
// version instead of dropping what it does not know.
package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/dump"
)

// MediaType is the backup archive's media type.
const MediaType = "application/vnd.chartctl.backup.v1.tar"

// FormatVersion is the version of the archive format this package writes.
const FormatVersion = 9

const (
	dir          = "chartctl-backup/"
	formatName   = dir + "format.json"
	recordsName  = dir + "records.jsonl"
	blobsDir     = dir + "blobs/"
	manifestName = dir + "manifest.json"
	formatID     = "chartctl-backup"
)

// blobName is the archive path of the blob digest ("sha256:<hex>").
func blobName(digest string) string {
	alg, hexd, _ := strings.Cut(digest, ":")
	return blobsDir + alg + "/" + hexd
}

// newHash returns the hash of a digest algorithm, nil for one this
// format does not know.
func newHash(alg string) hash.Hash {
	switch alg {
	case "sha256":
		return sha256.New()
	case "sha512":
		return sha512.New()
	}
	return nil
}

type formatFile struct {
	Format    string    `json:"format"`
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
}

// BlobEntry is one blob in the manifest.
type BlobEntry struct {
	Digest string `json:"digest"`
	Size   int64  `json:"size"`
}

type manifest struct {
	Records       map[string]int `json:"records"`
	RecordsSHA256 string         `json:"records_sha256"`
	Blobs         []BlobEntry    `json:"blobs"`
	// PrefixSHA256 covers every archive byte before the manifest's header.
	PrefixSHA256 string `json:"prefix_sha256"`
}

// Summary is what a backup holds.
type Summary struct {
	CreatedAt     time.Time      `json:"created_at"`
	Records       map[string]int `json:"records"`
	Repositories  int            `json:"repositories"`
	ChartVersions int            `json:"chart_versions"`
	Blobs         int            `json:"blobs"`
	Bytes         int64          `json:"bytes"`
}

// Source is what Write reads.
type Source struct {
	Store chartctl.Exporter
	Blobs chartctl.BlobStore
	// Snapshot, if set, is called once the store's read transaction has
	// begun: the backup's content is fixed from then on.
	Snapshot func()
	// Progress, if set, is told the bytes of blobs written so far and the
	// total to write.
	Progress func(done, total int64)
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Write writes a backup of src to w. The records come from one read
// transaction of the store; the caller keeps the blobs they refer to from
// being deleted until Write returns (app.HoldBlobDeletes).
func Write(ctx context.Context, w io.Writer, src Source) (*Summary, error) {
	now := time.Now
	if src.Now != nil {
		now = src.Now
	}
	sum := &Summary{CreatedAt: now().UTC().Truncate(time.Second), Records: map[string]int{}}
	var records bytes.Buffer
	var digests []string
	seen := map[string]bool{}
	addBlob := func(d string) {
		if d != "" && !seen[d] {
			seen[d] = true
			digests = append(digests, d)
		}
	}
	err := src.Store.Export(ctx, src.Snapshot, func(r chartctl.DumpRecord) error {
		b, err := encodeRecord(r)
		if err != nil {
			return err
		}
		records.Write(b)
		sum.Records[r.Kind()]++
		for _, bl := range dump.BlobsOf(r) {
			addBlob(bl.Digest)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the store: %w", err)
	}
	sum.Repositories, sum.ChartVersions = sum.Records[chartctl.DumpRepository], sum.Records[chartctl.DumpChartVersion]
	sort.Strings(digests)

	hw := &hashWriter{w: w, h: sha256.New()}
	tw := tar.NewWriter(hw)
	put := func(name string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), ModTime: sum.CreatedAt, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	fb, _ := json.Marshal(formatFile{Format: formatID, Version: FormatVersion, CreatedAt: sum.CreatedAt})
	if err := put(formatName, fb); err != nil {
		return nil, err
	}
	if err := put(recordsName, records.Bytes()); err != nil {
		return nil, err
	}
	// Sizes first, for progress and the manifest.
	var entries []BlobEntry
	var total int64
	for _, d := range digests {
		b, err := src.Blobs.Open(ctx, d)
		if err != nil {
			return nil, fmt.Errorf("blob %s, which a record refers to, cannot be read: %w (run chartctl admin verify)", d, err)
		}
		entries = append(entries, BlobEntry{Digest: d, Size: b.Size()})
		total += b.Size()
		b.Close()
	}
	var done int64
	for _, e := range entries {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := writeBlob(ctx, tw, src.Blobs, e, sum.CreatedAt); err != nil {
			return nil, err
		}
		done += e.Size
		sum.Blobs++
		sum.Bytes += e.Size
		if src.Progress != nil {
			src.Progress(done, total)
		}
	}
	// Pad the last entry so the prefix digest covers whole blocks.
	if err := tw.Flush(); err != nil {
		return nil, err
	}
	rs := sha256.Sum256(records.Bytes())
	m := manifest{Records: sum.Records, RecordsSHA256: hex.EncodeToString(rs[:]), Blobs: entries, PrefixSHA256: hex.EncodeToString(hw.h.Sum(nil))}
	if m.Blobs == nil {
		m.Blobs = []BlobEntry{}
	}
	mb, _ := json.Marshal(m)
	if err := put(manifestName, mb); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return sum, nil
}

func writeBlob(ctx context.Context, tw *tar.Writer, blobs chartctl.BlobStore, e BlobEntry, at time.Time) error {
	alg, hexd, _ := strings.Cut(e.Digest, ":")
	h := newHash(alg)
	if h == nil {
		return fmt.Errorf("blob %s: unknown digest algorithm", e.Digest)
	}
	b, err := blobs.Open(ctx, e.Digest)
	if err != nil {
		return fmt.Errorf("read blob %s: %w", e.Digest, err)
	}
	defer b.Close()
	// USTAR where the name fits (every sha256 name), else PAX: a sha512
	// name is longer than USTAR's 100 bytes.
	if err := tw.WriteHeader(&tar.Header{Name: blobName(e.Digest), Mode: 0o644, Size: e.Size, ModTime: at, Typeflag: tar.TypeReg}); err != nil {
		return err
	}
	n, err := io.Copy(io.MultiWriter(tw, h), b)
	if err != nil {
		return fmt.Errorf("copy blob %s: %w", e.Digest, err)
	}
	if n != e.Size || hex.EncodeToString(h.Sum(nil)) != hexd {
		return fmt.Errorf("blob %s is damaged in the store (its content no longer has that digest); the backup was stopped: run chartctl admin verify", e.Digest)
	}
	return nil
}

type hashWriter struct {
	w io.Writer
	h hash.Hash
}

func (h *hashWriter) Write(p []byte) (int, error) {
	n, err := h.w.Write(p)
	h.h.Write(p[:n])
	return n, err
}
