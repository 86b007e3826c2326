package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strconv"
	"time"

	"github.com/chartctl/chartctl/client"
	"golang.org/x/oauth2"
)

// exampleServer stands in for a chartctl server: a few endpoints answering
// fixed data in the contract's envelope.
func exampleServer() *httptest.Server {
	mux := http.NewServeMux()
	write := func(w http.ResponseWriter, status int, body any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("X-Request-Id", "req_01")
		w.Header().Set("X-RateLimit-Limit", "1000")
		w.Header().Set("X-RateLimit-Remaining", "999")
		w.Header().Set("X-RateLimit-Used", "1")
		w.Header().Set("X-RateLimit-Reset", "1800000000")
		w.Header().Set("X-RateLimit-Resource", "global")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}
	mux.HandleFunc("POST /v1/repositories", func(w http.ResponseWriter, r *http.Request) {
		var req client.CreateRepositoryRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		write(w, http.StatusOK, map[string]any{"data": client.Repository{
			ID: "repo_01", Name: req.Name, Visibility: "private",
			CreatedAt: time.Date(2026, 11, 21, 22, 33, 45, 0, time.UTC),
		}})
	})
	mux.HandleFunc("GET /v1/repositories", func(w http.ResponseWriter, r *http.Request) {
		// Five repositories, served two per page.
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if page < 1 {
			page = 1
		}
		var repos []client.Repository
		for i := (page-1)*2 + 1; i <= page*2 && i <= 5; i++ {
			repos = append(repos, client.Repository{Name: fmt.Sprintf("repo-%d", i)})
		}
		write(w, http.StatusOK, map[string]any{"data": repos, "meta": client.Meta{Total: 5, Page: page, Limit: 2}})
	})
	mux.HandleFunc("GET /v1/repositories/{repo}", func(w http.ResponseWriter, r *http.Request) {
		write(w, http.StatusNotFound, client.ErrorBody{Error: client.ErrorDetail{
			Code: client.CodeNotFound, Message: "repository " + r.PathValue("repo") + " not found",
		}})
	})
	mux.HandleFunc("POST /v1/repositories/{repo}/charts", func(w http.ResponseWriter, r *http.Request) {
		f, _, err := r.FormFile("chart")
		if err != nil {
			write(w, http.StatusBadRequest, client.ErrorBody{Error: client.ErrorDetail{Code: client.CodeInvalidParameter, Message: "missing chart", Parameter: "chart"}})
			return
		}
		defer f.Close()
		var buf bytes.Buffer
		n, _ := buf.ReadFrom(f)
		write(w, http.StatusOK, map[string]any{"data": client.ChartUpload{Name: "nginx", Version: "1.2.3", Digest: "sha256:3f2a", Size: n}})
	})
	mux.HandleFunc("GET /v1/user", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer example-token" {
			write(w, http.StatusUnauthorized, client.ErrorBody{Error: client.ErrorDetail{Code: client.CodeUnauthorized, Message: "missing credential"}})
			return
		}
		write(w, http.StatusOK, map[string]any{"data": client.User{Email: "ci@example.com", Scopes: []string{"repo:write"}}})
	})
	mux.HandleFunc("GET /v1/search", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "600")
		write(w, http.StatusTooManyRequests, client.ErrorBody{Error: client.ErrorDetail{
			Code: client.CodeRateLimitExceeded, Message: "search rate limit exceeded", RetryAfter: 600,
		}})
	})
	return httptest.NewServer(mux)
}

// A client is created for a server's base URL, with a credential, and its
// services called with a context.
func Example() {
	srv := exampleServer()
	defer srv.Close()

	c, err := client.New(srv.URL, client.WithToken("example-token"))
	if err != nil {
		log.Fatal(err)
	}
	repo, resp, err := c.Repositories.Create(context.Background(), &client.CreateRepositoryRequest{Name: "stable"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(repo.Name, repo.Visibility, repo.CreatedAt.Format(time.RFC3339))
	fmt.Printf("%d of %d requests left in the %s bucket\n", resp.Rate.Remaining, resp.Rate.Limit, resp.Rate.Resource)
	// Output:
	// stable private 2026-11-21T22:33:45Z
	// 999 of 1000 requests left in the global bucket
}

// All walks every page of a list; the loop may stop early with break.
func ExampleRepositoriesService_All() {
	srv := exampleServer()
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithToken("example-token"))
	if err != nil {
		log.Fatal(err)
	}

	for repo, err := range c.Repositories.All(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(repo.Name)
	}
	// Output:
	// repo-1
	// repo-2
	// repo-3
	// repo-4
	// repo-5
}

// Upload streams an archive from any io.Reader; an *os.File or a
// *bytes.Reader can also be sent again after a 429.
func ExampleChartsService_Upload() {
	srv := exampleServer()
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithToken("example-token"))
	if err != nil {
		log.Fatal(err)
	}

	archive := bytes.NewReader(make([]byte, 4096)) // os.Open("nginx-1.2.3.tgz") in real use
	var lastSent, total int64
	up, _, err := c.Charts.Upload(context.Background(), "stable", archive, &client.UploadOptions{
		Filename: "nginx-1.2.3.tgz",
		Progress: func(sent, size int64) { lastSent, total = sent, size },
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("sent %d of %d bytes\n", lastSent, total)
	fmt.Println(up.Name, up.Version, up.Digest)
	// Output:
	// sent 4096 of 4096 bytes
	// nginx 1.2.3 sha256:3f2a
}

// Errors from the server are *client.Error values, tested with the Is…
// helpers and read with errors.As.
func ExampleIsNotFound() {
	srv := exampleServer()
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithToken("example-token"))
	if err != nil {
		log.Fatal(err)
	}

	_, _, err = c.Repositories.Get(context.Background(), "missing")
	if client.IsNotFound(err) {
		var apiErr *client.Error
		errors.As(err, &apiErr)
		fmt.Println(apiErr.StatusCode, apiErr.Code)
		fmt.Println(apiErr.Message, "- request id", apiErr.RequestID)
	}
	// Output:
	// 404 not_found
	// repository missing not found - request id req_01
}

// A wait longer than MaxWait is not slept through: the 429 comes back at
// once, telling how long to wait.
func ExampleWithMaxWait() {
	srv := exampleServer()
	defer srv.Close()
	c, err := client.New(srv.URL, client.WithToken("example-token"), client.WithMaxWait(time.Minute))
	if err != nil {
		log.Fatal(err)
	}

	_, _, err = c.Search.Charts(context.Background(), "nginx", nil)
	var apiErr *client.Error
	if client.IsRateLimited(err) && errors.As(err, &apiErr) {
		fmt.Println("rate limited; retry after", apiErr.RetryAfter)
	}
	// Output:
	// rate limited; retry after 10m0s
}

// A token source, such as an oauth2.Config's, refreshes an expired access
// token by itself; the client asks it for a token on every request.
func ExampleWithTokenSource() {
	srv := exampleServer()
	defer srv.Close()

	ts := oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "example-token", TokenType: "Bearer"})
	c, err := client.New(srv.URL, client.WithTokenSource(ts))
	if err != nil {
		log.Fatal(err)
	}
	me, _, err := c.Users.Me(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(me.Email, me.Scopes)
	// Output:
	// ci@example.com [repo:write]
}

// A retry hook tells a program's user why a call is taking long.
func ExampleWithRetryHook() {
	c, err := client.New("https://charts.example.com",
		client.WithToken("example-token"),
		client.WithMaxRetries(5),
		client.WithRetryHook(func(ev client.RetryEvent) {
			log.Printf("%s %s: %v; retry %d in %s", ev.Method, ev.URL, ev.Err, ev.Attempt, ev.Wait.Round(time.Second))
		}))
	if err != nil {
		log.Fatal(err)
	}
	_ = c
}
