package bolt

import (
	"fmt"
	"testing"

	"github.com/chartctl/chartctl/internal/chartctl"
)

// TestTaggedMemoBounds: a manifest larger than taggedMemoMaxContent is
// not kept, and the content kept never passes taggedMemoBytes, however
// many tags are read.
func TestTaggedMemoBounds(t *testing.T) {
	var tm taggedMemo
	tm.put(taggedKey{"r", "big"}, 1, &chartctl.OCIManifest{Content: make([]byte, taggedMemoMaxContent+1)})
	if _, ok := tm.get(taggedKey{"r", "big"}, 1); ok {
		t.Fatal("a manifest over the per-entry bound was kept")
	}
	content := make([]byte, taggedMemoMaxContent)
	for i := range 3 * taggedMemoBytes / taggedMemoMaxContent {
		k := taggedKey{"r", fmt.Sprint("tag", i%300)}
		tm.put(k, 1, &chartctl.OCIManifest{Content: content})
		if tm.size > taggedMemoBytes {
			t.Fatalf("after %d puts the memo holds %d bytes, over %d", i+1, tm.size, taggedMemoBytes)
		}
		if got, ok := tm.get(k, 1); !ok || len(got.Content) != len(content) {
			t.Fatalf("put %d not kept", i+1)
		}
	}
	sum := 0
	for _, e := range tm.m {
		sum += len(e.m.Content)
	}
	if sum != tm.size {
		t.Fatalf("size %d, entries hold %d", tm.size, sum)
	}
}
