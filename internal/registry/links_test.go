package registry

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/chartctl/chartctl/internal/bolt"
	"github.com/chartctl/chartctl/internal/chartctl"
)

// countingLinks records the LinkBlobs writes to a real bolt store.
type countingLinks struct {
	*bolt.DB
	mu     sync.Mutex
	rounds []int
}

func (c *countingLinks) LinkBlobs(ctx context.Context, links []chartctl.OCIBlobLink) error {
	c.mu.Lock()
	c.rounds = append(c.rounds, len(links))
	c.mu.Unlock()
	return c.DB.LinkBlobs(ctx, links)
}

func (c *countingLinks) took() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.rounds)
}

func linkStore(t *testing.T) *countingLinks {
	db, err := bolt.Open(filepath.Join(t.TempDir(), "chartctl.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &countingLinks{DB: db}
}

const (
	digestA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	digestB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
)

// TestLinkerSharesACommit: uploads under way together link in one
// write, however their ends interleave; a lone upload links at once.
func TestLinkerSharesACommit(t *testing.T) {
	ctx := context.Background()
	s := linkStore(t)
	var l linker

	// Alone: one write of one link.
	l.begin()
	if err := l.link(s, "apps/web", digestA, 1); err != nil {
		t.Fatal(err)
	}
	// Two under way: the first waits for the second, one write of both.
	l.begin()
	l.begin()
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := l.link(s, "apps/web", digestA, 1); err != nil {
			t.Error(err)
		}
	})
	wg.Go(func() {
		if err := l.link(s, "apps/web", digestB, 2); err != nil {
			t.Error(err)
		}
	})
	wg.Wait()
	// Two under way, one fails: the other's link is written when the
	// failed one ends.
	l.begin()
	l.begin()
	done := make(chan error, 1)
	go func() { done <- l.link(s, "apps/api", digestB, 2) }()
	l.abandon()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := s.took(); !slices.Equal(got, []int{1, 2, 1}) {
		t.Fatalf("writes of links: %v, want [1 2 1]", got)
	}
	for _, want := range []struct{ name, digest string }{{"apps/web", digestA}, {"apps/web", digestB}, {"apps/api", digestB}} {
		if _, err := s.BlobLink(ctx, want.name, want.digest); err != nil {
			t.Fatalf("%s@%s: %v", want.name, want.digest, err)
		}
	}
}

// TestLinkerLingersNoLongerThanItsBound: an upload still under way (a big
// blob) holds a finished one's link back for linkLinger at most.
func TestLinkerLingersNoLongerThanItsBound(t *testing.T) {
	s := linkStore(t)
	var l linker
	l.begin()
	l.begin() // the big upload, still under way
	if err := l.link(s, "apps/web", digestA, 1); err != nil {
		t.Fatal(err)
	}
	if err := l.link(s, "apps/web", digestB, 2); err != nil {
		t.Fatal(err)
	}
	if got := s.took(); !slices.Equal(got, []int{1, 1}) {
		t.Fatalf("writes of links: %v, want [1 1]", got)
	}
}
