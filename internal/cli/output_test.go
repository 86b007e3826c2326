package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit"
)

// TestTerminalOutput checks the table layout on a terminal and that text
// from the server cannot drive the terminal, in tables or in JSON.
func TestTerminalOutput(t *testing.T) {
	srv := testkit.StartServer(t)
	r := srv.DoJSON(t, http.MethodPost, "/v1/repositories", srv.AdminKey, map[string]string{
		"name":        "stable",
		"description": "Nice\x1b]0;pwned\x07 charts\x1b[2J\u009b31m",
	})
	if r.StatusCode != http.StatusOK {
		t.Fatalf("create: %d %s", r.StatusCode, r.Body)
	}
	env := map[string]string{cmdutil.EnvServer: srv.URL, cmdutil.EnvToken: srv.AdminKey}

	ios, _, out, errOut := iostreams.Test()
	ios.SetStdoutTTY(true)
	ios.SetTerminalWidth(200)
	f := newFactory(t, t.TempDir(), env)
	f.IOStreams = ios
	if code := Run(context.Background(), f, Hooks{}, []string{"repo", "list"}); code != ExitOK {
		t.Fatalf("repo list: %d %s", code, errOut)
	}
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a header and one row, got %q", out.String())
	}
	if !strings.HasPrefix(lines[0], "NAME    VISIBILITY  ORGANIZATION  DESCRIPTION") {
		t.Errorf("header %q", lines[0])
	}
	if !strings.Contains(lines[1], "Nice charts") || strings.ContainsAny(out.String(), "\x1b\x07\u009b") {
		t.Errorf("row %q: control sequences not stripped", lines[1])
	}
	if strings.Index(lines[1], "private") != strings.Index(lines[0], "VISIBILITY") {
		t.Errorf("columns not aligned:\n%s\n%s", lines[0], lines[1])
	}

	// JSON keeps the text but escapes the controls.
	code, stdout, _ := run(t, newFactory(t, t.TempDir(), env), "repo", "view", "stable")
	if code != ExitOK || strings.ContainsAny(stdout, "\x1b\x07") || !strings.Contains(stdout, `\u001b]0;pwned`) {
		t.Errorf("JSON output %q", stdout)
	}
}

// TestDeleteConfirmation checks that `repo delete` on a terminal asks for
// the name and deletes only when it is typed.
func TestDeleteConfirmation(t *testing.T) {
	srv := testkit.StartServer(t)
	srv.MustRepo(t, "stable", "")
	env := map[string]string{cmdutil.EnvServer: srv.URL, cmdutil.EnvToken: srv.AdminKey}
	del := func(answer string) (int, string) {
		ios, in, _, errOut := iostreams.Test()
		ios.SetStdinTTY(true)
		ios.SetStdoutTTY(true)
		in.WriteString(answer)
		f := newFactory(t, t.TempDir(), env)
		f.IOStreams = ios
		return Run(context.Background(), f, Hooks{}, []string{"repo", "delete", "stable"}), errOut.String()
	}
	code, stderr := del("stabel\n")
	if code != ExitError || !strings.Contains(stderr, "Type stable to confirm") || !strings.Contains(stderr, "Not deleted") {
		t.Fatalf("wrong answer: %d %q", code, stderr)
	}
	if r := srv.Do(t, http.MethodGet, "/v1/repositories/stable", srv.AdminKey, nil); r.StatusCode != http.StatusOK {
		t.Fatalf("repository gone after a wrong answer: %d", r.StatusCode)
	}
	if code, stderr := del("stable\n"); code != ExitOK {
		t.Fatalf("right answer: %d %q", code, stderr)
	}
	if r := srv.Do(t, http.MethodGet, "/v1/repositories/stable", srv.AdminKey, nil); r.StatusCode != http.StatusNotFound {
		t.Fatalf("repository still there: %d", r.StatusCode)
	}
}

// TestRevokeConfirmation checks that `api-key revoke` on a terminal asks
// first and revokes only on "y"; the key keeps working after a "n".
func TestRevokeConfirmation(t *testing.T) {
	srv := testkit.StartServer(t)
	r := srv.DoJSON(t, http.MethodPost, "/v1/user/api-keys", srv.AdminKey, map[string]any{
		"name": "ci", "scopes": []string{"repo:read"},
	})
	var created struct{ Data struct{ ID, Key string } }
	err := json.Unmarshal(r.Body, &created)
	key := created.Data
	if err != nil || key.ID == "" || key.Key == "" {
		t.Fatalf("create key: %d %s (%v)", r.StatusCode, r.Body, err)
	}
	env := map[string]string{cmdutil.EnvServer: srv.URL, cmdutil.EnvToken: srv.AdminKey}
	revoke := func(answer string) (int, string) {
		ios, in, _, errOut := iostreams.Test()
		ios.SetStdinTTY(true)
		ios.SetStdoutTTY(true)
		in.WriteString(answer)
		f := newFactory(t, t.TempDir(), env)
		f.IOStreams = ios
		return Run(context.Background(), f, Hooks{}, []string{"api-key", "revoke", key.ID}), errOut.String()
	}
	works := func() bool {
		return srv.Do(t, http.MethodGet, "/v1/repositories", key.Key, nil).StatusCode == http.StatusOK
	}
	code, stderr := revoke("n\n")
	if code != ExitError || !strings.Contains(stderr, "Revoke API key "+key.ID+"?") || !strings.Contains(stderr, "Not revoked") {
		t.Fatalf("answer n: %d %q", code, stderr)
	}
	if !works() {
		t.Fatal("the key was revoked although the answer was n")
	}
	if code, stderr := revoke("y\n"); code != ExitOK {
		t.Fatalf("answer y: %d %q", code, stderr)
	}
	if works() {
		t.Fatal("the key still works after revoke")
	}
}

// TestEmptyListsOnTerminal checks that an empty list on a terminal says
// so, and what to do next, instead of printing a bare header.
func TestEmptyListsOnTerminal(t *testing.T) {
	srv := testkit.StartServer(t)
	srv.MustRepo(t, "stable", "")
	srv.Upload(t, "stable", srv.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "nginx", Version: "1.0.0"}), "")
	env := map[string]string{cmdutil.EnvServer: srv.URL, cmdutil.EnvToken: srv.AdminKey}
	list := func(args ...string) (string, string) {
		t.Helper()
		ios, _, out, errOut := iostreams.Test()
		ios.SetStdoutTTY(true)
		f := newFactory(t, t.TempDir(), env)
		f.IOStreams = ios
		if code := Run(context.Background(), f, Hooks{}, args); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		return out.String(), errOut.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"org", "list"}, "No organizations yet. Create one with: chartctl org create NAME"},
		{[]string{"chart", "list", "--repo", "stable", "--version", "9.9.9"}, "No chart versions in stable match --version 9.9.9."},
	} {
		stdout, stderr := list(tc.args...)
		if stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: stdout %q, stderr %q, want %q on stderr", tc.args, stdout, stderr, tc.want)
		}
	}
	if r := srv.DoJSON(t, http.MethodPost, "/v1/organizations", srv.AdminKey, map[string]string{"name": "acme"}); r.StatusCode != http.StatusOK && r.StatusCode != http.StatusCreated {
		t.Fatalf("create org: %d %s", r.StatusCode, r.Body)
	}
	if r := srv.DoJSON(t, http.MethodPost, "/v1/teams", srv.AdminKey, map[string]string{"name": "devs", "organization": "acme"}); r.StatusCode != http.StatusOK && r.StatusCode != http.StatusCreated {
		t.Fatalf("create team: %d %s", r.StatusCode, r.Body)
	}
	if stdout, stderr := list("team", "members", "devs"); stdout != "" || !strings.Contains(stderr, "No members in team devs. Add one with: chartctl team add-member devs --email EMAIL") {
		t.Errorf("team members: stdout %q, stderr %q", stdout, stderr)
	}
}

// TestServerHint checks that a connection failure names where the server
// address came from, and the default when none was named.
func TestServerHint(t *testing.T) {
	f := newFactory(t, t.TempDir(), nil)
	if got := serverHint(f, "Check"); !strings.Contains(got, "No server was named, so chartctl tried "+cmdutil.DefaultServer) {
		t.Errorf("no server named: %q", got)
	}
	f = newFactory(t, t.TempDir(), map[string]string{cmdutil.EnvServer: "http://127.0.0.1:1"})
	if got := serverHint(f, "Check"); got != "Check; the address came from CHARTCTL_SERVER." {
		t.Errorf("from the environment: %q", got)
	}
	f.Flags.Server = "http://127.0.0.1:1"
	if got := serverHint(f, "Check"); got != "Check; the address came from --server." {
		t.Errorf("from --server: %q", got)
	}
}

// TestHTTPSToPlainServer checks that talking TLS to a plain-HTTP server
// gives one short line, not Go's error with the URL twice.
func TestHTTPSToPlainServer(t *testing.T) {
	srv := testkit.StartServer(t)
	env := map[string]string{cmdutil.EnvServer: strings.Replace(srv.URL, "http://", "https://", 1), cmdutil.EnvToken: srv.AdminKey}
	code, _, stderr := run(t, newFactory(t, t.TempDir(), env), "repo", "list", "--max-retries", "0")
	if code != ExitError {
		t.Fatalf("exit %d, want %d", code, ExitError)
	}
	want := "error: cannot talk to " + env[cmdutil.EnvServer] + ": http: server gave HTTP response to HTTPS client\n"
	if !strings.HasPrefix(stderr, want) || strings.Contains(stderr, `Get "`) {
		t.Errorf("stderr %q, want it to start with %q", stderr, want)
	}
}

// TestHelmAdviceOnTerminal checks the `helm repo add` lines `repo view`
// and `chart view` print: a private repository's take an API key with
// repo:read from $KEY, and the command that makes one runs as printed; a
// public repository's need no credential. (repo view suggested
// `--password $CHARTCTL_TOKEN`, empty after `chartctl login`, and the
// hint's `chartctl api-key create --scopes repo:read` lacked --name.)
func TestHelmAdviceOnTerminal(t *testing.T) {
	srv := testkit.StartServer(t)
	srv.MustRepo(t, "private", "")
	srv.MustRepo(t, "open", "public")
	for _, repo := range []string{"private", "open"} {
		if r := srv.Upload(t, repo, srv.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"}), ""); r.StatusCode != http.StatusOK {
			t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
		}
	}
	env := map[string]string{cmdutil.EnvServer: srv.URL, cmdutil.EnvToken: srv.AdminKey}
	onTerminal := func(args ...string) string {
		t.Helper()
		ios, _, out, errOut := iostreams.Test()
		ios.SetStdoutTTY(true)
		ios.SetTerminalWidth(200)
		f := newFactory(t, t.TempDir(), env)
		f.IOStreams = ios
		if code := Run(context.Background(), f, Hooks{}, args); code != ExitOK {
			t.Fatalf("%v: %d %s", args, code, errOut)
		}
		return out.String()
	}
	keyHint := "chartctl api-key create --name helm --scopes repo:read"
	for _, args := range [][]string{{"repo", "view", "private"}, {"chart", "view", "web", "--repo", "private"}} {
		out := onTerminal(args...)
		if !strings.Contains(out, "helm repo add private "+srv.URL+`/helm/private --username x --password "$KEY"`) || !strings.Contains(out, keyHint) || strings.Contains(out, "CHARTCTL_TOKEN") {
			t.Errorf("%v:\n%s", args, out)
		}
	}
	for _, args := range [][]string{{"repo", "view", "open"}, {"chart", "view", "web", "--repo", "open"}} {
		out := onTerminal(args...)
		if !strings.Contains(out, "helm repo add open "+srv.URL+"/helm/open\n") || strings.Contains(out, "--password") || strings.Contains(out, "KEY") {
			t.Errorf("%v:\n%s", args, out)
		}
	}
}

// TestJSONOutputOfActions checks that commands that change something
// print JSON under -o json (the default off a terminal), as every list
// and create command does: deletes, revokes, pings, redeliveries and
// retention set printed "✓ Deleted …" lines that broke `| jq`.
func TestJSONOutputOfActions(t *testing.T) {
	srv := testkit.StartServer(t)
	srv.MustRepo(t, "stable", "")
	srv.MustRepo(t, "gone", "")
	if r := srv.Upload(t, "stable", srv.AdminKey, testkit.MakeChart(t, testkit.Chart{Name: "web", Version: "1.0.0"}), ""); r.StatusCode != http.StatusOK {
		t.Fatalf("upload: %d %s", r.StatusCode, r.Body)
	}
	srv.MustUser(t, "leaver@example.com", false)
	env := map[string]string{cmdutil.EnvServer: srv.URL, cmdutil.EnvToken: srv.AdminKey}
	jsonOf := func(args ...string) map[string]any {
		t.Helper()
		code, stdout, stderr := run(t, newFactory(t, t.TempDir(), env), append(args, "-o", "json")...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d, %s", args, code, stderr)
		}
		var v map[string]any
		if err := json.Unmarshal([]byte(stdout), &v); err != nil {
			t.Fatalf("%v: stdout is not a JSON object: %q", args, stdout)
		}
		return v
	}
	hook := jsonOf("webhook", "create", "--repo", "stable", "--url", "https://example.com/hook")
	id, _ := hook["id"].(string)
	key := jsonOf("api-key", "create", "--name", "temp", "--scopes", "repo:read")
	keyID, _ := key["id"].(string)

	ping := jsonOf("webhook", "ping", id)
	delivery, _ := ping["id"].(string)
	if ping["event_type"] != "ping" || delivery == "" {
		t.Errorf("webhook ping: %v", ping)
	}
	if v := jsonOf("webhook", "redeliver", id, delivery); v["event_type"] != "ping" || v["id"] == "" {
		t.Errorf("webhook redeliver: %v", v)
	}
	if v := jsonOf("repo", "retention", "set", "stable", "--keep-latest", "3"); v["keep_latest"] != 3.0 {
		t.Errorf("retention set: %v", v)
	}
	for _, c := range []struct {
		args []string
		want map[string]any
	}{
		{[]string{"chart", "delete", "web", "1.0.0", "--repo", "stable", "--yes"}, map[string]any{"repository": "stable", "name": "web", "version": "1.0.0", "deleted": true}},
		{[]string{"webhook", "delete", id, "--yes"}, map[string]any{"id": id, "deleted": true}},
		{[]string{"api-key", "revoke", keyID, "--yes"}, map[string]any{"id": keyID, "revoked": true}},
		{[]string{"repo", "delete", "gone", "--yes"}, map[string]any{"name": "gone", "deleted": true}},
		{[]string{"user", "delete", "leaver@example.com", "--yes"}, map[string]any{"email": "leaver@example.com", "deleted": true}},
	} {
		v := jsonOf(c.args...)
		for k, want := range c.want {
			if v[k] != want {
				t.Errorf("%v: %s = %v, want %v (%v)", c.args, k, v[k], want, v)
			}
		}
	}
}
