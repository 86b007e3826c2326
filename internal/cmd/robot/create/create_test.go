package create

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

func TestNewCmdCreate(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		want     CreateOptions
		wantFlag string
	}{
		{name: "everything", args: []string{"ci-push", "--org", "acme", "--repo", "acme-*", "--repo", "web-charts", "--permission", "pull,push", "--expires", "90d", "--description", "CI"},
			want: CreateOptions{Name: "ci-push", Organization: "acme", Repositories: []string{"acme-*", "web-charts"}, Permissions: []string{"pull", "push"}, Expires: "90d", Description: "CI", JSON: true}},
		{name: "pull by default", args: []string{"reader", "--org", "acme", "--repo", "acme-charts"},
			want: CreateOptions{Name: "reader", Organization: "acme", Repositories: []string{"acme-charts"}, Permissions: []string{"pull"}, JSON: true}},
		{name: "a pattern with a comma stays whole", args: []string{"r", "--org", "acme", "--repo", "acme-[a,b]*"},
			want: CreateOptions{Name: "r", Organization: "acme", Repositories: []string{"acme-[a,b]*"}, Permissions: []string{"pull"}, JSON: true}},
		{name: "no org", args: []string{"r", "--repo", "x"}, wantFlag: "--org is required"},
		{name: "no repo", args: []string{"r", "--org", "acme"}, wantFlag: "--repo is required"},
		{name: "unknown permission", args: []string{"r", "--org", "acme", "--repo", "x", "--permission", "pull,admin"}, wantFlag: `invalid --permission "admin"`},
		{name: "empty permission", args: []string{"r", "--org", "acme", "--repo", "x", "--permission", ""}, wantFlag: "--permission needs at least one"},
		{name: "bad expiry", args: []string{"r", "--org", "acme", "--repo", "x", "--expires", "later"}, wantFlag: "invalid --expires"},
		{name: "no name", args: []string{"--org", "acme", "--repo", "x"}, wantFlag: "a robot name is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			f := &cmdutil.Factory{IOStreams: ios}
			var got *CreateOptions
			cmd := NewCmdCreate(f, func(o *CreateOptions) error { got = o; return nil })
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
			if got.Name != tt.want.Name || got.Organization != tt.want.Organization || got.Description != tt.want.Description ||
				!reflect.DeepEqual(got.Repositories, tt.want.Repositories) || !reflect.DeepEqual(got.Permissions, tt.want.Permissions) ||
				got.Expires != tt.want.Expires || got.JSON != tt.want.JSON {
				t.Errorf("options = %+v, want %+v", *got, tt.want)
			}
		})
	}
}

// robotServer answers POST /v1/organizations/acme/robots with the robot
// the contract describes, the secret included, and records the body.
func robotServer(t *testing.T, body *map[string]any) func() (*client.Client, error) {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/organizations/acme/robots" {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
		}
		if err := json.NewDecoder(r.Body).Decode(body); err != nil {
			t.Errorf("body: %v", err)
		}
		exp := time.Date(2027, 2, 26, 12, 0, 0, 0, time.UTC)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"data": client.Robot{
			Name: "ci-push", Organization: "acme", UserName: "robot$acme+ci-push",
			Repositories: []string{"acme-*"}, Permissions: []string{"pull", "push"}, ExpiresAt: &exp,
			CreatedBy: "ada@example.com", CreatedAt: exp.AddDate(0, 0, -90), Secret: "chartctl_rb_s3cret",
		}})
	}))
	t.Cleanup(hs.Close)
	return func() (*client.Client, error) { return client.New(hs.URL, client.WithToken("k")) }
}

// On a terminal the secret comes once with the warning, and the user name
// is quoted so that a shell does not expand $acme.
func TestCreateRunOnATerminal(t *testing.T) {
	var body map[string]any
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	err := createRun(t.Context(), &CreateOptions{IO: ios, Client: robotServer(t, &body), Now: func() time.Time { return now },
		Name: "ci-push", Organization: "acme", Repositories: []string{"acme-*"}, Permissions: []string{"pull", "push"}, Expires: "90d"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "ci-push", "repositories": []any{"acme-*"}, "permissions": []any{"pull", "push"}, "expires_at": "2027-02-26T12:00:00Z"}
	if !reflect.DeepEqual(body, want) {
		t.Errorf("body = %v, want %v", body, want)
	}
	got := out.String()
	for _, s := range []string{
		"Created robot ci-push in acme (repositories acme-*, permissions pull,push, expires 2027-02-26T12:00:00Z)",
		"\n    chartctl_rb_s3cret\n",
		"Copy the secret now: it will not be shown again.",
		"--username 'robot$acme+ci-push' --password \"$SECRET\"",
		"helm registry login 127.0.0.1:",
	} {
		if !strings.Contains(got, s) {
			t.Errorf("output lacks %q:\n%s", s, got)
		}
	}
	if strings.Count(got, "chartctl_rb_s3cret") != 1 {
		t.Errorf("the secret is printed %d times", strings.Count(got, "chartctl_rb_s3cret"))
	}
}

// Piped with -o table, the secret alone, for SECRET=$(chartctl …); -o
// json, the robot with its secret.
func TestCreateRunPiped(t *testing.T) {
	var body map[string]any
	ios, _, out, _ := iostreams.Test()
	opts := &CreateOptions{IO: ios, Client: robotServer(t, &body), Now: time.Now, Name: "ci-push", Organization: "acme",
		Repositories: []string{"acme-*"}, Permissions: []string{"pull", "push"}}
	if err := createRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	if out.String() != "chartctl_rb_s3cret\n" {
		t.Errorf("output = %q", out.String())
	}
	if _, ok := body["expires_at"]; ok {
		t.Errorf("a robot without --expires sent expires_at: %v", body)
	}
	out.Reset()
	opts.JSON = true
	if err := createRun(t.Context(), opts); err != nil {
		t.Fatal(err)
	}
	var r client.Robot
	if err := json.Unmarshal(out.Bytes(), &r); err != nil || r.Secret != "chartctl_rb_s3cret" || r.UserName != "robot$acme+ci-push" {
		t.Errorf("-o json = %s (%v)", out, err)
	}
}
