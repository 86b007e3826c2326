package explain

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

// explainServer answers /v1/user as me and the permissions of any user.
func explainServer(t *testing.T, me client.User, asked *[]string) func() (*client.Client, error) {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/v1/user":
			_ = json.NewEncoder(w).Encode(map[string]any{"data": me})
		case "/v1/repositories/web-charts/permissions":
			*asked = append(*asked, r.URL.Query().Get("user"))
			_ = json.NewEncoder(w).Encode(map[string]any{"data": client.Permission{Role: "write", Via: []client.PermissionVia{
				{Kind: client.ViaOrganization, Name: "acme", Role: "read"},
				{Kind: client.ViaTeam, Name: "web", Role: "write"},
				{Kind: client.ViaVisibility, Name: "internal", Role: "read"},
			}}})
		default:
			t.Errorf("path %s", r.URL.Path)
		}
	}))
	t.Cleanup(hs.Close)
	return func() (*client.Client, error) { return client.New(hs.URL, client.WithToken("k")) }
}

// explain prints the role and each source; without --user it explains
// the caller.
func TestExplainRun(t *testing.T) {
	var asked []string
	newClient := explainServer(t, client.User{Email: "me@example.com"}, &asked)
	ios, _, out, _ := iostreams.Test()
	if err := explainRun(t.Context(), &ExplainOptions{IO: ios, Client: newClient, Repository: "web-charts", User: "bob@example.com"}); err != nil {
		t.Fatal(err)
	}
	want := `bob@example.com has role write on web-charts
  read     through their role in organization acme
  write    through a grant to team web
  read     because the repository is internal
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if err := explainRun(t.Context(), &ExplainOptions{IO: ios, Client: newClient, Repository: "web-charts"}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(asked, ",") != "bob@example.com,me@example.com" {
		t.Errorf("asked for %q", asked)
	}
}

// A robot has no roles of its own to explain: it is told to name a user.
func TestExplainRunAsRobot(t *testing.T) {
	var asked []string
	newClient := explainServer(t, client.User{Email: "robot$acme+ci", Robot: "acme/ci"}, &asked)
	ios, _, _, _ := iostreams.Test()
	err := explainRun(t.Context(), &ExplainOptions{IO: ios, Client: newClient, Repository: "web-charts"})
	var fe *cmdutil.FlagError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "signed in as robot acme/ci") || len(asked) != 0 {
		t.Errorf("err = %v, asked %q", err, asked)
	}
}

func TestNewCmdExplainRefusesTeam(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	cmd := NewCmdExplain(&cmdutil.Factory{IOStreams: ios}, func(*ExplainOptions) error { return nil })
	cmd.SetArgs([]string{"web-charts", "--team", "web"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	var fe *cmdutil.FlagError
	if err := cmd.Execute(); !errors.As(err, &fe) || !strings.Contains(err.Error(), "chartctl repo access list web-charts") {
		t.Errorf("err = %v", err)
	}
}
