package disable

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
)

// disable and enable PATCH the robot's disabled flag, and say what it
// means.
func TestDisableAndEnable(t *testing.T) {
	var bodies []string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPatch || r.URL.Path != "/v1/organizations/acme/robots/ci-push" {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
		}
		var body struct{ Disabled bool }
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, strings.TrimSpace(string(b)))
		_ = json.Unmarshal(b, &body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(map[string]any{"data": client.Robot{Name: "ci-push", Organization: "acme", Disabled: body.Disabled}})
	}))
	defer hs.Close()
	f := &cmdutil.Factory{}
	for _, tc := range []struct {
		newCmd func(*cmdutil.Factory, func(*DisableOptions) error) *cobra.Command
		out    string
	}{
		{NewCmdDisable, "Disabled robot ci-push in acme: its secret is refused until you enable it"},
		{NewCmdEnable, "Enabled robot ci-push in acme"},
	} {
		ios, _, out, _ := iostreams.Test()
		ios.SetStdoutTTY(true)
		f.IOStreams = ios
		var opts *DisableOptions
		cmd := tc.newCmd(f, func(o *DisableOptions) error { opts = o; return nil })
		cmd.SetArgs([]string{"ci-push", "--org", "acme"})
		cmd.SetOut(io.Discard)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		opts.Client = func() (*client.Client, error) { return client.New(hs.URL, client.WithToken("k")) }
		if err := disableRun(t.Context(), opts); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), tc.out) {
			t.Errorf("output = %q, want %q", out.String(), tc.out)
		}
	}
	if len(bodies) != 2 || bodies[0] != `{"disabled":true}` || bodies[1] != `{"disabled":false}` {
		t.Errorf("bodies = %q", bodies)
	}

	ios, _, _, _ := iostreams.Test()
	cmd := NewCmdDisable(&cmdutil.Factory{IOStreams: ios}, func(*DisableOptions) error { return nil })
	cmd.SetArgs([]string{"ci-push"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	var fe *cmdutil.FlagError
	if err := cmd.Execute(); !errors.As(err, &fe) {
		t.Errorf("without --org: %v", err)
	}
}
