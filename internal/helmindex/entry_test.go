package helmindex

import (
	"bytes"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// A stored entry is used as is: loading a repository renders nothing, and
// the index equals the one rendered from the metadata.
func TestStoredEntriesAreUsed(t *testing.T) {
	fresh := []*chartctl.ChartVersion{
		mkCV(t, richMetadata(), "web", "1.2.3", t0),
		mkCV(t, nil, "web", "1.10.0", t0.Add(time.Minute)),
	}
	c, _ := setup(t, fresh...)
	want := mustGet(t, c).Body

	var stored []*chartctl.ChartVersion
	for _, cv := range fresh {
		cp := *cv
		cp.IndexEntry = RenderEntry(cv)
		stored = append(stored, &cp)
	}
	c2, _ := setup(t, stored...)
	if got := mustGet(t, c2).Body; !bytes.Equal(got, want) {
		t.Fatalf("index from stored entries differs:\n%s\nwant\n%s", got, want)
	}

	// And a stored entry wins over the metadata (it is not re-rendered).
	marked := *fresh[0]
	marked.IndexEntry = append(RenderEntry(fresh[0]), []byte("    # stored\n")...)
	c3, _ := setup(t, &marked)
	if got := mustGet(t, c3).Body; !bytes.Contains(got, []byte("# stored")) {
		t.Fatalf("stored entry not used:\n%s", got)
	}
}
