package epochmemo

import (
	"fmt"
	"testing"
)

type answer struct{ content []byte }

// TestBounds: an answer larger than the largest kept is not kept, the
// bytes kept never pass the memo's budget, however many keys are read,
// the entries never pass their count, and an answer is given only for the
// epoch it was kept with.
func TestBounds(t *testing.T) {
	const maxOne, maxBytes, maxEntries = 64 << 10, 1 << 20, 100
	m := New[NameKey](maxEntries, maxBytes, maxOne, func(a *answer) int { return len(a.content) })
	m.Put(NameKey{"r", "big"}, 1, &answer{make([]byte, maxOne+1)})
	if _, ok := m.Get(NameKey{"r", "big"}, 1); ok {
		t.Fatal("an answer over the per-entry bound was kept")
	}
	content := make([]byte, maxOne)
	for i := range 3 * maxBytes / maxOne {
		k := NameKey{"r", fmt.Sprint("tag", i%30)}
		m.Put(k, 1, &answer{content})
		if m.size > maxBytes {
			t.Fatalf("after %d puts the memo holds %d bytes, over %d", i+1, m.size, maxBytes)
		}
		if got, ok := m.Get(k, 1); !ok || len(got.content) != len(content) {
			t.Fatalf("put %d not kept", i+1)
		}
		if _, ok := m.Get(k, 2); ok {
			t.Fatalf("put %d given for another epoch", i+1)
		}
	}
	sum := 0
	for _, e := range m.m {
		sum += len(e.v.content)
	}
	if sum != m.size {
		t.Fatalf("size %d, entries hold %d", m.size, sum)
	}
	unsized := New[NameKey, answer](maxEntries, 0, 0, nil)
	for i := range 2*maxEntries + 1 {
		unsized.Put(NameKey{"r", fmt.Sprint(i)}, 1, &answer{})
		if len(unsized.m) > maxEntries {
			t.Fatalf("after %d puts the memo holds %d answers", i+1, len(unsized.m))
		}
		if _, ok := unsized.Get(NameKey{"r", fmt.Sprint(i)}, 1); !ok {
			t.Fatalf("put %d not kept", i+1)
		}
	}
}
