package app

import (
	"fmt"
	"testing"
	"time"
)

// TestFreshBlobs: a commit is remembered for freshMaxAge at most, the
// oldest are forgotten first past freshMaxEntries, and a remembered
// commit counts only within half the grace period.
func TestFreshBlobs(t *testing.T) {
	var f freshBlobs
	t0 := time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)
	f.note("sha256:a", t0)
	f.note("sha256:b", t0)
	if at, ok := f.since("sha256:a"); !ok || !at.Equal(t0) {
		t.Fatalf("since after note: %v %v", at, ok)
	}
	if _, ok := f.since("sha256:z"); ok {
		t.Fatal("a digest never noted is remembered")
	}
	// A commit of the same bytes again moves its time.
	f.note("sha256:a", t0.Add(time.Minute))
	if at, _ := f.since("sha256:a"); !at.Equal(t0.Add(time.Minute)) {
		t.Fatalf("noted again: %v", at)
	}
	// A note past freshMaxAge after the oldest forgets what is that old,
	// but not a digest noted again since.
	f.note("sha256:c", t0.Add(freshMaxAge+30*time.Second))
	if _, ok := f.since("sha256:b"); ok {
		t.Fatal("a commit older than freshMaxAge is remembered")
	}
	if _, ok := f.since("sha256:a"); !ok {
		t.Fatal("a digest noted again was forgotten with its first note")
	}

	var g freshBlobs
	for i := range freshMaxEntries + 10 {
		g.note(fmt.Sprintf("sha256:%d", i), t0)
	}
	if len(g.at) != freshMaxEntries {
		t.Fatalf("%d remembered, want %d", len(g.at), freshMaxEntries)
	}
	if _, ok := g.since("sha256:0"); ok {
		t.Fatal("the oldest is kept past freshMaxEntries")
	}
	if _, ok := g.since(fmt.Sprintf("sha256:%d", freshMaxEntries+9)); !ok {
		t.Fatal("the newest is forgotten")
	}

	for _, c := range []struct {
		age, grace time.Duration
		want       bool
	}{
		{time.Second, time.Hour, true},
		{29 * time.Minute, time.Hour, false}, // past freshMaxAge
		{4 * time.Minute, time.Hour, true},
		{4 * time.Minute, 6 * time.Minute, false}, // past half the grace
		{time.Second, 0, false},
		{time.Second, -1, false}, // no grace period: never
		{-time.Second, time.Hour, false},
	} {
		if got := CommittedWithin(t0, t0.Add(c.age), c.grace); got != c.want {
			t.Errorf("CommittedWithin(age %v, grace %v) = %v, want %v", c.age, c.grace, got, c.want)
		}
	}
}
