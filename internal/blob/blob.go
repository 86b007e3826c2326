// Package blob keeps content-addressed blobs (chart archives, provenance
// files) as plain files on the local filesystem. It implements
// chartctl.BlobStore.
//
// Layout under the root directory:
//
//	ROOT/sha256/ab/abcdef…   one file per blob, named by its sha256 hex,
//	                         fanned out by the first two hex characters
//	ROOT/sha512/ab/abcdef…   the same for blobs addressed by sha512 (OCI
//	                         clients may push those)
//	ROOT/tmp/                blobs being written; renamed into place on Commit
//
// A blob becomes visible under its digest only once its bytes and the
// directory entry are on disk, so a crash leaves either the whole blob or
// nothing (plus a temp file that the next Open removes).
package blob

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure Store implements chartctl.AlgorithmBlobStore.
var _ chartctl.AlgorithmBlobStore = (*Store)(nil)

const (
	algorithm = "sha256"
	dirMode   = 0o750
	tmpDir    = "tmp"
)

// algorithms maps each supported digest algorithm to its hash's size.
var algorithms = map[string]int{"sha256": sha256.Size, "sha512": sha512.Size}

// algorithmNames lists the algorithms in the order Walk visits them.
var algorithmNames = []string{"sha256", "sha512"}

// ValidDigest reports whether d is a well-formed blob digest: "sha256:"
// followed by exactly 64 lowercase hexadecimal digits, or "sha512:"
// followed by exactly 128. Only such strings ever become file paths.
func ValidDigest(d string) bool {
	_, _, ok := splitDigest(d)
	return ok
}

// splitDigest splits a valid digest into its algorithm and hex parts.
func splitDigest(d string) (alg, hexPart string, ok bool) {
	alg, hexPart, ok = strings.Cut(d, ":")
	size, known := algorithms[alg]
	if !ok || !known || !validHex(hexPart, size*2) {
		return "", "", false
	}
	return alg, hexPart, true
}

func validHex(s string, hexLen int) bool {
	if len(s) != hexLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Store is a filesystem blob store rooted at one directory.
type Store struct {
	root string

	mu sync.Mutex
	// durable holds the fan-out directories known to be on disk: those
	// present at Open and those this Store created and synced.
	durable map[string]bool
	// entries knows which blobs' directory entries are on disk.
	entries syncedEntries
}

// Open opens (creating if needed) the blob store rooted at root and removes
// temp files a crash may have left behind. Temp files of a live writer would
// be removed too, so the caller must make sure no other process uses root
// (chartctl holds the metadata database's lock while it opens this).
func Open(root string) (*Store, error) {
	s := &Store{root: root, durable: map[string]bool{}}
	for _, dir := range []string{s.blobsDir(algorithm), s.tmpDir()} {
		if err := os.MkdirAll(dir, dirMode); err != nil {
			return nil, fmt.Errorf("open blob store: %w", err)
		}
	}
	entries, err := os.ReadDir(s.tmpDir())
	if err != nil {
		return nil, fmt.Errorf("open blob store: %w", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(s.tmpDir(), e.Name())); err != nil {
			return nil, fmt.Errorf("open blob store: remove stale temp file: %w", err)
		}
	}
	for _, alg := range algorithmNames {
		fanouts, err := os.ReadDir(s.blobsDir(alg))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("open blob store: %w", err)
		}
		s.durable[alg] = true
		for _, fo := range fanouts {
			if fo.IsDir() {
				s.durable[filepath.Join(alg, fo.Name())] = true
			}
		}
	}
	return s, nil
}

// Ping reports whether the store answers: its root and temp directories
// are there and are directories (readiness probes call it).
func (s *Store) Ping(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, dir := range []string{s.root, s.tmpDir()} {
		fi, err := os.Stat(dir)
		if err != nil {
			return fmt.Errorf("blob store: %w", err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("blob store: %s is not a directory", dir)
		}
	}
	return nil
}

// Root returns the store's root directory.
func (s *Store) Root() string { return s.root }

func (s *Store) blobsDir(alg string) string { return filepath.Join(s.root, alg) }
func (s *Store) tmpDir() string             { return filepath.Join(s.root, tmpDir) }

// fanoutDir returns the directory holding the blob with algorithm alg and
// hex digest h, which must have been validated.
func (s *Store) fanoutDir(alg, h string) string { return filepath.Join(s.blobsDir(alg), h[:2]) }

// path returns the file of the blob with algorithm alg and hex digest h,
// which must have been validated.
func (s *Store) path(alg, h string) string { return filepath.Join(s.fanoutDir(alg, h), h) }

// Create starts a new sha256 blob in a temp file of the store's tmp
// directory (the same filesystem, so Commit can rename it into place).
func (s *Store) Create(ctx context.Context) (chartctl.BlobWriter, error) {
	return s.CreateAlgorithm(ctx, algorithm)
}

// CreateAlgorithm starts a new blob addressed by algorithm ("sha256" or
// "sha512"). It returns EINVALID for another algorithm.
func (s *Store) CreateAlgorithm(ctx context.Context, alg string) (chartctl.BlobWriter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var h hash.Hash
	switch alg {
	case "sha256":
		h = sha256.New()
	case "sha512":
		h = sha512.New()
	default:
		return nil, chartctl.Invalid("digest", "Unsupported digest algorithm %q; use sha256 or sha512.", alg)
	}
	f, err := os.CreateTemp(s.tmpDir(), "blob-*")
	if err != nil {
		return nil, fmt.Errorf("create blob: %w", err)
	}
	return &writer{s: s, f: f, h: h, alg: alg}, nil
}

// Open opens the blob with digest. It returns ENOTFOUND if the digest is
// malformed or no such blob is stored.
func (s *Store) Open(ctx context.Context, digest string) (chartctl.Blob, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	alg, h, ok := splitDigest(digest)
	if !ok {
		return nil, notFound()
	}
	f, err := os.Open(s.path(alg, h))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound()
	} else if err != nil {
		return nil, fmt.Errorf("open blob: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("open blob: %w", err)
	}
	return &File{File: f, size: fi.Size()}, nil
}

// Delete removes the blob with digest. Deleting a missing blob, or one whose
// digest is malformed (so it cannot be stored), succeeds.
func (s *Store) Delete(ctx context.Context, digest string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	alg, h, ok := splitDigest(digest)
	if !ok {
		return nil
	}
	path := s.path(alg, h)
	_, err := s.entries.change(path, func() error { return os.Remove(path) })
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete blob: %w", err)
	}
	return nil
}

// Walk calls fn for the digest of every stored blob, the sha256 ones first,
// each algorithm's in ascending order of digest. It stops at the first
// error fn returns and returns it. Files that are not blobs are skipped.
func (s *Store) Walk(ctx context.Context, fn func(digest string) error) error {
	for _, alg := range algorithmNames {
		if err := s.walk(ctx, alg, fn); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) walk(ctx context.Context, alg string, fn func(digest string) error) error {
	fanouts, err := os.ReadDir(s.blobsDir(alg))
	if errors.Is(err, fs.ErrNotExist) && alg != algorithm {
		return nil
	} else if err != nil {
		return fmt.Errorf("walk blobs: %w", err)
	}
	for _, fo := range fanouts {
		if !fo.IsDir() || len(fo.Name()) != 2 {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(s.blobsDir(alg), fo.Name()))
		if err != nil {
			return fmt.Errorf("walk blobs: %w", err)
		}
		for _, e := range entries {
			name := e.Name()
			if !e.Type().IsRegular() || !validHex(name, algorithms[alg]*2) || name[:2] != fo.Name() {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(alg + ":" + name); err != nil {
				return err
			}
		}
	}
	return nil
}

// touch sets a stored blob's modification time to now. A failure only
// makes the blob look older to garbage collection than it is, which its
// grace period and the record's reference still cover, so it is ignored.
func touch(path string) {
	now := time.Now()
	_ = os.Chtimes(path, now, now)
}

// ModTime returns when the blob with digest was last committed. It
// returns ENOTFOUND if the digest is malformed or no such blob is stored.
func (s *Store) ModTime(ctx context.Context, digest string) (time.Time, error) {
	alg, h, ok := splitDigest(digest)
	if !ok {
		return time.Time{}, notFound()
	}
	fi, err := os.Stat(s.path(alg, h))
	if errors.Is(err, fs.ErrNotExist) {
		return time.Time{}, notFound()
	} else if err != nil {
		return time.Time{}, fmt.Errorf("stat blob: %w", err)
	}
	return fi.ModTime(), nil
}

func notFound() error { return chartctl.Errorf(chartctl.ENOTFOUND, "Blob not found.") }

// File is an open stored blob.
type File struct {
	*os.File
	size int64
}

// Size returns the blob's length in bytes.
func (f *File) Size() int64 { return f.size }

// OSFile returns the blob's open file, so a server can send it with
// sendfile (http.ServeContent does when handed an *os.File). Reading or
// seeking it is reading or seeking the blob; closing the blob closes it.
func (f *File) OSFile() *os.File { return f.File }

// writer writes one new blob to a temp file, hashing as it goes.
type writer struct {
	s      *Store
	f      *os.File
	h      hash.Hash
	alg    string
	n      int64
	digest string // set once committed
	closed bool   // the temp file is closed (committed, aborted or failed)
}

// Write appends p to the blob.
func (w *writer) Write(p []byte) (int, error) {
	if w.closed {
		return 0, errors.New("write blob: writer is closed")
	}
	n, err := w.f.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	if err != nil {
		return n, fmt.Errorf("write blob: %w", err)
	}
	return n, nil
}

// Digest returns "<algorithm>:<hex>" of the bytes written so far.
func (w *writer) Digest() string { return w.alg + ":" + hex.EncodeToString(w.h.Sum(nil)) }

// Size returns the number of bytes written so far.
func (w *writer) Size() int64 { return w.n }

// Commit makes the blob durable under its digest and returns the digest. If
// the blob is already stored, the temp file is discarded. Calling Commit
// again after success returns the same digest.
func (w *writer) Commit() (string, error) {
	if w.digest != "" {
		return w.digest, nil
	}
	if w.closed {
		return "", errors.New("commit blob: writer is closed")
	}
	digest := w.Digest()
	h := strings.TrimPrefix(digest, w.alg+":")
	tmp := w.f.Name()

	target := w.s.path(w.alg, h)
	if exists, synced, epoch, err := w.s.entries.look(target); err == nil && exists {
		// The bytes are stored already (synced before they were renamed
		// into place): this copy needs no fsync. Its directory entry may
		// belong to a concurrent Commit that has not synced it yet, so
		// unless it is known to be on disk the directory is synced before
		// answering that the blob is durable. Its modification time is
		// refreshed: a record is about to refer to it, so garbage
		// collection must see it as young.
		_ = w.f.Close()
		w.closed = true
		_ = os.Remove(tmp)
		touch(target)
		if err := w.s.syncEntry(target, synced, epoch); err != nil {
			return "", fmt.Errorf("commit blob: %w", err)
		}
		w.digest = digest
		return digest, nil
	}

	syncErr := w.f.Sync()
	closeErr := w.f.Close()
	w.closed = true
	if err := errors.Join(syncErr, closeErr); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("commit blob: %w", err)
	}

	if err := w.commitFile(tmp, h); err != nil {
		_ = os.Remove(tmp)
		return "", fmt.Errorf("commit blob: %w", err)
	}
	w.digest = digest
	return digest, nil
}

// commitFile moves the synced temp file tmp into place as blob h and makes
// the directory entries durable.
func (w *writer) commitFile(tmp, h string) error {
	if err := w.s.ensureFanout(w.alg, h[:2]); err != nil {
		return err
	}
	target := w.s.path(w.alg, h)
	exists, synced, epoch, err := w.s.entries.look(target)
	if err != nil {
		return err
	}
	if exists {
		// Same digest, same bytes: keep the stored file. Its directory
		// entry may belong to a concurrent Commit that has not synced it
		// yet, so sync before answering that the blob is durable.
		if err := os.Remove(tmp); err != nil {
			return err
		}
		touch(target)
		return w.s.syncEntry(target, synced, epoch)
	}
	epoch, err = w.s.entries.change(target, func() error { return os.Rename(tmp, target) })
	if err != nil {
		return err
	}
	return w.s.syncEntry(target, false, epoch)
}

// syncEntry makes the directory entry of the blob file at path durable:
// nothing to do when it is known to be synced, else a sync of its
// directory, recorded unless an entry changed since epoch.
func (s *Store) syncEntry(path string, synced bool, epoch uint64) error {
	if synced {
		return nil
	}
	if err := syncDir(filepath.Dir(path)); err != nil {
		return err
	}
	s.entries.markSynced(path, epoch)
	return nil
}

// Abort discards an uncommitted blob. It is safe after Commit, and safe to
// call more than once.
func (w *writer) Abort() error {
	if w.digest != "" {
		return nil
	}
	if !w.closed {
		w.closed = true
		_ = w.f.Close()
	}
	if err := os.Remove(w.f.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("abort blob: %w", err)
	}
	return nil
}

// ensureFanout makes sure the fan-out directory name exists and that its
// entry in the parent directory is durable. A directory another goroutine
// has just created may not be synced yet, so the parent is synced by every
// caller until the directory is known durable.
func (s *Store) ensureFanout(alg, name string) error {
	if alg != algorithm {
		// The sha512 directory is created on first use, durably.
		if err := s.ensureDir(alg, s.blobsDir(alg), s.root); err != nil {
			return err
		}
	}
	return s.ensureDir(filepath.Join(alg, name), filepath.Join(s.blobsDir(alg), name), s.blobsDir(alg))
}

// ensureDir makes sure dir exists with a durable entry in parent; key
// records that it is known durable.
func (s *Store) ensureDir(key, dir, parent string) error {
	s.mu.Lock()
	known := s.durable[key]
	s.mu.Unlock()
	if known {
		return nil
	}
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := syncDir(parent); err != nil {
		return err
	}
	s.mu.Lock()
	s.durable[key] = true
	s.mu.Unlock()
	return nil
}

// syncDir fsyncs a directory so the entries created in it survive a crash.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync directory: %w", err)
	}
	return nil
}
