package blob

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

func commitBytes(t *testing.T, s *Store, data string) string {
	t.Helper()
	w, err := s.Create(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(data)); err != nil {
		t.Fatal(err)
	}
	d, err := w.Commit()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (s *Store) pathOf(digest string) string {
	alg, h, _ := splitDigest(digest)
	return s.path(alg, h)
}

// A blob committed and synced by this process is known to be on disk, so
// committing the same bytes again needs no directory sync; a delete (or
// any change of an entry during a sync) takes that knowledge back.
func TestSyncedEntries(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	synced := func(d string) (exists, ok bool) {
		t.Helper()
		exists, ok, _, err := s.entries.look(s.pathOf(d))
		if err != nil {
			t.Fatal(err)
		}
		return exists, ok
	}

	d := commitBytes(t, s, "chart layer")
	if exists, ok := synced(d); !exists || !ok {
		t.Fatalf("after a commit: exists=%v synced=%v, want both", exists, ok)
	}
	if again := commitBytes(t, s, "chart layer"); again != d {
		t.Fatalf("second commit = %s, want %s", again, d)
	}
	if exists, ok := synced(d); !exists || !ok {
		t.Fatalf("after a second commit: exists=%v synced=%v, want both", exists, ok)
	}

	if err := s.Delete(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if exists, ok := synced(d); exists || ok {
		t.Fatalf("after a delete: exists=%v synced=%v, want neither", exists, ok)
	}
	commitBytes(t, s, "chart layer")
	if exists, ok := synced(d); !exists || !ok {
		t.Fatalf("after a commit following the delete: exists=%v synced=%v, want both", exists, ok)
	}

	// Another entry changes between a look and the end of its sync: the
	// sync is not recorded (the change may have been this entry's).
	other := commitBytes(t, s, "config")
	if err := s.Delete(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	path := s.pathOf(commitBytes(t, s, "config"))
	s.entries.mu.Lock()
	delete(s.entries.synced, path)
	s.entries.mu.Unlock()
	_, _, epoch, err := s.entries.look(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.entries.change(filepath.Join(t.TempDir(), "elsewhere"), func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	s.entries.markSynced(path, epoch)
	if _, ok, _, _ := s.entries.look(path); ok {
		t.Fatal("a sync across a change of an entry was recorded")
	}

	// The set stays bounded.
	for i := range maxSyncedEntries + 10 {
		_, _, epoch, _ := s.entries.look(path)
		s.entries.markSynced(fmt.Sprintf("%s-%d", strings.Repeat("x", 8), i), epoch)
	}
	if n := len(s.entries.synced); n > maxSyncedEntries {
		t.Fatalf("%d entries remembered, more than %d", n, maxSyncedEntries)
	}
}
