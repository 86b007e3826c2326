package grant

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

func TestNewCmdGrant(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     GrantOptions
		wantFlag string
	}{
		{name: "team", args: []string{"web-charts", "--team", "web", "--role", "write"}, want: GrantOptions{Repository: "web-charts", Team: "web", Role: "write"}},
		{name: "user, read by default", args: []string{"web-charts", "--user", "ada@example.com"}, want: GrantOptions{Repository: "web-charts", User: "ada@example.com", Role: "read"}},
		{name: "both", args: []string{"r", "--team", "web", "--user", "ada@example.com"}, wantFlag: "one at a time"},
		{name: "neither", args: []string{"r", "--role", "admin"}, wantFlag: "--team TEAM or --user EMAIL is required"},
		{name: "unknown role", args: []string{"r", "--team", "web", "--role", "owner"}, wantFlag: `invalid --role "owner": want read, write, maintain, admin`},
		{name: "no repository", args: []string{"--team", "web"}, wantFlag: "a repository name is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *GrantOptions
			cmd := NewCmdGrant(&cmdutil.Factory{IOStreams: ios}, func(o *GrantOptions) error { got = o; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if tt.wantFlag != "" {
				var fe *cmdutil.FlagError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.wantFlag) {
					t.Fatalf("err = %v, want a FlagError with %q", err, tt.wantFlag)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Repository != tt.want.Repository || got.Team != tt.want.Team || got.User != tt.want.User || got.Role != tt.want.Role {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// grant posts the documented body; the server's refusal (a team of
// another organization) reaches the user with its message.
func TestGrantRun(t *testing.T) {
	var bodies []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, strings.TrimSpace(string(b)))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if strings.Contains(string(b), "other") {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(client.ErrorBody{Error: client.ErrorDetail{Code: "invalid_parameter", Message: "team other is not a team of organization acme: grant its members by --user"}})
			return
		}
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"data": client.Grant{Kind: "team", Name: "web", Role: "write"}})
	}))
	defer hs.Close()
	newClient := func() (*client.Client, error) {
		return client.New(hs.URL, client.WithToken("k"), client.WithMaxRetries(0))
	}
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	if err := grantRun(t.Context(), &GrantOptions{IO: ios, Client: newClient, Repository: "web-charts", Team: "web", Role: "write"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Granted team web write on web-charts") {
		t.Errorf("output = %q", out.String())
	}
	err := grantRun(t.Context(), &GrantOptions{IO: ios, Client: newClient, Repository: "web-charts", Team: "other", Role: "read"})
	if err == nil || !strings.Contains(err.Error(), "grant team other read on repository web-charts: ") || !strings.Contains(err.Error(), "grant its members by --user") {
		t.Errorf("err = %v", err)
	}
	if bodies[0] != `{"team":"web","role":"write"}` {
		t.Errorf("body = %s", bodies[0])
	}
}
