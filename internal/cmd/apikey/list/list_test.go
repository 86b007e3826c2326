package list

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/text"
	"github.com/chartctl/chartctl/internal/token"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// On an 80-column terminal the list leaves out the creation and last-use
// times and the expiry instead of squashing every column to 8 characters:
// the id is whole, the name, scopes and the repositories the key reaches
// (what it can do) readable. -o json keeps every field.
func TestListAt80Columns(t *testing.T) {
	ts := testkit.StartServer(t)
	ada := ts.MustUser(t, "ada@example.com", false)
	created := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	expires := time.Date(2027, 2, 18, 0, 0, 0, 0, time.UTC)
	var credential string
	for _, k := range []struct {
		id, name string
		scopes   []chartctl.Scope
		expires  *time.Time
	}{
		{"key_01JDQ7Z8X4M2N6P0R3S5T7V9WA", "release pipeline (production)", []chartctl.Scope{chartctl.ScopeRepoRead, chartctl.ScopeRepoWrite, chartctl.ScopeTeamRead, chartctl.ScopeTeamWrite}, &expires},
		{"key_01JDQ7Z8X4M2N6P0R3S5T7V9WB", "laptop", []chartctl.Scope{chartctl.ScopeRepoRead}, nil},
	} {
		v, h := token.New(token.APIKeyPrefix)
		if err := ts.Store.CreateAPIKey(context.Background(), &chartctl.APIKey{ID: k.id, UserID: ada.ID, Name: k.name, Scopes: chartctl.Scopes(k.scopes).Sorted(), Hash: h, CreatedAt: created, ExpiresAt: k.expires}); err != nil {
			t.Fatal(err)
		}
		credential = v
	}
	run := func(tty, asJSON bool) string {
		ios, _, out, _ := iostreams.Test()
		ios.SetStdoutTTY(tty)
		ios.SetTerminalWidth(80)
		opts := &ListOptions{IO: ios, JSON: asJSON, Now: func() time.Time { return created.Add(48 * time.Hour) },
			Client: func() (*client.Client, error) { return client.New(ts.URL, client.WithToken(credential)) },
			Table:  func() *text.Table { return text.NewTable(ios.Out, ios.IsStdoutTTY(), ios.TerminalWidth()) }}
		if err := listRun(context.Background(), opts); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	out := run(true, false)
	golden(t, "list-80.golden", out)
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if w := text.DisplayWidth(line); w > 80 {
			t.Errorf("line wider than 80 (%d): %q", w, line)
		}
	}

	var keys []map[string]any
	if err := json.Unmarshal([]byte(run(true, true)), &keys); err != nil || len(keys) != 2 {
		t.Fatalf("-o json: %v %v", keys, err)
	}
	for _, field := range []string{"id", "name", "scopes", "created_at", "last_used_at", "expires_at"} {
		if _, ok := keys[0][field]; !ok {
			t.Errorf("-o json lacks %s: %v", field, keys[0])
		}
	}
}
