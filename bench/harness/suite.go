package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chartctl/chartctl/bench/corpus"
)

// Target is a chart server reachable over HTTP on loopback.
type Target struct {
	// Name labels the server in the report ("chartctl", "peer").
	Name string
	// Base is the server's base URL (already checked to be loopback).
	Base *url.URL
	// Token, when set, is sent as "Authorization: Bearer" on API requests
	// and uploads (never on index.yaml, which is fetched anonymously from a
	// public repository).
	Token string
	// UploadPath receives multipart chart uploads.
	UploadPath string
	// Field is the multipart field that carries the archive.
	Field string
	// IndexPath serves the Helm index.yaml.
	IndexPath string
	// TLS is the certificate the server presents over HTTPS (nil: plain
	// HTTP); the clients made for the target trust it.
	TLS *TLS
}

// URL joins the base URL with path and query.
func (t Target) URL(path string, query url.Values) string {
	u := *t.Base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = query.Encode()
	return u.String()
}

// NewRequest builds a request to path, with the bearer token when auth is
// true.
func (t Target) NewRequest(ctx context.Context, method, path string, query url.Values, body io.Reader, auth bool) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, t.URL(path, query), body)
	if err != nil {
		return nil, fmt.Errorf("build %s %s: %w", method, path, err)
	}
	if auth && t.Token != "" {
		req.Header.Set("Authorization", "Bearer "+t.Token)
	}
	return req, nil
}

// checkStatus turns a non-2xx response into an error quoting the body's start.
func checkStatus(resp *http.Response) error {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	return fmt.Errorf("%s %s: status %d: %s", resp.Request.Method, resp.Request.URL.Path, resp.StatusCode, strings.TrimSpace(string(b)))
}

// CreateRepository creates a public repository with POST /v1/repositories.
func CreateRepository(ctx context.Context, client *http.Client, t Target, name string) error {
	body, err := json.Marshal(map[string]string{"name": name, "visibility": "public"})
	if err != nil {
		return fmt.Errorf("encode repository: %w", err)
	}
	req, err := t.NewRequest(ctx, http.MethodPost, "/v1/repositories", nil, bytes.NewReader(body), true)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("create repository %s: %w", name, err)
	}
	defer resp.Body.Close()
	if err := checkStatus(resp); err != nil {
		return fmt.Errorf("create repository %s: %w", name, err)
	}
	return nil
}

// uploadBody builds the multipart body carrying c in field.
func uploadBody(field string, c corpus.Chart) (*bytes.Buffer, string, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile(field, c.Filename())
	if err != nil {
		return nil, "", fmt.Errorf("multipart: %w", err)
	}
	if _, err := fw.Write(c.Archive); err != nil {
		return nil, "", fmt.Errorf("multipart: %w", err)
	}
	if err := mw.Close(); err != nil {
		return nil, "", fmt.Errorf("multipart: %w", err)
	}
	return &buf, mw.FormDataContentType(), nil
}

// Upload sends one chart and returns the request's latency (the multipart
// body is built before the clock starts).
func Upload(ctx context.Context, client *http.Client, t Target, c corpus.Chart) (time.Duration, error) {
	body, ctype, err := uploadBody(t.Field, c)
	if err != nil {
		return 0, err
	}
	req, err := t.NewRequest(ctx, http.MethodPost, t.UploadPath, nil, body, true)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", ctype)
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return 0, fmt.Errorf("upload %s: %w", c.Filename(), err)
	}
	err = checkStatus(resp)
	resp.Body.Close()
	d := time.Since(t0)
	if err != nil {
		return 0, fmt.Errorf("upload %s: %w", c.Filename(), err)
	}
	return d, nil
}

// UploadSequential uploads charts one after another over one keep-alive
// connection and returns each latency in order. progress, if not nil, is
// called after each upload.
func UploadSequential(ctx context.Context, client *http.Client, t Target, charts []corpus.Chart, progress func(done int)) ([]time.Duration, error) {
	out := make([]time.Duration, 0, len(charts))
	for i, c := range charts {
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("sequential uploads: %w", err)
		}
		d, err := Upload(ctx, client, t, c)
		if err != nil {
			return out, err
		}
		out = append(out, d)
		if progress != nil {
			progress(i + 1)
		}
	}
	return out, nil
}

// UploadConcurrent uploads charts with clients concurrent workers (each on
// its own connection) and returns the wall time and every latency. The
// first error stops all workers.
func UploadConcurrent(ctx context.Context, t Target, charts []corpus.Chart, clients int) (time.Duration, []time.Duration, error) {
	clients = max(clients, 1)
	client := t.TLS.Trust(NewClient(clients, time.Minute))
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		lat      = make([]time.Duration, len(charts))
	)
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(charts) || ctx.Err() != nil {
					return
				}
				d, err := Upload(ctx, client, t, charts[i])
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
					cancel()
					return
				}
				lat[i] = d
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return elapsed, nil, fmt.Errorf("concurrent uploads: %w", firstErr)
	}
	return elapsed, lat, nil
}

// Fetch performs one GET and returns the body (at most 64 MiB) and latency.
func Fetch(ctx context.Context, client *http.Client, t Target, path string, query url.Values, auth bool, header http.Header) ([]byte, time.Duration, error) {
	req, err := t.NewRequest(ctx, http.MethodGet, path, query, nil, auth)
	if err != nil {
		return nil, 0, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	d := time.Since(t0)
	if err != nil {
		return nil, 0, fmt.Errorf("GET %s: %w", path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("GET %s: status %d: %.300s", path, resp.StatusCode, b)
	}
	return b, d, nil
}

// CountIndexVersions counts the chart versions in a Helm index.yaml by
// their digest lines (every entry has exactly one).
func CountIndexVersions(index []byte) int {
	n := 0
	for line := range strings.SplitSeq(string(index), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "digest:") {
			n++
		}
	}
	return n
}

// GetLoad is a Load that repeats GET path on t.
func GetLoad(t Target, path string, query url.Values, auth bool, header http.Header, conns int, d time.Duration) Load {
	return Load{
		Conns:    conns,
		Duration: d,
		NewRequest: func(ctx context.Context) (*http.Request, error) {
			req, err := t.NewRequest(ctx, http.MethodGet, path, query, nil, auth)
			if err != nil {
				return nil, err
			}
			for k, vs := range header {
				req.Header[k] = vs
			}
			return req, nil
		},
	}
}
