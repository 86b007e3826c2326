package revoke

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

// revoke deletes the grant of the named kind; an unknown grant's 404
// says how to see the grants.
func TestRevokeRun(t *testing.T) {
	var paths []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.Method+" "+r.URL.EscapedPath())
		if strings.HasSuffix(r.URL.Path, "/nobody@example.com") {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(client.ErrorBody{Error: client.ErrorDetail{Code: "not_found", Message: "no grant to nobody@example.com on web-charts"}})
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hs.Close()
	newClient := func() (*client.Client, error) {
		return client.New(hs.URL, client.WithToken("k"), client.WithMaxRetries(0))
	}
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	if err := revokeRun(t.Context(), &RevokeOptions{IO: ios, Client: newClient, Repository: "web-charts", Team: "web"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Revoked the role of team web on web-charts") {
		t.Errorf("output = %q", out.String())
	}
	err := revokeRun(t.Context(), &RevokeOptions{IO: ios, Client: newClient, Repository: "web-charts", User: "nobody@example.com"})
	var he *cmdutil.HintError
	if !errors.As(err, &he) || he.Hint != "To see the grants on web-charts, run: chartctl repo access list web-charts" {
		t.Errorf("err = %v", err)
	}
	want := []string{"DELETE /v1/repositories/web-charts/access/team/web", "DELETE /v1/repositories/web-charts/access/user/nobody@example.com"}
	if strings.Join(paths, "\n") != strings.Join(want, "\n") {
		t.Errorf("paths = %q", paths)
	}
}

func TestNewCmdRevokeTeamOrUser(t *testing.T) {
	for _, args := range [][]string{{"r"}, {"r", "--team", "t", "--user", "u@example.com"}} {
		ios, _, _, _ := iostreams.Test()
		cmd := NewCmdRevoke(&cmdutil.Factory{IOStreams: ios}, func(*RevokeOptions) error { return nil })
		cmd.SetArgs(args)
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		var fe *cmdutil.FlagError
		if err := cmd.Execute(); !errors.As(err, &fe) {
			t.Errorf("%q: err = %v, want a FlagError", args, err)
		}
	}
}
