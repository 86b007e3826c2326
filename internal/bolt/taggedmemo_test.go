package bolt

import (
	"fmt"
	"testing"
)

// TestTaggedMemoBounds: a manifest larger than taggedMemoMaxContent is
// not kept, and the content kept never passes taggedMemoBytes, however
// many tags are read.
func TestTaggedMemoBounds(t *testing.T) {
	var tm taggedMemo
	rec := &ociManifestRecord{Name: "r/app"}
	tm.put([]byte("big"), 1, rec, make([]byte, taggedMemoMaxContent+1))
	if _, _, ok := tm.get([]byte("big"), 1); ok {
		t.Fatal("a manifest over the per-entry bound was kept")
	}
	content := make([]byte, taggedMemoMaxContent)
	for i := range 3 * taggedMemoBytes / taggedMemoMaxContent {
		k := []byte(fmt.Sprint("tag", i%300))
		tm.put(k, 1, rec, content)
		if tm.size > taggedMemoBytes {
			t.Fatalf("after %d puts the memo holds %d bytes, over %d", i+1, tm.size, taggedMemoBytes)
		}
		if _, got, ok := tm.get(k, 1); !ok || len(got) != len(content) {
			t.Fatalf("put %d not kept", i+1)
		}
	}
	sum := 0
	for _, e := range tm.m {
		sum += len(e.content)
	}
	if sum != tm.size {
		t.Fatalf("size %d, entries hold %d", tm.size, sum)
	}
}
