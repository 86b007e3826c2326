package backup

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"sort"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Problem is one thing wrong with a store or a backup.
type Problem struct {
	// Kind is what is wrong: "archive" (unreadable, truncated, tampered
	// structure), "blob_digest", "blob_missing", "blob_size", "records",
	// "reference" (a record refers to one that is missing), "index_entry",
	// "orphan_blob".
	Kind   string `json:"kind"`
	Target string `json:"target"`
	Detail string `json:"detail"`
}

// Checked counts what a verification looked at.
type Checked struct {
	Repositories  int   `json:"repositories"`
	ChartVersions int   `json:"chart_versions"`
	Blobs         int   `json:"blobs"`
	Bytes         int64 `json:"bytes"`
}

// Result is a verification's outcome (CONTRACT §14).
type Result struct {
	OK       bool      `json:"ok"`
	Checked  Checked   `json:"checked"`
	Problems []Problem `json:"problems"`
}

func (r *Result) add(kind, target, format string, args ...any) {
	r.Problems = append(r.Problems, Problem{Kind: kind, Target: target, Detail: fmt.Sprintf(format, args...)})
}

// Archive is a read backup: its records, in the order written.
type Archive struct {
	// Version is the archive's format version.
	Version int
	Records []chartctl.DumpRecord
}

// BlobSink receives each blob of an archive as it is read; restore stores
// them. It must consume r; the digest is checked by the reader.
type BlobSink func(digest string, r io.Reader) error

// lagHasher hashes what is read through it except the last 512 bytes, so
// that when tar has just read a header block the hash covers exactly what
// came before that header.
type lagHasher struct {
	r   io.Reader
	h   hash.Hash
	lag []byte
}

func (l *lagHasher) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.lag = append(l.lag, p[:n]...)
	if len(l.lag) > 512 {
		cut := len(l.lag) - 512
		l.h.Write(l.lag[:cut])
		l.lag = append(l.lag[:0], l.lag[cut:]...)
	}
	return n, err
}

// Read reads and checks a whole backup from r: the format, every blob's
// digest, the records' digest, the manifest's list of blobs, that every
// blob a record refers to is there, that records refer to records that are
// there (checkReferences), and that nothing follows the archive's end.
// sink, if set, receives every blob. Problems are in the Result; the
// Archive is nil unless the result is OK.
func Read(ctx context.Context, r io.Reader, sink BlobSink) (*Archive, *Result) {
	res := &Result{Problems: []Problem{}}
	lh := &lagHasher{r: r, h: sha256.New()}
	tr := tar.NewReader(lh)
	var (
		records []byte
		version int
		m       *manifest
		blobs   = map[string]int64{}
	)
	for m == nil {
		if err := ctx.Err(); err != nil {
			res.add("archive", "", "Stopped: %v.", err)
			return nil, res
		}
		hdr, err := tr.Next()
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				res.add("archive", "", "The backup is truncated: it ends before its manifest.")
			} else {
				res.add("archive", "", "The backup is not a readable chartctl backup (tar: %v).", err)
			}
			return nil, res
		}
		switch {
		case hdr.Name == formatName:
			var f formatFile
			b, err := io.ReadAll(io.LimitReader(tr, 1<<16))
			if err != nil || json.Unmarshal(b, &f) != nil || f.Format != formatID {
				res.add("archive", formatName, "Not a chartctl backup.")
				return nil, res
			}
			if f.Version < 1 || f.Version > FormatVersion {
				res.add("archive", formatName, "Backup format version %d; this chartctl reads versions 1 to %d (a newer chartctl wrote it: restore it with that one).", f.Version, FormatVersion)
				return nil, res
			}
			version = f.Version
		case version == 0:
			res.add("archive", hdr.Name, "Not a chartctl backup: it does not start with %s.", formatName)
			return nil, res
		case hdr.Name == recordsName:
			b, err := io.ReadAll(tr)
			if err != nil {
				res.add("archive", recordsName, "The backup is truncated inside its records.")
				return nil, res
			}
			records = b
		case strings.HasPrefix(hdr.Name, blobsDir):
			alg, hexd, _ := strings.Cut(strings.TrimPrefix(hdr.Name, blobsDir), "/")
			h := newHash(alg)
			if h == nil || (version == 1 && alg != "sha256") || !validHex(hexd, h.Size()) {
				res.add("archive", hdr.Name, "Unexpected file %s in the backup.", hdr.Name)
				continue
			}
			digest := alg + ":" + hexd
			src := io.TeeReader(tr, h)
			var n int64
			if sink != nil {
				cr := &countReader{r: src}
				err = sink(digest, cr)
				if err == nil {
					_, err = io.Copy(io.Discard, cr)
				}
				n = cr.n
			} else {
				n, err = io.Copy(io.Discard, src)
			}
			if err != nil {
				if errors.Is(err, io.ErrUnexpectedEOF) {
					res.add("archive", digest, "The backup is truncated inside blob %s.", digest)
				} else {
					res.add("archive", digest, "Could not store blob %s: %v.", digest, err)
				}
				return nil, res
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != hexd {
				res.add("blob_digest", digest, "The blob's content has digest %s:%s: it was changed or damaged.", alg, got)
			}
			blobs[digest] = n
			res.Checked.Blobs++
			res.Checked.Bytes += n
		case hdr.Name == manifestName:
			prefix := hex.EncodeToString(lh.h.Sum(nil))
			b, err := io.ReadAll(io.LimitReader(tr, 256<<20))
			var mf manifest
			if err != nil || json.Unmarshal(b, &mf) != nil {
				res.add("archive", manifestName, "The manifest is damaged or truncated.")
				return nil, res
			}
			m = &mf
			if mf.PrefixSHA256 != prefix {
				res.add("archive", "", "The archive's bytes do not match its manifest: it was changed or damaged.")
			}
		default:
			res.add("archive", hdr.Name, "Unexpected file %s in the backup.", hdr.Name)
		}
	}
	// After the manifest's content: its padding and tar's two end blocks,
	// all zero, read past the tar reader so nothing goes unchecked.
	rest, err := io.ReadAll(lh.r)
	if err != nil {
		res.add("archive", "", "Could not read the end of the backup: %v.", err)
	}
	checkTail(res, rest)

	sum := sha256.Sum256(records)
	if records == nil || hex.EncodeToString(sum[:]) != m.RecordsSHA256 {
		res.add("records", recordsName, "The records do not match the manifest's digest: they were changed or damaged.")
	}
	for _, e := range m.Blobs {
		size, ok := blobs[e.Digest]
		switch {
		case !ok:
			res.add("blob_missing", e.Digest, "The manifest lists this blob but the backup does not hold it.")
		case size != e.Size:
			res.add("blob_size", e.Digest, "%d bytes; the manifest says %d.", size, e.Size)
		}
	}
	if len(m.Blobs) != len(blobs) {
		res.add("archive", "", "The backup holds %d blobs; its manifest lists %d.", len(blobs), len(m.Blobs))
	}
	arch := &Archive{Version: version}
	for i, l := range bytes.Split(bytes.TrimSuffix(records, []byte("\n")), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		rec, err := decodeRecord(l, version)
		if err != nil {
			res.add("records", fmt.Sprintf("%s line %d", recordsName, i+1), "Unreadable record: %v.", err)
			continue
		}
		arch.Records = append(arch.Records, rec)
		switch {
		case rec.Repository != nil:
			res.Checked.Repositories++
		case rec.ChartVersion != nil:
			res.Checked.ChartVersions++
			cv := rec.ChartVersion
			if version == 1 && cv.ProvDigest != "" && cv.ProvSize == 0 {
				// Format 1 did not record it; the archive holds the file.
				cv.ProvSize = blobs[cv.ProvDigest]
			}
			for _, d := range []string{cv.Digest, cv.ProvDigest} {
				if _, ok := blobs[d]; d != "" && !ok {
					res.add("blob_missing", d, "Chart %s %s in %s refers to this blob, which the backup lacks.", cv.Name, cv.Version, cv.Repository)
				}
			}
			if size, ok := blobs[cv.Digest]; ok && size != cv.Size {
				res.add("blob_size", cv.Digest, "Chart %s %s in %s says %d bytes; the blob has %d.", cv.Name, cv.Version, cv.Repository, cv.Size, size)
			}
		case rec.OCIBlobLink != nil:
			l := rec.OCIBlobLink
			if size, ok := blobs[l.Digest]; !ok {
				res.add("blob_missing", l.Digest, "OCI repository %s holds this blob, which the backup lacks.", l.Name)
			} else if size != l.Size {
				res.add("blob_size", l.Digest, "OCI repository %s says %d bytes; the blob has %d.", l.Name, l.Size, size)
			}
		}
	}
	checkReferences(arch.Records, res)
	sort.SliceStable(res.Problems, func(i, j int) bool { return res.Problems[i].Kind < res.Problems[j].Kind })
	res.OK = len(res.Problems) == 0
	if !res.OK {
		return nil, res
	}
	return arch, res
}

// validHex reports whether s is n bytes in lowercase hex.
func validHex(s string, n int) bool {
	if len(s) != 2*n {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// checkTail requires the bytes after the manifest's content to be zeros
// (tar padding and end blocks).
func checkTail(res *Result, rest []byte) {
	if len(rest) < 1024 {
		res.add("archive", "", "The backup is truncated: its end blocks are missing.")
		return
	}
	for _, c := range rest {
		if c != 0 {
			res.add("archive", "", "The backup has data after its end: it was changed or damaged.")
			return
		}
	}
}

type countReader struct {
	r io.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
