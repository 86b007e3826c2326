package registry_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/webhook"
	"github.com/chartctl/chartctl/server"
)

// TestOCIPushEmitsSignedEventAndPullsCount: a chart pushed over /v2 is a
// chart.pushed event like any other, signed so the reference verifier
// accepts it; a pull of its chart layer counts as a download.
func TestOCIPushEmitsSignedEventAndPullsCount(t *testing.T) {
	box, err := secrets.New([]byte("registry events test key, 32 bytes+"))
	if err != nil {
		t.Fatal(err)
	}
	var d *webhook.Dispatcher
	e := setupServer(t, func(s *server.Server) {
		d = webhook.New(s.Store, box, webhook.Options{AllowPrivate: true, RetryBase: 20 * time.Millisecond, Poll: 20 * time.Millisecond})
		s.Secrets, s.OnEvents = box, d.Notify
		s.Config.AllowPrivateWebhooks = true
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	defer func() { cancel(); <-done }()

	var (
		mu       sync.Mutex
		verifier *standardwebhooks.Webhook
		got      []webhook.CloudEvent
		arrived  = make(chan struct{}, 1)
	)
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if verifier == nil || verifier.Verify(body, r.Header) != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev webhook.CloudEvent
		_ = json.Unmarshal(body, &ev)
		got = append(got, ev)
		w.WriteHeader(http.StatusNoContent)
		select {
		case arrived <- struct{}{}:
		default:
		}
	}))
	defer rs.Close()

	mustRepoIn(t, e, "charts", "private")
	r := e.DoJSON(t, "POST", "/v1/repositories/charts/webhooks", e.AdminKey, map[string]any{"url": rs.URL, "events": []string{"chart.pushed"}})
	var hook struct{ Data client.Webhook }
	r.JSON(t, &hook)
	if r.StatusCode != 200 {
		t.Fatalf("webhook: %d %s", r.StatusCode, r.Body)
	}
	mu.Lock()
	verifier, err = standardwebhooks.NewWebhook(hook.Data.Secret)
	mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}

	archive := testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"})
	m := chartManifest(t, e, "charts/web", archive, nil)
	if r := e.do(t, "PUT", "/v2/charts/web/manifests/1.0.0", e.AdminKey, m, "Content-Type", ocispec.MediaTypeImageManifest); r.StatusCode != 201 {
		t.Fatalf("push: %d %s", r.StatusCode, r.Body)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("no event for the OCI push")
	}
	mu.Lock()
	if len(got) != 1 || got[0].Type != "io.chartctl.chart.pushed" || got[0].Subject != "web/1.0.0" {
		t.Fatalf("events %+v", got)
	}
	mu.Unlock()

	for i := 0; i < 2; i++ {
		if r := e.do(t, "GET", "/v2/charts/web/blobs/"+digest.FromBytes(archive).String(), e.AdminKey, nil); r.StatusCode != 200 {
			t.Fatalf("pull: %d", r.StatusCode)
		}
	}
	if err := e.App().FlushDownloads(t.Context()); err != nil {
		t.Fatal(err)
	}
	var cv struct{ Data client.Chart }
	e.Do(t, "GET", "/v1/repositories/charts/charts/web/1.0.0", e.AdminKey, nil).JSON(t, &cv)
	if cv.Data.Downloads != 2 {
		t.Fatalf("downloads after two OCI pulls: %d", cv.Data.Downloads)
	}
}
