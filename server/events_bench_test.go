package server_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/webhook"
	"github.com/chartctl/chartctl/server"
)

// BenchmarkUploadWebhooks uploads chart versions over HTTP with no
// webhook and with two webhooks whose receivers answer 204 (the audit
// log is always written). Compare the two ns/op: the bar is
// within 10 %.
func BenchmarkUploadWebhooks(b *testing.B) {
	for _, hooks := range []int{0, 2} {
		b.Run(fmt.Sprintf("webhooks=%d", hooks), func(b *testing.B) {
			box, err := secrets.New(bytes.Repeat([]byte("b"), 32))
			if err != nil {
				b.Fatal(err)
			}
			var d *webhook.Dispatcher
			s := testkit.StartServer(b, func(srv *server.Server) {
				d = webhook.New(srv.Store, box, webhook.Options{AllowPrivate: true, Poll: 10 * time.Millisecond})
				srv.Secrets, srv.OnEvents = box, d.Notify
				srv.Config.AllowPrivateWebhooks = true
				srv.Config.UploadLimit.N = 0
				srv.Config.GlobalLimit.N = 0
			})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); d.Run(ctx) }()
			defer func() { cancel(); <-done }()
			s.MustRepo(b, "bench", "")
			rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
			defer rs.Close()
			for i := 0; i < hooks; i++ {
				if r := s.DoJSON(b, "POST", "/v1/repositories/bench/webhooks", s.AdminKey, map[string]any{"url": rs.URL, "events": []string{"*"}}); r.StatusCode != 200 {
					b.Fatalf("webhook: %d %s", r.StatusCode, r.Body)
				}
			}
			archives := make([][]byte, b.N)
			for i := range archives {
				archives[i] = testkit.MakeChart(b, testkit.Chart{Name: "app", Version: fmt.Sprintf("1.0.%d", i)})
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := s.Upload(b, "bench", s.AdminKey, archives[i], ""); r.StatusCode != 200 {
					b.Fatalf("upload: %d %s", r.StatusCode, r.Body)
				}
			}
		})
	}
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
