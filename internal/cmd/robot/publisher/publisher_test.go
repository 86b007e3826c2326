package publisher_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/cmd/robot/publisher"
	"github.com/chartctl/chartctl/internal/cmdutil"
	"github.com/chartctl/chartctl/internal/iostreams"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/token"
)

// run runs `robot publisher ARGS…` as the admin against s and returns its
// standard output.
func run(t *testing.T, s *testkit.Server, args ...string) (string, error) {
	t.Helper()
	ios, _, out, _ := iostreams.Test()
	f := &cmdutil.Factory{IOStreams: ios, Getenv: func(string) string { return "" }}
	dir := t.TempDir()
	f.ConfigDir = func() (string, error) { return dir, nil }
	f.Flags.Server, f.Flags.Token, f.Flags.MaxRetries = s.URL, s.AdminKey, 0
	cmd := publisher.NewCmdPublisher(f)
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// add, list and remove against a real server.
func TestPublisherCommands(t *testing.T) {
	s := testkit.StartServer(t)
	if r := s.DoJSON(t, "POST", "/v1/organizations", s.AdminKey, map[string]string{"name": "acme"}); r.StatusCode != 200 {
		t.Fatalf("create organization: %d %s", r.StatusCode, r.Body)
	}
	ctx := context.Background()
	org, err := s.Store.Organization(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	_, h := token.New(token.RobotSecretPrefix)
	if err := s.Store.CreateRobot(ctx, &chartctl.Robot{OrganizationID: org.ID, Name: "ci-push", Repositories: []string{"acme-*"},
		Permissions: chartctl.RobotPermissions{chartctl.RobotPush}, SecretHash: h, CreatedBy: s.Admin.ID}); err != nil {
		t.Fatal(err)
	}

	out, err := run(t, s, "add", "ci-push", "--org", "acme", "--issuer", "https://gitlab.com", "--audience", "https://charts.example.com",
		"--claim", "project_path=acme/charts", "--claim", "ref=main")
	if err != nil {
		t.Fatalf("add: %v", err)
	}
	var added client.Publisher
	if err := json.Unmarshal([]byte(out), &added); err != nil || !strings.HasPrefix(added.ID, "pub_") || added.Claims["ref"] != "main" {
		t.Fatalf("add printed %s (%v)", out, err)
	}

	out, err = run(t, s, "list", "ci-push", "--org", "acme")
	var listed []client.Publisher
	if err != nil || json.Unmarshal([]byte(out), &listed) != nil || len(listed) != 1 || listed[0].ID != added.ID {
		t.Fatalf("list: %v %s", err, out)
	}

	// Off a terminal, remove needs --yes.
	if _, err := run(t, s, "remove", "ci-push", added.ID, "--org", "acme"); !errors.As(err, new(*cmdutil.FlagError)) {
		t.Fatalf("remove without --yes: %v", err)
	}
	if _, err := run(t, s, "remove", "ci-push", added.ID, "--org", "acme", "--yes"); err != nil {
		t.Fatalf("remove: %v", err)
	}
	out, err = run(t, s, "list", "ci-push", "--org", "acme")
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Fatalf("list after remove: %v %q", err, out)
	}
	// Removing it again: the server's 404, with what to do next.
	_, err = run(t, s, "remove", "ci-push", added.ID, "--org", "acme", "--yes")
	var he *cmdutil.HintError
	if !errors.As(err, &he) || !strings.Contains(he.Hint, "chartctl robot publisher list ci-push --org acme") {
		t.Fatalf("remove again: %v", err)
	}

	// Flag errors before anything is sent.
	for _, args := range [][]string{
		{"add", "ci-push", "--org", "acme", "--issuer", "https://gitlab.com", "--audience", "a"},
		{"add", "ci-push", "--org", "acme", "--issuer", "https://gitlab.com", "--audience", "a", "--claim", "ref"},
		{"add", "ci-push", "--org", "acme", "--issuer", "https://gitlab.com", "--audience", "a", "--claim", "ref=a", "--claim", "ref=b"},
		{"add", "ci-push", "--issuer", "https://gitlab.com", "--audience", "a", "--claim", "ref=a"},
		{"list", "ci-push"},
	} {
		if _, err := run(t, s, args...); !errors.As(err, new(*cmdutil.FlagError)) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}
