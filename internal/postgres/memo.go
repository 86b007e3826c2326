package postgres

import (
	"strconv"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/epochmemo"
)

// The registry's hottest reads, a manifest by tag, a blob link and a page
// of tags (pushed over OCI, and of a chart's versions), are
// answered from memory while nothing has changed (internal/epochmemo), as
// on bolt. Here the write epoch moves:
//
//   - after every write transaction of this process, committed or not,
//     before the write's caller hears of it: a replica reads its own
//     writes at once;
//   - on every change notification WatchIndex hears from any replica, and
//     at each of its polls (DefaultIndexPoll): another replica's write is
//     seen within a poll, inside the second CONTRACT §12 gives a change
//     to reach every replica.
//
// The memos are used only while WatchIndex runs: without it nothing would
// bring other replicas' writes in.

// The memos' bounds, as on bolt.
const (
	ociMemoMax        = 4096
	taggedMemoBytes   = 16 << 20
	taggedMemoMaxSize = 64 << 10
)

// ociMemos are a DB's memos of TaggedManifest, BlobLink, Tags and
// ChartTags.
type ociMemos struct {
	tagged          *epochmemo.Memo[epochmemo.NameKey, chartctl.OCIManifest]
	links           *epochmemo.Memo[epochmemo.NameKey, chartctl.OCIBlobLink]
	tags, chartTags *epochmemo.Memo[epochmemo.NameKey, tagPage]
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

// pageKey is the memo key of a page of name's tags after last, n long.
func pageKey(name, last string, n int) epochmemo.NameKey {
	return epochmemo.NameKey{Name: name, Ref: last + "\x00" + strconv.Itoa(n)}
}

func newOCIMemos() *ociMemos {
	return &ociMemos{
		tagged: epochmemo.New[epochmemo.NameKey](ociMemoMax, taggedMemoBytes, taggedMemoMaxSize,
			func(m *chartctl.OCIManifest) int { return len(m.Content) }),
		links:     epochmemo.New[epochmemo.NameKey, chartctl.OCIBlobLink](ociMemoMax, 0, 0, nil),
		tags:      epochmemo.New[epochmemo.NameKey](ociMemoMax, taggedMemoBytes, taggedMemoMaxSize, tagPageBytes),
		chartTags: epochmemo.New[epochmemo.NameKey](ociMemoMax, taggedMemoBytes, taggedMemoMaxSize, tagPageBytes),
	}
}

// memoEpoch returns the write epoch to read a memo at, and whether the
// memos may be used at all (WatchIndex runs; not a DB of an Import).
func (db *DB) memoEpoch() (uint64, bool) {
	if db.memos == nil || db.watchers.Load() == 0 {
		return 0, false
	}
	return db.epoch.Load(), true
}

// wrote moves the write epoch: the memos' answers from before are stale.
func (db *DB) wrote() { db.epoch.Add(1) }
