package replication_test

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"
	"time"

	cc "github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/replication"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/server"
)

// claimCounter counts the looks for due replication tasks.
type claimCounter struct {
	cc.Store
	claims atomic.Int32
}

func (c *claimCounter) ClaimReplicationTasks(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*cc.ReplicationTask, error) {
	c.claims.Add(1)
	return c.Store.ClaimReplicationTasks(ctx, now, lease, limit)
}

// TestWakesGathered: a burst of wake-ups (a push every 5 ms, each waking
// the replicator) makes a few looks for due tasks, one per gathering
// window, not one per push; with no gathering it makes about one each.
func TestWakesGathered(t *testing.T) {
	box, err := secrets.New(bytes.Repeat([]byte("s"), 32))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		gather   time.Duration
		min, max int32
	}{
		{gather: 100 * time.Millisecond, min: 1, max: 8},
		{gather: -1, min: 10, max: 1000},
	} {
		var (
			rep     *replication.Replicator
			counter *claimCounter
		)
		testkit.StartServer(t, func(srv *server.Server) {
			srv.Secrets = box
			counter = &claimCounter{Store: srv.App().Store}
			srv.App().Store = counter
			rep = replication.New(srv.App(), box, nil, replication.Options{Poll: time.Hour, Gather: tc.gather})
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { rep.Run(ctx); close(done) }()
		time.Sleep(50 * time.Millisecond) // Run's first look
		before := counter.claims.Load()
		for range 40 {
			rep.Wake()
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(3 * max(tc.gather, 0))
		time.Sleep(50 * time.Millisecond)
		cancel()
		<-done
		if n := counter.claims.Load() - before; n < tc.min || n > tc.max {
			t.Errorf("gather %v: %d looks for 40 wake-ups in 200 ms; want %d to %d", tc.gather, n, tc.min, tc.max)
		}
	}
}
