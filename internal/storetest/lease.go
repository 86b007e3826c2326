package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// testLeases checks that a lease has one holder at a time, is renewed by
// its holder, released only by it, and lapses after its time to live.
func testLeases(t *testing.T, open Open) {
	s := open(t)
	ctx := context.Background()
	acquire := func(name, holder string, ttl time.Duration) bool {
		t.Helper()
		ok, err := s.AcquireLease(ctx, name, holder, ttl)
		if err != nil {
			t.Fatalf("AcquireLease(%s, %s): %v", name, holder, err)
		}
		return ok
	}
	if !acquire("retention", "a", time.Hour) {
		t.Fatal("a could not take a free lease")
	}
	if acquire("retention", "b", time.Hour) {
		t.Fatal("b took the lease a holds")
	}
	if !acquire("retention", "a", time.Hour) {
		t.Fatal("a could not renew its own lease")
	}
	if !acquire("mirror:charts", "b", time.Hour) {
		t.Fatal("leases of different names are independent, but b could not take another name")
	}
	if err := s.ReleaseLease(ctx, "retention", "b"); err != nil {
		t.Fatal(err)
	}
	if acquire("retention", "b", time.Hour) {
		t.Fatal("b's release freed a's lease")
	}
	if err := s.ReleaseLease(ctx, "retention", "a"); err != nil {
		t.Fatal(err)
	}
	if !acquire("retention", "b", time.Millisecond) {
		t.Fatal("b could not take the lease a released")
	}
	// A lease lapses on its own: a holder that died blocks others only
	// for its time to live.
	deadline := time.Now().Add(10 * time.Second)
	for !acquire("retention", "c", time.Hour) {
		if time.Now().After(deadline) {
			t.Fatal("b's lease of 1ms never lapsed")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := s.ReleaseLease(ctx, "never-held", "x"); err != nil {
		t.Fatalf("releasing a lease nobody holds: %v", err)
	}

	// Racing holders: exactly one wins.
	var won atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := s.AcquireLease(ctx, "race", fmt.Sprintf("holder-%d", i), time.Hour)
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := won.Load(); n != 1 {
		t.Fatalf("%d of 16 racing holders took one lease, want exactly 1", n)
	}
}
