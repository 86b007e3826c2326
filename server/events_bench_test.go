package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/blob"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/postgres"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/testkit/pgtest"
	"github.com/chartctl/chartctl/internal/token"
	"github.com/chartctl/chartctl/internal/webhook"
	"github.com/chartctl/chartctl/server"
)

// BenchmarkUploadAuditWebhooks measures issue #18's bar: upload
// throughput with two webhooks and the audit log on within 10 % of it with
// them off. Each engine has two cases, run alternately when the benchmark
// is repeated: "off" (no webhook, the application layer writes no audit
// entry: app.DisableAuditForBenchmark, which nothing but benchmarks can
// reach) and "on" (the audit log, two webhooks on every event, a
// dispatcher delivering to a receiver answering 204). Uploads go over
// HTTP from a plain client (not testkit's, which validates every exchange
// against the OpenAPI document). Compare the two ns/op of an engine.
//
// engine=postgres runs on a throw-away PostgreSQL (pgtest) when its
// binaries are installed.
func BenchmarkUploadAuditWebhooks(b *testing.B) {
	for _, engine := range []string{"bolt", "postgres"} {
		for _, on := range []bool{false, true} {
			name := fmt.Sprintf("engine=%s/audit+webhooks=off", engine)
			if on {
				name = fmt.Sprintf("engine=%s/audit+webhooks=on", engine)
			}
			b.Run(name, func(b *testing.B) { benchUpload(b, engine, on) })
		}
	}
}

func benchUpload(b *testing.B, engine string, on bool) {
	box, err := secrets.New(bytes.Repeat([]byte("b"), 32))
	if err != nil {
		b.Fatal(err)
	}
	var d *webhook.Dispatcher
	configure := func(srv *server.Server) {
		d = webhook.New(srv.Store, box, webhook.Options{AllowPrivate: true, Poll: 10 * time.Millisecond})
		srv.Secrets, srv.OnEvents = box, d.Notify
		srv.Config.AllowPrivateWebhooks = true
		srv.Config.UploadLimit.N = 0
		srv.Config.GlobalLimit.N = 0
	}
	var (
		srv      *server.Server
		url, key string
	)
	switch engine {
	case "bolt":
		s := testkit.StartServer(b, configure)
		srv, url, key = s.Server, s.URL, s.AdminKey
	case "postgres":
		srv, url, key = startPostgresServer(b, configure)
	}
	if !on {
		srv.App().DisableAuditForBenchmark()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); <-done }()

	hc := &http.Client{}
	do := func(method, path, ctype string, body []byte) (int, []byte) {
		req, err := http.NewRequest(method, url+path, bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", ctype)
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, out
	}
	if st, body := do("POST", "/v1/repositories", "application/json", []byte(`{"name":"bench"}`)); st != 200 {
		b.Fatalf("repository: %d %s", st, body)
	}
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer rs.Close()
	if on {
		for i := 0; i < 2; i++ {
			if st, body := do("POST", "/v1/repositories/bench/webhooks", "application/json", []byte(`{"url":"`+rs.URL+`","events":["*"]}`)); st != 200 {
				b.Fatalf("webhook: %d %s", st, body)
			}
		}
	}
	type upload struct {
		body  []byte
		ctype string
	}
	uploads := make([]upload, b.N)
	for i := range uploads {
		body, ctype := testkit.Multipart(b, map[string][]byte{"chart": testkit.MakeChart(b, testkit.Chart{Name: "app", Version: fmt.Sprintf("1.0.%d", i)})})
		uploads[i] = upload{body, ctype}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if st, body := do("POST", "/v1/repositories/bench/charts", uploads[i].ctype, uploads[i].body); st != 200 {
			b.Fatalf("upload: %d %s", st, body)
		}
	}
	b.StopTimer()
	// What the case claims: entries written with the audit log on, none
	// with it off.
	entries, _, err := srv.Store.AuditLog(context.Background(), chartctl.AuditFilter{Action: "chart.push", Limit: 1})
	if err != nil || (len(entries) > 0) != on {
		b.Fatalf("audit log with audit on=%v: %d entries, %v", on, len(entries), err)
	}
}

// startPostgresServer starts a server on a fresh PostgreSQL database (the
// shared pgtest server; skipped when PostgreSQL is not installed) and a
// blob directory, with an admin key; it stops when the benchmark ends.
func startPostgresServer(tb testing.TB, configure func(*server.Server)) (srv *server.Server, url, adminKey string) {
	tb.Helper()
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.NewDatabase(tb))
	if err != nil {
		tb.Fatal(err)
	}
	blobs, err := blob.Open(filepath.Join(tb.TempDir(), "blobs"))
	if err != nil {
		tb.Fatal(err)
	}
	srv = server.New(db, blobs)
	configure(srv)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	if err := srv.Open(ln); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		_ = srv.Close()
		_ = db.Close()
	})
	admin := &chartctl.User{Email: "admin@example.com", Admin: true}
	if err := db.CreateUser(ctx, admin); err != nil {
		tb.Fatal(err)
	}
	v, h := token.New(token.APIKeyPrefix)
	if err := db.CreateAPIKey(ctx, &chartctl.APIKey{UserID: admin.ID, Name: "bench", Scopes: chartctl.Scopes(chartctl.AllScopes).Sorted(), Hash: h}); err != nil {
		tb.Fatal(err)
	}
	return srv, srv.URL(), v
}

// BenchmarkHelmDownload fetches charts/*.tgz over HTTP; each fetch is
// counted. BenchmarkCountDownload is the counting alone.
func BenchmarkHelmDownload(b *testing.B) {
	s := testkit.StartServer(b, func(srv *server.Server) { srv.Config.GlobalLimit.N = 0 })
	s.MustRepo(b, "apps", "public")
	if r := s.Upload(b, "apps", s.AdminKey, testkit.MakeChart(b, testkit.Chart{Name: "web", Version: "1.0.0"}), ""); r.StatusCode != 200 {
		b.Fatalf("upload: %d", r.StatusCode)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := s.Do(b, "GET", "/helm/apps/charts/web-1.0.0.tgz", "", nil); r.StatusCode != 200 {
			b.Fatalf("download: %d", r.StatusCode)
		}
	}
}

// BenchmarkCountDownload is what a download adds to the request: one
// counter bump under a mutex, from many goroutines at once.
func BenchmarkCountDownload(b *testing.B) {
	s := testkit.StartServer(b)
	a := s.App()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			a.CountDownload("apps", "web", "1.0.0")
		}
	})
}
