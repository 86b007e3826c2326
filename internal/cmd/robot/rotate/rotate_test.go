package rotate

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
)

func TestNewCmdRotate(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		grace    time.Duration
		wantFlag string
	}{
		{name: "no grace", args: []string{"ci-push", "--org", "acme"}},
		{name: "grace", args: []string{"ci-push", "--org", "acme", "--grace", "10m"}, grace: 10 * time.Minute},
		{name: "grace in days", args: []string{"ci-push", "--org", "acme", "--grace", "7d"}, grace: 7 * 24 * time.Hour},
		{name: "grace too long", args: []string{"ci-push", "--org", "acme", "--grace", "8d"}, wantFlag: "at most 7d"},
		{name: "negative grace", args: []string{"ci-push", "--org", "acme", "--grace", "-1m"}, wantFlag: "invalid --grace"},
		{name: "no org", args: []string{"ci-push"}, wantFlag: "--org is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *RotateOptions
			cmd := NewCmdRotate(&cmdutil.Factory{IOStreams: ios}, func(o *RotateOptions) error { got = o; return nil })
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
			if got.Name != "ci-push" || got.Organization != "acme" || got.Grace != tt.grace {
				t.Errorf("options = %+v", *got)
			}
		})
	}
}

// rotate sends the grace as a Go duration and prints the new secret once,
// saying how long the old one lasts.
func TestRotateRun(t *testing.T) {
	var bodies []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/organizations/acme/robots/ci-push/rotate" {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
		}
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, strings.TrimSpace(string(b)))
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": client.Robot{Name: "ci-push", Organization: "acme",
			UserName: "robot$acme+ci-push", Repositories: []string{"acme-*"}, Permissions: []string{"push"}, Secret: "chartctl_rb_new"}})
	}))
	defer hs.Close()
	newClient := func() (*client.Client, error) { return client.New(hs.URL, client.WithToken("k")) }

	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	if err := rotateRun(t.Context(), &RotateOptions{IO: ios, Client: newClient, Name: "ci-push", Organization: "acme", Grace: 24 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, s := range []string{"Rotated the secret of robot ci-push in acme: the old one keeps working for 24h0m0s", "    chartctl_rb_new\n", "will not be shown again", "'robot$acme+ci-push'"} {
		if !strings.Contains(got, s) {
			t.Errorf("output lacks %q:\n%s", s, got)
		}
	}
	ios, _, out, _ = iostreams.Test()
	if err := rotateRun(t.Context(), &RotateOptions{IO: ios, Client: newClient, Name: "ci-push", Organization: "acme"}); err != nil {
		t.Fatal(err)
	}
	if out.String() != "chartctl_rb_new\n" {
		t.Errorf("piped output = %q", out.String())
	}
	if len(bodies) != 2 || bodies[0] != `{"grace":"24h0m0s"}` || bodies[1] != `{}` {
		t.Errorf("bodies = %q", bodies)
	}
}
