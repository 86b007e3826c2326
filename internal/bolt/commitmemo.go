package bolt

import (
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/epochmemo"
)

// commitMemos are a DB's memos of the reads every registry GET makes,
// each answer kept with the count of commits to the file (file.commits)
// read before it was found (internal/epochmemo).
type commitMemos struct {
	// tagged keeps TaggedManifest's answers. A manifest may be megabytes
	// (the registry takes up to 4 MiB); one of more than 64 KiB is not
	// kept, and its reads go to the file every time (chart manifests are
	// under 1 KiB).
	tagged *epochmemo.Memo[nameKey, chartctl.OCIManifest]
	// links keeps BlobLink's answers.
	links *epochmemo.Memo[nameKey, chartctl.OCIBlobLink]
}

// nameKey is a key of two names: a repository's and a tag's or digest's.
type nameKey = epochmemo.NameKey

func newCommitMemos() *commitMemos {
	return &commitMemos{
		tagged: epochmemo.New[nameKey](epochmemo.DefaultEntries, epochmemo.DefaultBytes, epochmemo.DefaultMaxAnswer,
			func(m *chartctl.OCIManifest) int { return len(m.Content) }),
		links: epochmemo.New[nameKey, chartctl.OCIBlobLink](epochmemo.DefaultEntries, 0, 0, nil),
	}
}
