package server_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chartctl/chartctl/client"
	"github.com/chartctl/chartctl/internal/chartctl"
	"github.com/chartctl/chartctl/internal/ratelimit"
	"github.com/chartctl/chartctl/internal/testkit"
	"github.com/chartctl/chartctl/internal/token"
	"github.com/chartctl/chartctl/server"
)

// robotEnv is a server with organization acme (owned by owner), its
// private repositories acme-charts and other, and organization globex
// with a private repository acme-x whose name matches acme-*.
type robotEnv struct {
	*testkit.Server
	clk      *testClock
	ownerKey string
}

func setupRobots(t *testing.T, opts ...testkit.Option) *robotEnv {
	t.Helper()
	clk := &testClock{t: time.Now().UTC().Truncate(time.Second)}
	s := testkit.StartServer(t, append([]testkit.Option{func(srv *server.Server) { srv.Now = clk.Now }}, opts...)...)
	e := &robotEnv{Server: s, clk: clk}
	owner := s.MustUser(t, "owner@example.com", false)
	e.ownerKey = s.MustKey(t, owner, chartctl.LoginScopes...)
	e.must(t, s.DoJSON(t, "POST", "/v1/organizations", e.ownerKey, map[string]string{"name": "acme"}))
	e.must(t, s.DoJSON(t, "POST", "/v1/organizations", s.AdminKey, map[string]string{"name": "globex"}))
	for _, r := range []map[string]string{
		{"name": "acme-charts", "organization": "acme"},
		{"name": "other", "organization": "acme"},
		{"name": "acme-x", "organization": "globex"},
	} {
		key := e.ownerKey
		if r["organization"] == "globex" {
			key = s.AdminKey
		}
		e.must(t, s.DoJSON(t, "POST", "/v1/repositories", key, r))
	}
	return e
}

func (e *robotEnv) must(t *testing.T, r *testkit.Response) *testkit.Response {
	t.Helper()
	if r.StatusCode != 200 {
		t.Fatalf("%s %s: %d %s", r.Request.Method, r.Request.URL.Path, r.StatusCode, r.Body)
	}
	return r
}

// robot creates robot name of acme as the owner and returns it with its
// secret.
func (e *robotEnv) robot(t *testing.T, name string, perms []string, extra map[string]any) client.Robot {
	t.Helper()
	body := map[string]any{"name": name, "repositories": []string{"acme-*"}, "permissions": perms}
	for k, v := range extra {
		body[k] = v
	}
	var out envelope[client.Robot]
	e.must(t, e.DoJSON(t, "POST", "/v1/organizations/acme/robots", e.ownerKey, body)).JSON(t, &out)
	return out.Data
}

// basic returns an Authorization header value of HTTP Basic.
func basic(user, pass string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
}

// cmUpload posts archive to the ChartMuseum API of repo as helm cm-push
// does, with the Authorization header auth.
func (e *robotEnv) cmUpload(t *testing.T, repo, auth string, archive []byte) *testkit.Response {
	t.Helper()
	body, ctype := testkit.Multipart(t, map[string][]byte{"chart": archive})
	return e.Do(t, "POST", "/helm/api/"+repo+"/charts", "", bytes.NewReader(body), "Content-Type", ctype, "Authorization", auth)
}

// TestRobotAccountManagement: owners create, change, rotate and delete
// robots; maintainers see them; members, outsiders, narrow credentials
// and robots themselves are refused; bad input is a 400 naming the field.
func TestRobotAccountManagement(t *testing.T) {
	e := setupRobots(t)
	rb := e.robot(t, "ci-push", []string{"push,pull"}, map[string]any{"description": "CI of acme"})
	if !token.Valid(token.RobotSecretPrefix, rb.Secret) || rb.UserName != "robot$acme+ci-push" || rb.Organization != "acme" ||
		strings.Join(rb.Permissions, ",") != "pull,push" || strings.Join(rb.Repositories, ",") != "acme-*" ||
		rb.CreatedBy != "owner@example.com" || rb.Disabled || rb.ExpiresAt != nil || rb.LastUsedAt != nil {
		t.Fatalf("created %+v", rb)
	}
	var got envelope[client.Robot]
	e.must(t, e.Do(t, "GET", "/v1/organizations/acme/robots/ci-push", e.ownerKey, nil)).JSON(t, &got)
	if got.Data.Secret != "" || got.Data.Name != "ci-push" || got.Data.Description != "CI of acme" {
		t.Fatalf("GET shows %+v", got.Data)
	}
	if r := e.Do(t, "GET", "/v1/organizations/acme/robots/ci-push", e.ownerKey, nil); bytes.Contains(r.Body, []byte("chartctl_rb_")) {
		t.Fatalf("GET shows a secret: %s", r.Body)
	}

	// Bad input names the field.
	bad := []struct {
		body  map[string]any
		param string
	}{
		{map[string]any{"name": "Bad Name", "repositories": []string{"acme-*"}, "permissions": []string{"pull"}}, "name"},
		{map[string]any{"name": "r", "repositories": []string{}, "permissions": []string{"pull"}}, "repositories"},
		{map[string]any{"name": "r", "repositories": []string{"acme-["}, "permissions": []string{"pull"}}, "repositories"},
		{map[string]any{"name": "r", "repositories": []string{"acme-*"}, "permissions": []string{"fly"}}, "permissions"},
		{map[string]any{"name": "r", "repositories": []string{"acme-*"}}, "permissions"},
		{map[string]any{"name": "r", "repositories": []string{"acme-*"}, "permissions": []string{"pull"}, "expires_at": e.clk.Now().Add(-time.Hour)}, "expires_at"},
		{map[string]any{"name": "r", "repositories": []string{"acme-*"}, "permissions": []string{"pull"}, "admin": true}, "admin"},
	}
	for _, b := range bad {
		expectError(t, e.DoJSON(t, "POST", "/v1/organizations/acme/robots", e.ownerKey, b.body), 400, "invalid_parameter", b.param)
	}
	expectError(t, e.DoJSON(t, "POST", "/v1/organizations/acme/robots", e.ownerKey,
		map[string]any{"name": "ci-push", "repositories": []string{"acme-*"}, "permissions": []string{"pull"}}), 409, "conflict", "")
	expectError(t, e.DoJSON(t, "POST", "/v1/organizations/acme/robots/ci-push/rotate", e.ownerKey, map[string]string{"grace": "8d"}), 400, "invalid_parameter", "grace")
	expectError(t, e.DoJSON(t, "POST", "/v1/organizations/acme/robots/ci-push/rotate", e.ownerKey, map[string]string{"grace": "soon"}), 400, "invalid_parameter", "grace")
	expectError(t, e.DoJSON(t, "PATCH", "/v1/organizations/acme/robots/ci-push", e.ownerKey, map[string]any{"permissions": []string{"admin"}}), 400, "invalid_parameter", "permissions")
	expectError(t, e.Do(t, "GET", "/v1/organizations/acme/robots/nobody", e.ownerKey, nil), 404, "not_found", "")

	// Who sees and who manages.
	e.must(t, e.DoJSON(t, "POST", "/v1/teams", e.ownerKey, map[string]string{"name": "acme-team", "organization": "acme"}))
	keys := map[string]string{}
	for _, m := range []struct{ email, role string }{{"maint@example.com", "maintainer"}, {"member@example.com", "member"}} {
		u := e.MustUser(t, m.email, false)
		keys[m.role] = e.MustKey(t, u, chartctl.LoginScopes...)
		e.must(t, e.DoJSON(t, "POST", "/v1/teams/acme-team/members", e.ownerKey, map[string]string{"email": m.email, "role": m.role}))
	}
	keys["outsider"] = e.MustKey(t, e.MustUser(t, "out@example.com", false), chartctl.LoginScopes...)
	var list envelope[[]client.Robot]
	e.must(t, e.Do(t, "GET", "/v1/organizations/acme/robots", keys["maintainer"], nil)).JSON(t, &list)
	if len(list.Data) != 1 || list.Meta.Total != 1 || list.Data[0].Name != "ci-push" || list.Data[0].Secret != "" {
		t.Fatalf("maintainer's list %+v", list)
	}
	expectError(t, e.DoJSON(t, "POST", "/v1/organizations/acme/robots", keys["maintainer"],
		map[string]any{"name": "m", "repositories": []string{"acme-*"}, "permissions": []string{"pull"}}), 403, "forbidden", "")
	expectError(t, e.Do(t, "GET", "/v1/organizations/acme/robots", keys["member"], nil), 403, "forbidden", "")
	expectError(t, e.Do(t, "GET", "/v1/organizations/acme/robots", keys["outsider"], nil), 404, "not_found", "")
	expectError(t, e.Do(t, "DELETE", "/v1/organizations/acme/robots/ci-push", keys["outsider"], nil), 404, "not_found", "")
	ownerRead := e.MustKey(t, mustUserByEmail(t, e.Server, "owner@example.com"), chartctl.ScopeOrgRead)
	r := e.DoJSON(t, "POST", "/v1/organizations/acme/robots/ci-push/rotate", ownerRead, nil)
	expectError(t, r, 403, "forbidden", "")
	if !strings.Contains(r.Header.Get("WWW-Authenticate"), "org:write") {
		t.Errorf("missing scope challenge %q", r.Header.Get("WWW-Authenticate"))
	}
	// The robot itself manages nothing: not robots, not teams, not keys.
	expectError(t, e.Do(t, "GET", "/v1/organizations/acme/robots", rb.Secret, nil), 403, "forbidden", "")
	expectError(t, e.DoJSON(t, "POST", "/v1/organizations/acme/robots", rb.Secret,
		map[string]any{"name": "child", "repositories": []string{"*"}, "permissions": []string{"delete"}}), 403, "forbidden", "")
	// Server admins manage every organization's robots.
	var upd envelope[client.Robot]
	e.must(t, e.DoJSON(t, "PATCH", "/v1/organizations/acme/robots/ci-push", e.AdminKey,
		map[string]any{"description": "Pushes acme", "permissions": []string{"pull", "push", "delete"}, "repositories": []string{"acme-charts"}})).JSON(t, &upd)
	if upd.Data.Description != "Pushes acme" || strings.Join(upd.Data.Permissions, ",") != "pull,push,delete" || strings.Join(upd.Data.Repositories, ",") != "acme-charts" {
		t.Fatalf("updated %+v", upd.Data)
	}
	var del envelope[client.Robot]
	e.must(t, e.Do(t, "DELETE", "/v1/organizations/acme/robots/ci-push", e.ownerKey, nil)).JSON(t, &del)
	if del.Data.Name != "ci-push" {
		t.Fatalf("deleted %+v", del.Data)
	}
	expectError(t, e.Do(t, "GET", "/v1/organizations/acme/robots/ci-push", e.ownerKey, nil), 404, "not_found", "")
	expectError(t, e.Do(t, "GET", "/v1/user", rb.Secret, nil), 401, "unauthorized", "")

	// Each change is audited, naming the robot.
	var audit envelope[[]client.AuditEntry]
	e.must(t, e.Do(t, "GET", "/v1/audit?target=acme/ci-push&limit=100", e.AdminKey, nil)).JSON(t, &audit)
	var actions []string
	for _, a := range audit.Data {
		if a.Outcome == "success" {
			actions = append(actions, a.Action)
		}
	}
	if strings.Join(actions, " ") != "robot.delete robot.update robot.create" {
		t.Fatalf("audit of acme/ci-push: %v", actions)
	}
}

func mustUserByEmail(t *testing.T, s *testkit.Server, email string) *chartctl.User {
	t.Helper()
	u, err := s.Store.UserByEmail(t.Context(), email)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestRobotSecretWorksWhereKeysDo: a robot restricted to acme-* pushes to
// acme-charts through /v1 and the ChartMuseum API (Basic with its user
// name), reads its index, is refused on other (404: private) and on a
// repository of another organization matching its pattern, and reaches
// nothing a person's account does (keys, repositories, teams).
// Push-only cannot delete, pull-only cannot push; audit names the robot.
func TestRobotSecretWorksWhereKeysDo(t *testing.T) {
	e := setupRobots(t)
	pusher := e.robot(t, "ci-push", []string{"push"}, nil)
	puller := e.robot(t, "reader", []string{"pull"}, nil)
	deleter := e.robot(t, "janitor", []string{"delete"}, nil)
	chart := func(v string) []byte { return testkit.MakeChart(t, testkit.Chart{Name: "web", Version: v}) }

	var me envelope[client.User]
	e.must(t, e.Do(t, "GET", "/v1/user", pusher.Secret, nil)).JSON(t, &me)
	if me.Data.Robot != "acme/ci-push" || me.Data.Email != "robot$acme+ci-push" || me.Data.Admin ||
		strings.Join(me.Data.Permissions, ",") != "push" || strings.Join(me.Data.Repositories, ",") != "acme-*" ||
		strings.Join(me.Data.Scopes, ",") != "repo:read,repo:write" {
		t.Fatalf("/v1/user of a robot: %+v", me.Data)
	}

	// Bearer on /v1.
	e.must(t, e.Upload(t, "acme-charts", pusher.Secret, chart("1.0.0"), ""))
	// The audit entry of the push names the robot.
	e2 := lastAudit(t, e.Server)
	if e2.Action != "chart.push" || e2.Outcome != "success" || e2.Actor.Robot != "acme/ci-push" || e2.Actor.Email == nil || *e2.Actor.Email != "robot$acme+ci-push" ||
		e2.Credential.Kind == nil || *e2.Credential.Kind != "robot" {
		t.Fatalf("audit of a robot's push: %+v (actor %+v, credential %+v)", e2, e2.Actor, e2.Credential)
	}
	expectError(t, e.Upload(t, "other", pusher.Secret, chart("1.0.0"), ""), 404, "not_found", "")
	expectError(t, e.Upload(t, "acme-x", pusher.Secret, chart("1.0.0"), ""), 404, "not_found", "")
	var repos envelope[[]client.Repository]
	e.must(t, e.Do(t, "GET", "/v1/repositories", pusher.Secret, nil)).JSON(t, &repos)
	if len(repos.Data) != 1 || repos.Data[0].Name != "acme-charts" {
		t.Fatalf("a robot lists %+v", repos.Data)
	}

	// Basic with the robot's user name, as helm cm-push and helm repo add
	// send it; any other user name with a person's key or another
	// robot's secret under this name is refused.
	if r := e.cmUpload(t, "acme-charts", basic("robot$acme+ci-push", pusher.Secret), chart("1.1.0")); r.StatusCode != 201 {
		t.Fatalf("cm-push as robot$acme+ci-push: %d %s", r.StatusCode, r.Body)
	}
	if r := e.cmUpload(t, "acme-charts", basic("robot$acme+reader", pusher.Secret), chart("1.2.0")); r.StatusCode != 401 || !strings.Contains(string(r.Body), "does not belong to robot account acme/reader") {
		t.Fatalf("another robot's name with this secret: %d %s", r.StatusCode, r.Body)
	}
	if r := e.cmUpload(t, "acme-charts", basic("robot$acme+ci-push", e.ownerKey), chart("1.2.0")); r.StatusCode != 401 {
		t.Fatalf("a person's key under a robot's name: %d %s", r.StatusCode, r.Body)
	}
	if r := e.cmUpload(t, "other", basic("robot$acme+ci-push", pusher.Secret), chart("1.2.0")); r.StatusCode != 404 {
		t.Fatalf("cm-push to other: %d %s", r.StatusCode, r.Body)
	}
	r := e.Do(t, "GET", "/helm/acme-charts/index.yaml", "", nil, "Authorization", basic("robot$acme+reader", puller.Secret))
	if r.StatusCode != 200 || !bytes.Contains(r.Body, []byte("1.1.0")) {
		t.Fatalf("index as the pull robot: %d %s", r.StatusCode, r.Body)
	}

	// Push does not imply delete, pull does not imply push; delete does
	// not imply push either.
	expectError(t, e.Do(t, "DELETE", "/v1/repositories/acme-charts/charts/web/1.0.0", pusher.Secret, nil), 403, "forbidden", "")
	if r := e.Do(t, "DELETE", "/helm/api/acme-charts/charts/web/1.0.0", "", nil, "Authorization", basic("robot$acme+ci-push", pusher.Secret)); r.StatusCode != 403 {
		t.Fatalf("cm delete by the push robot: %d %s", r.StatusCode, r.Body)
	}
	r = e.Upload(t, "acme-charts", puller.Secret, chart("2.0.0"), "")
	expectError(t, r, 403, "forbidden", "")
	if !strings.Contains(string(r.Body), "may not push") {
		t.Fatalf("refusal says why: %s", r.Body)
	}
	expectError(t, e.Upload(t, "acme-charts", deleter.Secret, chart("2.0.0"), ""), 403, "forbidden", "")
	e.must(t, e.Do(t, "DELETE", "/v1/repositories/acme-charts/charts/web/1.0.0", deleter.Secret, nil))
	if r := e.Do(t, "DELETE", "/helm/api/acme-charts/charts/web/1.1.0", "", nil, "Authorization", basic("robot$acme+janitor", deleter.Secret)); r.StatusCode != 200 {
		t.Fatalf("cm delete by the delete robot: %d %s", r.StatusCode, r.Body)
	}

	// Nothing of a person's account.
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/user/api-keys"},
		{"POST", "/v1/user/api-keys"},
		{"POST", "/v1/repositories"},
		{"POST", "/v1/organizations"},
		{"GET", "/v1/teams"},
		{"PATCH", "/v1/repositories/acme-charts"},
		{"DELETE", "/v1/repositories/acme-charts"},
		{"GET", "/v1/users"},
	} {
		var body any
		switch c.method {
		case "POST":
			body = map[string]any{"name": "x", "scopes": []string{"repo:read"}}
		case "PATCH":
			body = map[string]any{"description": "mine now"}
		}
		r := e.DoJSON(t, c.method, c.path, pusher.Secret, body)
		if r.StatusCode != 403 {
			t.Errorf("%s %s as a robot: %d %s", c.method, c.path, r.StatusCode, r.Body)
		}
	}
}

// TestRobotLifecycleStopsItsSecret: the robot outlives its creator; its
// secret stops at once after a rotation without grace, after the grace
// of one with, when disabled (and works again when enabled), when it
// expires (the server's clock), and when it is deleted. Its last use is
// recorded.
func TestRobotLifecycleStopsItsSecret(t *testing.T) {
	e := setupRobots(t)
	// A second owner creates the robot, then leaves the company.
	e.must(t, e.DoJSON(t, "POST", "/v1/teams", e.ownerKey, map[string]string{"name": "owners", "organization": "acme"}))
	e.must(t, e.DoJSON(t, "POST", "/v1/teams/owners/members", e.ownerKey, map[string]string{"email": "leaver@example.com", "role": "owner"}))
	leaverKey := e.MustKey(t, e.MustUser(t, "leaver@example.com", false), chartctl.LoginScopes...)
	var created envelope[client.Robot]
	e.must(t, e.DoJSON(t, "POST", "/v1/organizations/acme/robots", leaverKey,
		map[string]any{"name": "ci", "repositories": []string{"acme-*"}, "permissions": []string{"push"}})).JSON(t, &created)
	secret := created.Data.Secret
	e.must(t, e.Do(t, "DELETE", "/v1/users/leaver@example.com", e.AdminKey, nil))
	version := 0
	push := func(tok string) *testkit.Response {
		t.Helper()
		version++
		return e.Upload(t, "acme-charts", tok, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: fmt.Sprintf("1.0.%d", version)}), "")
	}
	e.must(t, push(secret))
	var got envelope[client.Robot]
	e.must(t, e.Do(t, "GET", "/v1/organizations/acme/robots/ci", e.ownerKey, nil)).JSON(t, &got)
	if got.Data.CreatedBy != "" || got.Data.LastUsedAt == nil {
		t.Fatalf("after its creator left: %+v", got.Data)
	}

	// Rotation without grace: the old secret stops at once.
	var rot envelope[client.Robot]
	e.must(t, e.Do(t, "POST", "/v1/organizations/acme/robots/ci/rotate", e.ownerKey, nil)).JSON(t, &rot)
	if rot.Data.Secret == "" || rot.Data.Secret == secret {
		t.Fatalf("rotate answered %+v", rot.Data)
	}
	expectError(t, push(secret), 401, "unauthorized", "")
	e.must(t, push(rot.Data.Secret))
	secret = rot.Data.Secret

	// With grace: both work until it is over.
	e.must(t, e.DoJSON(t, "POST", "/v1/organizations/acme/robots/ci/rotate", e.ownerKey, map[string]string{"grace": "10m"})).JSON(t, &rot)
	e.must(t, push(secret))
	e.must(t, push(rot.Data.Secret))
	e.clk.Add(11 * time.Minute)
	r := push(secret)
	expectError(t, r, 401, "unauthorized", "")
	if !strings.Contains(string(r.Body), "rotation") {
		t.Errorf("refusal of a replaced secret: %s", r.Body)
	}
	e.must(t, push(rot.Data.Secret))
	secret = rot.Data.Secret

	// Disable, enable.
	e.must(t, e.DoJSON(t, "PATCH", "/v1/organizations/acme/robots/ci", e.ownerKey, map[string]any{"disabled": true}))
	r = push(secret)
	expectError(t, r, 401, "unauthorized", "")
	if !strings.Contains(string(r.Body), "disabled") {
		t.Errorf("refusal of a disabled robot: %s", r.Body)
	}
	e.must(t, e.DoJSON(t, "PATCH", "/v1/organizations/acme/robots/ci", e.ownerKey, map[string]any{"disabled": false}))
	e.must(t, push(secret))

	// Expiry, by the server's clock.
	e.must(t, e.DoJSON(t, "PATCH", "/v1/organizations/acme/robots/ci", e.ownerKey, map[string]any{"expires_at": e.clk.Now().Add(time.Hour)}))
	e.must(t, push(secret))
	e.clk.Add(2 * time.Hour)
	r = push(secret)
	expectError(t, r, 401, "unauthorized", "")
	if !strings.Contains(string(r.Body), "expired") {
		t.Errorf("refusal of an expired robot: %s", r.Body)
	}
	e.must(t, e.DoJSON(t, "PATCH", "/v1/organizations/acme/robots/ci", e.ownerKey, map[string]any{"no_expiry": true}))
	e.must(t, push(secret))

	// Deleted.
	e.must(t, e.Do(t, "DELETE", "/v1/organizations/acme/robots/ci", e.ownerKey, nil))
	expectError(t, push(secret), 401, "unauthorized", "")
}

// TestExchangedCredentialActsAsItsRobot: a credential exchanged for a
// trusted publisher's token (stored as /v1/oidc/token stores it) acts as
// its robot, is audited as exchanged, and stops when it expires (the
// server's clock) or its robot is disabled.
func TestExchangedCredentialActsAsItsRobot(t *testing.T) {
	e := setupRobots(t)
	e.robot(t, "ci", []string{"push"}, nil)
	ctx := t.Context()
	rb, err := e.Store.Robot(ctx, "acme", "ci")
	if err != nil {
		t.Fatal(err)
	}
	pub := &chartctl.TrustedPublisher{RobotID: rb.ID, Issuer: "https://token.actions.githubusercontent.com", Audience: "chartctl",
		Claims: map[string]string{"repository": "acme/app"}}
	if err := e.Store.AddPublisher(ctx, pub); err != nil {
		t.Fatal(err)
	}
	value, hash := token.New(token.ExchangedPrefix)
	if err := e.Store.CreateExchangedCredential(ctx, &chartctl.ExchangedCredential{RobotID: rb.ID, PublisherID: pub.ID, Hash: hash,
		ExpiresAt: e.clk.Now().Add(15 * time.Minute), CreatedAt: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	var me envelope[client.User]
	e.must(t, e.Do(t, "GET", "/v1/user", value, nil)).JSON(t, &me)
	if me.Data.Robot != "acme/ci" || strings.Join(me.Data.Permissions, ",") != "push" {
		t.Fatalf("/v1/user of an exchanged credential: %+v", me.Data)
	}
	e.must(t, e.Upload(t, "acme-charts", value, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}), ""))
	a := lastAudit(t, e.Server)
	if a.Action != "chart.push" || a.Actor.Robot != "acme/ci" || a.Credential.Kind == nil || *a.Credential.Kind != "exchanged" {
		t.Fatalf("audit of an exchanged credential's push: %+v (actor %+v, credential %+v)", a, a.Actor, a.Credential)
	}
	expectError(t, e.Upload(t, "other", value, testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.0"}), ""), 404, "not_found", "")
	if r := e.cmUpload(t, "acme-charts", basic("robot$acme+ci", value), testkit.MakeChart(t, testkit.Chart{Name: "app", Version: "1.0.1"})); r.StatusCode != 201 {
		t.Fatalf("cm-push with an exchanged credential: %d %s", r.StatusCode, r.Body)
	}

	// Disabling the robot stops it.
	e.must(t, e.DoJSON(t, "PATCH", "/v1/organizations/acme/robots/ci", e.ownerKey, map[string]any{"disabled": true}))
	expectError(t, e.Do(t, "GET", "/v1/user", value, nil), 401, "unauthorized", "")
	e.must(t, e.DoJSON(t, "PATCH", "/v1/organizations/acme/robots/ci", e.ownerKey, map[string]any{"disabled": false}))

	// A fresh one stops after its 15 minutes.
	value, hash = token.New(token.ExchangedPrefix)
	if err := e.Store.CreateExchangedCredential(ctx, &chartctl.ExchangedCredential{RobotID: rb.ID, PublisherID: pub.ID, Hash: hash,
		ExpiresAt: e.clk.Now().Add(15 * time.Minute), CreatedAt: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	e.must(t, e.Do(t, "GET", "/v1/user", value, nil))
	e.clk.Add(16 * time.Minute)
	r := e.Do(t, "GET", "/v1/user", value, nil)
	expectError(t, r, 401, "unauthorized", "")
	if !strings.Contains(string(r.Body), "exchange a new token") {
		t.Errorf("refusal of an expired exchanged credential: %s", r.Body)
	}
	// A forged value is refused without a lookup.
	expectError(t, e.Do(t, "GET", "/v1/user", token.ExchangedPrefix+"forged", nil), 401, "unauthorized", "")
}

// TestRobotEvents: an organization's webhook receives robot.created,
// robot.rotated and robot.deleted, whose data show the robot as /v1 does
// and never a secret.
func TestRobotEvents(t *testing.T) {
	s := startWithDispatcher(t)
	rc, rs := newReceiver(t, 0)
	if r := s.DoJSON(t, "POST", "/v1/organizations", s.AdminKey, map[string]string{"name": "acme"}); r.StatusCode != 200 {
		t.Fatalf("create org: %d %s", r.StatusCode, r.Body)
	}
	var hook envelope[client.Webhook]
	if r := s.DoJSON(t, "POST", "/v1/organizations/acme/webhooks", s.AdminKey, map[string]any{"url": rs.URL + "/hook", "events": []string{"robot.created", "robot.rotated", "robot.deleted"}}); r.StatusCode != 200 {
		t.Fatalf("create webhook: %d %s", r.StatusCode, r.Body)
	} else {
		r.JSON(t, &hook)
	}
	rc.setSecret(hook.Data.Secret)
	for _, req := range []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/organizations/acme/robots", map[string]any{"name": "ci", "repositories": []string{"acme-*"}, "permissions": []string{"push"}}},
		{"PATCH", "/v1/organizations/acme/robots/ci", map[string]any{"disabled": true}},
		{"POST", "/v1/organizations/acme/robots/ci/rotate", map[string]any{"grace": "1h"}},
		{"DELETE", "/v1/organizations/acme/robots/ci", nil},
	} {
		if r := s.DoJSON(t, req.method, req.path, s.AdminKey, req.body); r.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s", req.method, req.path, r.StatusCode, r.Body)
		}
	}
	got := rc.waitFor(3)
	var types []string
	for _, ev := range got {
		types = append(types, strings.TrimPrefix(ev.Type, "io.chartctl."))
		var d struct {
			Name, Organization, Username string
			Permissions                  []string
			Actor                        struct{ Email string }
		}
		if err := json.Unmarshal(ev.Data, &d); err != nil || d.Name != "ci" || d.Organization != "acme" || d.Username != "robot$acme+ci" ||
			strings.Join(d.Permissions, ",") != "push" || d.Actor.Email != "admin@example.com" || ev.Source != "/v1/organizations/acme/robots/ci" {
			t.Errorf("event %s data %s source %s: %v", ev.Type, ev.Data, ev.Source, err)
		}
	}
	if strings.Join(types, " ") != "robot.created robot.rotated robot.deleted" {
		t.Fatalf("events %v", types)
	}
	for _, b := range rc.bodies {
		if strings.Contains(b, "chartctl_rb_") {
			t.Fatalf("an event carries a secret: %s", b)
		}
	}
}

// TestRobotRateLimitIsPerRobot: the global bucket of a robot is keyed by
// the robot (decision 8), so its secret and the credentials exchanged for
// it share one budget, apart from its creator's.
func TestRobotRateLimitIsPerRobot(t *testing.T) {
	e := setupRobots(t, func(srv *server.Server) { srv.Config.GlobalLimit = ratelimit.Limit{N: 5, Window: time.Hour} })
	// The owner's key spent three requests setting up, two here.
	rb := e.robot(t, "ci", []string{"pull"}, nil)
	other := e.robot(t, "other", []string{"pull"}, nil)
	stored, err := e.Store.Robot(t.Context(), "acme", "ci")
	if err != nil {
		t.Fatal(err)
	}
	value, hash := token.New(token.ExchangedPrefix)
	if err := e.Store.CreateExchangedCredential(t.Context(), &chartctl.ExchangedCredential{RobotID: stored.ID, Hash: hash,
		ExpiresAt: e.clk.Now().Add(15 * time.Minute), CreatedAt: e.clk.Now()}); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{rb.Secret, value, rb.Secret, value, rb.Secret} {
		e.must(t, e.Do(t, "GET", "/v1/user", tok, nil))
	}
	expectError(t, e.Do(t, "GET", "/v1/user", value, nil), 429, "rate_limit_exceeded", "")
	expectError(t, e.Do(t, "GET", "/v1/user", rb.Secret, nil), 429, "rate_limit_exceeded", "")
	// Another robot has its own budget.
	e.must(t, e.Do(t, "GET", "/v1/user", other.Secret, nil))
}
