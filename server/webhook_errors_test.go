package server_test

import (
	"bytes"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/secrets"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/webhook"
	"github.com/chartctl/chartctl/server"
)

// Regression (issue 27, informational): a delivery's response_excerpt
// showed the raw dial error ("dial tcp 127.0.0.1:PORT: connect:
// connection refused", or a lookup naming the server's resolver); it says
// "could not connect to HOST" and a short reason, and so does the reason
// a webhook is disabled for.
func TestWebhookDeliveryErrorIsWorded(t *testing.T) {
	box, err := secrets.New(bytes.Repeat([]byte("s"), 32))
	if err != nil {
		t.Fatal(err)
	}
	var d *webhook.Dispatcher
	s := testkit.StartServer(t, func(srv *server.Server) {
		d = webhook.New(srv.Store, box, webhook.Options{RetryBase: time.Hour, AllowPrivate: true})
		srv.Secrets, srv.OnEvents = box, d.Notify
		srv.Config.AllowPrivateWebhooks = true
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	c := clientFor(t, s, s.AdminKey)
	hook, _, err := c.Webhooks.Create(t.Context(), client.WebhookScope{}, &client.WebhookRequest{URL: "http://" + closed + "/hook", Events: []string{"*"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Webhooks.Ping(t.Context(), hook.ID); err != nil {
		t.Fatal(err)
	}
	if n := d.RunOnce(t.Context()); n != 1 {
		t.Fatalf("sent %d deliveries", n)
	}
	ds, _, err := c.Webhooks.Deliveries(t.Context(), hook.ID, 0)
	if err != nil || len(ds) != 1 || ds[0].ResponseExcerpt == nil {
		t.Fatalf("deliveries %+v, %v", ds, err)
	}
	want := "could not connect to " + closed + ": connection refused"
	if got := *ds[0].ResponseExcerpt; got != want {
		t.Fatalf("response_excerpt %q, want %q", got, want)
	}
	if strings.Contains(*ds[0].ResponseExcerpt, "dial tcp") {
		t.Fatalf("raw dial error: %q", *ds[0].ResponseExcerpt)
	}
}
