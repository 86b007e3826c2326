package helmindex

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// Snapshots: a whole-repository view (the full index, or a newest-N one)
// whose gzip form is kept on disk (Options.DiskDir) is also described
// there by a small sidecar file naming the repository's index generation
// (Options.Generation) its content reflects, and its body is kept beside
// it. After a restart, the first request for that view reads the sidecar
// and asks the store for the repository's generation: when they are
// equal, the view is answered from the kept files (read once, and
// checked with CRC-32C against damage; the ETag is the one computed when
// the view was rendered) instead of reading and rendering every version.
// Anything else (another generation, another build of chartctl, a
// missing, short or damaged file) loads the repository from the store as
// before.
//
// A view's generation is the one read before its repository was loaded;
// a change applied since (Refresh) leaves the repository without one, so
// the views rendered after it are not described until the next load. A
// sidecar is therefore never newer than its content. Keep writes a
// repository's full index snapshot from a fresh read of the store, apart
// from what the Cache holds: the index keeper (internal/app) calls it
// once a repository's changes pause and when the server stops, so a
// changed repository too is answered from a snapshot after a restart.

// snapshotMeta is a sidecar's content: which view, of which generation,
// rendered by which build, and the kept file's facts.
type snapshotMeta struct {
	Repo        string `json:"repo"`
	Format      Format `json:"format"`
	Latest      int    `json:"latest,omitempty"`
	ContextPath string `json:"context_path"`
	Generation  string `json:"generation"`
	Build       string `json:"build"`
	ETag        string `json:"etag"`
	Generated   string `json:"generated"` // RFC 3339, nanoseconds
	File        string `json:"file"`      // the gzip form's name in DiskDir
	GzipSize    int64  `json:"gzip_size"`
	GzipCRC     uint32 `json:"gzip_crc32c"`
	BodyFile    string `json:"body_file"` // the body's name in DiskDir
	BodySize    int64  `json:"body_size"`
	BodyCRC     uint32 `json:"body_crc32c"`
}

// castagnoli is the CRC-32C table: the kept files are checked with it
// (a torn or damaged file), at several GB/s where the ETag's SHA-256
// would take a third of a second for a 100,000-version index here.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// bodySuffix ends the name of a kept body.
const bodySuffix = ".idx"

// snapshotSuffix ends a sidecar's name.
const snapshotSuffix = ".snap"

// snapshotName is the sidecar name of repo's view q (q.Chart empty).
func snapshotName(repo string, q Query) string {
	sum := sha256.Sum256([]byte(repo + "\x00" + strconv.Itoa(int(q.Format)) + "\x00" + strconv.Itoa(q.Latest)))
	return hex.EncodeToString(sum[:16]) + snapshotSuffix
}

// snapshotLabel is what an Index rendered from a loaded repository knows
// of its own content, for its sidecar.
type snapshotLabel struct {
	repo        string
	q           Query
	generation  string
	contextPath string
}

// describe writes the sidecar of ix, whose gzip form is the kept file
// name, when ix carries a label. Failures are ignored: a snapshot only
// spares a load.
func (ix *Index) describe(name string) {
	l := ix.label
	if l == nil || ix.disk == nil {
		return
	}
	b := buildID()
	if b == "" {
		return
	}
	m := snapshotMeta{
		Repo: l.repo, Format: l.q.Format, Latest: l.q.Latest, ContextPath: l.contextPath,
		Generation: l.generation, Build: b, ETag: ix.ETag, Generated: ix.Generated.Format(time.RFC3339Nano),
		File: name, GzipSize: int64(len(ix.gzipped)), GzipCRC: crc32.Checksum(ix.gzipped, castagnoli),
		BodyFile: strings.TrimSuffix(name, ".gz") + bodySuffix, BodySize: int64(len(ix.Body)), BodyCRC: crc32.Checksum(ix.Body, castagnoli),
	}
	data, err := json.Marshal(m)
	if err != nil {
		return
	}
	_ = ix.disk.describe(snapshotName(l.repo, l.q), m, ix.Body, data)
}

// fromSnapshot returns repo's view q as its sidecar describes it, when the
// store's generation of repo is the sidecar's; otherwise nil. A sidecar
// found stale is removed.
func (c *Cache) fromSnapshot(ctx context.Context, repo string, q Query) *Index {
	if c.disk == nil || c.generation == nil || q.Chart != "" {
		return nil
	}
	// The sidecar as read at start (which checked its build and files)
	// or written since.
	sname := snapshotName(repo, q)
	m, ok := c.disk.sidecar(sname)
	if !ok {
		return nil
	}
	generated, err := time.Parse(time.RFC3339Nano, m.Generated)
	if err != nil || m.Repo != repo || m.Format != q.Format || m.Latest != q.Latest || m.ContextPath != c.contextPath {
		c.disk.forget(sname)
		return nil
	}
	gen, err := c.generation(ctx, repo)
	if err != nil {
		if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
			c.disk.forget(sname)
		}
		// Load as before, which reports the error.
		return nil
	}
	if gen != m.Generation {
		c.disk.forget(sname)
		return nil
	}
	path, gz, body, err := c.disk.adopt(m)
	if err == nil {
		if crc32.Checksum(body, castagnoli) != m.BodyCRC || crc32.Checksum(gz, castagnoli) != m.GzipCRC {
			err = fmt.Errorf("a kept index file does not match its checksum")
		}
		if err != nil {
			c.disk.release(m.File)
		}
	}
	if err != nil {
		c.disk.forget(sname)
		return nil
	}
	ix := newIndex(body, m.ETag, generated, q.Format)
	ix.disk = c.disk
	ix.gzipOnce.Do(func() {
		ix.gzipped, ix.gzipLength, ix.gzipPath = gz, headerValue(strconv.Itoa(len(gz))), path
	})
	runtime.AddCleanup(ix, c.disk.release, m.File)
	return ix
}

// Keep makes the snapshot of repo's full index in format f current, so
// that the next process answers its first request for it without a load
// (the index keeper of internal/app calls it once the repository's
// changes pause). It reads every version from the store, renders and
// compresses the index and writes its files and sidecar, without
// touching what this Cache holds in memory. It returns the size of the
// index body it kept, or 0, having written nothing, when there is
// nothing to do or nothing to keep: no
// DiskDir, a sidecar already of the store's generation, an index whose
// gzip form is under DiskMin, or a change committed during the read
// (the keeper is told of it and calls again).
//
// The generation is read before and after the versions, and only equal
// readings are written: generations never repeat, so the versions read
// between them are exactly that generation's.
func (c *Cache) Keep(ctx context.Context, repo string, f Format) (int, error) {
	if c.disk == nil || c.generation == nil || buildID() == "" {
		return 0, nil
	}
	q := Query{Format: f}
	before, err := c.generation(ctx, repo)
	if err != nil {
		return 0, err
	}
	if m, ok := c.disk.sidecar(snapshotName(repo, q)); ok && m.Generation == before && m.ContextPath == c.contextPath {
		return 0, nil
	}
	cvs, err := c.load(ctx, repo)
	if err != nil {
		return 0, fmt.Errorf("load index of repository %s: %w", repo, err)
	}
	after, err := c.generation(ctx, repo)
	if err != nil || after != before {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	r := &repoIndex{json: f == JSON}
	r.fill(cvs)
	ix := c.render(r.selectAll(0), f)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	ix.label = &snapshotLabel{repo: repo, q: q, generation: before, contextPath: c.contextPath}
	if ix.GzipFile() == "" {
		return 0, nil
	}
	// compress describes ix in the background; the caller wants it done.
	c.disk.writing.Wait()
	if m, ok := c.disk.sidecar(snapshotName(repo, q)); !ok || m.Generation != before || m.ETag != ix.ETag {
		return 0, nil
	}
	return len(ix.Body), nil
}

// buildID names this build of chartctl: its module version and VCS
// revision when it was built from a clean checkout, otherwise the
// SHA-256 of its executable; "" when neither can be had (no snapshot is
// then written or used). A snapshot is used only by the build that wrote
// it, since another build may render the same versions differently.
var buildID = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		var rev, modified string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value
			}
		}
		if rev != "" && modified == "false" {
			return bi.Main.Path + "@" + bi.Main.Version + "+" + rev + " " + runtime.Version()
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	f, err := os.Open(filepath.Clean(exe))
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
})
