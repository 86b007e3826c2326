package postgres_test

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestRememberTokenIDAcrossReplicas: replicas exchanging the same OIDC
// token at once agree that exactly one exchange is fresh, for a token seen
// for the first time and for one whose earlier record has expired.
func TestRememberTokenIDAcrossReplicas(t *testing.T) {
	_, replicas := openReplicas(t, 3)
	const iss = "https://token.actions.githubusercontent.com"
	race := func(jti string, until time.Time) int {
		t.Helper()
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			fresh int
			errs  []error
		)
		for i := range 12 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := replicas[i%len(replicas)].RememberTokenID(ctx, iss, jti, until)
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					errs = append(errs, err)
				}
				if ok {
					fresh++
				}
			}()
		}
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("RememberTokenID: %v", errs)
		}
		return fresh
	}
	for i := range 5 {
		if n := race(fmt.Sprintf("jti-%d", i), time.Now().Add(time.Hour)); n != 1 {
			t.Fatalf("jti-%d: %d exchanges were fresh, want 1", i, n)
		}
	}
	// A token ID whose record expired is fresh again, once.
	if fresh, err := replicas[0].RememberTokenID(ctx, iss, "old", time.Now().Add(-time.Minute)); err != nil || !fresh {
		t.Fatalf("old: %v, %v", fresh, err)
	}
	if n := race("old", time.Now().Add(time.Hour)); n != 1 {
		t.Fatalf("expired token ID: %d exchanges were fresh, want 1", n)
	}
}
