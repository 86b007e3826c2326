package list

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

var now = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

func robots() []client.Robot {
	past, future, used := now.Add(-time.Hour), now.AddDate(0, 0, 30), now.Add(-2*time.Hour)
	return []client.Robot{
		{Name: "ci-push", Organization: "acme", Repositories: []string{"acme-*", "web-charts"}, Permissions: []string{"pull", "push"}, ExpiresAt: &future, LastUsedAt: &used, CreatedAt: now.AddDate(0, -1, 0)},
		{Name: "old", Organization: "acme", Repositories: []string{"acme-charts"}, Permissions: []string{"pull"}, ExpiresAt: &past, CreatedAt: now.AddDate(0, -3, 0)},
		{Name: "paused", Organization: "acme", Repositories: []string{"*"}, Permissions: []string{"pull"}, Disabled: true, CreatedAt: now.AddDate(0, -2, 0)},
	}
}

func TestStatus(t *testing.T) {
	rs := robots()
	for i, want := range []string{"active", "expired", "disabled"} {
		if got := Status(&rs[i], now); got != want {
			t.Errorf("Status(%s) = %s, want %s", rs[i].Name, got, want)
		}
	}
}

func TestListRun(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/organizations/acme/robots" {
			t.Errorf("path %s", r.URL.Path)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": robots(), "meta": client.Meta{Total: 3, Page: 1, Limit: 100}})
	}))
	defer hs.Close()
	run := func(tty, asJSON bool) string {
		ios, _, out, _ := iostreams.Test()
		ios.SetStdoutTTY(tty)
		ios.SetTerminalWidth(120)
		opts := &ListOptions{IO: ios, JSON: asJSON, Now: func() time.Time { return now }, Organization: "acme",
			Client: func() (*client.Client, error) { return client.New(hs.URL, client.WithToken("k")) },
			Table:  func() *text.Table { return text.NewTable(ios.Out, ios.IsStdoutTTY(), ios.TerminalWidth()) }}
		if err := listRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	tty := run(true, false)
	for _, s := range []string{"NAME", "ci-push", "acme-* web-charts", "pull,push", "active", "2 hours ago", "expired", "disabled", "never"} {
		if !strings.Contains(tty, s) {
			t.Errorf("table lacks %q:\n%s", s, tty)
		}
	}
	plain := run(false, false)
	if !strings.Contains(plain, "ci-push\tacme-* web-charts\tpull,push\tactive\t2026-11-28T10:00:00Z\t2026-12-28T12:00:00Z\n") {
		t.Errorf("piped table:\n%s", plain)
	}
	var got []client.Robot
	if err := json.Unmarshal([]byte(run(false, true)), &got); err != nil || len(got) != 3 || got[2].Disabled != true {
		t.Errorf("-o json: %v %v", got, err)
	}
}

func TestNewCmdListNeedsOrg(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	cmd := NewCmdList(&cmdutil.Factory{IOStreams: ios}, func(*ListOptions) error { return nil })
	cmd.SetArgs(nil)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	var fe *cmdutil.FlagError
	if err := cmd.Execute(); !errors.As(err, &fe) || !strings.Contains(err.Error(), "--org is required") {
		t.Fatalf("err = %v", err)
	}
}
