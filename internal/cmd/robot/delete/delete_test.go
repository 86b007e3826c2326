package delete

import (
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

func TestNewCmdDelete(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		tty      bool
		wantFlag string
	}{
		{name: "yes", args: []string{"ci-push", "--org", "acme", "--yes"}},
		{name: "asks on a terminal", args: []string{"ci-push", "--org", "acme"}, tty: true},
		{name: "no --yes off a terminal", args: []string{"ci-push", "--org", "acme"}, wantFlag: "--yes is required"},
		{name: "no org", args: []string{"ci-push", "--yes"}, wantFlag: "--org is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			ios.SetStdinTTY(tt.tty)
			ios.SetStdoutTTY(tt.tty)
			ios.SetStderrTTY(tt.tty)
			ran := false
			cmd := NewCmdDelete(&cmdutil.Factory{IOStreams: ios}, func(*DeleteOptions) error { ran = true; return nil })
			cmd.SetArgs(tt.args)
			cmd.SetOut(io.Discard)
			cmd.SetErr(io.Discard)
			err := cmd.Execute()
			if tt.wantFlag != "" {
				var fe *cmdutil.FlagError
				if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.wantFlag) || ran {
					t.Fatalf("err = %v, want a FlagError with %q", err, tt.wantFlag)
				}
				return
			}
			if err != nil || !ran {
				t.Fatalf("err = %v, ran %v", err, ran)
			}
		})
	}
}

// On a terminal the robot is deleted only when its name is typed.
func TestDeleteRunConfirms(t *testing.T) {
	deleted := 0
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodDelete || r.URL.Path != "/v1/organizations/acme/robots/ci-push" {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
		}
		deleted++
		w.WriteHeader(http.StatusNoContent)
	}))
	defer hs.Close()
	newClient := func() (*client.Client, error) { return client.New(hs.URL, client.WithToken("k")) }
	for _, tc := range []struct {
		answer  string
		err     error
		deleted int
	}{
		{"ci\n", cmdutil.ErrCancel, 0},
		{"ci-push\n", nil, 1},
	} {
		ios, in, out, errOut := iostreams.Test()
		ios.SetStdinTTY(true)
		ios.SetStdoutTTY(true)
		ios.SetStderrTTY(true)
		in.WriteString(tc.answer)
		err := deleteRun(t.Context(), &DeleteOptions{IO: ios, Client: newClient, Name: "ci-push", Organization: "acme"})
		if !errors.Is(err, tc.err) || deleted != tc.deleted {
			t.Fatalf("answer %q: err %v, deleted %d", tc.answer, err, deleted)
		}
		if !strings.Contains(errOut.String(), "Type ci-push to confirm deleting robot ci-push of acme") {
			t.Errorf("prompt = %q", errOut.String())
		}
		if tc.err == nil && !strings.Contains(out.String(), "Deleted robot ci-push of acme") {
			t.Errorf("output = %q", out.String())
		}
	}
}
