package list

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/text"
)

// list is a table on a terminal and in pipes with -o table, JSON with -o
// json; no grants on a terminal says how to add one.
func TestListRun(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	grants := []client.Grant{
		{Kind: "team", Name: "web", Role: "write", CreatedAt: now.Add(-time.Hour)},
		{Kind: "user", Name: "ada@example.com", Role: "admin", CreatedAt: now.Add(-48 * time.Hour)},
	}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		data := grants
		if r.URL.Path == "/v1/repositories/empty/access" {
			data = []client.Grant{}
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": data, "meta": client.Meta{Total: len(data), Page: 1, Limit: 100}})
	}))
	defer hs.Close()
	run := func(repo string, tty, asJSON bool) (string, string) {
		ios, _, out, errOut := iostreams.Test()
		ios.SetStdoutTTY(tty)
		ios.SetTerminalWidth(100)
		opts := &ListOptions{IO: ios, JSON: asJSON, Now: func() time.Time { return now }, Repository: repo,
			Client: func() (*client.Client, error) { return client.New(hs.URL, client.WithToken("k")) },
			Table:  func() *text.Table { return text.NewTable(ios.Out, ios.IsStdoutTTY(), ios.TerminalWidth()) }}
		if err := listRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		return out.String(), errOut.String()
	}
	out, _ := run("web-charts", true, false)
	for _, s := range []string{"KIND", "web", "write", "1 hour ago", "ada@example.com", "admin", "2 days ago"} {
		if !strings.Contains(out, s) {
			t.Errorf("table lacks %q:\n%s", s, out)
		}
	}
	out, _ = run("web-charts", false, false)
	if out != "team\tweb\twrite\t2026-11-28T11:00:00Z\nuser\tada@example.com\tadmin\t2026-11-26T12:00:00Z\n" {
		t.Errorf("piped table:\n%q", out)
	}
	out, _ = run("web-charts", false, true)
	var got []client.Grant
	if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 2 || got[1].Role != "admin" {
		t.Errorf("-o json: %v %v", got, err)
	}
	out, errOut := run("empty", true, false)
	if out != "" || !strings.Contains(errOut, "No grants on empty") {
		t.Errorf("empty: %q %q", out, errOut)
	}
}
