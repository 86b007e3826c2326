package postgres

import (
	"context"
	"strings"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/epochmemo"
)

// The registry's hottest reads, a manifest by tag, a blob link and a page
// of tags (pushed over OCI, and of a chart's versions), are answered from
// memory while nothing has changed (internal/epochmemo), as on bolt.
//
// While this process is the only replica on the database, an answer is
// kept under its own write epoch, which moves after every write
// transaction of this process, committed or not, before the write's
// caller hears of it, so the replica reads its own writes at once; and at
// every poll of WatchIndex. WatchIndex counts the other replicas'
// listening connections at each poll, and a replica that starts to listen
// announces itself (indexChange.Joined), so a replica stops answering
// alone when it hears of another, before that one serves.
//
// With other replicas, an answer is kept under the write epoch they share
// (sharedepoch.go), once each of them has acknowledged this replica: the
// registry's clients expect a blob or tag deleted through one replica to
// be gone at the next request to any other (the OCI conformance suite
// checks that behind a load balancer), and every write moves the shared
// epoch before it is answered. Writers that are not replicas (an `admin
// migrate` onto a database) run with the replicas stopped.

// ociMemos are a DB's memos of TaggedManifest, BlobLink, Tags and
// ChartTags, with bolt's bounds.
type ociMemos struct {
	tagged          *epochmemo.Memo[epochmemo.NameKey, chartctl.OCIManifest]
	links           *epochmemo.Memo[epochmemo.NameKey, chartctl.OCIBlobLink]
	tags, chartTags *epochmemo.Memo[pageKey, tagPage]
}

// tagPage is a page of tags and whether more follow.
type tagPage struct {
	tags []string
	more bool
}

// tagPageBytes is a page's size for the memo's bounds: the whole list
// of a chart of 100,000 versions (about 1 MB) is not kept, a page of
// 100 tags is.
func tagPageBytes(p *tagPage) int {
	n := 0
	for _, t := range p.tags {
		n += len(t) + 16
	}
	return n
}

// pageKey is the memo key of a page of tags: of OCI name (repo empty) or
// of chart name in repo, after last, n long.
type pageKey struct {
	repo, name, last string
	n                int
}

// Owned returns k with copies of its names (epochmemo.Key).
func (k pageKey) Owned() pageKey {
	return pageKey{strings.Clone(k.repo), strings.Clone(k.name), strings.Clone(k.last), k.n}
}

func newOCIMemos() *ociMemos {
	const entries, bytes, one = epochmemo.DefaultEntries, epochmemo.DefaultBytes, epochmemo.DefaultMaxAnswer
	return &ociMemos{
		tagged:    epochmemo.New[epochmemo.NameKey](entries, bytes, one, func(m *chartctl.OCIManifest) int { return len(m.Content) }),
		links:     epochmemo.New[epochmemo.NameKey, chartctl.OCIBlobLink](entries, 0, 0, nil),
		tags:      epochmemo.New[pageKey](entries, bytes, one, tagPageBytes),
		chartTags: epochmemo.New[pageKey](entries, bytes, one, tagPageBytes),
	}
}

// remember answers k from m, or from load, which it keeps, while the
// memos may be used (memoEpoch); otherwise it calls load.
func remember[K epochmemo.Key[K], V any](ctx context.Context, db *DB, m *epochmemo.Memo[K, V], k K, load func() (*V, error)) (*V, error) {
	epoch, ok := db.memoEpoch(ctx)
	if !ok {
		return load()
	}
	return m.Answer(k, epoch, load)
}

// memoEpoch returns the write epoch to read a memo at, and whether the
// memos may be used at all: WatchIndex runs (not a DB of an Import) and
// finds this replica alone, or every other replica has acknowledged it
// (sharedepoch.go).
func (db *DB) memoEpoch(ctx context.Context) (uint64, bool) {
	if db.memos == nil || db.watchers.Load() == 0 {
		return 0, false
	}
	if _, alone := db.aloneGeneration(); alone {
		return db.epoch.Load(), true
	}
	return db.sharedMemoEpoch(ctx)
}

// Memoizing reports whether the registry's reads are answered from
// memory now: WatchIndex runs, and this replica is alone on the database
// or every other replica has acknowledged it (the
// chartctl_registry_memos metric; for tests and operators' diagnostics).
func (db *DB) Memoizing() bool {
	if db.memos == nil || db.watchers.Load() == 0 {
		return false
	}
	_, alone := db.aloneGeneration()
	return alone || db.shared.ok.Load()
}

// MemoizingAlone reports whether the registry's reads are answered from
// memory under this replica's own epoch: no other replica listens.
func (db *DB) MemoizingAlone() bool {
	_, alone := db.aloneGeneration()
	return alone && db.memos != nil
}
