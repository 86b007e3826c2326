package harness

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chartctl/chartctl/bench/stats"
)

// maxLoadRequests bounds one load run's request count whatever its
// duration, so sample memory stays bounded.
const maxLoadRequests = 2_000_000

// Load describes one fixed-duration load run: Conns workers, each on its
// own keep-alive connection, repeating one request until Duration elapses.
type Load struct {
	// Conns is the number of concurrent connections (workers).
	Conns int
	// Duration is how long the load lasts.
	Duration time.Duration
	// NewRequest builds the request each worker repeats.
	NewRequest func(ctx context.Context) (*http.Request, error)
	// WantStatus is the expected status (200 when zero); others count as
	// errors.
	WantStatus int
	// TLS is the certificate the server presents (nil: plain HTTP); the
	// clients runLoad makes trust it.
	TLS *TLS
}

// LoadResult is what a load run measured.
type LoadResult struct {
	// Requests counts completed requests with the expected status.
	Requests int
	// Errors counts transport errors and unexpected statuses.
	Errors int
	// FirstError describes the first error, if any.
	FirstError string
	// Elapsed is the wall time of the run.
	Elapsed time.Duration
	// RPS is successful requests per second.
	RPS float64
	// Latency summarizes successful requests' latencies (headers and full body).
	Latency stats.Summary
	// BodyBytes is the size of the last successful response body as
	// transferred (compressed when the server compressed it).
	BodyBytes int64
	// Encoding is the last successful response's Content-Encoding
	// ("identity" when none).
	Encoding string
}

// NewClient returns an HTTP client for benchmarks: keep-alive with up to
// conns connections to the host, no transparent decompression (the caller
// sets Accept-Encoding and sees bytes as sent), HTTP/1.1, and a per-request
// timeout.
func NewClient(conns int, timeout time.Duration) *http.Client {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		MaxConnsPerHost:     conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &http.Client{Transport: tr, Timeout: timeout}
}

// Run puts the load on the server through client and reports what it saw.
// It stops at Duration, at ctx's end, or after maxLoadRequests requests,
// whichever comes first. One warm-up request per connection precedes the
// measured period (so connection setup and any first-request cache fill are
// not measured); a failing warm-up aborts the run.
func (l Load) Run(ctx context.Context, client *http.Client) (LoadResult, error) {
	want := l.WantStatus
	if want == 0 {
		want = http.StatusOK
	}
	conns := max(l.Conns, 1)

	// Warm-up: open every connection once, concurrently.
	var wg sync.WaitGroup
	warmErr := make([]error, conns)
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := l.once(ctx, client, want)
			warmErr[i] = err
		}()
	}
	wg.Wait()
	for _, err := range warmErr {
		if err != nil {
			return LoadResult{}, fmt.Errorf("warm-up: %w", err)
		}
	}

	ctx, cancel := context.WithTimeout(ctx, l.Duration)
	defer cancel()
	var (
		total   atomic.Int64
		mu      sync.Mutex
		res     LoadResult
		samples = make([][]time.Duration, conns)
	)
	start := time.Now()
	for i := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var errs int
			var firstErr string
			var last int64
			var enc string
			for ctx.Err() == nil && total.Add(1) <= maxLoadRequests {
				t0 := time.Now()
				n, e, err := l.once(ctx, client, want)
				d := time.Since(t0)
				if err != nil {
					if ctx.Err() != nil {
						break // cut off by the end of the run, not a server error
					}
					errs++
					if firstErr == "" {
						firstErr = err.Error()
					}
					continue
				}
				samples[i] = append(samples[i], d)
				last, enc = n, e
			}
			mu.Lock()
			defer mu.Unlock()
			res.Errors += errs
			if res.FirstError == "" {
				res.FirstError = firstErr
			}
			if enc != "" {
				res.BodyBytes, res.Encoding = last, enc
			}
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	var all []time.Duration
	for _, s := range samples {
		all = append(all, s...)
	}
	res.Requests = len(all)
	res.RPS = stats.Rate(res.Requests, res.Elapsed)
	res.Latency = stats.Summarize(all)
	return res, nil
}

// once performs one request, reading the whole body.
func (l Load) once(ctx context.Context, client *http.Client, want int) (n int64, encoding string, err error) {
	req, err := l.NewRequest(ctx)
	if err != nil {
		return 0, "", fmt.Errorf("build request: %w", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	n, err = io.Copy(io.Discard, resp.Body)
	if err != nil {
		return n, "", fmt.Errorf("%s %s: read body: %w", req.Method, req.URL.Path, err)
	}
	if resp.StatusCode != want {
		return n, "", fmt.Errorf("%s %s: status %d, want %d", req.Method, req.URL.Path, resp.StatusCode, want)
	}
	encoding = resp.Header.Get("Content-Encoding")
	if encoding == "" {
		encoding = "identity"
	}
	return n, encoding, nil
}
