package delete

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

func TestNewCmdDeleteNeedsYesOffATerminal(t *testing.T) {
	ios, _, _, _ := iostreams.Test()
	ran := false
	cmd := NewCmdDelete(&cmdutil.Factory{IOStreams: ios}, func(*DeleteOptions) error { ran = true; return nil })
	cmd.SetArgs([]string{"acme"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	var fe *cmdutil.FlagError
	if err := cmd.Execute(); !errors.As(err, &fe) || ran {
		t.Fatalf("err = %v, ran %v", err, ran)
	}
	cmd.SetArgs([]string{"acme", "--yes"})
	if err := cmd.Execute(); err != nil || !ran {
		t.Fatalf("with --yes: err = %v, ran %v", err, ran)
	}
}

// The server's 409 (repositories remain) comes with the next step; a 404
// with the way to list organizations.
func TestDeleteRun(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete {
			t.Errorf("method %s", r.Method)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		switch r.URL.Path {
		case "/v1/organizations/acme":
			w.WriteHeader(http.StatusNoContent)
		case "/v1/organizations/busy":
			w.WriteHeader(http.StatusConflict)
			_ = json.NewEncoder(w).Encode(client.ErrorBody{Error: client.ErrorDetail{Code: "conflict", Message: "organization busy owns 2 repositories: delete them first"}})
		default:
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(client.ErrorBody{Error: client.ErrorDetail{Code: "not_found", Message: "organization not found"}})
		}
	}))
	defer hs.Close()
	newClient := func() (*client.Client, error) {
		return client.New(hs.URL, client.WithToken("k"), client.WithMaxRetries(0))
	}
	ios, _, out, _ := iostreams.Test()
	ios.SetStdoutTTY(true)
	if err := deleteRun(t.Context(), &DeleteOptions{IO: ios, Client: newClient, Name: "acme", Yes: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "Deleted organization acme") {
		t.Errorf("output = %q", out.String())
	}
	var he *cmdutil.HintError
	err := deleteRun(t.Context(), &DeleteOptions{IO: ios, Client: newClient, Name: "busy", Yes: true})
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "owns 2 repositories") || !strings.Contains(he.Hint, "Delete its repositories first") {
		t.Errorf("409: %v", err)
	}
	err = deleteRun(t.Context(), &DeleteOptions{IO: ios, Client: newClient, Name: "nope", Yes: true})
	if !errors.As(err, &he) || he.Hint != cmdutil.HintOrgList {
		t.Errorf("404: %v", err)
	}
}
