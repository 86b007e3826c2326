package audit

import (
	"context"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/text"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// rfc3339 matches the times the table prints, which the golden file holds
// as one fixed time.
var rfc3339 = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`)

// On an 80-column terminal the audit table leaves out the request id and
// then the client address instead of squashing every column to 8
// characters: time, actor, action, target and outcome stay readable.
// -o json keeps every field.
func TestAuditAt80Columns(t *testing.T) {
	ts := testkit.StartServer(t)
	ts.MustRepo(t, "stable", "public")
	archive := testkit.MakeChart(t, testkit.Chart{Name: "nginx-ingress-controller", Version: "4.11.3"})
	if r := ts.Upload(t, "stable", ts.AdminKey, archive, ""); r.StatusCode != 200 {
		t.Fatal(r.StatusCode, string(r.Body))
	}
	if r := ts.Do(t, http.MethodDelete, "/v1/repositories/stable/charts/nginx-ingress-controller/4.11.3", ts.AdminKey, nil); r.StatusCode != 200 && r.StatusCode != 204 {
		t.Fatal(r.StatusCode, string(r.Body))
	}
	run := func(asJSON bool) string {
		ios, _, out, _ := iostreams.Test()
		ios.SetStdoutTTY(true)
		ios.SetTerminalWidth(80)
		opts := &AuditOptions{IO: ios, JSON: asJSON, Now: time.Now, Limit: 50, Action: "chart",
			Client: func() (*client.Client, error) { return client.New(ts.URL, client.WithToken(ts.AdminKey)) },
			Table:  func() *text.Table { return text.NewTable(ios.Out, ios.IsStdoutTTY(), ios.TerminalWidth()) }}
		if err := auditRun(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	out := run(false)
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := text.DisplayWidth(line); w > 80 {
			t.Errorf("line wider than 80 (%d): %q", w, line)
		}
	}
	out = rfc3339.ReplaceAllString(out, "2026-11-28T12:00:00Z")
	path := filepath.Join("testdata", "audit-80.golden")
	if *update {
		os.WriteFile(path, []byte(out), 0o644)
	}
	if want, _ := os.ReadFile(path); out != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", path, out, want)
	}

	var entries []map[string]any
	if err := json.Unmarshal([]byte(run(true)), &entries); err != nil || len(entries) == 0 {
		t.Fatalf("-o json: %v %v", entries, err)
	}
	for _, field := range []string{"time", "actor", "action", "target", "outcome", "client_ip", "request_id"} {
		if _, ok := entries[0][field]; !ok {
			t.Errorf("-o json lacks %s: %v", field, entries[0])
		}
	}
}
