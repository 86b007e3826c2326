package serve_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/chartctl/chartctl/internal/testkit"
)

// TestKill9BetweenChangeAndDeliveryLosesNoEvent: uploads are acknowledged
// while the webhook receiver is down, the server is killed with SIGKILL
// before any delivery succeeds, and after a restart the receiver gets a
// signed chart.pushed for every acknowledged upload, once each, in order.
func TestKill9BetweenChangeAndDeliveryLosesNoEvent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := mustBinary(t)
	data := t.TempDir()

	var (
		mu       sync.Mutex
		up       bool
		verifier *standardwebhooks.Webhook
		acked    []string // subjects of acknowledged chart.pushed events
		ids      = map[string]int{}
		bad      []string
	)
	rs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		if !up {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		if err := verifier.Verify(body, r.Header); err != nil {
			bad = append(bad, err.Error())
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev struct{ ID, Type, Subject string }
		_ = json.Unmarshal(body, &ev)
		ids[ev.ID]++
		if ev.Type == "io.chartctl.chart.pushed" {
			acked = append(acked, ev.Subject)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rs.Close()

	flags := []string{"--allow-private-webhooks", "--webhook-retry-base", "20ms", "--webhook-timeout", "1s"}
	p := startServe(t, bin, data, flags...)
	key := adminKey(t, data)
	if r, b, err := do(t, "POST", p.url+"/v1/repositories", key, strings.NewReader(`{"name":"crash"}`), "application/json"); err != nil || r.StatusCode != 200 {
		t.Fatalf("create repo: %v %s", err, b)
	}
	r, b, err := do(t, "POST", p.url+"/v1/admin/webhooks", key, strings.NewReader(`{"url":"`+rs.URL+`","events":["chart.pushed"]}`), "application/json")
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("create webhook: %v %s", err, b)
	}
	var hook struct{ Data struct{ Secret string } }
	if err := json.Unmarshal(b, &hook); err != nil {
		t.Fatal(err)
	}
	if verifier, err = standardwebhooks.NewWebhook(hook.Data.Secret); err != nil {
		t.Fatal(err)
	}

	var want []string
	for i := 0; i < 20; i++ {
		v := fmt.Sprintf("1.0.%d", i)
		body, ctype := testkit.Multipart(t, map[string][]byte{"chart": testkit.MakeChart(t, testkit.Chart{Name: "app", Version: v})})
		r, b, err := do(t, "POST", p.url+"/v1/repositories/crash/charts", key, bytes.NewReader(body), ctype)
		if err != nil || r.StatusCode != 200 {
			t.Fatalf("upload: %v %s", err, b)
		}
		want = append(want, "app/"+v)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_, _ = p.cmd.Process.Wait()

	mu.Lock()
	up = true
	mu.Unlock()
	startServe(t, bin, data, flags...)
	deadline := time.Now().Add(90 * time.Second)
	for {
		mu.Lock()
		n := len(acked)
		mu.Unlock()
		if n >= len(want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("signatures refused: %v", bad)
	}
	if strings.Join(acked, " ") != strings.Join(want, " ") {
		t.Fatalf("events after the restart\n got %v\nwant %v", acked, want)
	}
	for id, n := range ids {
		if n != 1 {
			t.Fatalf("event %s acknowledged %d times", id, n)
		}
	}
}
