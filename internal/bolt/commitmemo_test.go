package bolt

import (
	"fmt"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestCommitMemoBounds: a manifest larger than taggedMemoMaxContent is
// not kept, the content kept never passes taggedMemoBytes, however many
// tags are read, and an answer is given only for the count it was kept
// with.
func TestCommitMemoBounds(t *testing.T) {
	tm := &newCommitMemos().tagged
	tm.put(nameKey{"r", "big"}, 1, &chartctl.OCIManifest{Content: make([]byte, taggedMemoMaxContent+1)})
	if _, ok := tm.get(nameKey{"r", "big"}, 1); ok {
		t.Fatal("a manifest over the per-entry bound was kept")
	}
	content := make([]byte, taggedMemoMaxContent)
	for i := range 3 * taggedMemoBytes / taggedMemoMaxContent {
		k := nameKey{"r", fmt.Sprint("tag", i%300)}
		tm.put(k, 1, &chartctl.OCIManifest{Content: content})
		if tm.size > taggedMemoBytes {
			t.Fatalf("after %d puts the memo holds %d bytes, over %d", i+1, tm.size, taggedMemoBytes)
		}
		if got, ok := tm.get(k, 1); !ok || len(got.Content) != len(content) {
			t.Fatalf("put %d not kept", i+1)
		}
		if _, ok := tm.get(k, 2); ok {
			t.Fatalf("put %d given for another count of commits", i+1)
		}
	}
	sum := 0
	for _, e := range tm.m {
		sum += len(e.v.Content)
	}
	if sum != tm.size {
		t.Fatalf("size %d, entries hold %d", tm.size, sum)
	}
	links := &newCommitMemos().links
	for i := range 2*commitMemoMax + 1 {
		links.put(nameKey{"r", fmt.Sprint(i)}, 1, &chartctl.OCIBlobLink{})
		if len(links.m) > commitMemoMax {
			t.Fatalf("after %d puts the memo holds %d links", i+1, len(links.m))
		}
	}
}
