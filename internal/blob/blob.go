// Package blob keeps content-addressed blobs (chart archives, provenance
// files) as plain files on the local filesystem. It implements
// chartctl.BlobStore.
//
// Layout under the root directory:
//
//	ROOT/sha256/ab/abcdef…   one file per blob, named by its sha256 hex,
//	                         fanned out by the first two hex characters
//	ROOT/tmp/                blobs being written; renamed into place on Commit
//
// A blob becomes visible under its digest only once its bytes and the
// directory entry are on disk, so a crash leaves either the whole blob or
// nothing (plus a temp file that the next Open removes).
package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Ensure Store implements chartctl.BlobStore.
var _ chartctl.BlobStore = (*Store)(nil)

const (
	algorithm    = "sha256"
	digestPrefix = algorithm + ":"
	hexLen       = sha256.Size * 2
	dirMode      = 0o750
	tmpDir       = "tmp"
)

// ValidDigest reports whether d is a well-formed blob digest: "sha256:"
// followed by exactly 64 lowercase hexadecimal digits. Only such strings
// ever become file paths.
func ValidDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, digestPrefix)
	return ok && validHex(hexPart)
}

func validHex(s string) bool {
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
	// blobsPrefix is blobsDir() and a separator.
	blobsPrefix string

	mu sync.Mutex
	// durable holds the fan-out directories known to be on disk: those
	// present at Open and those this Store created and synced.
	durable map[string]bool
}

// Open opens (creating if needed) the blob store rooted at root and removes
// temp files a crash may have left behind. Temp files of a live writer would
// be removed too, so the caller must make sure no other process uses root
// (chartctl holds the metadata database's lock while it opens this).
func Open(root string) (*Store, error) {
	s := &Store{root: root, durable: map[string]bool{}}
	s.blobsPrefix = s.blobsDir() + string(filepath.Separator)
	for _, dir := range []string{s.blobsDir(), s.tmpDir()} {
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
	fanouts, err := os.ReadDir(s.blobsDir())
	if err != nil {
		return nil, fmt.Errorf("open blob store: %w", err)
	}
	for _, fo := range fanouts {
		if fo.IsDir() {
			s.durable[fo.Name()] = true
		}
	}
	return s, nil
}

// Root returns the store's root directory.
func (s *Store) Root() string { return s.root }

func (s *Store) blobsDir() string { return filepath.Join(s.root, algorithm) }
func (s *Store) tmpDir() string   { return filepath.Join(s.root, tmpDir) }

// fanoutDir returns the directory holding the blob with hex digest h, which
// must have been validated.
func (s *Store) fanoutDir(h string) string { return filepath.Join(s.blobsDir(), h[:2]) }

// path returns the file of the blob with hex digest h, which must have been
// validated. It is filepath.Join(s.fanoutDir(h), h), built in one
// allocation: every download asks for it.
func (s *Store) path(h string) string {
	return s.blobsPrefix + h[:2] + string(filepath.Separator) + h
}

// Create starts a new blob in a temp file of the store's tmp directory (the
// same filesystem, so Commit can rename it into place).
func (s *Store) Create(ctx context.Context) (chartctl.BlobWriter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(s.tmpDir(), "blob-*")
	if err != nil {
		return nil, fmt.Errorf("create blob: %w", err)
	}
	return &writer{s: s, f: f, h: sha256.New()}, nil
}

// Open opens the blob with digest. It returns ENOTFOUND if the digest is
// malformed or no such blob is stored.
func (s *Store) Open(ctx context.Context, digest string) (chartctl.Blob, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !ValidDigest(digest) {
		return nil, notFound()
	}
	f, err := os.Open(s.path(strings.TrimPrefix(digest, digestPrefix)))
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
	if !ValidDigest(digest) {
		return nil
	}
	err := os.Remove(s.path(strings.TrimPrefix(digest, digestPrefix)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete blob: %w", err)
	}
	return nil
}

// Walk calls fn for the digest of every stored blob, in ascending order of
// digest. It stops at the first error fn returns and returns it. Files that
// are not blobs are skipped.
func (s *Store) Walk(ctx context.Context, fn func(digest string) error) error {
	fanouts, err := os.ReadDir(s.blobsDir())
	if err != nil {
		return fmt.Errorf("walk blobs: %w", err)
	}
	for _, fo := range fanouts {
		if !fo.IsDir() || len(fo.Name()) != 2 {
			continue
		}
		entries, err := os.ReadDir(filepath.Join(s.blobsDir(), fo.Name()))
		if err != nil {
			return fmt.Errorf("walk blobs: %w", err)
		}
		for _, e := range entries {
			name := e.Name()
			if !e.Type().IsRegular() || !validHex(name) || name[:2] != fo.Name() {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(digestPrefix + name); err != nil {
				return err
			}
		}
	}
	return nil
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

// Digest returns "sha256:<hex>" of the bytes written so far.
func (w *writer) Digest() string { return digestPrefix + hex.EncodeToString(w.h.Sum(nil)) }

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
	h := strings.TrimPrefix(digest, digestPrefix)
	tmp := w.f.Name()

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
	dir := w.s.fanoutDir(h)
	if err := w.s.ensureFanout(h[:2]); err != nil {
		return err
	}
	target := w.s.path(h)
	if _, err := os.Lstat(target); err == nil {
		// Same digest, same bytes: keep the stored file. Its directory
		// entry may belong to a concurrent Commit that has not synced it
		// yet, so sync before answering that the blob is durable.
		if err := os.Remove(tmp); err != nil {
			return err
		}
		return syncDir(dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.Rename(tmp, target); err != nil {
		return err
	}
	return syncDir(dir)
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
func (s *Store) ensureFanout(name string) error {
	s.mu.Lock()
	known := s.durable[name]
	s.mu.Unlock()
	if known {
		return nil
	}
	if err := os.Mkdir(filepath.Join(s.blobsDir(), name), dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err := syncDir(s.blobsDir()); err != nil {
		return err
	}
	s.mu.Lock()
	s.durable[name] = true
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
