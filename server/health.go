package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/httpx"
)

// readyCheckTimeout bounds each readiness check. The checks run at once,
// so /readyz answers within about this long however many dependencies
// hang, well inside a Kubernetes probe's default 1 s timeout plus its
// period.
const readyCheckTimeout = time.Second

// readyCheck is one dependency /readyz checks.
type readyCheck struct {
	// part names the dependency in the answer ("the blob store").
	part  string
	check func(ctx context.Context) error

	// mu guards inflight, which is closed when the check under way
	// returns (nil while none is): a check that ignores its context's
	// deadline is not started again until it returns, so a hung
	// dependency costs one goroutine, not one per probe.
	mu       sync.Mutex
	inflight chan struct{}
}

// dependencyChecks returns the server's dependency checks (made by init).
func (s *Server) dependencyChecks() []*readyCheck {
	return []*readyCheck{
		{part: "the metadata store", check: func(ctx context.Context) error { return pingStore(ctx, s.Store) }},
		{part: "the blob store", check: func(ctx context.Context) error { return pingBlobs(ctx, s.Blobs) }},
	}
}

// checkDependencies runs every dependency check concurrently, each bounded
// by readyCheckTimeout whether or not it honours its context, and returns
// one phrase per failing dependency, in the checks' order.
func (s *Server) checkDependencies(ctx context.Context) []string {
	checks := s.readyChecks
	failures := make([]string, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			failures[i] = s.runCheck(ctx, c)
		}()
	}
	wg.Wait()
	var out []string
	for _, f := range failures {
		if f != "" {
			out = append(out, f)
		}
	}
	return out
}

// start begins c's check unless one is under way, and returns the channel
// its result arrives on; while one is under way it returns nil and the
// channel closed when that one returns.
func (c *readyCheck) start(ctx context.Context) (result <-chan error, earlier <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight != nil {
		return nil, c.inflight
	}
	finished := make(chan struct{})
	c.inflight = finished
	done := make(chan error, 1)
	go func() {
		err := c.check(ctx)
		c.mu.Lock()
		c.inflight = nil
		close(finished)
		c.mu.Unlock()
		done <- err
	}()
	return done, nil
}

// runCheck runs one check and describes its failure ("" when it answered).
// A check still under way from an earlier probe is waited for within this
// probe's bound: one that honours its deadline returns just after it, and
// a new check starts; one that does not is reported as such.
func (s *Server) runCheck(ctx context.Context, c *readyCheck) string {
	ctx, cancel := context.WithTimeout(ctx, readyCheckTimeout)
	defer cancel()
	done, earlier := c.start(ctx)
	for done == nil {
		select {
		case <-earlier:
		case <-ctx.Done():
			return c.part + " has not answered an earlier check yet"
		}
		done, earlier = c.start(ctx)
	}
	var err error
	select {
	case err = <-done:
		if err == nil {
			return ""
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		s.Logger.Error("readiness: no answer in time", "part", c.part, "timeout", readyCheckTimeout)
		return c.part + " did not answer within " + readyCheckTimeout.String()
	}
	s.Logger.Error("readiness: check failed", "part", c.part, "err", err)
	return c.part + " does not answer"
}

// pinger is implemented by stores that can say cheaply whether they
// answer (the PostgreSQL and S3 engines, the blob directory).
type pinger interface {
	Ping(ctx context.Context) error
}

// pingBlobs checks the blob store: with its Ping when it has one, else by
// opening a blob no store holds (not found is an answer).
func pingBlobs(ctx context.Context, blobs chartctl.BlobStore) error {
	if p, ok := blobs.(pinger); ok {
		return p.Ping(ctx)
	}
	b, err := blobs.Open(ctx, probeDigest)
	if err == nil {
		return b.Close()
	}
	if chartctl.ErrorCode(err) == chartctl.ENOTFOUND {
		return nil
	}
	return err
}

// pingStore checks the metadata store: with its Ping when it has one (a
// PostgreSQL pool), else with a cheap read.
func pingStore(ctx context.Context, store chartctl.Store) error {
	if p, ok := store.(pinger); ok {
		return p.Ping(ctx)
	}
	_, err := store.UserCount(ctx)
	return err
}

// probeDigest names a blob no store holds; opening it checks that the blob
// store answers without reading or writing anything.
var probeDigest = "sha256:" + strings.Repeat("0", 64)

// handleHealthz answers 200 while the process serves (liveness).
func (s *Server) handleHealthz(c echo.Context) error {
	return httpx.WriteJSON(c, http.StatusOK, map[string]string{"status": "ok"})
}

// handleLivez answers 200 while the process runs (CONTRACT §14).
func (s *Server) handleLivez(c echo.Context) error {
	return httpx.WriteJSON(c, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz answers 200 {"status":"ok"} when the metadata store and the
// blob store answer and the server is not shutting down (with "details"
// while a backfill runs: {"images_backfill": {"done", "total"}}); otherwise 503 in
// the error envelope, naming every failing part (CONTRACT §14). The
// checks run concurrently, each bounded by readyCheckTimeout.
func (s *Server) handleReadyz(c echo.Context) error {
	if !s.ready.Load() {
		return chartctl.Errorf(chartctl.EUNAVAILABLE, "Not ready: the server is shutting down.")
	}
	if failed := s.checkDependencies(c.Request().Context()); len(failed) > 0 {
		// Every failing dependency is named, not only the first, so one
		// probe answer says all that is wrong.
		return chartctl.Errorf(chartctl.EUNAVAILABLE, "Not ready: %s.", strings.Join(failed, "; "))
	}
	body := map[string]any{"status": "ok"}
	// Background backfills report their progress here and in the log
	// (decision 11); they never hold readiness back.
	if running, done, total := s.app.ImagesProgress(); running {
		body["details"] = map[string]any{"images_backfill": map[string]int{"done": done, "total": total}}
	}
	return httpx.WriteJSON(c, http.StatusOK, body)
}
